#include "costmodel/relative_nnls.hpp"

#include <vector>

namespace mutwo::costmodel {

Eigen::VectorXd nonnegative_least_squares(const Eigen::MatrixXd& a) {
  const Eigen::Index rows = a.rows();
  const Eigen::Index p = a.cols();
  Eigen::VectorXd best = Eigen::VectorXd::Zero(p);
  if (rows == 0) return best;
  const Eigen::VectorXd ones = Eigen::VectorXd::Ones(rows);
  double best_value = ones.squaredNorm();  // c = 0
  const Eigen::VectorXd norms = a.colwise().norm().transpose();
  for (unsigned subset = 1; subset < (1u << p); ++subset) {
    std::vector<Eigen::Index> cols;
    bool usable = true;
    for (Eigen::Index j = 0; j < p; ++j) {
      if (!(subset >> j & 1u)) continue;
      if (!(norms(j) > 0)) usable = false;  // a term that is 0 on every row
      cols.push_back(j);
    }
    if (!usable || static_cast<Eigen::Index>(cols.size()) > rows) continue;
    Eigen::MatrixXd sub(rows, static_cast<Eigen::Index>(cols.size()));
    for (size_t q = 0; q < cols.size(); ++q) sub.col(static_cast<Eigen::Index>(q)) = a.col(cols[q]) / norms(cols[q]);
    const Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(sub);
    if (qr.rank() < static_cast<Eigen::Index>(cols.size())) continue;
    const Eigen::VectorXd scaled = qr.solve(ones);
    Eigen::VectorXd c = Eigen::VectorXd::Zero(p);
    bool feasible = true;
    for (size_t q = 0; q < cols.size(); ++q) {
      const double v = scaled(static_cast<Eigen::Index>(q)) / norms(cols[q]);
      if (!(v >= 0)) feasible = false;
      c(cols[q]) = v;
    }
    if (!feasible) continue;
    const double value = (a * c - ones).squaredNorm();
    if (value < best_value) {
      best_value = value;
      best = c;
    }
  }
  return best;
}

}  // namespace mutwo::costmodel
