// Models that rwd::auto_problem must refuse at compile time, one per REWIND_CASE (1–4); each
// build is expected to fail with the static_assert message that tests/CMakeLists.txt names
// (tests auto_problem_refuses_*).
#include <array>

#include "rewind/model.hpp"

// 1: no state_names.
struct WithoutStateNames {
  static constexpr std::array<const char*, 1> parameter_names{"k"};
  template <class T>
  void rhs(double, const T* y, const T* p, T* f) const {
    f[0] = -p[0] * y[0];
  }
};

// 2: rhs written for double only.
struct NotTemplated {
  static constexpr std::array<const char*, 1> state_names{"x"};
  static constexpr std::array<const char*, 1> parameter_names{"k"};
  void rhs(double, const double* y, const double* p, double* f) const { f[0] = -p[0] * y[0]; }
};

// 3: two default values for one parameter.
struct WrongDefaultCount {
  static constexpr std::array<const char*, 1> state_names{"x"};
  static constexpr std::array<const char*, 1> parameter_names{"k"};
  static constexpr std::array<double, 2> default_parameters{1.0, 2.0};
  template <class T>
  void rhs(double, const T* y, const T* p, T* f) const {
    f[0] = -p[0] * y[0];
  }
};

// 4: a band wider than the state (two states, two sub-diagonals).
struct BandTooWide {
  static constexpr std::array<const char*, 2> state_names{"x", "y"};
  static constexpr std::array<const char*, 1> parameter_names{"k"};
  static constexpr rwd::JacobianBand jacobian_band{0, 2};
  template <class T>
  void rhs(double, const T* y, const T* p, T* f) const {
    f[0] = -p[0] * y[0];
    f[1] = p[0] * y[0];
  }
};

int main() {
#if REWIND_CASE == 1
  const auto problem = rwd::auto_problem(WithoutStateNames{});
#elif REWIND_CASE == 2
  const auto problem = rwd::auto_problem(NotTemplated{});
#elif REWIND_CASE == 3
  const auto problem = rwd::auto_problem(WrongDefaultCount{});
#else
  const auto problem = rwd::auto_problem(BandTooWide{});
#endif
  return static_cast<int>(problem.state_size());
}
