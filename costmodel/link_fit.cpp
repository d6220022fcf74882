#include "costmodel/link_fit.hpp"

#include <cmath>
#include <set>

#include <Eigen/Dense>
#include <fmt/format.h>

#include "costmodel/relative_nnls.hpp"
#include "support/error.hpp"

namespace mutwo::costmodel {
namespace {

using ir::CopyWay;

LinkWayFit fit_way(const std::vector<ir::LinkTiming>& copies, CopyWay way) {
  std::vector<const ir::LinkTiming*> rows;
  std::set<int64_t> sizes;
  for (const ir::LinkTiming& c : copies) {
    if (c.way != way) continue;
    rows.push_back(&c);
    sizes.insert(c.bytes);
  }
  if (sizes.size() < 2) {
    throw Error(fmt::format("link fit: '{}' has {} size(s) timed; a latency and a bandwidth need 2 or more",
                            ir::copy_way_name(way), sizes.size()));
  }
  // Columns: latency (1) and seconds per byte (bytes), each row over its measured time.
  Eigen::MatrixXd a(static_cast<Eigen::Index>(rows.size()), 2);
  for (size_t i = 0; i < rows.size(); ++i) {
    const double t = static_cast<double>(rows[i]->time_ns);
    a(static_cast<Eigen::Index>(i), 0) = 1.0 / t;
    a(static_cast<Eigen::Index>(i), 1) = static_cast<double>(rows[i]->bytes) / t;
  }
  const Eigen::VectorXd c = nonnegative_least_squares(a);
  if (!(c(1) > 0)) {
    throw Error(fmt::format("link fit: '{}' times do not grow with the size: no bandwidth to fit",
                            ir::copy_way_name(way)));
  }
  LinkWayFit f;
  f.gbps = 1.0 / c(1);
  f.latency_ns = std::llround(c(0));
  f.samples = static_cast<int>(rows.size());
  double sum = 0;
  for (const ir::LinkTiming* r : rows) {
    const double predicted = c(0) + c(1) * static_cast<double>(r->bytes);
    sum += std::abs(predicted - static_cast<double>(r->time_ns)) / static_cast<double>(r->time_ns);
  }
  f.mean_abs_rel_error = sum / static_cast<double>(rows.size());
  return f;
}

}  // namespace

LinkFit fit_link(const std::vector<ir::LinkTiming>& copies) {
  LinkFit out;
  out.h2d = fit_way(copies, CopyWay::h2d);
  out.d2h = fit_way(copies, CopyWay::d2h);
  // The largest size with all three ways.
  int64_t largest = -1;
  for (const ir::LinkTiming& c : copies) {
    if (c.way != CopyWay::both || c.bytes <= largest) continue;
    bool h = false, d = false;
    for (const ir::LinkTiming& o : copies) {
      h = h || (o.way == CopyWay::h2d && o.bytes == c.bytes);
      d = d || (o.way == CopyWay::d2h && o.bytes == c.bytes);
    }
    if (h && d) largest = c.bytes;
  }
  if (largest > 0) {
    double h = 0, d = 0, b = 0;
    for (const ir::LinkTiming& c : copies) {
      if (c.bytes != largest) continue;
      (c.way == CopyWay::h2d ? h : c.way == CopyWay::d2h ? d : b) = static_cast<double>(c.time_ns);
    }
    out.duplex_speedup = (h + d) / b;
    out.full_duplex = out.duplex_speedup >= 1.5;
  }
  return out;
}

}  // namespace mutwo::costmodel
