// rewind/fit/observations.hpp — observations of a simulation: what was observed, when, and how
// the data were made, in a value type and an HDF5 file that a fit needs nothing beside.
//
//   rwd::LotkaVolterra<> model;
//   rwd::ExplicitRungeKutta stepper(model, rwd::ButcherTableau::rk4(),
//                                   rwd::StepControl::fixed(0.0, 0.01, 500));
//   rwd::Observations obs;
//   obs.problem = "lotka_volterra";  obs.state_size = 2;  obs.method = "rk4";
//   obs.dt = 0.01;  obs.steps = 500;
//   obs.parameter_names = model.parameter_names();  obs.parameters = model.default_parameters();
//   obs.initial_state = model.default_initial_state();
//   obs.field = {"all", 0, 2};  obs.noise = 0.05;  obs.seed = 7;
//   obs.observed_steps = rwd::every_kth_step(obs.steps, 10);      // 10, 20, …, 500
//   obs.data = rwd::observe_trajectory(stepper, obs.initial_state, obs.parameters,
//                                      obs.observed_steps, obs.field, obs.noise, obs.seed);
//   rwd::save_observations("lv.h5", obs);                        // refuses to replace a file
//   rwd::Observations again = rwd::load_observations("lv.h5");   // validated
//
// The observation operator H selects a contiguous block of the state: H y = y[offset, offset +
// count) (a named field such as Gray–Scott's v is such a block; "all" is the whole state).
// Observed steps are step indices of a fixed-step run (t_k = t0 + k·dt): a fit compares the
// same steps of its own runs, so the observations say which integrator and step size made them.
//
// Noise: d_k = H y_k + σ ξ_{k,i}, with ξ standard normal by the Box–Muller transform (Box &
// Muller, "A note on the generation of random normal deviates", Ann. Math. Stat. 29, 1958) of
// two uniforms from a counter-based hash of (seed, step k, state component i) — the same draws
// whatever order they are made in and on every platform, unlike <random>'s distributions,
// whose algorithms differ between standard libraries.
//
// File layout (HDF5, readable with h5dump or h5py; format "rewind observations", version 2):
//   attributes of /: format, format_version, problem, size, state_size, method, dt, steps,
//                    field (name), field_offset, field_count, noise, seed, parameter_names
//                    (comma-separated, in θ's order), and the method's settings (version 2):
//                    rtol, atol, newton_rtol, newton_atol (float64, 0 = not set) and
//                    linear_solver (string, empty = the method's choice)
// A version 1 file (written before the method's settings were recorded) reads with
// MethodSettings{}: the method's defaults, which is what generated it.
//   /parameters      [p]            float64, θ that generated the data
//   /initial_state   [state_size]   float64, y0 of the generating run
//   /observed_steps  [K]            int64, strictly increasing, each in [0, steps]
//   /data            [K × count]    float64, row k = d_k (the observation at observed_steps[k])
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <type_traits>
#include <vector>

#include "rewind/backend/eigen_backend.hpp"
#include "rewind/carry.hpp"
#include "rewind/error.hpp"
#include "rewind/types.hpp"

namespace rwd {

// What the observation operator H selects: H y = y[offset, offset + count).
struct ObservedField {
  std::string name;  // "all", or the problem's name for the block ("v")
  Index offset = 0;  // first state component observed
  Index count = 0;   // number of components observed (>= 1)
};

// How the generating run's method was set beyond its name: what a fit must repeat to compare the
// same discrete map. 0 (or empty) = not set, the method's default. Names, not types, so that this
// library stays free of the integrators' option structs.
struct MethodSettings {
  double rtol = 0.0;          // BDF (CVODES): relative tolerance
  double atol = 0.0;          // BDF (CVODES): absolute tolerance
  std::string linear_solver;  // "dense", "band", "sparse" or "gmres"; empty: the method's choice
  double newton_rtol = 0.0;   // implicit Runge–Kutta methods: Newton's relative tolerance
  double newton_atol = 0.0;   // … and its absolute tolerance

  bool operator==(const MethodSettings&) const = default;
};

// A set of observations and everything needed to fit them: the problem and its size, the
// integrator and step size, the generating parameters and initial state, H, the noise.
struct Observations {
  std::string problem;   // the problem's name as the command line knows it ("gray_scott")
  Index size = 0;        // problem size (the command line's --n; 0 for fixed-size problems)
  Index state_size = 0;  // length of y
  std::string method;    // the method's name: "rk4", "esdirk43", "rodas4", "bdf", …
  MethodSettings method_settings;  // its tolerances and linear solver (defaults: none recorded)
  double dt = 0.0;                 // step size of the generating run
  Index steps = 0;                 // horizon of the generating run (steps)
  std::vector<std::string> parameter_names;  // one per component of θ
  Eigen::VectorXd parameters;                // θ used to generate the data
  ObservedField field;                       // what H selects ("all": offset 0, count state_size)
  double noise = 0.0;                        // σ of the Gaussian noise added (0: none)
  std::uint64_t seed = 0;                    // noise seed
  std::vector<Index> observed_steps;         // strictly increasing, each in [0, steps]
  Eigen::MatrixXd data;                      // field.count × observed_steps.size(); column k = d_k
  Eigen::VectorXd initial_state;             // y0 of the generating run (state_size)

