// rewind/integrators/stage_gmres.hpp — restarted GMRES (SUNDIALS' SPGMR) for the matrix-free
// stage solves of the implicit engines: A x = b where only products A v are available (for the
// stage matrices A = I − c·J, Jacobian–vector products forward and vector–Jacobian products for
// the transposed solves of the adjoint).
//
//   rwd::StageGmres gmres(n);
//   const auto outcome = gmres.solve(x, 1e-10, [&](const Eigen::VectorXd& v, Eigen::VectorXd& av) {
//     av = v - c * (J v);  // any linear operator
//   });                    // x ← A⁻¹ x (x is b on entry), from a zero initial guess
//   if (!outcome.converged) { … }
//
// The iteration stops when SPGMR's residual estimate ‖b − A x‖₂ is below tolerance·‖b‖₂, or
// after (max_restarts + 1)·krylov_dimension products. Deterministic: modified Gram–Schmidt on
// rewind's Eigen N_Vector (fixed-order reductions, rewind/integrators/eigen_nvector.hpp), so the
// same b and the same products give the same x, bit for bit, in a replay. No preconditioner.
#pragma once

#include <functional>
#include <memory>

#include <Eigen/Core>

#include "rewind/types.hpp"

namespace rwd {

class StageGmres {
 public:
  // out = A v (out has v's size; it is not v).
  using Product = std::function<void(const Eigen::VectorXd& v, Eigen::VectorXd& out)>;

  struct Outcome {
    bool converged = false;   // the residual estimate reached the tolerance
    int iterations = 0;       // products A v taken (one per Krylov vector, restarts included)
    double residual = 0.0;    // SPGMR's estimate of ‖b − A x‖₂ at the end
    double right_side = 0.0;  // ‖b‖₂
  };

  // For n unknowns; a Krylov space of krylov_dimension vectors, restarted at most max_restarts
  // times. InvalidArgument for n < 1 or a dimension < 1; Error when SUNDIALS cannot make it.
  explicit StageGmres(Index n, int krylov_dimension = 30, int max_restarts = 10);
  ~StageGmres();
  StageGmres(StageGmres&&) noexcept;
  StageGmres& operator=(StageGmres&&) noexcept;
  StageGmres(const StageGmres&) = delete;
  StageGmres& operator=(const StageGmres&) = delete;

  // x ← A⁻¹ x: x holds b on entry and the solution on return (x = 0 when b = 0). `tolerance`
  // relative to ‖b‖₂, > 0.
  Outcome solve(Eigen::VectorXd& x, double tolerance, const Product& product);

 private:
  struct Spgmr;
  std::unique_ptr<Spgmr> spgmr_;
};

}  // namespace rwd
