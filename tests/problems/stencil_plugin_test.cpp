// Stencil models as plugins (REWIND_MODEL of a stencil model, rwd::load_stencil_plugin,
// rewind/plugin_stencil_model.hpp): the Gray–Scott and Brusselator models of
// models/stencil_plugin_models.hpp, built as plugins by rewind_add_model, describe their grid and
// names, and on a grid of the caller's sizes give the bits that rwd::stencil_problem of the same
// model gives in C++ — rhs, the derived vjp, jvp and second derivatives, the sparsity pattern
// and the Jacobian's values, the initial state and its vjp — at any thread count; an implicit
// method's gradient with the sparse and gmres-ilu linear solvers, and a Rosenbrock method's, has
// the C++ problem's bits under store-all and revolve; and a grid below the stencil's span, the
// wrong number of sizes, a stencil model given to load_model_plugin, a templated model given to
// load_stencil_plugin and a description whose grid lacks a function are refused, naming the path
// and the rule.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "models/stencil_plugin_models.hpp"
#include "rewind/adjoint/differentiate.hpp"
#include "rewind/integrators/diagonally_implicit_runge_kutta.hpp"
#include "rewind/integrators/rosenbrock.hpp"
#include "rewind/parallel.hpp"
#include "rewind/plugin_model.hpp"
#include "rewind/plugin_stencil_model.hpp"
#include "rewind/problems/gray_scott.hpp"
#include "rewind/schedule/schedules.hpp"
#include "rewind/stencil_model.hpp"
#include "support/error_message.hpp"
#include "support/same_gradient_bits.hpp"

namespace rwd {
namespace {

using B = EigenBackend;
using Vector = B::Vector;

bool same_bits(const Vector& a, const Vector& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), sizeof(double) * static_cast<std::size_t>(a.size())) == 0;
}

// A state and directions with every entry different, on the model's scale.
Vector varied(Index n, double base, double spread, double phase) {
  Vector v(n);
  for (Index i = 0; i < n; ++i)
    v[i] = base + spread * std::sin(0.37 * static_cast<double>(i) + phase);
  return v;
}

// Every function of the plugin's problem against the same model's problem in C++, bit for bit.
template <class Model>
void expect_the_bits_of_cpp(const char* path, Index rows, Index columns) {
  const StencilPlugin plugin = load_stencil_plugin(path);
  const PluginStencilProblem problem = plugin.on_grid({rows, columns});
  const auto reference = stencil_problem(Model{}, rows, columns);
  ASSERT_EQ(problem.state_size(), reference.state_size());
  const Vector theta = plugin.default_parameters();
  const Vector y = varied(problem.state_size(), 1.0, 0.3, 0.1);
  const Vector v = varied(problem.state_size(), 0.0, 1.0, 0.7);
  const Index n = problem.state_size(), np = problem.parameter_size();

  Vector f(n), f_ref(n);
  problem.rhs(0.0, y, theta, f);
  reference.rhs(0.0, y, theta, f_ref);
  EXPECT_TRUE(same_bits(f, f_ref)) << "rhs";

  Vector out_y(n), out_p(np), out_y_ref(n), out_p_ref(np);
  problem.vjp(0.0, y, theta, v, out_y, out_p);
  reference.vjp(0.0, y, theta, v, out_y_ref, out_p_ref);
  EXPECT_TRUE(same_bits(out_y, out_y_ref)) << "vjp in y";
  EXPECT_TRUE(same_bits(out_p, out_p_ref)) << "vjp in theta";

  problem.jvp(0.0, y, theta, v, f);
  reference.jvp(0.0, y, theta, v, f_ref);
  EXPECT_TRUE(same_bits(f, f_ref)) << "jvp";

  const Vector u = varied(n, 0.2, 0.9, 1.3);
  problem.jvp_vjp(0.0, y, theta, u, v, out_y, out_p);
  reference.jvp_vjp(0.0, y, theta, u, v, out_y_ref, out_p_ref);
  EXPECT_TRUE(same_bits(out_y, out_y_ref)) << "second derivatives in y";
  EXPECT_TRUE(same_bits(out_p, out_p_ref)) << "second derivatives in theta";

  const SparsityPattern pattern = problem.sparsity(), pattern_ref = reference.sparsity();
  EXPECT_EQ(pattern.size, pattern_ref.size);
  EXPECT_EQ(pattern.row_starts, pattern_ref.row_starts);
  EXPECT_EQ(pattern.columns, pattern_ref.columns);
  Vector values(pattern.nonzeros()), values_ref(pattern.nonzeros());
  problem.jacobian_values(0.0, y, theta, std::span<double>(values.data(), values.size()));
  reference.jacobian_values(0.0, y, theta, std::span<double>(values_ref.data(), values_ref.size()));
  EXPECT_TRUE(same_bits(values, values_ref)) << "Jacobian values";

  EXPECT_TRUE(same_bits(problem.initial_state(theta), reference.initial_state(theta)));
  problem.initial_state_vjp(theta, v, out_p);
  reference.initial_state_vjp(theta, v, out_p_ref);
  EXPECT_TRUE(same_bits(out_p, out_p_ref)) << "initial state's vjp";
}

