// rwd::load_model_plugin (rewind/plugin_model.hpp) and REWIND_MODEL (rewind/model_plugin.hpp):
// the SIR model built as a plugin by rewind_add_model gives, through the plugin, the names,
// defaults, rhs, vjp, jvp, Jacobian, initial state and gradient bits that rwd::auto_problem gives
// in C++; store-all and revolve agree bit for bit through the plugin; a stochastic model's
// diffusion, its vjp and its Milstein gradient have auto_problem's bits too; a model that declares
// its band Jacobian carries it through the plugin, and the band solvers (esdirk43, rodas4, BDF)
// give auto_problem's gradient bits with it, while a model without a band refuses the band solver
// naming the model and how to declare one; and every file that is not a loadable model of this
// ABI version is refused before any work, naming the path: one that does not exist, a text file
// named .so, a library without the entry point, a model of another ABI version (both versions
// named), a model whose names repeat, a description whose band is malformed.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "models/forced_relaxation.hpp"
#include "models/logistic_sde.hpp"
#include "models/reaction_diffusion_model.hpp"
#include "models/robertson_model.hpp"
#include "models/sir_model.hpp"
#include "rewind/adjoint/differentiate.hpp"
#include "rewind/integrators/cvodes_interval_stepper.hpp"
#include "rewind/integrators/diagonally_implicit_runge_kutta.hpp"
#include "rewind/integrators/explicit_runge_kutta.hpp"
#include "rewind/integrators/rosenbrock.hpp"
#include "rewind/integrators/stochastic_stepper.hpp"
#include "rewind/model.hpp"
#include "rewind/plugin_model.hpp"
#include "rewind/schedule/schedules.hpp"
#include "support/error_message.hpp"
#include "support/same_gradient_bits.hpp"
#include "support/scratch_directory.hpp"

namespace rwd {
namespace {

using B = EigenBackend;
using Vector = B::Vector;

bool same_bits(const Vector& a, const Vector& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), sizeof(double) * static_cast<std::size_t>(a.size())) == 0;
}

TEST(PluginModel, DescribesTheModelAsAutoProblemDoes) {
  const PluginModel model = load_model_plugin(REWIND_SIR_PLUGIN);
  const auto reference = auto_problem(Sir{});
  EXPECT_EQ(model.name(), "Sir");
  EXPECT_EQ(model.state_size(), 3);
  EXPECT_EQ(model.parameter_size(), 3);
  EXPECT_EQ(model.state_names(), reference.state_names());
  EXPECT_EQ(model.parameter_names(), reference.parameter_names());
  EXPECT_TRUE(same_bits(model.default_parameters(), reference.default_parameters()));
  EXPECT_EQ(model.default_dt(), 0.1);
  EXPECT_EQ(model.default_steps(), 400);
  ASSERT_TRUE(model.has_initial_state());
}

TEST(PluginModel, EveryDerivativeHasTheBitsOfAutoProblem) {
  const PluginModel model = load_model_plugin(REWIND_SIR_PLUGIN);
  const auto reference = auto_problem(Sir{});
  const Vector theta = (Vector(3) << 0.6, 0.2, 1200.0).finished();
  const Vector y = (Vector(3) << 900.0, 250.0, 50.0).finished();
  const Vector v = (Vector(3) << 0.3, -1.7, 2.9).finished();

  Vector f(3), f_ref(3);
  model.rhs(0.5, y, theta, f);
  reference.rhs(0.5, y, theta, f_ref);
  EXPECT_TRUE(same_bits(f, f_ref));

  Vector out_y(3), out_p(3), out_y_ref(3), out_p_ref(3);
  model.vjp(0.5, y, theta, v, out_y, out_p);
  reference.vjp(0.5, y, theta, v, out_y_ref, out_p_ref);
  EXPECT_TRUE(same_bits(out_y, out_y_ref));
  EXPECT_TRUE(same_bits(out_p, out_p_ref));

  Vector jv(3), jv_ref(3);
  model.jvp(0.5, y, theta, v, jv);
  reference.jvp(0.5, y, theta, v, jv_ref);
  EXPECT_TRUE(same_bits(jv, jv_ref));

  Eigen::MatrixXd J, J_ref;
  model.jacobian(0.5, y, theta, J);
  reference.jacobian(0.5, y, theta, J_ref);
  ASSERT_EQ(J.rows(), 3);
  ASSERT_EQ(J.cols(), 3);
  EXPECT_EQ(std::memcmp(J.data(), J_ref.data(), 9 * sizeof(double)), 0);
  EXPECT_NE(J(0, 1), J(1, 0));  // column-major on both sides, not a transpose

  EXPECT_TRUE(same_bits(model.initial_state(theta), reference.initial_state(theta)));
  Vector w_p(3), w_p_ref(3);
  model.initial_state_vjp(theta, v, w_p);
  reference.initial_state_vjp(theta, v, w_p_ref);
  EXPECT_TRUE(same_bits(w_p, w_p_ref));
}

