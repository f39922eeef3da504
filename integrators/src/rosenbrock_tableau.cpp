// The shipped Rosenbrock tableaux, the conversion between their classical and transformed forms,
// and their validation through the order conditions of Rosenbrock methods.
#include "rewind/integrators/rosenbrock_tableau.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>

#include "rewind/error.hpp"

namespace rwd {
namespace {

using detail::fail;

// Published coefficients (17 significant digits, or derived from them) satisfy their conditions
// to a few ulps of the largest coefficient; a wrong digit breaks them by far more.
constexpr double kConditionTolerance = 1e-12;

using Matrix = std::vector<double>;  // s×s row-major

double at(const Matrix& x, int s, int i, int j) {
  return x[static_cast<std::size_t>(i * s + j)];
}

// The inverse of a lower-triangular s×s matrix, by forward substitution column by column.
Matrix lower_inverse(const Matrix& l, int s) {
  Matrix inv(static_cast<std::size_t>(s * s), 0.0);
  for (int col = 0; col < s; ++col)
    for (int i = col; i < s; ++i) {
      double sum = i == col ? 1.0 : 0.0;
      for (int k = col; k < i; ++k) sum -= at(l, s, i, k) * at(inv, s, k, col);
      inv[static_cast<std::size_t>(i * s + col)] = sum / at(l, s, i, i);
    }
  return inv;
}

Matrix multiply(const Matrix& x, const Matrix& y, int s) {
  Matrix out(static_cast<std::size_t>(s * s), 0.0);
  for (int i = 0; i < s; ++i)
    for (int j = 0; j < s; ++j) {
      double sum = 0.0;
      for (int k = 0; k < s; ++k) sum += at(x, s, i, k) * at(y, s, k, j);
      out[static_cast<std::size_t>(i * s + j)] = sum;
    }
  return out;
}

// wᵀ X.
std::vector<double> row_times(const std::vector<double>& w, const Matrix& x, int s) {
  std::vector<double> out(static_cast<std::size_t>(s), 0.0);
  for (int j = 0; j < s; ++j)
    for (int k = 0; k < s; ++k) out[static_cast<std::size_t>(j)] += w[k] * at(x, s, k, j);
  return out;
}

// A rooted tree for the order conditions: its order, density γ(τ) and elementary weight per
// stage (Φ_i(τ) as in the header: β below a vertex with one child, α below one with more).
struct Tree {
  int order;
  double density;
  std::vector<double> phi;
};

// Trees of order 1 … max_order, each once: a tree is the multiset of its root's subtrees,
// enumerated as non-decreasing index sequences into the smaller trees (as for the explicit
// tableaux' conditions, rewind/integrators/butcher_tableau.hpp).
std::vector<Tree> trees_up_to(const RosenbrockTableau::Classical& k, int s, int max_order) {
  Matrix beta = k.alpha;
  for (std::size_t e = 0; e < beta.size(); ++e) beta[e] += k.gamma[e];
  std::vector<Tree> trees;
  trees.push_back(Tree{1, 1.0, std::vector<double>(static_cast<std::size_t>(s), 1.0)});
  for (int n = 2; n <= max_order; ++n) {
    const std::size_t smaller = trees.size();
    std::vector<std::size_t> chosen;
    std::function<void(std::size_t, int)> extend = [&](std::size_t first, int remaining) {
      if (remaining == 0) {
        const Matrix& edge = chosen.size() == 1 ? beta : k.alpha;
        Tree tree{n, static_cast<double>(n), std::vector<double>(static_cast<std::size_t>(s), 1.0)};
        for (std::size_t child : chosen) {
          tree.density *= trees[child].density;
          for (int i = 0; i < s; ++i) {
            double sum = 0.0;
            for (int j = 0; j < s; ++j)
              sum += at(edge, s, i, j) * trees[child].phi[static_cast<std::size_t>(j)];
            tree.phi[static_cast<std::size_t>(i)] *= sum;
          }
        }
        trees.push_back(std::move(tree));
        return;
      }
      for (std::size_t t = first; t < smaller; ++t) {
        if (trees[t].order > remaining) continue;
        chosen.push_back(t);
        extend(t, remaining - trees[t].order);
        chosen.pop_back();
      }
    };
    extend(0, n - 1);
  }
  return trees;
}

void require_order(const RosenbrockTableau& t, int order, bool embedded) {
  for (int p = 1; p <= order; ++p) {
    const double defect = t.order_condition_defect(p, embedded);
    if (!(defect <= kConditionTolerance))
      fail<InvalidArgument>("Rosenbrock tableau '", t.name,
                            "': ", embedded ? "embedded weights" : "weights", " claim order ",
                            order, " but violate the order-", p,
                            " conditions of Rosenbrock methods by ", defect);
  }
}

bool all_finite(const std::vector<double>& v) {
  return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
}

}  // namespace

RosenbrockTableau::Classical RosenbrockTableau::classical() const {
  const int s = stages;
  // Γ⁻¹ = diag(1/γ) − C, so Γ = (diag(1/γ) − C)⁻¹; α = A Γ; bᵀ = mᵀ Γ.
  Matrix gamma_inverse(static_cast<std::size_t>(s * s), 0.0);
  for (int i = 0; i < s; ++i)
    for (int j = 0; j <= i; ++j)
      gamma_inverse[static_cast<std::size_t>(i * s + j)] = i == j ? 1.0 / gamma : -c_at(i, j);
  Classical k;
  k.gamma = lower_inverse(gamma_inverse, s);
  k.alpha = multiply(a, k.gamma, s);
  k.b = row_times(m, k.gamma, s);
  if (has_embedded()) k.b_embedded = row_times(m_embedded, k.gamma, s);
  return k;
}

RosenbrockTableau RosenbrockTableau::from_classical(
    std::string name, double gamma, const std::vector<std::vector<double>>& alpha_rows,
    const std::vector<std::vector<double>>& gamma_rows, const std::vector<double>& b,
    const std::vector<double>& b_embedded, int order, int embedded_order, bool stiffly_accurate) {
  const int s = static_cast<int>(b.size());
  Matrix alpha(static_cast<std::size_t>(s * s), 0.0), big_gamma(static_cast<std::size_t>(s * s));
  RosenbrockTableau t;
  t.name = std::move(name);
  t.stages = s;
  t.gamma = gamma;
  t.alpha.assign(static_cast<std::size_t>(s), 0.0);
  t.gamma_sum.assign(static_cast<std::size_t>(s), gamma);
  for (int i = 0; i < s; ++i) {
    big_gamma[static_cast<std::size_t>(i * s + i)] = gamma;
    for (int j = 0; j < i; ++j) {
      const auto row = static_cast<std::size_t>(i), col = static_cast<std::size_t>(j);
      const double a_ij = col < alpha_rows[row].size() ? alpha_rows[row][col] : 0.0;
      const double g_ij = col < gamma_rows[row].size() ? gamma_rows[row][col] : 0.0;
      alpha[static_cast<std::size_t>(i * s + j)] = a_ij;
      big_gamma[static_cast<std::size_t>(i * s + j)] = g_ij;
      t.alpha[row] += a_ij;
      t.gamma_sum[row] += g_ij;
    }
  }
  const Matrix inverse = lower_inverse(big_gamma, s);
  t.a = multiply(alpha, inverse, s);
  t.c.assign(static_cast<std::size_t>(s * s), 0.0);
  for (int i = 0; i < s; ++i) {
    for (int j = i; j < s; ++j) t.a[static_cast<std::size_t>(i * s + j)] = 0.0;  // round-off
    for (int j = 0; j < i; ++j) t.c[static_cast<std::size_t>(i * s + j)] = -at(inverse, s, i, j);
  }
  t.m = row_times(b, inverse, s);
  if (!b_embedded.empty()) t.m_embedded = row_times(b_embedded, inverse, s);
  t.order = order;
  t.embedded_order = embedded_order;
  t.stiffly_accurate = stiffly_accurate;
  return t;
}

double RosenbrockTableau::order_condition_defect(int p, bool embedded) const {
  if (p < 1) return 0.0;
  const Classical k = classical();
  const std::vector<double>& w = embedded ? k.b_embedded : k.b;
  if (w.size() != static_cast<std::size_t>(stages)) return 0.0;
  double worst = 0.0;
  for (const Tree& tree : trees_up_to(k, stages, p)) {
    if (tree.order != p) continue;
    double sum = 0.0;
    for (int i = 0; i < stages; ++i)
      sum += w[static_cast<std::size_t>(i)] * tree.phi[static_cast<std::size_t>(i)];
    worst = std::max(worst, std::abs(sum - 1.0 / tree.density));
  }
  return worst;
}

void RosenbrockTableau::validate() const {
  if (stages < 1)
    fail<InvalidArgument>("Rosenbrock tableau '", name, "': stages = ", stages, " must be >= 1");
  const auto s = static_cast<std::size_t>(stages);
  if (a.size() != s * s || c.size() != s * s || m.size() != s || alpha.size() != s ||
      gamma_sum.size() != s)
    fail<InvalidArgument>("Rosenbrock tableau '", name, "': A, C, m, alpha and gamma_sum have ",
                          a.size(), ", ", c.size(), ", ", m.size(), ", ", alpha.size(), " and ",
                          gamma_sum.size(), " entries; expected ", s * s, ", ", s * s, ", ", s,
                          ", ", s, " and ", s);
  if (!m_embedded.empty() && m_embedded.size() != s)
    fail<InvalidArgument>("Rosenbrock tableau '", name, "': embedded weights have ",
                          m_embedded.size(), " entries, expected s = ", s, " (or none)");
  if (!std::isfinite(gamma) || !all_finite(a) || !all_finite(c) || !all_finite(m) ||
      !all_finite(m_embedded) || !all_finite(alpha) || !all_finite(gamma_sum))
    fail<InvalidArgument>("Rosenbrock tableau '", name, "': coefficients must be finite");
  if (!(gamma > 0.0))
    fail<InvalidArgument>("Rosenbrock tableau '", name, "': gamma = ", gamma,
                          " must be > 0 (the stage matrix is I/(h gamma) - J)");
  for (int i = 0; i < stages; ++i)
    for (int j = i; j < stages; ++j)
      if (a_at(i, j) != 0.0 || c_at(i, j) != 0.0)
        fail<InvalidArgument>("Rosenbrock tableau '", name, "': a[", i, "][", j, "] = ", a_at(i, j),
                              ", c[", i, "][", j, "] = ", c_at(i, j),
                              " but A and C must be strictly lower triangular (zero for j >= i)");
  const Classical k = classical();
  for (int i = 0; i < stages; ++i) {
    double alpha_row = 0.0, gamma_row = 0.0;
    for (int j = 0; j < stages; ++j) {
      alpha_row += at(k.alpha, stages, i, j);
      gamma_row += at(k.gamma, stages, i, j);
    }
    const auto row = static_cast<std::size_t>(i);
    if (std::abs(alpha_row - alpha[row]) > kConditionTolerance * std::max(1.0, std::abs(alpha_row)))
      fail<InvalidArgument>("Rosenbrock tableau '", name, "': alpha[", i, "] = ", alpha[row],
                            " but the node condition needs alpha_i = sum_j alpha_ij = ", alpha_row);
    if (std::abs(gamma_row - gamma_sum[row]) >
        kConditionTolerance * std::max(1.0, std::abs(gamma_row)))
      fail<InvalidArgument>("Rosenbrock tableau '", name, "': gamma_sum[", i,
                            "] = ", gamma_sum[row],
                            " but the node condition needs gamma_i = sum_j gamma_ij = ", gamma_row);
  }
  if (order < 1 || order > 6)
    fail<InvalidArgument>("Rosenbrock tableau '", name, "': order = ", order, " must be in [1, 6]");
  require_order(*this, order, false);
  if (has_embedded()) {
    if (embedded_order < 1 || embedded_order >= order)
      fail<InvalidArgument>("Rosenbrock tableau '", name, "': embedded_order = ", embedded_order,
                            " must be in [1, order - 1] = [1, ", order - 1, "]");
    require_order(*this, embedded_order, true);
    if (m_embedded == m)
      fail<InvalidArgument>("Rosenbrock tableau '", name,
                            "': embedded weights equal m, so the error estimate is zero");
  } else if (embedded_order != 0) {
    fail<InvalidArgument>("Rosenbrock tableau '", name, "': embedded_order = ", embedded_order,
                          " but no embedded weights were given");
  }
  if (stiffly_accurate)
    for (int j = 0; j < stages; ++j) {
      const double beta = at(k.alpha, stages, stages - 1, j) + at(k.gamma, stages, stages - 1, j);
      const double b = k.b[static_cast<std::size_t>(j)];
      if (std::abs(beta - b) > kConditionTolerance * std::max(1.0, std::abs(b)))
        fail<InvalidArgument>("Rosenbrock tableau '", name,
                              "': declared stiffly accurate but b_j = ", b,
                              " differs from alpha_sj + gamma_sj = ", beta, " at j = ", j);
    }
}

// Lang & Verwer, BIT 41 (2001) 731–738, classical coefficients: γ = 1/2 + √3/6,
// α21 = α31 = 1, γ21 = −1, γ31 = −γ, γ32 = −(1/2 + 1/√3); b = (2/3, 0, 1/3), b̂ = (1/3, 1/3, 1/3).
RosenbrockTableau RosenbrockTableau::ros3p() {
  const double g = 0.5 + std::sqrt(3.0) / 6.0;
  return from_classical(
      "ros3p", g, {{}, {1.0}, {1.0, 0.0}}, {{}, {-1.0}, {-g, -(0.5 + 1.0 / std::sqrt(3.0))}},
      {2.0 / 3.0, 0.0, 1.0 / 3.0}, {1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0}, 3, 2, false);
}

// Rang & Angermann, BIT 45 (2005) 761–787, ROS34PW2, classical coefficients as published.
RosenbrockTableau RosenbrockTableau::ros34pw2() {
  const double g = 4.3586652150845900e-01;
  return from_classical("ros34pw2", g,
                        {{},
                         {8.7173304301691801e-01},
                         {8.4457060015369423e-01, -1.1299064236484185e-01},
                         {0.0, 0.0, 1.0}},
                        {{},
                         {-8.7173304301691801e-01},
                         {-9.0338057013044082e-01, 5.4180672388095326e-02},
                         {2.4212380706095346e-01, -1.2232505839045147e+00, 5.4526025533510214e-01}},
                        {2.4212380706095346e-01, -1.2232505839045147e+00, 1.5452602553351020e+00,
                         4.3586652150845900e-01},
                        {3.7810903145819369e-01, -9.6042292212423178e-02, 5.0000000000000000e-01,
                         2.1793326075422950e-01},
                        3, 2, true);
}

// Hairer & Wanner's RODAS (Solving ODEs II, §VI.4), given in the transformed form: stage 6 is
// evaluated at y_n + Σ_{j≤4} a_5j U_j + U_5, the embedded solution; y_{n+1} adds U_6.
RosenbrockTableau RosenbrockTableau::rodas4() {
  RosenbrockTableau t;
  t.name = "rodas4";
  t.stages = 6;
  t.gamma = 0.25;
  const std::vector<std::vector<double>> a_rows = {
      {},
      {1.544},
      {0.9466785280815826, 0.2557011698983284},
      {3.314825187068521, 2.896124015972201, 0.9986419139977817},
      {1.221224509226641, 6.019134481288629, 12.53708332932087, -0.6878860361058950},
      {1.221224509226641, 6.019134481288629, 12.53708332932087, -0.6878860361058950, 1.0}};
  const std::vector<std::vector<double>> c_rows = {
      {},
      {-5.6688},
      {-2.430093356833875, -0.2063599157091915},
      {-0.1073529058151375, -9.594562251023355, -20.47028614809616},
      {7.496443313967647, -10.24680431464352, -33.99990352819905, 11.70890893206160},
      {8.083246795921522, -7.981132988064893, -31.52159432874371, 16.31930543123136,
       -6.058818238834054}};
  t.a.assign(36, 0.0);
  t.c.assign(36, 0.0);
  for (std::size_t i = 0; i < 6; ++i)
    for (std::size_t j = 0; j < i; ++j) {
      t.a[i * 6 + j] = a_rows[i][j];
      t.c[i * 6 + j] = c_rows[i][j];
    }
  t.m = {a_rows[4][0], a_rows[4][1], a_rows[4][2], a_rows[4][3], 1.0, 1.0};
  t.m_embedded = {a_rows[4][0], a_rows[4][1], a_rows[4][2], a_rows[4][3], 1.0, 0.0};
  t.alpha = {0.0, 0.386, 0.21, 0.63, 1.0, 1.0};
  t.gamma_sum = {0.25, -0.1043, 0.1035, -0.3620000000000023e-01, 0.0, 0.0};
  t.order = 4;
  t.embedded_order = 3;
  t.stiffly_accurate = true;
  return t;
}

std::vector<std::string> RosenbrockTableau::names() {
  return {"ros3p", "ros34pw2", "rodas4"};
}

bool RosenbrockTableau::known(std::string_view name) {
  return name == "ros3p" || name == "ros34pw2" || name == "rodas4";
}

RosenbrockTableau RosenbrockTableau::by_name(std::string_view name) {
  if (name == "ros3p") return ros3p();
  if (name == "ros34pw2") return ros34pw2();
  if (name == "rodas4") return rodas4();
  fail<InvalidArgument>("unknown Rosenbrock method '", name, "'; known: ros3p, ros34pw2, rodas4");
}

}  // namespace rwd
