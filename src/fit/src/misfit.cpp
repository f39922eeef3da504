// src/fit/src/misfit.cpp — see rewind/fit/misfit.hpp.
#include "rewind/fit/misfit.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>

namespace rwd {
namespace {

// What every copy of the misfit's observation function shares.
struct MisfitData {
  std::vector<Index> steps;  // strictly increasing
  Eigen::MatrixXd data;      // count × steps.size()
  Index offset = 0;
  Index count = 0;
  Index state_size = 0;
  double weight = 1.0;  // 1 / σ²
};

}  // namespace

Objective<EigenBackend> observation_misfit(const Observations& obs, double sigma) {
  obs.validate();
  if (!(std::isfinite(sigma) && sigma > 0.0))
    detail::fail<InvalidArgument>("observation_misfit: σ = ", sigma, " must be finite and > 0");
  auto shared = std::make_shared<const MisfitData>(
      MisfitData{obs.observed_steps, obs.data, obs.field.offset, obs.field.count, obs.state_size,
                 1.0 / (sigma * sigma)});
  auto term = [shared](Index step, double, const Eigen::VectorXd& y, Eigen::VectorXd& grad) {
    const MisfitData& m = *shared;
    if (y.size() != m.state_size)
      detail::fail<InvalidArgument>(
          "observation misfit at step ", step, ": the state has ", y.size(),
          " components but the observations were made of a state of ", m.state_size);
    const auto at = std::lower_bound(m.steps.begin(), m.steps.end(), step);
    const Index k = static_cast<Index>(at - m.steps.begin());
    // r = H y_k − d_k;  J_k = ½ |r|² / σ²;  ∂J_k/∂y = Hᵀ r / σ². A plain loop sums |r|² in one
    // fixed order: Eigen's vectorised reductions may split the sum by the address alignment of
    // the vectors, which differs between drivers, and the gradient must not depend on it.
    grad.setZero();
    const double* d = m.data.col(k).data();
    double sum = 0.0;
    for (Index i = 0; i < m.count; ++i) {
      const double r = y[m.offset + i] - d[i];
      sum += r * r;
      grad[m.offset + i] = r * m.weight;
    }
    return 0.5 * sum * m.weight;
  };
  return Objective<EigenBackend>(Objective<EigenBackend>::TerminalFn{}, obs.observed_steps,
                                 std::move(term));
}

double misfit_sigma(const Observations& obs) {
  return obs.noise > 0.0 ? obs.noise : 1.0;
}

}  // namespace rwd
