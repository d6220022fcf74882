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

// Non-negative least squares in normal-equation form, for many rows and more terms than subsets
// allow: x >= 0 minimising x' G x - 2 g' x (G = A'A, g = A'b, so ||A x - b||^2 up to a constant), by
// Lawson and Hanson's active-set algorithm ("Solving Least Squares Problems", 1974, ch. 23), each
// passive-set system solved by LDL' (Eigen) on the columns scaled to unit diagonal. Terms whose
// diagonal is 0 stay 0. At most 3 * terms outer iterations; the result is the exact NNLS optimum up
// to round-off for a positive definite G.
Eigen::VectorXd nonnegative_least_squares_normal(const Eigen::MatrixXd& gram, const Eigen::VectorXd& rhs);

}  // namespace mutwo::costmodel
