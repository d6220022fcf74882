// The host link's fit (costmodel/link_fit.hpp) on hand-made copy times: exact latency + bytes /
// bandwidth data gives its parameters back, the duplex figure is the hand-computed ratio, and too
// few sizes or times that do not grow are refused naming the way.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "costmodel/link_fit.hpp"
#include "support/error.hpp"

namespace {

using mutwo::ir::CopyWay;
using mutwo::ir::LinkTiming;

LinkTiming timing(CopyWay way, int64_t bytes, int64_t ns) {
  LinkTiming t;
  t.way = way;
  t.bytes = bytes;
  t.time_ns = ns;
  t.min_ns = ns;
  t.max_ns = ns;
  t.samples = 1;
  return t;
}

// h2d: 10 us + bytes / 25 GB/s; d2h: 8 us + bytes / 20 GB/s (bytes chosen so both are whole ns).
std::vector<LinkTiming> exact(bool duplex) {
  std::vector<LinkTiming> out;
  for (int64_t bytes : {int64_t{100'000}, int64_t{10'000'000}, int64_t{1'000'000'000}}) {
    const int64_t h = 10'000 + bytes / 25;
    const int64_t d = 8'000 + bytes / 20;
    out.push_back(timing(CopyWay::h2d, bytes, h));
    out.push_back(timing(CopyWay::d2h, bytes, d));
    out.push_back(timing(CopyWay::both, bytes, duplex ? std::max(h, d) : h + d));
  }
  return out;
}

}  // namespace

TEST_CASE("an exact link is fitted back: latency, bandwidth, duplex") {
  const mutwo::costmodel::LinkFit f = mutwo::costmodel::fit_link(exact(true));
  CHECK(f.h2d.gbps == doctest::Approx(25.0).epsilon(1e-9));
  CHECK(f.h2d.latency_ns == 10'000);
  CHECK(f.d2h.gbps == doctest::Approx(20.0).epsilon(1e-9));
  CHECK(f.d2h.latency_ns == 8'000);
  CHECK(f.h2d.mean_abs_rel_error == doctest::Approx(0.0).epsilon(1e-9));
  CHECK(f.h2d.samples == 3);
  // At 1 GB: h2d 40,010,000 ns, d2h 50,008,000 ns, both at once 50,008,000 ns:
  // (40,010,000 + 50,008,000) / 50,008,000 = 1.80007...
  CHECK(f.duplex_speedup == doctest::Approx(90'018'000.0 / 50'008'000.0));
  CHECK(f.full_duplex);
  const mutwo::costmodel::LinkFit half = mutwo::costmodel::fit_link(exact(false));
  CHECK(half.duplex_speedup == doctest::Approx(1.0));
  CHECK_FALSE(half.full_duplex);
}

TEST_CASE("a link fit needs two sizes a way and times that grow") {
  std::vector<LinkTiming> one{timing(CopyWay::h2d, 4096, 5'000), timing(CopyWay::d2h, 4096, 5'000),
                              timing(CopyWay::d2h, 8192, 6'000)};
  CHECK_THROWS_WITH_AS(mutwo::costmodel::fit_link(one),
                       "link fit: 'h2d' has 1 size(s) timed; a latency and a bandwidth need 2 or more", mutwo::Error);
  std::vector<LinkTiming> flat{timing(CopyWay::h2d, 4096, 5'000), timing(CopyWay::h2d, 8192, 5'000),
                               timing(CopyWay::d2h, 4096, 5'000), timing(CopyWay::d2h, 8192, 6'000)};
  CHECK_THROWS_WITH_AS(mutwo::costmodel::fit_link(flat),
                       "link fit: 'h2d' times do not grow with the size: no bandwidth to fit", mutwo::Error);
}
