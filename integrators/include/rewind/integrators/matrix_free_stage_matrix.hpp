// rewind/integrators/matrix_free_stage_matrix.hpp — the implicit engines' stage matrices
// M = I − c·J on a backend other than Eigen (a state split across MPI ranks, or in device vectors:
// rwd::ThrustBackend): matrix-free GMRES only (rwd::BackendGmres), with the problem's jvp for M
// and its vjp for Mᵀ — StageMatrix's `gmres` solver (rewind/integrators/stage_matrix.hpp says why
// its tolerances are what they are) with the same interface, so rwd::DiagonallyImplicitRungeKutta
// runs unchanged on it. A matrix of the whole state in one process's memory is what splitting the
// state or keeping it on a device avoids: dense, band, sparse and gmres-ilu are refused, naming
// gmres.
#pragma once

#include <cmath>
#include <optional>
#include <string>

#include "rewind/error.hpp"
#include "rewind/integrators/backend_gmres.hpp"
#include "rewind/integrators/declared_jacobian.hpp"
#include "rewind/integrators/stage_matrix.hpp"
#include "rewind/types.hpp"

namespace rwd {

template <class P>
class MatrixFreeStageMatrix {
  using Backend = typename P::Backend;
  using Vector = typename Backend::Vector;

 public:
  // `wanted`: gmres or automatic (which is gmres here); anything else is refused, as is a
  // problem without a jvp. `method` names the method in refusals.
  MatrixFreeStageMatrix(const P& problem, ImplicitLinearSolver wanted, const std::string& method)
      : problem_(problem) {
    if (wanted != ImplicitLinearSolver::gmres && wanted != ImplicitLinearSolver::automatic)
      detail::fail<InvalidArgument>(
          "method '", method, "' on backend ", Backend::name,
          " (a state split across ranks, or on a device) solves its stages by matrix-free GMRES "
          "only (--linear-solver gmres): a dense, band or sparse matrix, or the ILU "
          "preconditioner's, holds the whole state in one process's memory");
    if constexpr (!detail::HasJvp<P>)
      detail::fail<InvalidArgument>(
          "method '", method,
          "': the gmres linear solver needs the problem's Jacobian-vector product "
          "jvp(t, y, theta, v, out)");
  }

  ImplicitLinearSolver solver() const { return ImplicitLinearSolver::gmres; }
  bool matrix_free() const { return true; }
  Index gmres_products() const { return gmres_products_; }
  std::string describe() const { return "matrix-free GMRES"; }

  // The products' point (t, y, θ); nothing is assembled. Returns 0 (no vjps taken).
  Index evaluate_jacobian(double t, const Vector& y, const Vector& theta) {
    move_point(t, y, theta);
    return 0;
  }
  void move_point(double t, const Vector& y, const Vector& theta) {
    if (!gmres_) make_buffers(y, theta);
    point_t_ = t;
    Backend::copy(y, point_);
    Backend::copy(theta, point_theta_);
  }
  // The coefficient c of M = I − c·J; never singular as far as this knows.
  bool factor(double c) {
    coefficient_ = c;
    return true;
  }

  // x ← M⁻¹ x (transposed: M⁻ᵀ x) by GMRES: false when it did not reach its tolerance (for Mᵀ:
  // when the true residual is above the round-off floor too).
  bool solve(Vector& x, bool transposed) {
    if constexpr (detail::HasJvp<P>) {
      const auto product = [&](const Vector& v, Vector& out) {
        if (transposed)
          problem_.vjp(point_t_, point_, point_theta_, v, out, theta_part_);
        else
          problem_.jvp(point_t_, point_, point_theta_, v, out);
        Backend::scale(-coefficient_, out);  // out = v − c·(J v)
        Backend::axpy(1.0, v, out);
        ++gmres_products_;
      };
      if (!transposed) return gmres_->solve(x, detail::kStageGmresTolerance, product).converged;
      Backend::copy(x, right_side_);
      const auto outcome = gmres_->solve(x, detail::kStageGmresTransposedTolerance, product);
      if (outcome.converged) return true;
      product(x, scratch_);
      Backend::axpy(-1.0, right_side_, scratch_);
      return std::sqrt(Backend::dot(scratch_, scratch_)) <=
             detail::kStageGmresTransposedFloor * outcome.right_side;
    } else {
      (void)x, (void)transposed;
      return false;
    }
  }

 private:
  // The vectors, shaped like the first point's (a distributed layout is known from it).
  void make_buffers(const Vector& y, const Vector& theta) {
    point_ = y;
    point_theta_ = theta;
    right_side_ = y;
    scratch_ = y;
    theta_part_ = theta;
    gmres_.emplace(y);
  }

  const P& problem_;
  double point_t_ = 0.0, coefficient_ = 0.0;
  Vector point_, point_theta_, right_side_, scratch_, theta_part_;
  std::optional<BackendGmres<Backend>> gmres_;
  Index gmres_products_ = 0;
};

}  // namespace rwd
