// rewind/integrators/rosenbrock_tableau.hpp — Rosenbrock (linearly implicit Runge–Kutta) methods
// as validated data, for stiff problems.
//
//   auto m = rwd::RosenbrockTableau::by_name("rodas4");
//   m.validate();   // throws rwd::InvalidArgument naming the violated condition
//
// The formulation: Hairer & Wanner's transformed form (Solving ODEs II, §IV.7, (7.25)), one
// linear system per stage, all with the same matrix:
//   (I/(hγ) − J) U_i = f(t_n + α_i h, y_n + Σ_{j<i} a_ij U_j) + Σ_{j<i} (c_ij/h) U_j + γ_i h ∂f/∂t,
//   y_{n+1} = y_n + Σ_i m_i U_i,      error estimate Σ_i (m_i − m̂_i) U_i,
// J = ∂f/∂y(t_n, y_n). The engine (rewind/integrators/rosenbrock.hpp) runs them all.
//
// The transformed form is the classical one, k_i = h f(y_n + Σ_{j<i} α_ij k_j) + hJ Σ_{j≤i} γ_ij
// k_j, y_{n+1} = y_n + Σ b_i k_i (Γ = (γ_ij) lower triangular with diagonal γ), written in U_i =
// Σ_{j≤i} γ_ij k_j: with Γ⁻¹ = diag(1/γ) − C,
//   A = (α_ij) Γ⁻¹,   mᵀ = bᵀ Γ⁻¹,   α_i = Σ_j α_ij,   γ_i = Σ_{j≤i} γ_ij.
// classical() converts back; from_classical() builds a tableau from published classical
// coefficients.
//
// validate() checks shape, finiteness, γ > 0, that A and C are strictly lower triangular, the
// nodes α_i and γ_i against the rows of the classical form, and the order conditions of
// Rosenbrock methods up to the claimed order (and the embedded order for m̂): in the classical
// form, with β_ij = α_ij + γ_ij (diagonal β_ii = γ included), Σ_i b_i Φ_i(τ) = 1/γ(τ) for every
// rooted tree τ with |τ| ≤ p, where the elementary weight Φ(τ) takes β along the edge below a
// vertex with exactly one child and α (strictly lower) below a vertex with two or more (Hairer &
// Wanner, Solving ODEs II, §IV.7, where the conditions are derived through rooted trees: up to
// order 4 this gives Σ b_i = 1, Σ b_i β_i' = 1/2 − γ, Σ b_i α_i² = 1/3,
// Σ b_i β_ij β_j' = 1/6 − γ + γ², …, with β_i' = Σ_{j<i} β_ij). A method declared stiffly accurate
// must have b_j = β_sj (then y_{n+1} is the solution of the last stage's equation, and R(∞) = 0).
//
// The shipped methods (coefficients as published; each validates to ~1e-15):
//   ros3p     Lang & Verwer, BIT 41(4), 2001: 3 stages, γ = 1/2 + √3/6, order 3(2), A-stable
//             (R(∞) = 1 − √3: not L-stable), designed against order reduction on parabolic
//             problems.
//   ros34pw2  Rang & Angermann, BIT 45(4), 2005: 4 stages, γ ≈ 0.4359, order 3(2), L-stable,
//             stiffly accurate, a W-method (order 2 with any matrix in place of J).
//   rodas4    Hairer & Wanner, Solving ODEs II (2nd ed.) §VI.4, their code RODAS: 6 stages,
//             γ = 1/4, order 4(3), L-stable, stiffly accurate (the embedded solution is the
//             fifth stage's).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace rwd {

struct RosenbrockTableau {
  std::string name;                // short identifier, e.g. "rodas4"
  int stages = 0;                  // s
  double gamma = 0.0;              // γ, the diagonal of Γ (> 0)
  std::vector<double> a;           // s×s row-major, a[i*s + j] = a_ij, zero for j ≥ i
  std::vector<double> c;           // s×s row-major, c_ij, zero for j ≥ i
  std::vector<double> m;           // s weights of the propagated solution
  std::vector<double> m_embedded;  // s weights of the embedded solution, empty if none
  std::vector<double> alpha;       // s nodes α_i = Σ_j α_ij: stage i is at t_n + α_i h
  std::vector<double> gamma_sum;  // s sums γ_i = Σ_{j≤i} γ_ij (the coefficient of h ∂f/∂t)
  int order = 0;                  // classical order p
  int embedded_order = 0;         // order of m̂; 0 without an embedded method
  bool stiffly_accurate = false;  // b_j = α_sj + γ_sj in the classical form

  double a_at(int i, int j) const { return a[static_cast<std::size_t>(i * stages + j)]; }
  double c_at(int i, int j) const { return c[static_cast<std::size_t>(i * stages + j)]; }
  bool has_embedded() const { return !m_embedded.empty(); }

  // The classical coefficients: α (s×s strictly lower), Γ (s×s lower, diagonal γ), b and b̂
  // (empty without an embedded method), all row-major.
  struct Classical {
    std::vector<double> alpha, gamma, b, b_embedded;
  };
  Classical classical() const;

  // A tableau from classical coefficients: alpha_rows[i] = α_i0 … α_i,i−1 and gamma_rows[i] =
  // γ_i0 … γ_i,i−1 (the diagonal is `gamma`), b and b̂ (empty for none).
  static RosenbrockTableau from_classical(std::string name, double gamma,
                                          const std::vector<std::vector<double>>& alpha_rows,
                                          const std::vector<std::vector<double>>& gamma_rows,
                                          const std::vector<double>& b,
                                          const std::vector<double>& b_embedded, int order,
                                          int embedded_order, bool stiffly_accurate);

  // The largest defect of the order-`p` conditions (trees with exactly p vertices) of the
  // propagated weights b (embedded = false) or of b̂.
  double order_condition_defect(int p, bool embedded = false) const;

  // Throws rwd::InvalidArgument naming the first violated rule.
  void validate() const;

  static RosenbrockTableau ros3p();
  static RosenbrockTableau ros34pw2();
  static RosenbrockTableau rodas4();

  // "ros3p", "ros34pw2", "rodas4"; throws InvalidArgument otherwise, listing them.
  static RosenbrockTableau by_name(std::string_view name);
  static std::vector<std::string> names();
  static bool known(std::string_view name);
};

}  // namespace rwd
