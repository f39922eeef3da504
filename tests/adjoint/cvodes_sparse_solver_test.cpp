// CVODES's sparse direct solver (rwd::CvodesLinearSolver::sparse: KLU with the problem's sparse
// Jacobian): the BDF gradient of the Brusselator written as a stencil model agrees with the dense
// solver's (difference-quotient Jacobians) and with the built-in Brusselator's band solver to the
// solver tolerances, and with finite differences; the same bits under a revolve schedule as
// store-all; a problem without a sparse Jacobian, a malformed pattern and (in a build without KLU)
// the sparse solver itself are refused before any work, naming what is missing.
#include <gtest/gtest.h>
#include <nvector/nvector_serial.h>

#include <cmath>
#include <span>
#include <string>

#include "problems/models/stencil_models.hpp"
#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/forward_loss.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/integrators/cvodes_interval_stepper.hpp"
#include "rewind/problems/brusselator2d.hpp"
#include "rewind/problems/robertson.hpp"
#include "rewind/schedule/schedules.hpp"
#include "rewind/stencil_model.hpp"
#include "support/error_message.hpp"

namespace rwd {
namespace {

using V = Eigen::VectorXd;
using Objective = rwd::Objective<EigenBackend>;
using testing::BrusselatorStencil;

static_assert(detail::HasSparseJacobian<StencilProblem<BrusselatorStencil>>);
static_assert(!detail::HasSparseJacobian<Robertson>);

CvodesOptions tight(CvodesLinearSolver solver) {
  CvodesOptions o;
  o.rtol = o.rtol_adjoint = 1e-9;
  o.atol = {1e-11};
  o.atol_adjoint = o.atol_quadrature = 1e-11;
  o.linear_solver = solver;
  return o;
}

// The built-in Brusselator's state (u, v interleaved per cell) in a stencil model's layout
// ([u; v]), and back.
V fields_whole(const V& interleaved) {
  const Index cells = interleaved.size() / 2;
  V y(interleaved.size());
  for (Index k = 0; k < 2; ++k)
    for (Index c = 0; c < cells; ++c) y[k * cells + c] = interleaved[2 * c + k];
  return y;
}

double relative(const V& a, const V& b) {
  return (a - b).norm() / b.norm();
}

TEST(CvodesSparseSolver, BrusselatorStencilModelAgreesWithDenseBandAndFiniteDifferences) {
  if (!sundials::kKluAvailable) GTEST_SKIP() << "built without KLU";
  const Index n = 12;  // 288 unknowns
  const auto model = stencil_problem(BrusselatorStencil{}, n, n);
  const Brusselator2D built_in(n);
  const V theta = built_in.default_parameters();
  const V y0 = fields_whole(built_in.default_initial_state());
  const IntervalGrid grid{0.0, 2.0, 4};
  const Objective J = Objective::terminal_squared_norm();

  CvodesIntervalStepper sparse(model, tight(CvodesLinearSolver::sparse), grid);
  StoreAllAdjoint sparse_driver(sparse, J);
  const auto r = sparse_driver.run(y0, theta);
  EXPECT_NE(r.summary.method.find("sparse"), std::string::npos) << r.summary.method;

  // The same model with the dense solver (CVODES's difference-quotient Jacobians).
  CvodesIntervalStepper dense(model, tight(CvodesLinearSolver::dense), grid);
  StoreAllAdjoint dense_driver(dense, J);
  const auto d = dense_driver.run(y0, theta);
  EXPECT_LT(relative(r.grad_theta, d.grad_theta), 1e-6);
  EXPECT_LT(relative(r.grad_y0, d.grad_y0), 1e-6);
  EXPECT_NEAR(r.loss, d.loss, 1e-7 * std::abs(d.loss));

  // The built-in problem (hand-written derivatives, its own layout) with the band solver.
  CvodesIntervalStepper band(built_in, tight(CvodesLinearSolver::band), grid);
  StoreAllAdjoint band_driver(band, J);
  const auto b = band_driver.run(built_in.default_initial_state(), theta);
  EXPECT_LT(relative(r.grad_theta, b.grad_theta), 1e-6);
  EXPECT_LT(relative(r.grad_y0, fields_whole(b.grad_y0)), 1e-6);

  // Central differences of the forward loss in each parameter.
  for (int k = 0; k < 3; ++k) {
    const double h = 1e-5 * theta[k];
    V plus = theta, minus = theta;
    plus[k] += h;
    minus[k] -= h;
    const double fd =
        (forward_loss(sparse, J, y0, plus) - forward_loss(sparse, J, y0, minus)) / (2 * h);
    EXPECT_NEAR(r.grad_theta[k], fd, 1e-5 * std::abs(fd) + 1e-9) << "theta[" << k << "]";
  }

  // Replays restart CVODES identically: a revolve schedule gives store-all's bits, zero drift.
  CheckpointOptions options;
  options.drift_policy = DriftPolicy::fail;
  CheckpointedAdjoint checkpointed(sparse, J, options);
  const auto c = checkpointed.run(y0, theta, revolve_schedule(2));
  EXPECT_EQ(c.grad_theta, r.grad_theta);
  EXPECT_EQ(c.grad_y0, r.grad_y0);
}

#ifdef REWIND_HAVE_KLU
// The matrices CVODES factors: J (compressed rows) times x is the problem's jvp; −Jᵀ (the same
// arrays as compressed columns, values negated) times x is minus its vjp.
TEST(CvodesSparseSolver, MatricesAreTheJacobianAndMinusItsTranspose) {
  const auto model = stencil_problem(BrusselatorStencil{}, 5, 7);
  const Index n = model.state_size();
  const V theta{{1.0, 3.4, 0.002}};
  V y(n), x(n), jx(n), xj(n), xj_theta(3);
  for (Index i = 0; i < n; ++i) {
    y[i] = 1.0 + 0.3 * std::sin(0.7 * static_cast<double>(i));
    x[i] = std::cos(1.3 * static_cast<double>(i));
  }
  model.jvp(0.0, y, theta, x, jx);
  model.vjp(0.0, y, theta, x, xj, xj_theta);
  SUNContext context = nullptr;
  ASSERT_EQ(SUNContext_Create(nullptr, &context), 0);
  const sundials::SparseJacobianPattern pattern(model.sparsity(), n);
  for (const bool transposed : {false, true}) {
    SUNMatrix matrix = pattern.make_matrix(transposed, context);
    ASSERT_NE(matrix, nullptr);
    EXPECT_TRUE(sundials::fill_sparse_jacobian(model, pattern, 0.0, y, theta, matrix, transposed));
    N_Vector in = N_VMake_Serial(n, x.data(), context), out = N_VNew_Serial(n, context);
    ASSERT_EQ(SUNMatMatvec(matrix, in, out), 0);
    const V product = Eigen::Map<V>(N_VGetArrayPointer(out), n);
    const V expected = transposed ? V(-xj) : jx;
    EXPECT_LT((product - expected).cwiseAbs().maxCoeff(), 1e-13 * expected.cwiseAbs().maxCoeff())
        << (transposed ? "-J^T x" : "J x");
    N_VDestroy(in);
    N_VDestroy(out);
    SUNMatDestroy(matrix);
  }
  SUNContext_Free(&context);
}
#endif

TEST(CvodesSparseSolver, RefusalsNameWhatIsMissing) {
  // Without KLU in the build: the message every build would give, checked in every build.
  const std::string no_klu = sundials::sparse_solver_refusal(false, true);
  testing::expect_message(no_klu, "built without KLU");
  testing::expect_message(no_klu, "libsuitesparse-dev");
  testing::expect_message(no_klu, "REWIND_WITH_KLU");
  EXPECT_TRUE(sundials::sparse_solver_refusal(true, true).empty());

  const auto model = stencil_problem(BrusselatorStencil{}, 6, 6);
  if (!sundials::kKluAvailable) {
    const std::string message = testing::error_message<InvalidArgument>([&] {
      CvodesIntervalStepper s(model, tight(CvodesLinearSolver::sparse), IntervalGrid{0.0, 1.0, 1});
    });
    EXPECT_EQ(message, no_klu);
    return;
  }
  // A problem without sparsity() and jacobian_values().
  Robertson robertson(true);
  const std::string message = testing::error_message<InvalidArgument>([&] {
    CvodesIntervalStepper s(robertson, tight(CvodesLinearSolver::sparse),
                            IntervalGrid{0.0, 1.0, 1});
  });
  testing::expect_message(message, "declares no sparse Jacobian");
  testing::expect_message(message, "`sparsity()`");
  testing::expect_message(message, "`jacobian_values(double t");
}

// The stencil problem with a pattern whose rows are not ascending, or of the wrong size.
struct MalformedPattern : StencilProblem<BrusselatorStencil> {
  bool reversed_row = true;
  MalformedPattern(bool reversed)
      : StencilProblem<BrusselatorStencil>(BrusselatorStencil{}, {4, 4}), reversed_row(reversed) {}
  SparsityPattern sparsity() const {
    SparsityPattern p = StencilProblem<BrusselatorStencil>::sparsity();
    if (reversed_row)
      std::swap(p.columns[0], p.columns[1]);
    else
      p.row_starts.pop_back();
    return p;
  }
};

TEST(CvodesSparseSolver, RefusesAMalformedPattern) {
  if (!sundials::kKluAvailable) GTEST_SKIP() << "built without KLU";
  for (const bool reversed : {true, false}) {
    const MalformedPattern model(reversed);
    const std::string message = testing::error_message<InvalidArgument>([&] {
      CvodesIntervalStepper s(model, tight(CvodesLinearSolver::sparse), IntervalGrid{0.0, 1.0, 1});
    });
    testing::expect_message(message, reversed ? "row 0's columns out of order" : "row starts");
  }
}

}  // namespace
}  // namespace rwd