// The same settings give the same gradient bits through the plugin as through rwd::auto_problem,
// and through the plugin store-all and revolve agree bit for bit.
TEST(PluginModel, GradientBitsAreThoseOfAutoProblem) {
  const PluginModel model = load_model_plugin(REWIND_SIR_PLUGIN);
  const auto reference_problem = auto_problem(Sir{});
  const Vector theta = model.default_parameters();
  const Vector y0 = model.initial_state(theta);
  const auto objective = Objective<B>::terminal_squared_norm();
  const StepControl control = StepControl::fixed(0.0, 0.1, 300);
  ExplicitRungeKutta stepper(model, ButcherTableau::rk4(), control);
  ExplicitRungeKutta reference_stepper(reference_problem, ButcherTableau::rk4(), control);

  const auto reference = differentiate(reference_stepper, objective, y0, theta, StoreAllStrategy{});
  const auto store_all = differentiate(stepper, objective, y0, theta, StoreAllStrategy{});
  testing::expect_same_gradient_bits<B>(store_all, reference);
  const auto revolve =
      differentiate(stepper, objective, y0, theta, CheckpointStrategy{revolve_schedule(5)});
  testing::expect_same_gradient_bits<B>(revolve, reference);
  EXPECT_TRUE(revolve.drift.bitwise_identical());
  EXPECT_TRUE(same_bits(
      model.total_parameter_gradient(theta, store_all.grad_y0, store_all.grad_theta),
      reference_problem.total_parameter_gradient(theta, reference.grad_y0, reference.grad_theta)));
}

// A stiff model that declares itself autonomous: through the plugin its second derivatives have
// auto_problem's bits, the Rosenbrock methods accept it (the autonomy is read from the plugin)
// and its rodas4 gradient has auto_problem's bits under store-all and revolve; a model that does
// not declare autonomy is refused by them, naming the rule.
TEST(PluginModel, AStiffModelRunsRosenbrockWithAutoProblemsBits) {
  const PluginModel model = load_model_plugin(REWIND_ROBERTSON_PLUGIN);
  const auto reference_problem = auto_problem(RobertsonModel{});
  EXPECT_TRUE(model.declares_autonomous());
  EXPECT_FALSE(load_model_plugin(REWIND_SIR_PLUGIN).declares_autonomous());
  const Vector theta = model.default_parameters();
  const Vector y = (Vector(3) << 0.9, 3e-5, 0.1).finished();
  const Vector u = (Vector(3) << 0.3, -1.7, 2.9).finished();
  const Vector w = (Vector(3) << -0.5, 0.25, 1.5).finished();
  Vector out_y(3), out_p(3), out_y_ref(3), out_p_ref(3);
  model.jvp_vjp(0.0, y, theta, u, w, out_y, out_p);
  reference_problem.jvp_vjp(0.0, y, theta, u, w, out_y_ref, out_p_ref);
  EXPECT_TRUE(same_bits(out_y, out_y_ref));
  EXPECT_TRUE(same_bits(out_p, out_p_ref));

  const Vector y0 = model.initial_state(theta);
  const auto objective = Objective<B>::terminal_squared_norm();
  const StepControl control = StepControl::adaptive(0.0, 40.0, 1e-6, 1e-10);
  RosenbrockStepper stepper(model, RosenbrockTableau::rodas4(), control);
  RosenbrockStepper reference_stepper(reference_problem, RosenbrockTableau::rodas4(), control);
  const auto reference = differentiate(reference_stepper, objective, y0, theta, StoreAllStrategy{});
  const auto store_all = differentiate(stepper, objective, y0, theta, StoreAllStrategy{});
  EXPECT_EQ(store_all.summary.steps, reference.summary.steps);
  EXPECT_TRUE(same_bits(store_all.y_final, reference.y_final));
  EXPECT_EQ(store_all.loss, reference.loss);
  testing::expect_same_gradient_bits<B>(store_all, reference);
  EXPECT_GT(store_all.summary.steps, 20);
  const auto revolve =
      differentiate(stepper, objective, y0, theta, CheckpointStrategy{revolve_schedule(4)});
  testing::expect_same_gradient_bits<B>(revolve, reference);

  const PluginModel sir = load_model_plugin(REWIND_SIR_PLUGIN);
  testing::expect_message(testing::error_message<InvalidArgument>([&] {
                            RosenbrockStepper(sir, RosenbrockTableau::rodas4(), control);
                          }),
                          "needs df/dt for the stages");
}

