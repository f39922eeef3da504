// rewind/neural/optimizer.hpp — the interface of first-order optimizers: θ ← update(θ, ∇J).
// Implementations: rwd::training::Adam (adam.hpp), rwd::training::Sgd (sgd.hpp).
//
//   rwd::training::AdamOptions options;
//   options.learning_rate = 1e-2;
//   rwd::training::Adam adam(options);          // refuses bad options here, before any work
//   for (...) adam.step(theta, gradient);        // theta updated in place
//
// Every optimizer
//   - refuses a gradient whose size differs from θ's, an empty θ, and NaN/Inf in θ or in the
//     gradient (rwd::InvalidArgument, rwd::NumericalError), *before* touching θ or its own state:
//     a non-finite value would otherwise poison θ and the moment estimates for good;
//   - keeps its state (moments, velocity) for one parameter size: θ may change size only on the
//     first step or after reset();
//   - is deterministic: the same gradients give the same bits on every run;
//   - does not allocate in step() after the first call for a given size (also after reset()).
#pragma once

#include <string>
#include <vector>

#include <Eigen/Dense>

#include "rewind/types.hpp"

namespace rwd::training {

// Everything an optimizer carries from one step to the next, for a checkpoint of a training
// run: restoring it into an optimizer of the same kind and options continues the run with the
// same bits as if it had never stopped.
struct OptimizerState {
  std::string kind;                      // "adam" or "sgd": restore refuses another kind's state
  Index steps = 0;                       // iterations()
  std::vector<Eigen::VectorXd> vectors;  // adam: m, v; sgd: the velocity (empty without momentum)
};

class Optimizer {
 public:
  virtual ~Optimizer();
  // One update of theta with the gradient of the loss at theta. Throws (leaving theta and the
  // optimizer unchanged) on the bad input listed above.
  virtual void step(Eigen::VectorXd& theta, const Eigen::VectorXd& gradient) = 0;
  // A one-line description with the options, e.g. "adam(lr = 0.01)".
  virtual std::string name() const = 0;
  // Steps taken since construction or the last reset().
  virtual Index iterations() const = 0;
  // Forgets the state (moments, velocity, step count); keeps the options and the memory.
  virtual void reset() = 0;
  // The step size, changeable between steps for a schedule (the state is kept); a value that
  // is not finite and > 0 is refused (rwd::InvalidArgument) and the old one kept.
  virtual double learning_rate() const = 0;
  virtual void set_learning_rate(double learning_rate) = 0;
  // The state after the last step, and its restoration (rwd::InvalidArgument for a state of
  // another kind or with vectors of the wrong number or size). The options (learning rate, β…)
  // are not part of it: they come from the optimizer restored into.
  virtual OptimizerState state() const = 0;
  virtual void restore(const OptimizerState& state) = 0;
};

namespace detail {

// The checks every optimizer runs before an update (see above). `optimizer` names it in the
// message; `state_size` is the size the optimizer's state was built for (0 when it has none yet,
// i.e. on a first step or after reset()).
void check_update(const char* optimizer, const Eigen::VectorXd& theta,
                  const Eigen::VectorXd& gradient, Index state_size);

}  // namespace detail
}  // namespace rwd::training
