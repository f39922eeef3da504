// The contract of rewind/problem.hpp, checked by one typed suite on every built-in problem: vjp
// against central finite differences of rhs (rwd::check_derivatives, with each problem's options
// and entry by entry), jvp against vjp (dot-product test) and jacobian() against finite
// differences and vjp where a problem has them, a declared band_width() bounding ∂f/∂y, outputs
// overwritten rather than accumulated and the same bits on every call, vectors of the wrong size
// and unrepresentable problem sizes refused with rwd::InvalidArgument naming the value and the
// rule, defaults and parameter names of the right sizes; and that no problem in
// src/problems/include/rewind/problems is missing from the suite.
//
// Adding a problem: one line in BuiltInProblems below (and its include). ProblemCase<P> supplies
// defaults — the default constructor, points near default_initial_state()/default_parameters(),
// tolerance 1e-7 — and is specialised where a problem needs sizes, sampling ranges or options of
// its own. What only one model has (closed forms, physics, hand Jacobians, Thrust variants) stays
// in that model's own test file.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "rewind/derivative_checker.hpp"
#include "rewind/error.hpp"
#include "rewind/problem.hpp"
#include "rewind/problems/brusselator2d.hpp"
#include "rewind/problems/cubic_spiral.hpp"
#include "rewind/problems/gray_scott.hpp"
#include "rewind/problems/heat2d.hpp"
#include "rewind/problems/linear.hpp"
#include "rewind/problems/lorenz63.hpp"
#include "rewind/problems/lorenz96.hpp"
#include "rewind/problems/lotka_volterra.hpp"
#include "rewind/problems/ornstein_uhlenbeck.hpp"
#include "rewind/problems/projectile.hpp"
#include "rewind/problems/robertson.hpp"
#include "rewind/problems/stochastic_lorenz63.hpp"
#include "rewind/problems/van_der_pol.hpp"
#include "support/random_data.hpp"
#include "support/typed_test_names.hpp"