// A model whose f depends on t and whose rhs takes t as its scalar type: the plugin gives ∂f/∂t
// and its second derivatives with auto_problem's bits, so rodas4 takes it with auto_problem's
// gradient bits; a model without them says so.
TEST(PluginModel, ANonAutonomousModelRunsRosenbrockWithAutoProblemsBits) {
  const PluginModel model = load_model_plugin(REWIND_FORCED_RELAXATION_PLUGIN);
  const auto reference_problem = auto_problem(testing::ForcedRelaxation{});
  EXPECT_FALSE(model.declares_autonomous());
  EXPECT_TRUE(model.has_time_derivative());
  EXPECT_FALSE(load_model_plugin(REWIND_SIR_PLUGIN).has_time_derivative());
  const Vector theta = model.default_parameters();
  const Vector y = (Vector(2) << 0.4, 1.3).finished(), w = (Vector(2) << 0.7, -1.1).finished();
  Vector rate(2), rate_ref(2), out_y(2), out_p(3), out_y_ref(2), out_p_ref(3);
  model.time_derivative(0.9, y, theta, rate);
  reference_problem.time_derivative(0.9, y, theta, rate_ref);
  EXPECT_TRUE(same_bits(rate, rate_ref));
  model.time_derivative_vjp(0.9, y, theta, w, out_y, out_p);
  reference_problem.time_derivative_vjp(0.9, y, theta, w, out_y_ref, out_p_ref);
  EXPECT_TRUE(same_bits(out_y, out_y_ref));
  EXPECT_TRUE(same_bits(out_p, out_p_ref));

  const Vector y0 = model.initial_state(theta);
  const auto objective = Objective<B>::terminal_squared_norm();
  const StepControl control = StepControl::adaptive(0.3, 2.0, 1e-6, 1e-9);
  RosenbrockStepper stepper(model, RosenbrockTableau::rodas4(), control);
  RosenbrockStepper reference_stepper(reference_problem, RosenbrockTableau::rodas4(), control);
  const auto reference = differentiate(reference_stepper, objective, y0, theta, StoreAllStrategy{});
  const auto revolve =
      differentiate(stepper, objective, y0, theta, CheckpointStrategy{revolve_schedule(3)});
  EXPECT_GT(reference.summary.steps, 10);
  EXPECT_TRUE(same_bits(revolve.y_final, reference.y_final));
  testing::expect_same_gradient_bits<B>(revolve, reference);

  const PluginModel sir = load_model_plugin(REWIND_SIR_PLUGIN);
  Vector sir_rate(3);
  testing::expect_message(testing::error_message<InvalidArgument>([&] {
                            sir.time_derivative(0.0, sir.initial_state(sir.default_parameters()),
                                                sir.default_parameters(), sir_rate);
                          }),
                          "gives no df/dt");
}

static_assert(detail::RuntimeBandProblem<PluginModel>);

