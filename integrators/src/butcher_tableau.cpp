// The shipped Butcher tableaux and their validation.
#include "rewind/integrators/butcher_tableau.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "rewind/error.hpp"

namespace rwd {
namespace {

using detail::fail;

// Tolerance on order conditions: coefficients published as 16-digit decimals (Tsitouras)
// satisfy their conditions to a few ulps, a wrong digit anywhere breaks them by far more.
constexpr double kConditionTolerance = 1e-12;

ButcherTableau make(std::string name, std::vector<std::vector<double>> rows, std::vector<double> b,
                    std::vector<double> b_embedded, int order, int embedded_order, bool fsal) {
  const int s = static_cast<int>(b.size());
  ButcherTableau t;
  t.name = std::move(name);
  t.stages = s;
  t.a.assign(static_cast<std::size_t>(s * s), 0.0);
  t.c.assign(static_cast<std::size_t>(s), 0.0);
  for (int i = 0; i < s && i < static_cast<int>(rows.size()); ++i) {
    double sum = 0.0;
    for (int j = 0; j < static_cast<int>(rows[static_cast<std::size_t>(i)].size()); ++j) {
      t.a[static_cast<std::size_t>(i * s + j)] =
          rows[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)];
      sum += rows[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)];
    }
    t.c[static_cast<std::size_t>(i)] = sum;
  }
  t.b = std::move(b);
  t.b_embedded = std::move(b_embedded);
  t.order = order;
  t.embedded_order = embedded_order;
  t.fsal = fsal;
  return t;
}

}  // namespace

void ButcherTableau::validate() const {
  if (stages < 1) fail<InvalidArgument>("tableau '", name, "': stages = ", stages, " must be >= 1");
  const auto s = static_cast<std::size_t>(stages);
  if (a.size() != s * s)
    fail<InvalidArgument>("tableau '", name, "': A has ", a.size(),
                          " entries, expected s*s = ", s * s);
  if (b.size() != s)
    fail<InvalidArgument>("tableau '", name, "': b has ", b.size(), " entries, expected s = ", s);
  if (c.size() != s)
    fail<InvalidArgument>("tableau '", name, "': c has ", c.size(), " entries, expected s = ", s);
  if (!b_embedded.empty() && b_embedded.size() != s)
    fail<InvalidArgument>("tableau '", name, "': embedded weights have ", b_embedded.size(),
                          " entries, expected s = ", s, " (or none)");
  auto all_finite = [](const std::vector<double>& v) {
    return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
  };
  if (!all_finite(a) || !all_finite(b) || !all_finite(c) || !all_finite(b_embedded))
    fail<InvalidArgument>("tableau '", name, "': coefficients must be finite");
  for (int i = 0; i < stages; ++i)
    for (int j = i; j < stages; ++j)
      if (a_at(i, j) != 0.0)
        fail<InvalidArgument>("tableau '", name, "': a[", i, "][", j, "] = ", a_at(i, j),
                              " but an explicit method needs a_ij = 0 for j >= i");
  for (int i = 0; i < stages; ++i) {
    double row = 0.0;
    for (int j = 0; j < i; ++j) row += a_at(i, j);
    if (std::abs(row - c[static_cast<std::size_t>(i)]) >
        kConditionTolerance * std::max(1.0, std::abs(row)))
      fail<InvalidArgument>("tableau '", name, "': c[", i, "] = ", c[static_cast<std::size_t>(i)],
                            " but the row-sum condition needs c_i = sum_j a_ij = ", row);
  }
  if (order < 1) fail<InvalidArgument>("tableau '", name, "': order = ", order, " must be >= 1");
  if (order > 8)
    fail<InvalidArgument>("tableau '", name, "': order = ", order,
                          " is above the checked maximum of 8");
  for (int p = 1; p <= order; ++p) {
    const double defect = order_condition_defect(*this, b, p);
    if (defect > kConditionTolerance)
      fail<InvalidArgument>("tableau '", name, "': claims order ", order,
                            " but violates the order-", p, " conditions by ", defect);
  }
  if (has_embedded()) {
    if (embedded_order < 1 || embedded_order >= order)
      fail<InvalidArgument>("tableau '", name, "': embedded_order = ", embedded_order,
                            " must be in [1, order - 1] = [1, ", order - 1, "]");
    for (int p = 1; p <= embedded_order; ++p) {
      const double defect = order_condition_defect(*this, b_embedded, p);
      if (defect > kConditionTolerance)
        fail<InvalidArgument>("tableau '", name, "': embedded weights claim order ", embedded_order,
                              " but violate the order-", p, " conditions by ", defect);
    }
    if (b_embedded == b)
      fail<InvalidArgument>("tableau '", name,
                            "': embedded weights equal b, so the error estimate is zero");
  } else if (embedded_order != 0) {
    fail<InvalidArgument>("tableau '", name, "': embedded_order = ", embedded_order,
                          " but no embedded weights were given");
  }
  if (fsal) {
    // FSAL: the last stage is evaluated at y_{n+1}, i.e. its row of A equals b and c_s = 1.
    for (int j = 0; j < stages; ++j)
      if (a_at(stages - 1, j) != b[static_cast<std::size_t>(j)])
        fail<InvalidArgument>("tableau '", name,
                              "': marked FSAL but the last row of A differs from b at j = ", j);
  }
}