TEST(StencilPlugin, DescribesItsGridAndNames) {
  const StencilPlugin plugin = load_stencil_plugin(REWIND_GRAY_SCOTT_STENCIL_PLUGIN);
  EXPECT_EQ(plugin.name(), "GrayScott");
  EXPECT_EQ(plugin.dimension(), 2);
  EXPECT_EQ(plugin.min_sizes(), (std::vector<Index>{3, 3}));
  EXPECT_EQ(plugin.default_grid_size(), 64);
  EXPECT_EQ(plugin.field_names(), (std::vector<std::string>{"u", "v"}));
  EXPECT_EQ(plugin.parameter_names(), (std::vector<std::string>{"Du", "Dv", "F", "k"}));
  EXPECT_TRUE(plugin.has_initial_state());
  EXPECT_EQ(plugin.default_dt(), 1.0);
  EXPECT_EQ(plugin.default_steps(), 200);
  const PluginStencilProblem problem = plugin.on_grid({10, 12});
  EXPECT_EQ(problem.state_size(), 2 * 10 * 12);
  EXPECT_EQ(problem.cell_count(), 120);
  // Gray–Scott's initial state is the built-in's (whose grids are square).
  EXPECT_TRUE(same_bits(plugin.on_grid({20, 20}).initial_state(plugin.default_parameters()),
                        GrayScott<>(20).default_initial_state()));
}

// The Brusselator's initial state u = A + …, v = B/A − … (the rest independent of θ): its vjp
// (∂y0/∂θ)ᵀ w = (Σ w_u − B/A² Σ w_v, Σ w_v / A, 0), derived through initial_cell.
TEST(StencilPlugin, TheInitialStatesVjpIsItsClosedForm) {
  const auto problem = stencil_problem(testing::BrusselatorWithStart{}, 7, 9);
  const Vector theta = (Vector(3) << 1.3, 2.9, 0.004).finished();
  const Index cells = problem.cell_count();
  const Vector w = varied(problem.state_size(), 0.2, 1.0, 0.4);
  const double sum_u = w.head(cells).sum(), sum_v = w.tail(cells).sum();
  Vector out(3);
  problem.initial_state_vjp(theta, w, out);
  const double a = theta[0], b = theta[1];
  EXPECT_NEAR(out[0], sum_u - b / (a * a) * sum_v, 1e-13 * std::abs(sum_u));
  EXPECT_NEAR(out[1], sum_v / a, 1e-13 * std::abs(sum_v / a));
  EXPECT_EQ(out[2], 0.0);
}

TEST(StencilPlugin, EveryFunctionHasTheBitsOfTheModelInCpp) {
  expect_the_bits_of_cpp<testing::GrayScottWithStart>(REWIND_GRAY_SCOTT_STENCIL_PLUGIN, 13, 17);
  expect_the_bits_of_cpp<testing::BrusselatorWithStart>(REWIND_BRUSSELATOR_STENCIL_PLUGIN, 11, 9);
}

// Large enough for the plugin's loops to use threads (2·128² values): the thread count the
// caller sets reaches the plugin, and the bits do not depend on it.
TEST(StencilPlugin, TheBitsDoNotDependOnTheThreadCount) {
  if (!kThreadsAvailable) GTEST_SKIP() << "built without OpenMP";
  const StencilPlugin plugin = load_stencil_plugin(REWIND_GRAY_SCOTT_STENCIL_PLUGIN);
  const PluginStencilProblem problem = plugin.on_grid({128, 128});
  const Vector theta = plugin.default_parameters();
  const Vector y = varied(problem.state_size(), 0.5, 0.3, 0.2);
  const Vector v = varied(problem.state_size(), 0.0, 1.0, 0.9);
  const int before = thread_count();
  Vector out_y[2], out_p[2];
  for (int threads : {1, 2}) {
    set_thread_count(threads);
    Vector& oy = out_y[threads - 1];
    Vector& op = out_p[threads - 1];
    oy.resize(problem.state_size());
    op.resize(problem.parameter_size());
    problem.vjp(0.0, y, theta, v, oy, op);
  }
  set_thread_count(before);
  EXPECT_TRUE(same_bits(out_y[0], out_y[1]));
  EXPECT_TRUE(same_bits(out_p[0], out_p[1]));
}