// A model that declares jacobian_band carries it through the plugin: its widths, and its band
// Jacobian with auto_problem's bits; a model without one says so, and its band members refuse.
TEST(PluginModel, ABandModelCarriesItsBandWithAutoProblemsBits) {
  const PluginModel model = load_model_plugin(REWIND_REACTION_DIFFUSION_PLUGIN);
  const auto reference = auto_problem(ReactionDiffusionModel{});
  ASSERT_TRUE(model.declares_band());
  EXPECT_EQ(model.band_upper(), 1);
  EXPECT_EQ(model.band_lower(), 1);
  const Vector theta = model.default_parameters();
  Vector y = model.initial_state(theta);
  for (Index i = 0; i < y.size(); ++i) y[i] += 0.01 * static_cast<double>(i);
  Eigen::MatrixXd bands, bands_ref;
  model.band_jacobian(0.0, y, theta, bands);
  reference.band_jacobian(0.0, y, theta, bands_ref);
  ASSERT_EQ(bands.rows(), 3);
  ASSERT_EQ(bands.cols(), 12);
  EXPECT_EQ(std::memcmp(bands.data(), bands_ref.data(), sizeof(double) * 36), 0);
  // The layout: bands(upper + i − j, j) = ∂f_i/∂y_j, here D/Δx² = 144 off the diagonal.
  EXPECT_EQ(bands(0, 1), 144.0);  // ∂f_0/∂y_1
  EXPECT_EQ(bands(2, 1), 144.0);  // ∂f_2/∂y_1
  EXPECT_EQ(bands(0, 0), 0.0);    // outside the matrix

  const PluginModel sir = load_model_plugin(REWIND_SIR_PLUGIN);
  EXPECT_FALSE(sir.declares_band());
  const std::string message =
      testing::error_message<InvalidArgument>([&] { (void)sir.band_upper(); });
  testing::expect_message(
      message, std::string("model '") + REWIND_SIR_PLUGIN + "' (Sir) declares no band Jacobian");
  testing::expect_message(message,
                          "static constexpr rwd::JacobianBand jacobian_band{upper, lower};");
}

// The band solvers take the plugin's band at run time: esdirk43 and rodas4 with band LU and BDF
// with CVODES's band solver give, through the plugin, the gradient bits that auto_problem of the
// same model gives in C++ (whose band is known at compile time), store-all and revolve.
TEST(PluginModel, ABandModelRunsTheBandSolversWithAutoProblemsBits) {
  const PluginModel model = load_model_plugin(REWIND_REACTION_DIFFUSION_PLUGIN);
  const auto reference_problem = auto_problem(ReactionDiffusionModel{});
  const Vector theta = model.default_parameters();
  const Vector y0 = model.initial_state(theta);
  const auto objective = Objective<B>::terminal_squared_norm();
  const StepControl control = StepControl::fixed(0.0, 0.01, 50);

  NewtonOptions newton;
  newton.linear_solver = ImplicitLinearSolver::band;
  DiagonallyImplicitRungeKutta esdirk(model, ImplicitTableau::esdirk43(), control, newton);
  DiagonallyImplicitRungeKutta esdirk_ref(reference_problem, ImplicitTableau::esdirk43(), control,
                                          newton);
  EXPECT_NE(esdirk.describe().find("band LU (lower 1, upper 1)"), std::string::npos)
      << esdirk.describe();
  const auto esdirk_expected = differentiate(esdirk_ref, objective, y0, theta, StoreAllStrategy{});
  {
    SCOPED_TRACE("esdirk43, band");
    testing::expect_same_gradient_bits<B>(
        differentiate(esdirk, objective, y0, theta, StoreAllStrategy{}), esdirk_expected);
    testing::expect_same_gradient_bits<B>(
        differentiate(esdirk, objective, y0, theta, CheckpointStrategy{revolve_schedule(6)}),
        esdirk_expected);
  }
  // The default linear solver is band for the plugin as for auto_problem.
  DiagonallyImplicitRungeKutta automatic(model, ImplicitTableau::esdirk43(), control);
  EXPECT_NE(automatic.describe().find("band LU"), std::string::npos) << automatic.describe();

  RosenbrockStepper rodas(model, RosenbrockTableau::rodas4(), control, ImplicitLinearSolver::band);
  RosenbrockStepper rodas_ref(reference_problem, RosenbrockTableau::rodas4(), control,
                              ImplicitLinearSolver::band);
  EXPECT_NE(rodas.describe().find("band LU (lower 1, upper 1)"), std::string::npos)
      << rodas.describe();
  {
    SCOPED_TRACE("rodas4, band");
    const auto expected = differentiate(rodas_ref, objective, y0, theta, StoreAllStrategy{});
    testing::expect_same_gradient_bits<B>(
        differentiate(rodas, objective, y0, theta, StoreAllStrategy{}), expected);
    testing::expect_same_gradient_bits<B>(
        differentiate(rodas, objective, y0, theta, CheckpointStrategy{revolve_schedule(6)}),
        expected);
  }

  CvodesOptions options;
  options.linear_solver = CvodesLinearSolver::band;
  const IntervalGrid grid{0.0, 0.5, 5};
  CvodesIntervalStepper bdf(model, options, grid);
  CvodesIntervalStepper bdf_ref(reference_problem, options, grid);
  {
    SCOPED_TRACE("bdf, band");
    const auto expected = differentiate(bdf_ref, objective, y0, theta, StoreAllStrategy{});
    testing::expect_same_gradient_bits<B>(
        differentiate(bdf, objective, y0, theta, StoreAllStrategy{}), expected);
  }
}

