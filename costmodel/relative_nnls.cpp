#include "costmodel/relative_nnls.hpp"

#include <algorithm>
#include <cmath>
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
    for (size_t q = 0; q < cols.size(); ++q)
      sub.col(static_cast<Eigen::Index>(q)) = a.col(cols[q]) / norms(cols[q]);
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

Eigen::VectorXd nonnegative_least_squares_normal(const Eigen::MatrixXd& gram, const Eigen::VectorXd& rhs) {
  const Eigen::Index p = gram.rows();
  // Scale to a unit diagonal: the terms' units differ by orders of magnitude.
  Eigen::VectorXd scale = Eigen::VectorXd::Zero(p);
  for (Eigen::Index j = 0; j < p; ++j) scale(j) = gram(j, j) > 0 ? 1.0 / std::sqrt(gram(j, j)) : 0.0;
  const Eigen::MatrixXd g = scale.asDiagonal() * gram * scale.asDiagonal();
  const Eigen::VectorXd b = scale.cwiseProduct(rhs);
  const double tolerance = 1e-12 * std::max(1.0, b.cwiseAbs().maxCoeff());
  std::vector<char> passive(static_cast<size_t>(p), 0);
  Eigen::VectorXd x = Eigen::VectorXd::Zero(p);
  const auto solve_passive = [&]() {
    std::vector<Eigen::Index> cols;
    for (Eigen::Index j = 0; j < p; ++j) {
      if (passive[static_cast<size_t>(j)]) cols.push_back(j);
    }
    const Eigen::Index n = static_cast<Eigen::Index>(cols.size());
    Eigen::MatrixXd sub(n, n);
    Eigen::VectorXd r(n);
    for (Eigen::Index a = 0; a < n; ++a) {
      r(a) = b(cols[static_cast<size_t>(a)]);
      for (Eigen::Index c = 0; c < n; ++c)
        sub(a, c) = g(cols[static_cast<size_t>(a)], cols[static_cast<size_t>(c)]);
    }
    const Eigen::VectorXd z_sub = sub.ldlt().solve(r);
    Eigen::VectorXd z = Eigen::VectorXd::Zero(p);
    for (Eigen::Index a = 0; a < n; ++a) z(cols[static_cast<size_t>(a)]) = z_sub(a);
    return z;
  };
  for (Eigen::Index outer = 0; outer < 3 * p + 3; ++outer) {
    const Eigen::VectorXd w = b - g * x;  // minus half the gradient
    Eigen::Index best = -1;
    for (Eigen::Index j = 0; j < p; ++j) {
      if (passive[static_cast<size_t>(j)] || g(j, j) <= 0) continue;
      if (w(j) > tolerance && (best < 0 || w(j) > w(best))) best = j;
    }
    if (best < 0) break;
    passive[static_cast<size_t>(best)] = 1;
    for (Eigen::Index inner = 0; inner < 3 * p + 3; ++inner) {
      const Eigen::VectorXd z = solve_passive();
      bool feasible = true;
      for (Eigen::Index j = 0; j < p; ++j) {
        if (passive[static_cast<size_t>(j)] && !(z(j) > 0)) feasible = false;
      }
      if (feasible) {
        x = z;
        break;
      }
      // Step from x toward z as far as feasibility allows; drop the terms that reach 0.
      double alpha = 1.0;
      for (Eigen::Index j = 0; j < p; ++j) {
        if (passive[static_cast<size_t>(j)] && !(z(j) > 0)) alpha = std::min(alpha, x(j) / (x(j) - z(j)));
      }
      x += alpha * (z - x);
      for (Eigen::Index j = 0; j < p; ++j) {
        if (passive[static_cast<size_t>(j)] && x(j) <= tolerance) {
          passive[static_cast<size_t>(j)] = 0;
          x(j) = 0;
        }
      }
    }
  }
  return scale.cwiseProduct(x);
}

}  // namespace mutwo::costmodel
