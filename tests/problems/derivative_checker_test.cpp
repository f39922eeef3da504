// rwd::check_derivatives: passes correct models, and names the wrong entry of a deliberately
// broken vjp — a flipped sign in ∂f/∂y, a wrong ∂f/∂θ entry, an accumulating vjp — in full mode;
// catches errors in random-direction mode; validates options and inputs; is deterministic.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "rewind/derivative_checker.hpp"
#include "rewind/problems/linear.hpp"
#include "rewind/problems/lorenz63.hpp"
#include "rewind/problems/lorenz96.hpp"
#include "support/error_message.hpp"
#include "support/random_data.hpp"

namespace rwd {
namespace {

using B = EigenBackend;
using Vector = B::Vector;

using testing::contains;

// A model that forwards to `Inner` and then corrupts its vjp with `Bug` (a callable
// bug(y, theta, v, out_y, out_theta)).
template <class Inner, class Bug>
struct Broken {
  using Backend = EigenBackend;
  Inner inner;
  Bug bug;
  Index state_size() const { return inner.state_size(); }
  Index parameter_size() const { return inner.parameter_size(); }
  void rhs(double t, const Vector& y, const Vector& theta, Vector& f) const {
    inner.rhs(t, y, theta, f);
  }
  void vjp(double t, const Vector& y, const Vector& theta, const Vector& v, Vector& out_y,
           Vector& out_theta) const {
    inner.vjp(t, y, theta, v, out_y, out_theta);
    bug(y, theta, v, out_y, out_theta);
  }
};
template <class Inner, class Bug>
Broken<Inner, Bug> broken(Inner inner, Bug bug) {
  return {inner, bug};
}

const Vector kLorenzState{{1.5, -2.0, 20.0}};

TEST(DerivativeChecker, PassesACorrectModel) {
  Lorenz63<> p;
  const auto report = check_derivatives(p, 0.0, kLorenzState, p.default_parameters());
  EXPECT_TRUE(report.ok) << report.report();
  EXPECT_TRUE(report.state.ok);
  EXPECT_TRUE(report.parameters.ok);
  EXPECT_EQ(report.state.mode, JacobianCheckMode::kFull);
  EXPECT_EQ(report.state.rows, 3);
  EXPECT_EQ(report.state.columns, 3);
  EXPECT_EQ(report.state.comparisons, 9);
  EXPECT_EQ(report.state.failures, 0);
  EXPECT_EQ(report.parameters.columns, 3);
  EXPECT_LT(report.state.worst_error, 1e-8);
  EXPECT_LT(report.parameters.worst_error, 1e-8);
  EXPECT_TRUE(contains(report.report(), "passed")) << report.report();
}

TEST(DerivativeChecker, NamesAFlippedSignInTheStateJacobian) {
  // ∂f_1/∂z = −x: the broken vjp uses +x, i.e. out_y[2] gains 2x·v_1.
  auto model = broken(Lorenz63<>(), [](const Vector& y, const Vector&, const Vector& v,
                                       Vector& out_y, Vector&) { out_y[2] += 2.0 * y[0] * v[1]; });
  static_assert(Problem<decltype(model)>);
  const auto report = check_derivatives(model, 0.0, kLorenzState, Lorenz63<>::default_parameters());
  EXPECT_FALSE(report.ok);
  EXPECT_FALSE(report.state.ok);
  EXPECT_TRUE(report.parameters.ok);
  EXPECT_EQ(report.state.failures, 1);
  EXPECT_EQ(report.state.worst_row, 1);
  EXPECT_EQ(report.state.worst_column, 2);
  EXPECT_DOUBLE_EQ(report.state.worst_vjp, 1.5);
  EXPECT_NEAR(report.state.worst_fd, -1.5, 1e-8);
  EXPECT_NEAR(report.state.worst_error, 2.0, 1e-8);
  const std::string text = report.report();
  EXPECT_TRUE(contains(text, "FAILED")) << text;
  EXPECT_TRUE(contains(text, "∂f/∂y")) << text;
  EXPECT_TRUE(contains(text, "row 1, column 2")) << text;
  EXPECT_TRUE(contains(text, "∂f_1/∂y_2")) << text;
}

TEST(DerivativeChecker, NamesAWrongParameterDerivative) {
  // ∂f_1/∂ρ = x: the broken vjp doubles it.
  auto model = broken(Lorenz63<>(), [](const Vector& y, const Vector&, const Vector& v, Vector&,
                                       Vector& out_theta) { out_theta[1] += y[0] * v[1]; });
  const auto report = check_derivatives(model, 0.0, kLorenzState, Lorenz63<>::default_parameters());
  EXPECT_FALSE(report.ok);
  EXPECT_TRUE(report.state.ok);
  EXPECT_FALSE(report.parameters.ok);
  EXPECT_EQ(report.parameters.worst_row, 1);
  EXPECT_EQ(report.parameters.worst_column, 1);
  EXPECT_DOUBLE_EQ(report.parameters.worst_vjp, 3.0);
  EXPECT_NEAR(report.parameters.worst_fd, 1.5, 1e-8);
  const std::string text = report.report();
  EXPECT_TRUE(contains(text, "∂f/∂θ")) << text;
  EXPECT_TRUE(contains(text, "∂f_1/∂θ_1")) << text;
}

TEST(DerivativeChecker, CatchesAVjpThatAccumulatesInsteadOfOverwriting) {
  struct Accumulating {
    using Backend = EigenBackend;
    Index state_size() const { return 2; }
    Index parameter_size() const { return 1; }
    void rhs(double, const Vector& y, const Vector& theta, Vector& f) const { f = -theta[0] * y; }
    void vjp(double, const Vector& y, const Vector& theta, const Vector& v, Vector& out_y,
             Vector& out_theta) const {
      out_y += -theta[0] * v;  // wrong: the contract is to overwrite
      out_theta[0] = -y.dot(v);
    }
  };
  const auto report = check_derivatives(Accumulating{}, 0.0, Vector{{1.0, 2.0}}, Vector{{0.5}});
  EXPECT_FALSE(report.state.ok);
  EXPECT_TRUE(report.parameters.ok);
  EXPECT_TRUE(std::isinf(report.state.worst_error));
  EXPECT_TRUE(contains(report.report(), "NaN")) << report.report();
}

TEST(DerivativeChecker, RandomDirectionsCatchAnErrorInALargeProblem) {
  const Index n = 100;  // > max_full_columns: random directions
  auto model = broken(Lorenz96<>(n),
                      [](const Vector& y, const Vector&, const Vector& v, Vector& out_y, Vector&) {
                        out_y[37] += 0.5 * y[37] * v[37];  // a wrong diagonal entry ∂f_37/∂y_37
                      });
  std::mt19937_64 rng(3);
  const Vector y = testing::random_vector(n, rng, -5.0, 10.0);
  const Vector theta{{8.0}};

  const auto correct = check_derivatives(Lorenz96<>(n), 0.0, y, theta);
  EXPECT_TRUE(correct.ok) << correct.report();
  EXPECT_EQ(correct.state.mode, JacobianCheckMode::kRandomDirections);
  EXPECT_EQ(correct.state.comparisons, 8);
  EXPECT_EQ(correct.parameters.mode, JacobianCheckMode::kRandomDirections);

  const auto report = check_derivatives(model, 0.0, y, theta);
  EXPECT_FALSE(report.ok);
  EXPECT_FALSE(report.state.ok);
  EXPECT_TRUE(report.parameters.ok);
  EXPECT_EQ(report.state.mode, JacobianCheckMode::kRandomDirections);
  EXPECT_EQ(report.state.worst_row, -1);
  EXPECT_GE(report.state.worst_direction, 0);
  EXPECT_LT(report.state.worst_direction, 8);
  EXPECT_TRUE(contains(report.report(), "random directions")) << report.report();

  // Full mode on the same problem names the entry.
  DerivativeCheckOptions full;
  full.max_full_columns = n;
  const auto located = check_derivatives(model, 0.0, y, theta, full);
  EXPECT_FALSE(located.state.ok);
  EXPECT_EQ(located.state.mode, JacobianCheckMode::kFull);
  EXPECT_EQ(located.state.failures, 1);
  EXPECT_EQ(located.state.worst_row, 37);
  EXPECT_EQ(located.state.worst_column, 37);
}

TEST(DerivativeChecker, RandomDirectionsCatchAParameterError) {
  const Index n = 10;  // ∂f/∂θ is 10 × 100: random directions; ∂f/∂y full
  auto model = broken(LinearOde<>(n), [](const Vector&, const Vector&, const Vector&, Vector&,
                                         Vector& out_theta) { out_theta[42] *= -1.0; });
  LinearOde<> p(n);
  const Vector y = p.default_initial_state(), theta = p.default_parameters();
  const auto correct = check_derivatives(p, 0.0, y, theta);
  EXPECT_TRUE(correct.ok) << correct.report();
  EXPECT_EQ(correct.state.mode, JacobianCheckMode::kFull);
  EXPECT_EQ(correct.parameters.mode, JacobianCheckMode::kRandomDirections);
  const auto report = check_derivatives(model, 0.0, y, theta);
  EXPECT_TRUE(report.state.ok);
  EXPECT_FALSE(report.parameters.ok) << report.report();
}

TEST(DerivativeChecker, ListsEveryWrongEntry) {
  // A transposed ∂f/∂y (the classic mistake: J v instead of Jᵀ v) is wrong in every asymmetric
  // pair of entries.
  auto model = broken(Lorenz63<>(), [](const Vector& y, const Vector& theta, const Vector& v,
                                       Vector& out_y, Vector&) {
    Eigen::Matrix3d j;
    j << -theta[0], theta[0], 0, theta[1] - y[2], -1, -y[0], y[1], y[0], -theta[2];
    out_y = j * v;
  });
  const auto report = check_derivatives(model, 0.0, kLorenzState, Lorenz63<>::default_parameters());
  EXPECT_FALSE(report.state.ok);
  EXPECT_EQ(report.state.failures, 6);  // every off-diagonal entry differs from its mirror
  ASSERT_EQ(report.state.mismatches.size(), 6u);
  for (const auto& m : report.state.mismatches) EXPECT_NE(m.row, m.column);
  const std::string text = report.report();
  EXPECT_TRUE(contains(text, "entries above tolerance (6 of 6)")) << text;
  EXPECT_TRUE(contains(text, "∂f_0/∂y_1")) << text;
}

TEST(DerivativeChecker, RetriesOtherStepsBeforeBlamingRoundOff) {
  // f_0 = 100 y_0 + 1e-3 y_1: the entry ∂f_0/∂y_1 = 1e-3 is 10^5 times smaller than f_0, so at
  // h = 1e-6 its central difference carries round-off ≈ ε·100 / (2h) ≈ 1e-8, i.e. ≈ 1e-5
  // relative. Larger steps are exact for this linear f.
  struct Stiffish {
    using Backend = EigenBackend;
    Index state_size() const { return 2; }
    Index parameter_size() const { return 1; }
    void rhs(double, const Vector& y, const Vector& theta, Vector& f) const {
      f[0] = 100.0 * y[0] + 1e-3 * y[1];
      f[1] = theta[0] * y[1];
    }
    void vjp(double, const Vector& y, const Vector& theta, const Vector& v, Vector& out_y,
             Vector& out_theta) const {
      out_y[0] = 100.0 * v[0];
      out_y[1] = 1e-3 * v[0] + theta[0] * v[1];
      out_theta[0] = y[1] * v[1];
    }
  };
  const Vector y{{1.0, 1.0}}, theta{{2.0}};
  DerivativeCheckOptions single;
  single.retry_other_steps = false;
  const auto first = check_derivatives(Stiffish{}, 0.0, y, theta, single);
  EXPECT_FALSE(first.state.ok) << first.report();
  EXPECT_EQ(first.state.worst_row, 0);
  EXPECT_EQ(first.state.worst_column, 1);
  const auto retried = check_derivatives(Stiffish{}, 0.0, y, theta);
  EXPECT_TRUE(retried.ok) << retried.report();
}

TEST(DerivativeChecker, ProblemWithoutParameters) {
  struct Decay {
    using Backend = EigenBackend;
    Index state_size() const { return 1; }
    Index parameter_size() const { return 0; }
    void rhs(double, const Vector& y, const Vector&, Vector& f) const { f[0] = -2.0 * y[0]; }
    void vjp(double, const Vector&, const Vector&, const Vector& v, Vector& out_y, Vector&) const {
      out_y[0] = -2.0 * v[0];
    }
  };
  const auto report = check_derivatives(Decay{}, 0.0, Vector{{3.0}}, Vector(0));
  EXPECT_TRUE(report.ok) << report.report();
  EXPECT_EQ(report.parameters.mode, JacobianCheckMode::kEmpty);
  EXPECT_EQ(report.parameters.comparisons, 0);
  EXPECT_TRUE(contains(report.report(), "nothing to compare")) << report.report();
}

TEST(DerivativeChecker, IsDeterministicAndSeeded) {
  Lorenz96<> p(80);
  const Vector y = p.default_initial_state(), theta = p.default_parameters();
  const auto a = check_derivatives(p, 0.0, y, theta);
  const auto b = check_derivatives(p, 0.0, y, theta);
  EXPECT_EQ(a.state.worst_vjp, b.state.worst_vjp);
  EXPECT_EQ(a.state.worst_fd, b.state.worst_fd);
  DerivativeCheckOptions other;
  other.seed = 12345;
  const auto c = check_derivatives(p, 0.0, y, theta, other);
  EXPECT_NE(a.state.worst_vjp, c.state.worst_vjp);
}

TEST(DerivativeChecker, OptionsValidation) {
  EXPECT_NO_THROW(DerivativeCheckOptions{}.validate());
  auto refused = [](auto change, const std::string& field) {
    DerivativeCheckOptions o;
    change(o);
    try {
      o.validate();
      ADD_FAILURE() << field << " accepted";
    } catch (const InvalidArgument& e) {
      EXPECT_TRUE(contains(e.what(), field)) << e.what();
    }
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  refused([](auto& o) { o.relative_step = 0.0; }, "relative_step");
  refused([](auto& o) { o.relative_step = -1e-6; }, "relative_step");
  refused([&](auto& o) { o.relative_step = nan; }, "relative_step");
  refused([](auto& o) { o.relative_step = 0.5; }, "relative_step");
  refused([](auto& o) { o.tolerance = 0.0; }, "tolerance");
  refused([](auto& o) { o.tolerance = 1.0; }, "tolerance");
  refused([&](auto& o) { o.tolerance = nan; }, "tolerance");
  refused([](auto& o) { o.absolute_floor = 0.0; }, "absolute_floor");
  refused([&](auto& o) { o.absolute_floor = inf; }, "absolute_floor");
  refused([](auto& o) { o.max_full_columns = -1; }, "max_full_columns");
  refused([](auto& o) { o.random_directions = 0; }, "random_directions");
  // check_derivatives validates before any work.
  DerivativeCheckOptions bad;
  bad.tolerance = -1.0;
  Lorenz63<> p;
  EXPECT_THROW(check_derivatives(p, 0.0, kLorenzState, p.default_parameters(), bad),
               InvalidArgument);
}

TEST(DerivativeChecker, RefusesBadInputs) {
  Lorenz63<> p;
  const Vector theta = p.default_parameters();
  EXPECT_THROW(check_derivatives(p, 0.0, Vector::Zero(2), theta), InvalidArgument);
  EXPECT_THROW(check_derivatives(p, 0.0, kLorenzState, Vector::Zero(4)), InvalidArgument);
  Vector y = kLorenzState;
  y[1] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(check_derivatives(p, 0.0, y, theta), InvalidArgument);
  EXPECT_THROW(check_derivatives(p, std::numeric_limits<double>::infinity(), kLorenzState, theta),
               InvalidArgument);
}

TEST(DerivativeChecker, MaxFullColumnsZeroForcesRandomDirections) {
  Lorenz63<> p;
  DerivativeCheckOptions options;
  options.max_full_columns = 0;
  options.random_directions = 5;
  const auto report = check_derivatives(p, 0.0, kLorenzState, p.default_parameters(), options);
  EXPECT_TRUE(report.ok) << report.report();
  EXPECT_EQ(report.state.mode, JacobianCheckMode::kRandomDirections);
  EXPECT_EQ(report.state.comparisons, 5);
  EXPECT_EQ(report.parameters.comparisons, 5);
}

}  // namespace
}  // namespace rwd