  // Throws InvalidArgument naming the first violated rule: names present, sizes consistent,
  // dt > 0, steps >= 1, the field inside the state, noise finite and >= 0, observed steps
  // strictly increasing within [0, steps], θ, y0 and the data finite (a non-finite datum is
  // named by its step and component), the method's tolerances finite and >= 0.
  void validate() const;
};

// Writes `observations` to `file` (HDF5, layout above) after validating them. Refuses an
// existing file (StorageError) unless `overwrite`. The file is written under a temporary name
// beside `file` and renamed into place, so a failure (a full disk) leaves no half-written file
// and an overwritten file is replaced whole or not at all.
void save_observations(const std::filesystem::path& file, const Observations& observations,
                       bool overwrite = false);

// Reads and validates an observation file. StorageError: missing, a directory, not HDF5,
// damaged or truncated, not an observation file (another HDF5 file), another format version, a
// dataset or attribute of the wrong type or shape. InvalidArgument (naming the file): contents
// that fail Observations::validate (NaN in the data names the step and the component).
Observations load_observations(const std::filesystem::path& file);

// k, 2k, 3k, … up to and including `steps` (the observed steps of "observe every k steps").
// InvalidArgument when steps < 1, k < 1 or k > steps (nothing would be observed).
std::vector<Index> every_kth_step(Index steps, Index k);

namespace detail {

// SplitMix64's finaliser (Steele, Lea & Flood, "Fast splittable pseudorandom number
// generators", OOPSLA 2014): a bijective 64-bit mix, so distinct counters give independent-
// looking outputs.
inline std::uint64_t observation_mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// A standard normal number that depends only on (seed, step, component): Box–Muller over two
// 53-bit uniforms of the hashed counter, u1 in (0, 1] (so log(u1) is finite) and u2 in [0, 1).
inline double observation_noise(std::uint64_t seed, Index step, Index component) {
  const std::uint64_t key =
      observation_mix(observation_mix(observation_mix(seed) ^ static_cast<std::uint64_t>(step)) ^
                      static_cast<std::uint64_t>(component));
  const std::uint64_t a = observation_mix(key ^ 0x1ULL), b = observation_mix(key ^ 0x2ULL);
  const double u1 = static_cast<double>((a >> 11) + 1) * 0x1.0p-53;
  const double u2 = static_cast<double>(b >> 11) * 0x1.0p-53;
  constexpr double two_pi = 6.283185307179586476925286766559;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(two_pi * u2);
}

// Refusals of observe_trajectory that do not depend on the stepper type (observations.cpp).
void check_observation_request(Index state_size, Index planned_steps,
                               const std::vector<Index>& observed_steps, const ObservedField& field,
                               double noise);

}  // namespace detail

// Runs `stepper` from y0 with θ over its fixed steps, recording d_k = H y_k + σ ξ_{k,i} at the
// observed steps (ξ as above; σ = noise, 0 for exact data). Returns the field.count ×
// observed_steps.size() matrix of Observations::data. The stepper is any rewind stepper over
// the Eigen backend with fixed steps (initial_carry / step / finished / planned_steps); an
// adaptive one is refused, since its step indices would be different times for every θ. The run
// stops at the last observed step. InvalidArgument before any work: sizes, steps not strictly
// increasing or beyond the stepper's horizon, a field outside the state, noise < 0 or not
// finite; NumericalError (step and t named) when the state turns non-finite.
template <class Stepper>
Eigen::MatrixXd observe_trajectory(Stepper& stepper, const Eigen::VectorXd& y0,
                                   const Eigen::VectorXd& theta,
                                   const std::vector<Index>& observed_steps,
                                   const ObservedField& field, double noise, std::uint64_t seed) {
  static_assert(std::is_same_v<typename Stepper::Backend, EigenBackend>,
                "observe_trajectory records host (Eigen) vectors");
  detail::check_observation_request(stepper.state_size(), stepper.planned_steps(), observed_steps,
                                    field, noise);
  if (y0.size() != stepper.state_size())
    detail::fail<InvalidArgument>("initial state y0 has ", y0.size(),
                                  " components; the stepper's state has ", stepper.state_size());
  if (theta.size() != stepper.parameter_size())
    detail::fail<InvalidArgument>("parameter vector theta has ", theta.size(),
                                  " components; the stepper's problem has ",
                                  stepper.parameter_size());
  if (!y0.allFinite()) detail::fail<InvalidArgument>("initial state y0 contains NaN or Inf");
  if (!theta.allFinite())
    detail::fail<InvalidArgument>("parameter vector theta contains NaN or Inf");

  Eigen::MatrixXd data(field.count, static_cast<Index>(observed_steps.size()));
  Eigen::VectorXd y = y0;
  Carry carry = stepper.initial_carry(y, theta);
  for (std::size_t k = 0; k < observed_steps.size(); ++k) {
    const Index target = observed_steps[k];
    while (carry.step < target) {
      stepper.step(y, carry, theta);
      if (!y.allFinite())
        detail::fail<NumericalError>("state became non-finite (NaN or Inf) at step ", carry.step,
                                     ", t = ", carry.t, " while generating observations");
    }
    for (Index i = 0; i < field.count; ++i) {
      const Index component = field.offset + i;
      double value = y[component];
      if (noise > 0.0) value += noise * detail::observation_noise(seed, target, component);
      data(i, static_cast<Index>(k)) = value;
    }
  }
  return data;
}

}  // namespace rwd