// A model without a band refuses the band solver in every engine, naming the model and how a
// model declares its band.
TEST(PluginModel, AModelWithoutABandRefusesTheBandSolver) {
  const PluginModel sir = load_model_plugin(REWIND_SIR_PLUGIN);
  const PluginModel robertson = load_model_plugin(REWIND_ROBERTSON_PLUGIN);
  const StepControl control = StepControl::fixed(0.0, 0.1, 10);
  const auto expect_band_refusal = [](const std::string& message, const std::string& path,
                                      const std::string& name) {
    testing::expect_message(message, "model '" + path + "' (" + name +
                                         ") declares no band Jacobian; a model whose ∂f/∂y is "
                                         "banded declares `static constexpr rwd::JacobianBand "
                                         "jacobian_band{upper, lower};`");
  };
  NewtonOptions newton;
  newton.linear_solver = ImplicitLinearSolver::band;
  const std::string esdirk = testing::error_message<InvalidArgument>(
      [&] { DiagonallyImplicitRungeKutta(sir, ImplicitTableau::esdirk43(), control, newton); });
  testing::expect_message(esdirk, "method 'esdirk43': the band linear solver needs a problem");
  expect_band_refusal(esdirk, REWIND_SIR_PLUGIN, "Sir");
  const std::string rodas = testing::error_message<InvalidArgument>([&] {
    RosenbrockStepper(robertson, RosenbrockTableau::rodas4(), control, ImplicitLinearSolver::band);
  });
  testing::expect_message(rodas, "method 'rodas4': the band linear solver needs a problem");
  expect_band_refusal(rodas, REWIND_ROBERTSON_PLUGIN, "RobertsonModel");
  CvodesOptions options;
  options.linear_solver = CvodesLinearSolver::band;
  const std::string bdf = testing::error_message<InvalidArgument>([&] {
    CvodesIntervalStepper(sir, options, IntervalGrid{0.0, 1.0, 2});
  });
  testing::expect_message(bdf, "CVODES band solver: the problem states no band");
  expect_band_refusal(bdf, REWIND_SIR_PLUGIN, "Sir");
  // The default solver stays dense for them, as before.
  DiagonallyImplicitRungeKutta automatic(sir, ImplicitTableau::esdirk43(), control);
  EXPECT_NE(automatic.describe().find("dense LU"), std::string::npos) << automatic.describe();
}

TEST(PluginModel, AStochasticModelCarriesItsDiffusionWithAutoProblemsBits) {
  const PluginModel model = load_model_plugin(REWIND_LOGISTIC_SDE_PLUGIN);
  const auto reference = auto_problem(LogisticSde{});
  ASSERT_TRUE(model.has_diffusion());
  static_assert(SdeProblem<PluginModel>);
  const Vector theta = (Vector(4) << 0.9, 80.0, 0.3, 4.0).finished();
  const Vector y = (Vector(1) << 37.5).finished();
  const Vector v = (Vector(1) << -1.25).finished();
  Vector g(1), g_ref(1), out_y(1), out_y_ref(1), out_p(4), out_p_ref(4);
  model.diffusion(0.0, y, theta, g);
  reference.diffusion(0.0, y, theta, g_ref);
  EXPECT_TRUE(same_bits(g, g_ref));
  model.diffusion_vjp(0.0, y, theta, v, out_y, out_p);
  reference.diffusion_vjp(0.0, y, theta, v, out_y_ref, out_p_ref);
  EXPECT_TRUE(same_bits(out_y, out_y_ref));
  EXPECT_TRUE(same_bits(out_p, out_p_ref));

  // A Milstein run's gradient, store-all and checkpointed, with the plugin and in C++.
  const auto objective = Objective<B>::terminal_squared_norm();
  const StepControl control = StepControl::fixed(0.0, 0.01, 400);
  StochasticStepper stepper(model, SdeScheme::milstein, control, 7);
  StochasticStepper reference_stepper(reference, SdeScheme::milstein, control, 7);
  const auto expected = differentiate(reference_stepper, objective, theta, StoreAllStrategy{});
  testing::expect_same_gradient_bits<B>(
      differentiate(stepper, objective, theta, StoreAllStrategy{}), expected);
  testing::expect_same_gradient_bits<B>(
      differentiate(stepper, objective, theta, CheckpointStrategy{revolve_schedule(6)}), expected);
}

