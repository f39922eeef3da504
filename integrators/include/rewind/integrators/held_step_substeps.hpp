// rewind/integrators/held_step_substeps.hpp — a fixed or prescribed step of an implicit or
// Rosenbrock engine that fails whole, taken as equal substeps.
//
// A held step (fixed, prescribed, or chosen by an adaptive run at other parameters and held while
// an optimiser moves) may be too long for the stage equations at the parameters it meets: a
// Newton iteration without a solution connected to its start, or a singular I − hγJ. Cut into m
// equal substeps, the first m = 2, 4, … up to a limit all of whose substeps succeed, the step's
// map is the composition of those substeps — a function of (y_n, θ, h) alone, so every replay
// cuts it alike — and its adjoint reverses the substeps, last first. The engines
// (diagonally_implicit_runge_kutta.hpp, rosenbrock.hpp) own the states; this header owns the
// search and the substeps' times.
#pragma once

#include <string>

#include "rewind/error.hpp"
#include "rewind/types.hpp"
#include "rewind/warning.hpp"

namespace rwd::detail {

// The most substeps a held step may be cut into: 2^20; and the engines' default limit.
inline constexpr int kMaxHeldStepSubsteps = 1 << 20;
inline constexpr int kDefaultMaxSubsteps = 64;

// Refuses a limit outside [1, 2^20] (1: a failed held step stops the run), naming `owner`.
inline void validate_max_substeps(int max_substeps, const char* owner) {
  if (max_substeps < 1 || max_substeps > kMaxHeldStepSubsteps)
    fail<InvalidArgument>(owner, " max_substeps = ", max_substeps,
                          " must be in [1, 2^20] (1: a failed fixed step stops the run)");
}

// Substep j of size hs of the step from t starts at t + j·hs.
inline double substep_time(double t, int j, double hs) {
  return t + static_cast<double>(j) * hs;
}

// The first m in 2, 4, … ≤ max_substeps for which solve_substep(j, m) returns for every
// j = 0 … m − 1 in order (each substep starting where the previous one ended; a failure throws
// Failure), or 0 when none does, the last failure then in `last`. `tried` is set to the largest m
// tried (1 when none was).
template <class Failure, class SolveSubstep>
int first_substep_count(int max_substeps, SolveSubstep&& solve_substep, Failure& last, int& tried) {
  tried = 1;
  for (int m = 2; m <= max_substeps; m *= 2) {
    tried = m;
    try {
      for (int j = 0; j < m; ++j) solve_substep(j, m);
      return m;
    } catch (const Failure& failure) {
      last = failure;
    }
  }
  return 0;
}

// ", whole and in m substeps of h/m" for a failure message when the search tried up to m
// substeps (`tried` from first_substep_count), "" when it tried none.
inline std::string substeps_tried_text(int tried) {
  if (tried <= 1) return {};
  const std::string m = std::to_string(tried);
  return ", whole and in " + m + " substeps of h/" + m;
}

// The one warning a stepper gives when it first cuts a held step (`warned` keeps it to one: a
// replay or a later cut step says nothing more), so that a run whose fixed steps were not all
// taken as asked says so. `source` names the engine ("implicit engine", "Rosenbrock engine"),
// `method` the tableau, `failure` what failed at the whole step.
inline void warn_first_substeps(bool& warned, const char* source, const std::string& method,
                                const char* failure, Index step, double t, double h, int substeps) {
  if (warned) return;
  warned = true;
  warn(source, method, ": step ", step, " at t = ", t, " (h = ", h, "): ", failure,
       " at the whole step, which was taken as ", substeps, " substeps of h/", substeps,
       "; later steps are cut alike where they fail, without another warning (max_substeps = 1 "
       "stops the run there instead)");
}

}  // namespace rwd::detail