// esdirk43 on the Brusselator through the plugin and through the model in C++: the same gradient
// bits with the sparse LU and with GMRES preconditioned by ILU(0), store-all and revolve alike.
TEST(StencilPlugin, ImplicitGradientsHaveTheBitsOfTheModelInCpp) {
  const StencilPlugin plugin = load_stencil_plugin(REWIND_BRUSSELATOR_STENCIL_PLUGIN);
  const PluginStencilProblem problem = plugin.on_grid({8, 8});
  const auto reference = stencil_problem(testing::BrusselatorWithStart{}, 8, 8);
  const Vector theta = plugin.default_parameters();
  const Vector y0 = problem.initial_state(theta);
  const auto objective = Objective<B>::terminal_squared_norm();
  const StepControl control = StepControl::fixed(0.0, 0.01, 20);
  for (ImplicitLinearSolver solver :
       {ImplicitLinearSolver::sparse, ImplicitLinearSolver::gmres_ilu}) {
    if (solver == ImplicitLinearSolver::sparse && !kSparseLuAvailable) continue;  // no KLU
    NewtonOptions newton;
    newton.rtol = 1e-12;
    newton.atol = 1e-14;
    newton.linear_solver = solver;
    DiagonallyImplicitRungeKutta stepper(problem, ImplicitTableau::esdirk43(), control, newton);
    DiagonallyImplicitRungeKutta reference_stepper(reference, ImplicitTableau::esdirk43(), control,
                                                   newton);
    const auto expected =
        differentiate(reference_stepper, objective, y0, theta, StoreAllStrategy{});
    const auto store_all = differentiate(stepper, objective, y0, theta, StoreAllStrategy{});
    testing::expect_same_gradient_bits<B>(store_all, expected);
    const auto revolve =
        differentiate(stepper, objective, y0, theta, CheckpointStrategy{revolve_schedule(4)});
    testing::expect_same_gradient_bits<B>(revolve, expected);
    EXPECT_TRUE(revolve.drift.bitwise_identical());
    EXPECT_TRUE(same_bits(
        problem.total_parameter_gradient(theta, store_all.grad_y0, store_all.grad_theta),
        reference.total_parameter_gradient(theta, expected.grad_y0, expected.grad_theta)));
  }
}

// rodas4 (whose exact adjoint takes the second derivatives through the plugin) likewise.
TEST(StencilPlugin, RosenbrockGradientsHaveTheBitsOfTheModelInCpp) {
  const StencilPlugin plugin = load_stencil_plugin(REWIND_BRUSSELATOR_STENCIL_PLUGIN);
  const PluginStencilProblem problem = plugin.on_grid({6, 7});
  const auto reference = stencil_problem(testing::BrusselatorWithStart{}, 6, 7);
  const Vector theta = plugin.default_parameters();
  const Vector y0 = problem.initial_state(theta);
  const auto objective = Objective<B>::terminal_squared_norm();
  const StepControl control = StepControl::fixed(0.0, 0.02, 15);
  const ImplicitLinearSolver solver =
      kSparseLuAvailable ? ImplicitLinearSolver::sparse : ImplicitLinearSolver::dense;
  RosenbrockStepper stepper(problem, RosenbrockTableau::rodas4(), control, solver);
  RosenbrockStepper reference_stepper(reference, RosenbrockTableau::rodas4(), control, solver);
  const auto expected = differentiate(reference_stepper, objective, y0, theta, StoreAllStrategy{});
  testing::expect_same_gradient_bits<B>(
      differentiate(stepper, objective, y0, theta, StoreAllStrategy{}), expected);
  const auto revolve =
      differentiate(stepper, objective, y0, theta, CheckpointStrategy{revolve_schedule(3)});
  testing::expect_same_gradient_bits<B>(revolve, expected);
  EXPECT_TRUE(revolve.drift.bitwise_identical());
}

TEST(StencilPlugin, RefusesAGridBelowTheStencilsSpanAndTheWrongNumberOfSizes) {
  const StencilPlugin plugin = load_stencil_plugin(REWIND_GRAY_SCOTT_STENCIL_PLUGIN);
  std::string message = testing::error_message<InvalidArgument>([&] {
    (void)plugin.on_grid({2, 12});
  });
  testing::expect_message(message, REWIND_GRAY_SCOTT_STENCIL_PLUGIN);
  testing::expect_message(message, "grid size n_0 = 2 must be >= 3");
  message = testing::error_message<InvalidArgument>([&] { (void)plugin.on_grid({12}); });
  testing::expect_message(message, "on a 2-D grid: give 2 grid sizes, not 1");
}

TEST(StencilPlugin, RefusesADescriptionWhoseGridIsMalformed) {
  const std::string message = testing::error_message<InvalidArgument>(
      [] { (void)load_stencil_plugin(REWIND_MALFORMED_GRID_PLUGIN); });
  testing::expect_message(message, REWIND_MALFORMED_GRID_PLUGIN);
  testing::expect_message(message, "' (GrayScott) describes a malformed grid (dimension 2)");
}

TEST(StencilPlugin, EachLoaderRefusesTheOtherKindOfModel) {
  std::string message = testing::error_message<InvalidArgument>(
      [] { (void)load_model_plugin(REWIND_GRAY_SCOTT_STENCIL_PLUGIN); });
  testing::expect_message(message, "is a stencil model on a 2-D grid");
  testing::expect_message(message, "load_stencil_plugin");
  message =
      testing::error_message<InvalidArgument>([] { (void)load_stencil_plugin(REWIND_SIR_PLUGIN); });
  testing::expect_message(message, "is not a stencil model (it has a fixed state of 3 values)");
}

}  // namespace
}  // namespace rwd
