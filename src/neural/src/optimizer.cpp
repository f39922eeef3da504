// src/neural/src/optimizer.cpp — the checks shared by every optimizer; see
// rewind/neural/optimizer.hpp.
#include "rewind/neural/optimizer.hpp"

#include <cmath>

#include "rewind/error.hpp"

namespace rwd::training {

Optimizer::~Optimizer() = default;

namespace {

// The index of the first non-finite value (v.size() when there is none).
Index first_non_finite(const Eigen::VectorXd& v) {
  for (Index i = 0; i < v.size(); ++i)
    if (!std::isfinite(v[i])) return i;
  return v.size();
}

}  // namespace

void detail::check_update(const char* optimizer, const Eigen::VectorXd& theta,
                          const Eigen::VectorXd& gradient, Index state_size) {
  if (theta.size() == 0)
    rwd::detail::fail<InvalidArgument>(optimizer, ": the parameter vector theta is empty");
  if (gradient.size() != theta.size())
    rwd::detail::fail<InvalidArgument>(optimizer, ": the gradient has ", gradient.size(),
                                       " values but theta has ", theta.size(),
                                       "; theta was not changed");
  if (state_size != 0 && state_size != theta.size())
    rwd::detail::fail<InvalidArgument>(
        optimizer, ": theta has ", theta.size(), " values but the optimizer's state was built for ",
        state_size, " by the steps before; call reset() to start over with another size");
  if (const Index i = first_non_finite(gradient); i < gradient.size())
    rwd::detail::fail<NumericalError>(
        optimizer, ": gradient[", i, "] = ", gradient[i],
        " is not finite; theta and the optimizer's state were not changed");
  if (const Index i = first_non_finite(theta); i < theta.size())
    rwd::detail::fail<NumericalError>(
        optimizer, ": theta[", i, "] = ", theta[i],
        " is not finite; theta and the optimizer's state were not changed");
}

}  // namespace rwd::training
