// rewind/integrators/butcher_tableau.hpp — explicit Runge–Kutta methods as validated data.
//
// A method is its Butcher tableau (A strictly lower triangular, weights b, nodes c) and, for
// adaptive stepping, embedded weights b̂ of a lower order. One engine
// (rewind/integrators/explicit_runge_kutta.hpp) runs them all.
//
//   auto rk4 = rwd::ButcherTableau::rk4();
//   auto dp5 = rwd::ButcherTableau::by_name("dopri5");
//   ButcherTableau mine{"mine", 2, {0, 0, 0.5, 0}, {0, 1}, {0, 0.5}, {}, 2, 0};
//   mine.validate();   // throws rwd::InvalidArgument naming the violated condition
//
// validate() checks shape, finiteness, explicitness, the row-sum condition c_i = Σ_j a_ij, and
// every order condition up to the claimed order (and up to the embedded order for b̂) through
// Butcher's rooted trees: Σ_i b_i Φ_i(τ) = 1/γ(τ) for each tree τ with |τ| ≤ p
// (Hairer, Nørsett & Wanner, Solving ODEs I, §II.2).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace rwd {

struct ButcherTableau {
  std::string name;                // short identifier, e.g. "rk4"
  int stages = 0;                  // s
  std::vector<double> a;           // s×s row-major, a[i*s + j] = a_ij, zero for j ≥ i
  std::vector<double> b;           // s weights of the propagated solution
  std::vector<double> c;           // s nodes, c_i = Σ_j a_ij
  std::vector<double> b_embedded;  // s weights of the error estimator, empty if none
  int order = 0;                   // classical order p of (A, b)
  int embedded_order = 0;          // order of (A, b̂); 0 without an embedded method
  bool fsal = false;               // first stage of the next step equals the last of this one

  double a_at(int i, int j) const { return a[static_cast<std::size_t>(i * stages + j)]; }
  bool has_embedded() const { return !b_embedded.empty(); }

  // Throws rwd::InvalidArgument naming the first violated rule.
  void validate() const;

  // The shipped methods.
  static ButcherTableau euler();             // explicit Euler, order 1
  static ButcherTableau heun();              // Heun's method (explicit trapezoid), order 2(1)
  static ButcherTableau rk4();               // classical Runge–Kutta, order 4
  static ButcherTableau rk38();              // Kutta's 3/8 rule, order 4 (torchdiffeq's "rk4")
  static ButcherTableau bogacki_shampine();  // Bogacki & Shampine 1989, order 3(2), FSAL
  static ButcherTableau dormand_prince();    // Dormand & Prince 1980, order 5(4), FSAL
  static ButcherTableau tsitouras();         // Tsitouras 2011, order 5(4), FSAL

  // "euler", "heun", "rk4", "bs3", "dopri5", "tsit5" (and long forms such as
  // "bogacki_shampine", "dormand_prince", "tsitouras"); throws InvalidArgument otherwise.
  static ButcherTableau by_name(std::string_view name);
  static std::vector<std::string> names();
};

// The largest |Σ_i w_i Φ_i(τ) − 1/γ(τ)| over the rooted trees τ of order `order` for weights w.
// Exposed for tests and for users checking their own tableaux.
double order_condition_defect(const ButcherTableau& tableau, const std::vector<double>& weights,
                              int order);

}  // namespace rwd
