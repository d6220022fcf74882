#pragma once
// Relative non-negative least squares, the fit every measured-time model here uses (the calibrated
// kernel model, the host link): coefficients c >= 0 minimising sum_i (model_i(c) / t_i - 1)^2, with
// each row of `a` a sample's terms already divided by its measured time t_i.
#include <Eigen/Dense>

namespace mutwo::costmodel {

// Non-negative least squares of a * c ~ 1, by every subset of the columns (a few terms: 2^p
// subsets): the best feasible subset solution is the NNLS optimum. All zeros when no subset is
// feasible (no rows).
Eigen::VectorXd nonnegative_least_squares(const Eigen::MatrixXd& a);

}  // namespace mutwo::costmodel
