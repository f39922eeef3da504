// integrators/src/stage_gmres.cpp — see rewind/integrators/stage_gmres.hpp: SPGMR on rewind's Eigen
// N_Vector, through the backend-generic rwd::BackendGmres (rewind/integrators/backend_gmres.hpp).
#include "rewind/integrators/stage_gmres.hpp"

#include "rewind/backend/eigen_backend.hpp"
#include "rewind/error.hpp"
#include "rewind/integrators/backend_gmres.hpp"

namespace rwd {

struct StageGmres::Spgmr {
  Spgmr(Index unknowns, int krylov_dimension, int max_restarts)
      : n(unknowns), gmres(Eigen::VectorXd::Zero(unknowns), krylov_dimension, max_restarts) {}
  Index n;
  BackendGmres<EigenBackend> gmres;
};

StageGmres::StageGmres(Index n, int krylov_dimension, int max_restarts) {
  if (n < 1 || krylov_dimension < 1 || max_restarts < 0)
    detail::fail<InvalidArgument>("StageGmres: ", n, " unknowns, Krylov dimension ",
                                  krylov_dimension, " and ", max_restarts,
                                  " restarts (need n >= 1, dimension >= 1, restarts >= 0)");
  spgmr_ = std::make_unique<Spgmr>(n, krylov_dimension, max_restarts);
}

StageGmres::Outcome StageGmres::solve(Eigen::VectorXd& x, double tolerance,
                                      const Product& product) {
  if (x.size() != spgmr_->n)
    detail::fail<InvalidArgument>("StageGmres: a right side of ", x.size(), " values for ",
                                  spgmr_->n, " unknowns");
  return spgmr_->gmres.solve(x, tolerance, product);
}

StageGmres::~StageGmres() = default;
StageGmres::StageGmres(StageGmres&&) noexcept = default;
StageGmres& StageGmres::operator=(StageGmres&&) noexcept = default;

}  // namespace rwd