ButcherTableau ButcherTableau::euler() {
  return make("euler", {{}}, {1.0}, {}, 1, 0, false);
}

ButcherTableau ButcherTableau::heun() {
  return make("heun", {{}, {1.0}}, {0.5, 0.5}, {1.0, 0.0}, 2, 1, false);
}

ButcherTableau ButcherTableau::rk4() {
  return make("rk4", {{}, {0.5}, {0.0, 0.5}, {0.0, 0.0, 1.0}}, {1.0 / 6, 1.0 / 3, 1.0 / 3, 1.0 / 6},
              {}, 4, 0, false);
}

// Kutta (1901): the "3/8 rule", fourth order with a smaller error constant than the classical
// method. torchdiffeq's fixed-step "rk4" is this tableau, so comparisons with it use this one.
ButcherTableau ButcherTableau::rk38() {
  return make("rk38", {{}, {1.0 / 3}, {-1.0 / 3, 1.0}, {1.0, -1.0, 1.0}},
              {1.0 / 8, 3.0 / 8, 3.0 / 8, 1.0 / 8}, {}, 4, 0, false);
}

// Bogacki & Shampine, Appl. Math. Lett. 2(4), 1989.
ButcherTableau ButcherTableau::bogacki_shampine() {
  return make("bs3", {{}, {0.5}, {0.0, 0.75}, {2.0 / 9, 1.0 / 3, 4.0 / 9}},
              {2.0 / 9, 1.0 / 3, 4.0 / 9, 0.0}, {7.0 / 24, 1.0 / 4, 1.0 / 3, 1.0 / 8}, 3, 2, true);
}

// Dormand & Prince, J. Comput. Appl. Math. 6(1), 1980.
ButcherTableau ButcherTableau::dormand_prince() {
  const std::vector<double> b = {35.0 / 384,     0.0,       500.0 / 1113, 125.0 / 192,
                                 -2187.0 / 6784, 11.0 / 84, 0.0};
  return make(
      "dopri5",
      {{},
       {1.0 / 5},
       {3.0 / 40, 9.0 / 40},
       {44.0 / 45, -56.0 / 15, 32.0 / 9},
       {19372.0 / 6561, -25360.0 / 2187, 64448.0 / 6561, -212.0 / 729},
       {9017.0 / 3168, -355.0 / 33, 46732.0 / 5247, 49.0 / 176, -5103.0 / 18656},
       {35.0 / 384, 0.0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84}},
      b,
      {5179.0 / 57600, 0.0, 7571.0 / 16695, 393.0 / 640, -92097.0 / 339200, 187.0 / 2100, 1.0 / 40},
      5, 4, true);
}

// Tsitouras, Comput. Math. Appl. 62(2), 2011: "Runge–Kutta pairs of order 5(4) satisfying only
// the first column simplifying assumption". The first column follows from the row sums.
ButcherTableau ButcherTableau::tsitouras() {
  const double c2 = 0.161, c3 = 0.327, c4 = 0.9, c5 = 0.9800255409045097;
  const double a32 = 0.3354806554923570;
  const double a42 = -6.359448489975075, a43 = 4.362295432869581;
  const double a52 = -11.74888356406283, a53 = 7.495539342889836, a54 = -0.09249506636175525;
  const double a62 = -12.92096931784711, a63 = 8.159367898576159, a64 = -0.07158497328140100,
               a65 = -0.02826905039406838;
  const double b2 = 0.01, b3 = 0.4798896504144996, b4 = 1.379008574103742, b5 = -3.290069515436081,
               b6 = 2.324710524099774;
  const double b1 = 1.0 - (b2 + b3 + b4 + b5 + b6);
  const std::vector<double> b = {b1, b2, b3, b4, b5, b6, 0.0};
  // Error weights e = b − b̂ as published (with the sign of e_7 corrected to −1/66).
  const std::vector<double> e = {0.001780011052226, 0.000816434459657,  -0.007880878010262,
                                 0.144711007173263, -0.582357165452555, 0.458082105929187,
                                 -1.0 / 66};
  std::vector<double> b_hat(7);
  for (std::size_t i = 0; i < 7; ++i) b_hat[i] = b[i] - e[i];
  return make("tsit5",
              {{},
               {c2},
               {c3 - a32, a32},
               {c4 - a42 - a43, a42, a43},
               {c5 - a52 - a53 - a54, a52, a53, a54},
               {1.0 - a62 - a63 - a64 - a65, a62, a63, a64, a65},
               {b1, b2, b3, b4, b5, b6}},
              b, b_hat, 5, 4, true);
}

std::vector<std::string> ButcherTableau::names() {
  return {"euler", "heun", "rk4", "rk38", "bs3", "dopri5", "tsit5"};
}

ButcherTableau ButcherTableau::by_name(std::string_view name) {
  if (name == "euler") return euler();
  if (name == "heun") return heun();
  if (name == "rk4") return rk4();
  if (name == "rk38" || name == "kutta38") return rk38();
  if (name == "bs3" || name == "bogacki_shampine") return bogacki_shampine();
  if (name == "dopri5" || name == "dp5" || name == "dormand_prince") return dormand_prince();
  if (name == "tsit5" || name == "tsitouras") return tsitouras();
  fail<InvalidArgument>("unknown Runge-Kutta method '", name,
                        "'; known: euler, heun, rk4, rk38, bs3, dopri5, tsit5");
}

}  // namespace rwd
