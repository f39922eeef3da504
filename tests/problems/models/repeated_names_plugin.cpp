// A model plugin whose state names repeat: the plugin builds, and the loader refuses it with the
// reason rwd::auto_problem gives.
#include <array>

#include "rewind/model_plugin.hpp"

struct RepeatedNames {
  static constexpr std::array<const char*, 2> state_names{"x", "x"};
  static constexpr std::array<const char*, 0> parameter_names{};
  template <class T>
  void rhs(double /*t*/, const T* y, const T* /*p*/, T* f) const {
    f[0] = y[1];
    f[1] = -y[0];
  }
};

REWIND_MODEL(RepeatedNames)
