// The shipped diagonally implicit tableaux and their validation.
#include "rewind/integrators/implicit_tableau.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "rewind/error.hpp"

namespace rwd {
namespace {

using detail::fail;

// As for the explicit tableaux: published rational coefficients satisfy their conditions to a
// few ulps; a wrong digit breaks them by far more.
constexpr double kConditionTolerance = 1e-12;

// rows[i] holds a_i0 … a_ii; c_i is the row sum.
ImplicitTableau make(std::string name, std::vector<std::vector<double>> rows, std::vector<double> b,
                     std::vector<double> b_embedded, int order, int embedded_order,
                     bool stiffly_accurate) {
  const int s = static_cast<int>(b.size());
  ImplicitTableau t;
  t.name = std::move(name);
  t.stages = s;
  t.a.assign(static_cast<std::size_t>(s * s), 0.0);
  t.c.assign(static_cast<std::size_t>(s), 0.0);
  for (int i = 0; i < s && i < static_cast<int>(rows.size()); ++i) {
    const auto& row = rows[static_cast<std::size_t>(i)];
    double sum = 0.0;
    for (int j = 0; j < static_cast<int>(row.size()); ++j) {
      t.a[static_cast<std::size_t>(i * s + j)] = row[static_cast<std::size_t>(j)];
      sum += row[static_cast<std::size_t>(j)];
    }
    t.c[static_cast<std::size_t>(i)] = sum;
  }
  t.b = std::move(b);
  t.b_embedded = std::move(b_embedded);
  t.order = order;
  t.embedded_order = embedded_order;
  t.stiffly_accurate = stiffly_accurate;
  return t;
}

void require_order_conditions(const ImplicitTableau& t, const std::vector<double>& weights,
                              int order, const char* which) {
  const ButcherTableau as = t.as_butcher();
  for (int p = 1; p <= order; ++p) {
    const double defect = order_condition_defect(as, weights, p);
    if (defect > kConditionTolerance)
      fail<InvalidArgument>("tableau '", t.name, "': ", which, " claim order ", order,
                            " but violate the order-", p, " conditions by ", defect);
  }
}

}  // namespace

ButcherTableau ImplicitTableau::as_butcher() const {
  ButcherTableau t;
  t.name = name;
  t.stages = stages;
  t.a = a;
  t.b = b;
  t.c = c;
  t.b_embedded = b_embedded;
  t.order = order;
  t.embedded_order = embedded_order;
  return t;
}

void ImplicitTableau::validate() const {
  if (stages < 1) fail<InvalidArgument>("tableau '", name, "': stages = ", stages, " must be >= 1");
  const auto s = static_cast<std::size_t>(stages);
  if (a.size() != s * s || b.size() != s || c.size() != s)
    fail<InvalidArgument>("tableau '", name, "': A, b and c have ", a.size(), ", ", b.size(),
                          " and ", c.size(), " entries; expected ", s * s, ", ", s, " and ", s);
  if (!b_embedded.empty() && b_embedded.size() != s)
    fail<InvalidArgument>("tableau '", name, "': embedded weights have ", b_embedded.size(),
                          " entries, expected s = ", s, " (or none)");
  auto all_finite = [](const std::vector<double>& v) {
    return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
  };
  if (!all_finite(a) || !all_finite(b) || !all_finite(c) || !all_finite(b_embedded))
    fail<InvalidArgument>("tableau '", name, "': coefficients must be finite");
  for (int i = 0; i < stages; ++i) {
    for (int j = i + 1; j < stages; ++j)
      if (a_at(i, j) != 0.0)
        fail<InvalidArgument>("tableau '", name, "': a[", i, "][", j, "] = ", a_at(i, j),
                              " but a diagonally implicit method needs a_ij = 0 for j > i");
    if (a_at(i, i) < 0.0)
      fail<InvalidArgument>("tableau '", name, "': a[", i, "][", i, "] = ", a_at(i, i),
                            " is negative; a stage's diagonal coefficient must be >= 0");
    double row = 0.0;
    for (int j = 0; j <= i; ++j) row += a_at(i, j);
    if (std::abs(row - c[static_cast<std::size_t>(i)]) >
        kConditionTolerance * std::max(1.0, std::abs(row)))
      fail<InvalidArgument>("tableau '", name, "': c[", i, "] = ", c[static_cast<std::size_t>(i)],
                            " but the row-sum condition needs c_i = sum_j a_ij = ", row);
  }
  bool any_implicit = false;
  for (int i = 0; i < stages; ++i) any_implicit = any_implicit || implicit_stage(i);
  if (!any_implicit)
    fail<InvalidArgument>("tableau '", name,
                          "': no stage is implicit (every a_ii = 0); use rwd::ButcherTableau");
  if (order < 1 || order > 8)
    fail<InvalidArgument>("tableau '", name, "': order = ", order, " must be in [1, 8]");
  require_order_conditions(*this, b, order, "weights b");
  if (has_embedded()) {
    if (embedded_order < 1 || embedded_order >= order)
      fail<InvalidArgument>("tableau '", name, "': embedded_order = ", embedded_order,
                            " must be in [1, order - 1] = [1, ", order - 1, "]");
    require_order_conditions(*this, b_embedded, embedded_order, "embedded weights");
    if (b_embedded == b)
      fail<InvalidArgument>("tableau '", name,
                            "': embedded weights equal b, so the error estimate is zero");
  } else if (embedded_order != 0) {
    fail<InvalidArgument>("tableau '", name, "': embedded_order = ", embedded_order,
                          " but no embedded weights were given");
  }
  if (stiffly_accurate)
    for (int j = 0; j < stages; ++j)
      if (a_at(stages - 1, j) != b[static_cast<std::size_t>(j)])
        fail<InvalidArgument>("tableau '", name,
                              "': declared stiffly accurate but the last row of A differs from "
                              "b at j = ",
                              j);
}

ImplicitTableau ImplicitTableau::backward_euler() {
  return make("backward_euler", {{1.0}}, {1.0}, {}, 1, 0, true);
}

// The error estimate compares with y_n + h f(Y_2), a backward-Euler-like first-order solution.
ImplicitTableau ImplicitTableau::trapezoid() {
  return make("trapezoid", {{0.0}, {0.5, 0.5}}, {0.5, 0.5}, {0.0, 1.0}, 2, 1, true);
}

// Alexander (1977), γ = 1 − 1/√2; the embedded first-order solution is y_n + h f(Y_1).
ImplicitTableau ImplicitTableau::sdirk2() {
  const double g = 1.0 - std::sqrt(0.5);
  return make("sdirk2", {{g}, {1.0 - g, g}}, {1.0 - g, g}, {1.0, 0.0}, 2, 1, true);
}

// Kennedy & Carpenter, Appl. Numer. Math. 44 (2003), ARK3(2)4L[2]SA, implicit tableau.
ImplicitTableau ImplicitTableau::esdirk32() {
  const double g = 1767732205903.0 / 4055673282236.0;
  const std::vector<double> b = {1471266399579.0 / 7840856788654.0,
                                 -4482444167858.0 / 7529755066697.0,
                                 11266239266428.0 / 11593286722821.0, g};
  const std::vector<double> b_hat = {
      2756255671327.0 / 12835298489170.0, -10771552573575.0 / 22201958757719.0,
      9247589265047.0 / 10645013368117.0, 2193209047091.0 / 5459859503100.0};
  return make("esdirk32",
              {{0.0},
               {g, g},
               {2746238789719.0 / 10658868560708.0, -640167445237.0 / 6845629431997.0, g},
               {b[0], b[1], b[2], g}},
              b, b_hat, 3, 2, true);
}

// Kennedy & Carpenter (2003), ARK4(3)6L[2]SA, implicit tableau (γ = 1/4).
ImplicitTableau ImplicitTableau::esdirk43() {
  const double g = 0.25;
  const std::vector<double> b = {82889.0 / 524892.0, 0.0, 15625.0 / 83664.0, 69875.0 / 102672.0,
                                 -2260.0 / 8211.0,   g};
  const std::vector<double> b_hat = {4586570599.0 / 29645900160.0, 0.0,
                                     178811875.0 / 945068544.0,    814220225.0 / 1159782912.0,
                                     -3700637.0 / 11593932.0,      61727.0 / 225920.0};
  return make("esdirk43",
              {{0.0},
               {g, g},
               {8611.0 / 62500.0, -1743.0 / 31250.0, g},
               {5012029.0 / 34652500.0, -654441.0 / 2922500.0, 174375.0 / 388108.0, g},
               {15267082809.0 / 155376265600.0, -71443401.0 / 120774400.0,
                730878875.0 / 902184768.0, 2285395.0 / 8070912.0, g},
               b},
              b, b_hat, 4, 3, true);
}

std::vector<std::string> ImplicitTableau::names() {
  return {"backward_euler", "trapezoid", "sdirk2", "esdirk32", "esdirk43"};
}

bool ImplicitTableau::known(std::string_view name) {
  for (const char* n : {"backward_euler", "beuler", "trapezoid", "crank_nicolson", "sdirk2",
                        "esdirk32", "esdirk43"})
    if (name == n) return true;
  return false;
}

ImplicitTableau ImplicitTableau::by_name(std::string_view name) {
  if (name == "backward_euler" || name == "beuler") return backward_euler();
  if (name == "trapezoid" || name == "crank_nicolson") return trapezoid();
  if (name == "sdirk2") return sdirk2();
  if (name == "esdirk32") return esdirk32();
  if (name == "esdirk43") return esdirk43();
  fail<InvalidArgument>("unknown implicit Runge-Kutta method '", name,
                        "'; known: backward_euler, trapezoid, sdirk2, esdirk32, esdirk43");
}

}  // namespace rwd