namespace rwd {
namespace {

using Vector = Eigen::VectorXd;
using testing::random_vector;

// ---------------------------------------------------------------------------------------------
// What a problem may offer beyond the Problem concept.
// ---------------------------------------------------------------------------------------------

template <class P>
concept HasJvp = requires(const P& p, double t, const Vector& y, Vector& out) {
  p.jvp(t, y, y, y, out);
};
template <class P>
concept HasJacobian = requires(const P& p, double t, const Vector& y, Eigen::MatrixXd& J) {
  p.jacobian(t, y, y, J);
};
template <class P>
concept HasBandWidth = requires(const P& p) {
  { p.band_width() } -> std::convertible_to<Index>;
};
template <class P>
concept HasParameterNames = requires(const P& p) {
  { p.parameter_names() } -> std::convertible_to<std::vector<std::string>>;
};

// ---------------------------------------------------------------------------------------------
// Per-problem cases: how to build small instances and where to evaluate them.
// ---------------------------------------------------------------------------------------------

// A point (y, θ) where the contract is checked.
struct Point {
  Vector y, theta;
};

// Defaults for a problem with a default constructor, default_initial_state() and
// default_parameters(): point 0 is the defaults themselves, later points perturb every entry by
// up to 10% of max(1, |entry|). Specialisations (below) derive from this and hide what they change.
template <class P>
struct DefaultCase {
  // The instances checked: small sizes, cheap to check entry by entry.
  static std::vector<P> instances() { return {P{}}; }
  // Points per instance, and the seed of the generator that draws them (one generator for all
  // instances, in the order of instances()).
  static constexpr int kPoints = 3;
  static constexpr std::uint64_t kSeed = 1;
  static Point sample(const P& p, int point, std::mt19937_64& rng) {
    Point x{p.default_initial_state(), p.default_parameters()};
    if (point == 0) return x;
    auto perturb = [&](Vector& v) {
      const Vector r = random_vector(v.size(), rng, -0.1, 0.1);
      for (Index i = 0; i < v.size(); ++i) v[i] += r[i] * std::max(1.0, std::abs(v[i]));
    };
    perturb(x.y);
    perturb(x.theta);
    return x;
  }
  // Options of the finite-difference check (random directions above max_full_columns).
  static DerivativeCheckOptions check_options() {
    DerivativeCheckOptions options;
    options.tolerance = 1e-7;
    return options;
  }
  // Instances with at most this many unknowns are also checked entry by entry, with the same
  // options otherwise.
  static constexpr Index kEntryByEntryUpTo = 512;
  // Relative tolerance of the exact identities: jvp and jacobian() against vjp.
  static constexpr double kTransposeTolerance = 1e-12;
  // Problem sizes the constructor must refuse (empty: the size is fixed), the smallest size it
  // accepts, and what its message must say about a refused size.
  static std::vector<Index> refused_sizes() { return {}; }
  static Index smallest_size() { return 0; }
  static P make(Index) { return P{}; }
  static std::vector<std::string> refusal_text(Index) { return {}; }
};

template <class P>
struct ProblemCase : DefaultCase<P> {};

template <>
struct ProblemCase<Lorenz63<>> : DefaultCase<Lorenz63<>> {
  static constexpr int kPoints = 20;
  static constexpr std::uint64_t kSeed = 63;
  static Point sample(const Lorenz63<>& p, int, std::mt19937_64& rng) {
    Vector y = random_vector(3, rng, -20, 20);
    y[2] = std::abs(y[2]) * 2;  // z lives in [0, 50] on the attractor
    return {y, p.default_parameters() + random_vector(3, rng, -1, 1)};
  }
};

template <>
struct ProblemCase<Lorenz96<>> : DefaultCase<Lorenz96<>> {
  // 200 > max_full_columns: random directions, and entry by entry as well.
  static std::vector<Lorenz96<>> instances() {
    return {Lorenz96<>(4), Lorenz96<>(5), Lorenz96<>(10), Lorenz96<>(40), Lorenz96<>(200)};
  }
  static constexpr std::uint64_t kSeed = 98;
  static Point sample(const Lorenz96<>& p, int, std::mt19937_64& rng) {
    const Vector y = random_vector(p.state_size(), rng, -8, 12);
    return {y, Vector{{8.0 + random_vector(1, rng, -2, 2)[0]}}};
  }
  static std::vector<Index> refused_sizes() { return {3, 2, 1, 0, -1}; }
  static Index smallest_size() { return 4; }
  static Lorenz96<> make(Index n) { return Lorenz96<>(n); }
  static std::vector<std::string> refusal_text(Index n) {
    return {"N = " + std::to_string(n), ">= 4"};
  }
};

template <>
struct ProblemCase<LotkaVolterra<>> : DefaultCase<LotkaVolterra<>> {
  static constexpr int kPoints = 20;
  static constexpr std::uint64_t kSeed = 4;
  static Point sample(const LotkaVolterra<>&, int, std::mt19937_64& rng) {
    const Vector y = random_vector(2, rng, 0.1, 7.0);
    return {y, random_vector(4, rng, 0.5, 3.0)};
  }
};

template <>
struct ProblemCase<VanDerPol<>> : DefaultCase<VanDerPol<>> {
  static constexpr int kPoints = 20;
  static constexpr std::uint64_t kSeed = 5;
  static Point sample(const VanDerPol<>&, int, std::mt19937_64& rng) {
    const Vector y = random_vector(2, rng, -3.0, 3.0);
    return {y, random_vector(1, rng, 0.1, 10.0)};  // μ
  }
};

template <>
struct ProblemCase<LinearOde<>> : DefaultCase<LinearOde<>> {
  // n = 12: ∂f/∂θ is 12 × 144, by random directions, and entry by entry as well.
  static std::vector<LinearOde<>> instances() {
    return {LinearOde<>(1), LinearOde<>(3), LinearOde<>(8), LinearOde<>(12)};
  }
  static constexpr std::uint64_t kSeed = 8;
  static Point sample(const LinearOde<>& p, int, std::mt19937_64& rng) {
    const Index n = p.state_size();
    const Vector a = random_vector(n * n, rng, -3, 3);
    return {random_vector(n, rng, -5, 5), a};
  }
  static std::vector<Index> refused_sizes() { return {0, -3, LinearOde<>::kMaxStateSize + 1}; }
  static Index smallest_size() { return 1; }
  static LinearOde<> make(Index n) { return LinearOde<>(n); }
  static std::vector<std::string> refusal_text(Index n) {
    return {"n = " + std::to_string(n), "[1, " + std::to_string(LinearOde<>::kMaxStateSize) + "]"};
  }
};

// The n × n grid problems: instances n = 3, 4, 8 and 16, 16 random directions, and grid sizes
// outside [kMinGridSize, kMaxGridSize] refused.
template <class P>
struct GridCase : DefaultCase<P> {
  static std::vector<P> instances() { return {P(3), P(4), P(8), P(16)}; }
  static DerivativeCheckOptions check_options() {
    DerivativeCheckOptions options = DefaultCase<P>::check_options();
    options.random_directions = 16;
    return options;
  }
  static std::vector<Index> refused_sizes() {
    return {P::kMinGridSize - 1, P::kMinGridSize - 2, 0, -4, P::kMaxGridSize + 1};
  }
  static Index smallest_size() { return P::kMinGridSize; }
  static P make(Index n) { return P(n); }
  static std::vector<std::string> refusal_text(Index n) {
    return {"n = " + std::to_string(n),
            "[" + std::to_string(P::kMinGridSize) + ", " + std::to_string(P::kMaxGridSize) + "]"};
  }
};

template <>
struct ProblemCase<GrayScott<>> : GridCase<GrayScott<>> {
  static constexpr std::uint64_t kSeed = 12;
  // u, v in the physically meaningful range [0, 1].
  static Point sample(const GrayScott<>& p, int, std::mt19937_64& rng) {
    const Vector y = random_vector(p.state_size(), rng, 0, 1);
    return {y, p.default_parameters() + random_vector(4, rng, -0.02, 0.02)};
  }
};

template <>
struct ProblemCase<Heat2D<>> : GridCase<Heat2D<>> {
  static constexpr std::uint64_t kSeed = 22;
  // The bump with noise 0.3, seeded by the point's index; κ, s₀ in [0.05, 0.5].
  static Point sample(const Heat2D<>& p, int point, std::mt19937_64& rng) {
    const Vector y = p.default_initial_state(static_cast<std::uint64_t>(point), 0.3);
    return {y, random_vector(2, rng, 0.05, 0.5)};
  }
  // n ≤ 8: at n = 16 the heater's Gaussian tails (∂f/∂s₀ down to 1e-24) are below what
  // differences resolve.
  static constexpr Index kEntryByEntryUpTo = 64;
};

template <>
struct ProblemCase<Brusselator2D> : DefaultCase<Brusselator2D> {
  // n = 4: 32 unknowns; n = 5: odd; n = 12: 288 unknowns, half-bandwidth 24 (the size the CVODES
  // band and GMRES solvers are tested at).
  static std::vector<Brusselator2D> instances() {
    return {Brusselator2D(4), Brusselator2D(5), Brusselator2D(12)};
  }
  static constexpr std::uint64_t kSeed = 2;
  // ∂f/∂α = n²∇²v cancels to round-off (≈ 1e-13) where v is locally linear — the middle column
  // of an odd grid at the default state — so entries below 1e-5 are compared in absolute terms
  // (to 1e-12); every entry that is not round-off (≥ 0.03 here) to 1e-7, relative.
  static DerivativeCheckOptions check_options() {
    DerivativeCheckOptions options = DefaultCase::check_options();
    options.absolute_floor = 1e-5;
    return options;
  }
  static std::vector<Index> refused_sizes() { return {1, 0, -1}; }
  static Index smallest_size() { return 2; }
  static Brusselator2D make(Index n) { return Brusselator2D(n); }
  static std::vector<std::string> refusal_text(Index n) {
    return {"n = " + std::to_string(n), ">= 2"};
  }
};

template <>
struct ProblemCase<Robertson> : DefaultCase<Robertson> {
  static std::vector<Robertson> instances() { return {Robertson(false), Robertson(true)}; }
  static constexpr std::uint64_t kSeed = 3;
  // Point 0: mid-reaction, y2 small as on the real trajectory; then random points like it.
  static Point sample(const Robertson& p, int point, std::mt19937_64& rng) {
    Vector y = Vector::Zero(p.state_size());
    if (point == 0) {
      y.head(3) << 0.7, 3e-5, 0.3;
      return {y, p.default_parameters()};
    }
    y[0] = random_vector(1, rng, 0.5, 1.0)[0];
    y[1] = random_vector(1, rng, 1e-6, 5e-5)[0];
    y[2] = random_vector(1, rng, 0.0, 0.5)[0];
    if (p.with_integral()) y[3] = random_vector(1, rng, 0.0, 1.0)[0];
    const Vector scale = Vector::Ones(3) + random_vector(3, rng, -0.1, 0.1);
    return {y, p.default_parameters().cwiseProduct(scale)};
  }
};

template <>
struct ProblemCase<CubicSpiral> : DefaultCase<CubicSpiral> {
  static constexpr int kPoints = 20;
  static constexpr std::uint64_t kSeed = 6;
  static Point sample(const CubicSpiral& p, int, std::mt19937_64& rng) {
    const Vector y = random_vector(2, rng, -2.5, 2.5);
    return {y, p.default_parameters() + random_vector(4, rng, -0.5, 0.5)};
  }
};

template <>
struct ProblemCase<Projectile<>> : DefaultCase<Projectile<>> {
  static constexpr int kPoints = 20;
  static constexpr std::uint64_t kSeed = 9;
  // Positions anywhere, velocities away from 0 (|v| is not differentiable there), g and k > 0.
  static Point sample(const Projectile<>&, int, std::mt19937_64& rng) {
    Vector y = random_vector(4, rng, -50.0, 50.0);
    const Vector v = random_vector(2, rng, 1.0, 40.0);
    y[2] = v[0];
    y[3] = -v[1];
    return {y, random_vector(2, rng, 0.0, 10.0)};
  }
};

// The drifts of the stochastic problems (their diffusions are checked in
// tests/integrators/stochastic_stepper_test.cpp).
template <>
struct ProblemCase<OrnsteinUhlenbeck<>> : DefaultCase<OrnsteinUhlenbeck<>> {
  static std::vector<OrnsteinUhlenbeck<>> instances() {
    return {OrnsteinUhlenbeck<>(1), OrnsteinUhlenbeck<>(5)};
  }
};

// ---------------------------------------------------------------------------------------------
// The list of built-in problems.
// ---------------------------------------------------------------------------------------------

template <class... P>
struct ProblemList {
  using Types = ::testing::Types<P...>;
  static std::set<std::string> names() { return {P::name...}; }
};

using BuiltInProblems =
    ProblemList<Lorenz63<>, Lorenz96<>, LotkaVolterra<>, VanDerPol<>, LinearOde<>, GrayScott<>,
                Heat2D<>, Brusselator2D, Robertson, CubicSpiral, Projectile<>, OrnsteinUhlenbeck<>,
                StochasticLorenz63<>>;

// ---------------------------------------------------------------------------------------------
// Helpers.
// ---------------------------------------------------------------------------------------------

// One instance at one point, with a label for failure messages.
template <class P>
struct Sample {
  const P* problem;
  Point x;
  std::string where;
};

// Every instance at each of its points, drawn as ProblemCase<P> says (the same on every run).
template <class P>
std::vector<Sample<P>> samples(const std::vector<P>& instances) {
  using Case = ProblemCase<P>;
  std::mt19937_64 rng(Case::kSeed);
  std::vector<Sample<P>> out;
  for (const P& p : instances)
    for (int point = 0; point < Case::kPoints; ++point) {
      std::ostringstream where;
      where << P::name << " (n = " << p.state_size() << ", p = " << p.parameter_size()
            << "), point " << point;
      out.push_back({&p, Case::sample(p, point, rng), where.str()});
    }
  return out;
}

// The mode and number of comparisons rwd::check_derivatives documents for a Jacobian of
// `rows` × `columns` (the state Jacobian is n × n, the parameter Jacobian n × p).
void expect_compared_as_documented(const JacobianCheck& check, Index rows, Index columns,
                                   const DerivativeCheckOptions& options,
                                   const std::string& where) {
  EXPECT_EQ(check.rows, rows) << where;
  EXPECT_EQ(check.columns, columns) << where;
  if (columns == 0) {
    EXPECT_EQ(check.mode, JacobianCheckMode::kEmpty) << where;
  } else if (rows <= options.max_full_columns && columns <= options.max_full_columns) {
    EXPECT_EQ(check.mode, JacobianCheckMode::kFull) << where;
    EXPECT_EQ(check.comparisons, rows * columns) << where;
  } else {
    EXPECT_EQ(check.mode, JacobianCheckMode::kRandomDirections) << where;
    EXPECT_EQ(check.comparisons, options.random_directions) << where;
  }
}

// The problem with its state vjp replaced by J(y)ᵀ v from jacobian(), so that the derivative
// checker compares jacobian() with finite differences of rhs entry by entry.
template <class P>
struct JacobianAsVjp {
  using Backend = EigenBackend;
  const P& problem;
  Index state_size() const { return problem.state_size(); }
  Index parameter_size() const { return problem.parameter_size(); }
  void rhs(double t, const Vector& y, const Vector& theta, Vector& f) const {
    problem.rhs(t, y, theta, f);
  }
  void vjp(double t, const Vector& y, const Vector& theta, const Vector& v, Vector& out_y,
           Vector& out_theta) const {
    Eigen::MatrixXd J;
    problem.jacobian(t, y, theta, J);
    Vector unused(state_size());
    problem.vjp(t, y, theta, v, unused, out_theta);
    out_y = J.transpose() * v;
  }
};

// Expects `call` to throw rwd::InvalidArgument whose message contains every part of `parts`.
void expect_refused(const std::function<void()>& call, const std::vector<std::string>& parts,
                    const std::string& where) {
  try {
    call();
    ADD_FAILURE() << where << ": accepted";
  } catch (const InvalidArgument& e) {
    const std::string message = e.what();
    for (const std::string& part : parts)
      EXPECT_NE(message.find(part), std::string::npos)
          << where << ": '" << message << "' lacks '" << part << "'";
  } catch (const std::exception& e) {
    ADD_FAILURE() << where << ": not an InvalidArgument: " << e.what();
  }
}

// The message the built-in problems' size checks give (rewind/problems/detail/problem_support.hpp).
std::vector<std::string> size_message(const char* problem, const std::string& what, Index actual,
                                      Index expected) {
  return {std::string(problem) + ": " + what + " has " + std::to_string(actual) +
          " elements but must have " + std::to_string(expected)};
}

// Output fills that a method must overwrite: unwritten entries stay NaN, accumulated ones differ.
constexpr double kFills[] = {std::numeric_limits<double>::quiet_NaN(), 0.0, 7.0, -1e3};

// ---------------------------------------------------------------------------------------------
// The suite.
// ---------------------------------------------------------------------------------------------

template <class P>
class ProblemContract : public ::testing::Test {
 protected:
  using Case = ProblemCase<P>;
  const std::vector<P> instances_ = Case::instances();
};

TYPED_TEST_SUITE(ProblemContract, BuiltInProblems::Types, testing::NameMember);

TYPED_TEST(ProblemContract, HasConsistentSizesDefaultsAndParameterNames) {
  using P = TypeParam;
  static_assert(Problem<P>);
  static_assert(std::same_as<typename P::Backend, EigenBackend>);
  ASSERT_FALSE(this->instances_.empty());
  for (const P& p : this->instances_) {
    const Index n = p.state_size(), np = p.parameter_size();
    EXPECT_GE(n, 1) << P::name;
    EXPECT_GE(np, 0) << P::name;
    const Vector y0 = p.default_initial_state(), theta0 = p.default_parameters();
    EXPECT_EQ(y0.size(), n) << P::name;
    EXPECT_EQ(theta0.size(), np) << P::name;
    EXPECT_TRUE(y0.allFinite()) << P::name;
    EXPECT_TRUE(theta0.allFinite()) << P::name;
    if constexpr (HasParameterNames<P>) {
      const std::vector<std::string> names = p.parameter_names();
      EXPECT_EQ(static_cast<Index>(names.size()), np) << P::name << ": one name per parameter";
      EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size())
          << P::name << ": names are distinct";
      for (const std::string& name : names) EXPECT_FALSE(name.empty()) << P::name;
    }
  }
}

TYPED_TEST(ProblemContract, VjpMatchesFiniteDifferencesOfRhs) {
  using P = TypeParam;
  using Case = ProblemCase<P>;
  for (const Sample<P>& s : samples(this->instances_)) {
    const P& p = *s.problem;
    const Index n = p.state_size(), np = p.parameter_size();
    // With the problem's options: random directions above max_full_columns.
    const DerivativeCheckOptions options = Case::check_options();
    const auto report = check_derivatives(p, 0.0, s.x.y, s.x.theta, options);
    EXPECT_TRUE(report.ok) << s.where << "\n" << report.report();
    expect_compared_as_documented(report.state, n, n, options, s.where);
    expect_compared_as_documented(report.parameters, n, np, options, s.where);
    if (n > Case::kEntryByEntryUpTo) continue;
    // Entry by entry, whatever the mode above.
    DerivativeCheckOptions full = options;
    full.max_full_columns = std::max(n, np);
    const auto entries = check_derivatives(p, 0.0, s.x.y, s.x.theta, full);
    EXPECT_TRUE(entries.ok) << s.where << " (entry by entry)\n" << entries.report();
    expect_compared_as_documented(entries.state, n, n, full, s.where);
    expect_compared_as_documented(entries.parameters, n, np, full, s.where);
  }
}

TYPED_TEST(ProblemContract, JvpIsTheTransposeOfVjp) {
  using P = TypeParam;
  if constexpr (!HasJvp<P>) {
    GTEST_SKIP() << P::name << " has no jvp";
  } else {
    using Case = ProblemCase<P>;
    std::mt19937_64 rng(Case::kSeed + 1);
    for (const Sample<P>& s : samples(this->instances_)) {
      const P& p = *s.problem;
      const Index n = p.state_size(), np = p.parameter_size();
      // ⟨w, J v⟩ = ⟨Jᵀ w, v⟩ for smooth directions and random ones.
      std::vector<std::pair<Vector, Vector>> directions = {
          {Vector::LinSpaced(n, -1.0, 1.0), Vector::LinSpaced(n, 0.5, -0.3)}};
      for (int k = 0; k < 4; ++k)
        directions.emplace_back(random_vector(n, rng), random_vector(n, rng));
      for (const auto& [v, w] : directions) {
        Vector jv(n), jtw(n), dtheta(np);
        p.jvp(0.0, s.x.y, s.x.theta, v, jv);
        p.vjp(0.0, s.x.y, s.x.theta, w, jtw, dtheta);
        const double lhs = w.dot(jv), rhs = v.dot(jtw);
        EXPECT_NEAR(lhs, rhs, Case::kTransposeTolerance * std::abs(lhs)) << s.where;
      }
    }
  }
}

TYPED_TEST(ProblemContract, JacobianMatchesFiniteDifferencesAndVjp) {
  using P = TypeParam;
  if constexpr (!HasJacobian<P>) {
    GTEST_SKIP() << P::name << " has no jacobian()";
  } else {
    using Case = ProblemCase<P>;
    std::mt19937_64 rng(Case::kSeed + 1);
    for (const Sample<P>& s : samples(this->instances_)) {
      const P& p = *s.problem;
      const Index n = p.state_size(), np = p.parameter_size();
      DerivativeCheckOptions options = Case::check_options();
      options.max_full_columns = std::max(n, np);
      const auto report = check_derivatives(JacobianAsVjp<P>{p}, 0.0, s.x.y, s.x.theta, options);
      EXPECT_TRUE(report.ok) << s.where << " (jacobian() against finite differences)\n"
                             << report.report();
      EXPECT_EQ(report.state.comparisons, n * n) << s.where;
      Eigen::MatrixXd J;
      p.jacobian(0.0, s.x.y, s.x.theta, J);
      ASSERT_EQ(J.rows(), n) << s.where;
      ASSERT_EQ(J.cols(), n) << s.where;
      for (const Vector& v : {Vector(Vector::LinSpaced(n, 0.3, 1.7)), random_vector(n, rng)}) {
        Vector out_y(n), out_theta(np);
        p.vjp(0.0, s.x.y, s.x.theta, v, out_y, out_theta);
        EXPECT_LT((J.transpose() * v - out_y).norm(), Case::kTransposeTolerance * out_y.norm())
            << s.where;
      }
    }
  }
}

TYPED_TEST(ProblemContract, StateJacobianLiesWithinTheDeclaredBand) {
  using P = TypeParam;
  if constexpr (!HasBandWidth<P>) {
    GTEST_SKIP() << P::name << " declares no band_width()";
  } else {
    for (const Sample<P>& s : samples(this->instances_)) {
      const P& p = *s.problem;
      const Index n = p.state_size(), np = p.parameter_size(), width = p.band_width();
      // A perturbation of unknown j changes f only within j ± band_width() ...
      Vector f0(n), f1(n);
      p.rhs(0.0, s.x.y, s.x.theta, f0);
      for (Index j = 0; j < n; ++j) {
        Vector z = s.x.y;
        z[j] += 1e-3;
        p.rhs(0.0, z, s.x.theta, f1);
        for (Index i = 0; i < n; ++i)
          if (f1[i] != f0[i]) {
            EXPECT_LE(std::abs(i - j), width) << s.where << ": entry (" << i << ", " << j << ")";
          }
      }
      // ... and row i of ∂f/∂y, (∂f/∂y)ᵀ e_i by vjp, is zero outside i ± band_width().
      Vector e = Vector::Zero(n), row(n), out_theta(np);
      for (Index i = 0; i < n; ++i) {
        e[i] = 1.0;
        p.vjp(0.0, s.x.y, s.x.theta, e, row, out_theta);
        e[i] = 0.0;
        for (Index j = 0; j < n; ++j)
          if (std::abs(i - j) > width) {
            EXPECT_EQ(row[j], 0.0) << s.where << ": entry (" << i << ", " << j << ")";
          }
      }
    }
  }
}

TYPED_TEST(ProblemContract, OutputsAreOverwrittenNotAccumulated) {
  // Every output is pre-filled with NaN, zero and garbage: each call must give the same finite
  // bits, so no entry is left unwritten, added to, or different from one call to the next.
  using P = TypeParam;
  using Case = ProblemCase<P>;
  std::mt19937_64 rng(Case::kSeed + 2);
  for (const Sample<P>& s : samples(this->instances_)) {
    const P& p = *s.problem;
    const Vector &y = s.x.y, &theta = s.x.theta;
    const Index n = p.state_size(), np = p.parameter_size();
    const Vector v = random_vector(n, rng);
    Vector f_first, out_y_first, out_theta_first, jv_first;
    Eigen::MatrixXd J_first;
    for (double fill : kFills) {
      Vector f = Vector::Constant(n, fill);
      p.rhs(0.0, y, theta, f);
      Vector out_y = Vector::Constant(n, fill), out_theta = Vector::Constant(np, fill);
      p.vjp(0.0, y, theta, v, out_y, out_theta);
      if (f_first.size() == 0) {
        f_first = f;
        out_y_first = out_y;
        out_theta_first = out_theta;
        EXPECT_TRUE(f.allFinite()) << s.where << ": rhs";
        EXPECT_TRUE(out_y.allFinite()) << s.where << ": vjp out_y";
        EXPECT_TRUE(out_theta.allFinite()) << s.where << ": vjp out_theta";
      }
      EXPECT_EQ(f, f_first) << s.where << ": rhs, output filled with " << fill;
      EXPECT_EQ(out_y, out_y_first) << s.where << ": vjp out_y, filled with " << fill;
      EXPECT_EQ(out_theta, out_theta_first) << s.where << ": vjp out_theta, filled with " << fill;
      if constexpr (HasJvp<P>) {
        Vector jv = Vector::Constant(n, fill);
        p.jvp(0.0, y, theta, v, jv);
        if (jv_first.size() == 0) {
          jv_first = jv;
          EXPECT_TRUE(jv.allFinite()) << s.where << ": jvp";
        }
        EXPECT_EQ(jv, jv_first) << s.where << ": jvp, output filled with " << fill;
      }
      if constexpr (HasJacobian<P>) {
        // Of the right shape, and of a wrong one that the call must resize.
        for (Eigen::MatrixXd J : {Eigen::MatrixXd(Eigen::MatrixXd::Constant(n, n, fill)),
                                  Eigen::MatrixXd(Eigen::MatrixXd::Constant(n + 3, 2, fill))}) {
          p.jacobian(0.0, y, theta, J);
          if (J_first.size() == 0) {
            J_first = J;
            EXPECT_TRUE(J.allFinite()) << s.where << ": jacobian";
          }
          EXPECT_EQ(J, J_first) << s.where << ": jacobian, filled with " << fill;
        }
      }
    }
  }
}

TYPED_TEST(ProblemContract, RefusesVectorsOfTheWrongSize) {
  using P = TypeParam;
  for (const P& p : this->instances_) {
    const Index n = p.state_size(), np = p.parameter_size();
    const Vector y = p.default_initial_state(), theta = p.default_parameters();
    Vector f(n), out_y(n), out_theta(np);
    // The right sizes are accepted.
    EXPECT_NO_THROW(p.rhs(0.0, y, theta, f)) << P::name;
    EXPECT_NO_THROW(p.vjp(0.0, y, theta, y, out_y, out_theta)) << P::name;
    for (Index d : {-1, 1}) {
      const Vector ys = Vector::Zero(n + d), ts = Vector::Zero(np + d);
      Vector fs = Vector::Zero(n + d), os = Vector::Zero(np + d);
      const std::string where = std::string(P::name) + ", size off by " + std::to_string(d);
      expect_refused([&] { p.rhs(0.0, ys, theta, f); }, size_message(P::name, "state y", n + d, n),
                     where + ": rhs y");
      expect_refused([&] { p.rhs(0.0, y, ts, f); },
                     size_message(P::name, "parameter vector theta", np + d, np),
                     where + ": rhs theta");
      expect_refused([&] { p.rhs(0.0, y, theta, fs); }, size_message(P::name, "output f", n + d, n),
                     where + ": rhs f");
      expect_refused([&] { p.vjp(0.0, ys, theta, y, out_y, out_theta); },
                     size_message(P::name, "state y", n + d, n), where + ": vjp y");
      expect_refused([&] { p.vjp(0.0, y, ts, y, out_y, out_theta); },
                     size_message(P::name, "parameter vector theta", np + d, np),
                     where + ": vjp theta");
      expect_refused([&] { p.vjp(0.0, y, theta, ys, out_y, out_theta); },
                     size_message(P::name, "cotangent v", n + d, n), where + ": vjp v");
      expect_refused([&] { p.vjp(0.0, y, theta, y, fs, out_theta); },
                     size_message(P::name, "output out_y", n + d, n), where + ": vjp out_y");
      expect_refused([&] { p.vjp(0.0, y, theta, y, out_y, os); },
                     size_message(P::name, "output out_theta", np + d, np),
                     where + ": vjp out_theta");
      if constexpr (HasJvp<P>) {
        EXPECT_NO_THROW(p.jvp(0.0, y, theta, y, f)) << P::name;
        expect_refused([&] { p.jvp(0.0, ys, theta, y, f); },
                       size_message(P::name, "state y", n + d, n), where + ": jvp y");
        expect_refused([&] { p.jvp(0.0, y, ts, y, f); },
                       size_message(P::name, "parameter vector theta", np + d, np),
                       where + ": jvp theta");
        expect_refused([&] { p.jvp(0.0, y, theta, ys, f); },
                       size_message(P::name, "tangent v", n + d, n), where + ": jvp v");
        expect_refused([&] { p.jvp(0.0, y, theta, y, fs); },
                       size_message(P::name, "output out", n + d, n), where + ": jvp out");
      }
      if constexpr (HasJacobian<P>) {
        Eigen::MatrixXd J;
        EXPECT_NO_THROW(p.jacobian(0.0, y, theta, J)) << P::name;
        expect_refused([&] { p.jacobian(0.0, ys, theta, J); },
                       size_message(P::name, "state y", n + d, n), where + ": jacobian y");
        expect_refused([&] { p.jacobian(0.0, y, ts, J); },
                       size_message(P::name, "parameter vector theta", np + d, np),
                       where + ": jacobian theta");
      }
    }
  }
}

TYPED_TEST(ProblemContract, RefusesSizesItCannotRepresent) {
  using P = TypeParam;
  using Case = ProblemCase<P>;
  if (Case::refused_sizes().empty()) GTEST_SKIP() << P::name << " has a fixed size";
  for (Index size : Case::refused_sizes())
    expect_refused([&] { Case::make(size); }, Case::refusal_text(size),
                   std::string(P::name) + " of size " + std::to_string(size));
  EXPECT_NO_THROW(Case::make(Case::smallest_size())) << P::name;
}

// Every problem header in src/problems declares a `name`; each must be in BuiltInProblems. A
// problem on another backend (DeviceBrusselator2D: the Brusselator's kernels for device vectors)
// keeps its problem's name, so names are counted once.
TEST(ProblemContract, CoversEveryBuiltInProblem) {
  const std::filesystem::path folder =
      std::filesystem::path(REWIND_SOURCE_DIR) / "src/problems/include/rewind/problems";
  ASSERT_TRUE(std::filesystem::is_directory(folder)) << folder;
  const std::regex declaration(R"re(static constexpr const char\* name = "([^"]+)")re");
  const std::set<std::string> covered = BuiltInProblems::names();
  std::set<std::string> declared;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (entry.path().extension() != ".hpp") continue;
    std::ifstream in(entry.path());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (std::sregex_iterator it(text.begin(), text.end(), declaration), end; it != end; ++it) {
      declared.insert((*it)[1].str());
      EXPECT_TRUE(covered.count((*it)[1].str()))
          << entry.path().filename() << " declares the problem \"" << (*it)[1].str()
          << "\", which is not in BuiltInProblems (tests/problems/problem_contract_test.cpp)";
    }
  }
  EXPECT_EQ(declared, covered);
}

}  // namespace
}  // namespace rwd