TEST(PluginModel, ADriftOnlyModelRefusesADiffusion) {
  const PluginModel model = load_model_plugin(REWIND_SIR_PLUGIN);
  EXPECT_FALSE(model.has_diffusion());
  Vector g(3);
  const Vector theta = model.default_parameters();
  testing::expect_message(testing::error_message<InvalidArgument>(
                              [&] { model.diffusion(0.0, model.initial_state(theta), theta, g); }),
                          "declares no diffusion(t, y, p, g): it is not stochastic");
}

TEST(PluginModel, CopiesShareTheLoadedLibrary) {
  std::vector<PluginModel> models;
  {
    const PluginModel first = load_model_plugin(REWIND_SIR_PLUGIN);
    models.push_back(first);
  }
  Vector f(3);
  const Vector theta = models.front().default_parameters();
  models.front().rhs(0.0, models.front().initial_state(theta), theta, f);
  EXPECT_LT(f[0], 0.0);  // S falls
}

// Each refusal names the path and the rule.
std::string refusal(const std::string& path) {
  return testing::error_message<InvalidArgument>([&] { (void)load_model_plugin(path); });
}

TEST(PluginModel, RefusesAPathThatDoesNotExist) {
  const std::string message = refusal("/nonexistent/rewind/sir.so");
  testing::expect_message(message, "'/nonexistent/rewind/sir.so' does not exist");
}

TEST(PluginModel, RefusesATextFileNamedLikeALibrary) {
  const test::ScratchDirectory scratch("rewind-plugin");
  const std::string path = (scratch.path() / "model.so").string();
  std::ofstream(path) << "struct Sir {};\n";
  const std::string message = refusal(path);
  testing::expect_message(message, "'" + path + "' is not a shared library");
}

TEST(PluginModel, RefusesALibraryWithoutTheEntryPoint) {
  const std::string message = refusal(REWIND_NOT_A_MODEL);
  testing::expect_message(message, std::string("'") + REWIND_NOT_A_MODEL +
                                       "' is not a rewind model: it exports no "
                                       "rewind_model_plugin");
}

TEST(PluginModel, RefusesAModelOfAnotherAbiVersionSayingBoth) {
  const std::string message = refusal(REWIND_SIR_PLUGIN_ABI999);
  testing::expect_message(message, std::string("'") + REWIND_SIR_PLUGIN_ABI999 +
                                       "' was built for rewind model ABI version 999, and this "
                                       "rewind loads version " +
                                       std::to_string(kModelAbiVersion));
}

TEST(PluginModel, RefusesADescriptionWhoseBandIsMalformed) {
  const std::string message = refusal(REWIND_MALFORMED_BAND_PLUGIN);
  testing::expect_message(message, std::string("model '") + REWIND_MALFORMED_BAND_PLUGIN +
                                       "' (Sir) describes a malformed band: (upper 1, lower 1) "
                                       "with no band_jacobian");
}

TEST(PluginModel, RefusesAModelWhoseNamesRepeat) {
  const std::string message = refusal(REWIND_REPEATED_NAMES_PLUGIN);
  testing::expect_message(message, "(RepeatedNames) is refused");
  testing::expect_message(message, "state_names[1] = 'x' repeats state_names[0]");
}

}  // namespace
}  // namespace rwd
