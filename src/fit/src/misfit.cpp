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
  std::vector<Index> steps;       // strictly increasing
  Eigen::MatrixXd data;           // components.size() × steps.size(); NaN: not measured
  std::vector<Index> components;  // the state component of each row of data
  Index state_size = 0;
  double weight = 1.0;  // 1 / σ²
};

Objective<EigenBackend> misfit_of(std::shared_ptr<const MisfitData> shared) {
  std::vector<Index> steps = shared->steps;
  auto term = [shared = std::move(shared)](Index step, double, const Eigen::VectorXd& y,
                                           Eigen::VectorXd& grad) {
    const MisfitData& m = *shared;
    if (y.size() != m.state_size)
      detail::fail<InvalidArgument>(
          "observation misfit at step ", step, ": the state has ", y.size(),
          " components but the observations were made of a state of ", m.state_size);
    const auto at = std::lower_bound(m.steps.begin(), m.steps.end(), step);
    const Index k = static_cast<Index>(at - m.steps.begin());
    // r = H y_k − d_k;  J_k = ½ |r|² / σ²;  ∂J_k/∂y = Hᵀ r / σ². A plain loop sums |r|² in one
    // fixed order: Eigen's vectorised reductions may split the sum by the address alignment of
    // the vectors, which differs between drivers, and the gradient must not depend on it. A
    // datum that is NaN was not measured: it adds nothing to J nor to the gradient.
    grad.setZero();
    const double* d = m.data.col(k).data();
    double sum = 0.0;
    for (std::size_t i = 0; i < m.components.size(); ++i) {
      if (std::isnan(d[i])) continue;
      const Index component = m.components[i];
      const double r = y[component] - d[i];
      sum += r * r;
      grad[component] = r * m.weight;
    }
    return 0.5 * sum * m.weight;
  };
  return Objective<EigenBackend>(Objective<EigenBackend>::TerminalFn{}, std::move(steps),
                                 std::move(term));
}

void require_sigma(const char* caller, double sigma) {
  if (!(std::isfinite(sigma) && sigma > 0.0))
    detail::fail<InvalidArgument>(caller, ": σ = ", sigma, " must be finite and > 0");
}

}  // namespace

Objective<EigenBackend> observation_misfit(const Observations& obs, double sigma) {
  obs.validate();
  require_sigma("observation_misfit", sigma);
  std::vector<Index> components(static_cast<std::size_t>(obs.field.count));
  for (Index i = 0; i < obs.field.count; ++i)
    components[static_cast<std::size_t>(i)] = obs.field.offset + i;
  return misfit_of(std::make_shared<const MisfitData>(MisfitData{
      obs.observed_steps, obs.data, std::move(components), obs.state_size, 1.0 / (sigma * sigma)}));
}

Objective<EigenBackend> component_misfit(std::vector<Index> steps, std::vector<Index> components,
                                         Eigen::MatrixXd data, Index state_size, double sigma) {
  require_sigma("component_misfit", sigma);
  if (steps.empty()) detail::fail<InvalidArgument>("component_misfit: no observed step");
  for (std::size_t k = 0; k < steps.size(); ++k) {
    if (steps[k] < 0)
      detail::fail<InvalidArgument>("component_misfit: observed step ", steps[k], " is < 0");
    if (k > 0 && steps[k] <= steps[k - 1])
      detail::fail<InvalidArgument>("component_misfit: observed step ", steps[k], " (row ", k,
                                    ") does not follow ", steps[k - 1],
                                    "; steps must be strictly increasing");
  }
  if (components.empty()) detail::fail<InvalidArgument>("component_misfit: no observed component");
  for (std::size_t i = 0; i < components.size(); ++i) {
    if (components[i] < 0 || components[i] >= state_size)
      detail::fail<InvalidArgument>("component_misfit: observed component ", components[i],
                                    " is outside the state (", state_size, " components)");
    for (std::size_t j = 0; j < i; ++j)
      if (components[j] == components[i])
        detail::fail<InvalidArgument>("component_misfit: observed component ", components[i],
                                      " is listed twice");
  }
  if (data.rows() != static_cast<Index>(components.size()) ||
      data.cols() != static_cast<Index>(steps.size()))
    detail::fail<InvalidArgument>("component_misfit: data are ", data.rows(), " × ", data.cols(),
                                  " but ", components.size(), " components × ", steps.size(),
                                  " steps were given");
  for (Index k = 0; k < data.cols(); ++k)
    for (Index i = 0; i < data.rows(); ++i)
      if (std::isinf(data(i, k)))
        detail::fail<InvalidArgument>("component_misfit: datum of component ",
                                      components[static_cast<std::size_t>(i)], " at step ",
                                      steps[static_cast<std::size_t>(k)], " is ", data(i, k),
                                      "; data must be finite, or NaN where not measured");
  return misfit_of(std::make_shared<const MisfitData>(MisfitData{std::move(steps), std::move(data),
                                                                 std::move(components), state_size,
                                                                 1.0 / (sigma * sigma)}));
}

double misfit_sigma(const Observations& obs) {
  return obs.noise > 0.0 ? obs.noise : 1.0;
}

}  // namespace rwd
