// A model of your own for the `rewind` tool: an SIR epidemic, written once in the scalar type
// (rewind/model.hpp) and exported as a plugin (rewind/model_plugin.hpp). Its derivatives are
// derived (Sacado's forward mode): no hand-written vjp.
//
//   # CMakeLists.txt:  find_package(rewind REQUIRED)
//   #                  rewind_add_model(sir sir_model.cpp)      → build/sir.so
//   rewind run --model build/sir.so --parameters beta=0.6       # J = ½|y_N|², dJ/dθ, FD check
//   rewind run --model build/sir.so --snapshots 10 --json       # checkpointed: the same bits
//   rewind generate --model build/sir.so --observe I --observe-every 10 --noise 1 --out sir.h5
//   rewind fit --model build/sir.so --data data/sir_infected.csv --fit beta,gamma
//              --start beta=0.4,gamma=0.15 --dt 0.05 --plot sir_fit   # (one line) I alone
//
// S, I, R count people; time is in days; beta is the infection rate per day, gamma the recovery
// rate per day, N the population. The initial state depends on N (1% infected), so dJ/dN counts
// N's effect through it too.
#include <array>

#include "rewind/model_plugin.hpp"

struct Sir {
  static constexpr std::array<const char*, 3> state_names{"S", "I", "R"};
  static constexpr std::array<const char*, 3> parameter_names{"beta", "gamma", "N"};
  static constexpr std::array<double, 3> default_parameters{0.5, 0.25, 1000.0};
  static constexpr double default_dt = 0.1;   // days
  static constexpr long default_steps = 400;  // 40 days
  template <class T>
  void rhs(double /*t*/, const T* y, const T* p, T* f) const {
    const T infection = p[0] * y[0] * y[1] / p[2];
    f[0] = -infection;
    f[1] = infection - p[1] * y[1];
    f[2] = p[1] * y[1];
  }
  template <class T>
  void initial_state(const T* p, T* y0) const {
    y0[0] = 0.99 * p[2];
    y0[1] = 0.01 * p[2];
    y0[2] = 0.0 * p[2];
  }
};

REWIND_MODEL(Sir)
