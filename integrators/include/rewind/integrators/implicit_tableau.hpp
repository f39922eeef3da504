// rewind/integrators/implicit_tableau.hpp — diagonally implicit Runge–Kutta methods as validated
// data, for stiff problems.
//
// A method is its Butcher tableau with A lower triangular (a_ij = 0 for j > i; the diagonal a_ii
// may be non-zero: stage i solves a nonlinear system in Y_i alone), weights b, nodes c and, for
// adaptive stepping, embedded weights b̂ of a lower order. One engine
// (rewind/integrators/diagonally_implicit_runge_kutta.hpp) runs them all.
//
//   auto m = rwd::ImplicitTableau::by_name("esdirk43");
//   m.validate();   // throws rwd::InvalidArgument naming the violated condition
//
// validate() checks shape, finiteness, the lower-triangular form with a_ii ≥ 0, the row-sum
// condition c_i = Σ_j a_ij, the order conditions up to the claimed order (and the embedded
// order for b̂) through Butcher's rooted trees, as for the explicit tableaux
// (rwd::order_condition_defect), and, for a method declared stiffly accurate, that the last row
// of A is b (then y_{n+1} is the last stage value, and an L-stable method damps stiff modes to
// zero).
//
// The shipped methods:
//   backward_euler  1 stage, order 1, L-stable, no error estimate.
//   trapezoid       the trapezoid rule (Crank–Nicolson) as a 2-stage ESDIRK, order 2(1),
//                   A-stable but not L-stable (stiff modes oscillate instead of decaying).
//   sdirk2          Alexander's 2-stage SDIRK, γ = 1 − 1/√2, order 2(1), L-stable, stiffly
//                   accurate (Alexander, SIAM J. Numer. Anal. 14(6), 1977).
//   esdirk32        ESDIRK3(2)4L[2]SA, the implicit part of Kennedy & Carpenter's ARK3(2)4L[2]SA
//                   (Appl. Numer. Math. 44, 2003): 4 stages, explicit first, γ ≈ 0.4359, order
//                   3(2), L-stable, stiffly accurate.
//   esdirk43        ESDIRK4(3)6L[2]SA, the implicit part of ARK4(3)6L[2]SA (same paper): 6
//                   stages, γ = 1/4, order 4(3), L-stable, stiffly accurate.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "rewind/integrators/butcher_tableau.hpp"

namespace rwd {

struct ImplicitTableau {
  std::string name;                // short identifier, e.g. "sdirk2"
  int stages = 0;                  // s
  std::vector<double> a;           // s×s row-major, a[i*s + j] = a_ij, zero for j > i
  std::vector<double> b;           // s weights of the propagated solution
  std::vector<double> c;           // s nodes, c_i = Σ_j a_ij
  std::vector<double> b_embedded;  // s weights of the error estimator, empty if none
  int order = 0;                   // classical order p of (A, b)
  int embedded_order = 0;          // order of (A, b̂); 0 without an embedded method
  bool stiffly_accurate = false;   // the last row of A equals b

  double a_at(int i, int j) const { return a[static_cast<std::size_t>(i * stages + j)]; }
  bool has_embedded() const { return !b_embedded.empty(); }
  // Stage i solves a nonlinear system (a_ii ≠ 0); an explicit stage (a_ii = 0) does not.
  bool implicit_stage(int i) const { return a_at(i, i) != 0.0; }

  // Throws rwd::InvalidArgument naming the first violated rule.
  void validate() const;

  // The same coefficients as an rwd::ButcherTableau (not explicit: for order_condition_defect).
  ButcherTableau as_butcher() const;

  static ImplicitTableau backward_euler();
  static ImplicitTableau trapezoid();
  static ImplicitTableau sdirk2();
  static ImplicitTableau esdirk32();
  static ImplicitTableau esdirk43();

  // "backward_euler" (or "beuler"), "trapezoid" (or "crank_nicolson"), "sdirk2", "esdirk32",
  // "esdirk43"; throws InvalidArgument otherwise, listing them.
  static ImplicitTableau by_name(std::string_view name);
  static std::vector<std::string> names();
  // Whether by_name knows `name` (a name or an alias).
  static bool known(std::string_view name);
};

}  // namespace rwd
