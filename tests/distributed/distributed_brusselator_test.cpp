// The Brusselator split across MPI ranks (rwd::DistributedBrusselator) and CVODES's BDF over
// rewind's distributed N_Vector, run by ctest under mpiexec with 1, 2, 3 and 4 ranks: the halo
// exchange against the serial stencil bit for bit; the N_Vector's reductions the same bits for
// any rank and thread count; the BDF + GMRES gradient under revolve and store-all the same bits
// as a one-process run of the same code (MPI_COMM_SELF, one rank's layout) — hence the same for
// every rank count — and for 1 and 2 threads; dense and band refused over ranks.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/distributed/distributed_brusselator.hpp"
#include "rewind/distributed/distributed_cvodes.hpp"
#include "rewind/distributed/distributed_nvector.hpp"
#include "rewind/integrators/cvodes_interval_stepper.hpp"
#include "rewind/parallel.hpp"
#include "rewind/problems/brusselator2d.hpp"
#include "rewind/schedule/schedules.hpp"

#include "distributed_test_support.hpp"

namespace rwd {
namespace {

using test::local_values;
using test::same_bits;
using test::slow_disk;
using test::ThreadCountGuard;
using test::world;

using V = Eigen::VectorXd;
using B = DistributedBackend;

Communicator self() {
  return Communicator(MPI_COMM_SELF);
}

// This rank's values of a vector laid out like the serial state (its rows are contiguous).
std::vector<double> my_rows(const RowLayout& layout, const double* all) {
  const Index first = layout.first_row() * layout.row_length();
  return std::vector<double>(all + first, all + first + layout.local_size());
}

// Restores one thread after a test that changed it.
struct ThreadCount {
  explicit ThreadCount(int t) { set_thread_count(t); }
  ~ThreadCount() { set_thread_count(1); }
};

TEST(DistributedBrusselator, HaloExchangeGivesTheSerialStencilBitForBit) {
  const Index n = 11;  // rows that do not split evenly over 2, 3 or 4 ranks
  const Brusselator2D serial(n);
  const DistributedBrusselator problem(n, world());
  // A state with structure in every cell (the default state moved by a few explicit steps plus a
  // pattern), a tangent and a cotangent: every neighbour, wall rows included, matters.
  const V theta = serial.default_parameters();
  V y = serial.default_initial_state(), f = V::Zero(serial.state_size());
  for (Index i = 0; i < y.size(); ++i) y[i] += 0.05 * std::cos(0.71 * static_cast<double>(i));
  for (int k = 0; k < 5; ++k) {
    serial.rhs(0.0, y, theta, f);
    y += 0.01 * f;
  }
  V v = V::Zero(y.size()), w = V::Zero(y.size());
  for (Index i = 0; i < y.size(); ++i) {
    v[i] = std::sin(0.37 * static_cast<double>(i));
    w[i] = std::cos(0.53 * static_cast<double>(i) + 0.2);
  }
  V jv = V::Zero(y.size()), out_y = V::Zero(y.size()), out_theta = V::Zero(3);
  serial.rhs(0.0, y, theta, f);
  serial.jvp(0.0, y, theta, v, jv);
  serial.vjp(0.0, y, theta, w, out_y, out_theta);

  const RowLayout& layout = problem.layout();
  DistributedVector dy = B::zeros(serial.state_size()), dv = B::zeros(serial.state_size()),
                    dw = B::zeros(serial.state_size());
  B::copy_from_host(my_rows(layout, y.data()), dy);
  B::copy_from_host(my_rows(layout, v.data()), dv);
  B::copy_from_host(my_rows(layout, w.data()), dw);
  DistributedVector df = B::zeros(serial.state_size()), djv = B::zeros(serial.state_size()),
                    dout = B::zeros(serial.state_size()), dout_theta = B::zeros(3);
  const DistributedVector dtheta = DistributedBrusselator::default_parameters();
  problem.rhs(0.0, dy, dtheta, df);
  problem.jvp(0.0, dy, dtheta, dv, djv);
  problem.vjp(0.0, dy, dtheta, dw, dout, dout_theta);
  EXPECT_TRUE(same_bits(local_values(df), my_rows(layout, f.data()))) << "rhs";
  EXPECT_TRUE(same_bits(local_values(djv), my_rows(layout, jv.data()))) << "jvp";
  EXPECT_TRUE(same_bits(local_values(dout), my_rows(layout, out_y.data()))) << "vjp, state part";
  for (int j = 0; j < 3; ++j)
    EXPECT_TRUE(same_bits(dout_theta.local[j], out_theta[j]))
        << "vjp, parameter " << j << ": " << dout_theta.local[j] << " vs " << out_theta[j];
  EXPECT_TRUE(same_bits(local_values(problem.default_initial_state()),
                        my_rows(layout, serial.default_initial_state().data())));
}

// Every reduction of the N_Vector on a vector large enough for the row folds and element-wise
// loops to use two threads (128 rows per rank at 4 ranks), against a one-process layout.
TEST(DistributedNVector, ReductionsHaveTheSameBitsForEveryRankAndThreadCount) {
  const Index rows = 512, length = 128;
  SUNContext context = nullptr;
  ASSERT_EQ(SUNContext_Create(nullptr, &context), 0);
  const auto values = [&](const RowLayout& layout, double phase) {
    DistributedVector x;
    x.layout = &layout;
    x.local.resize(layout.local_size());
    for (Index i = 0; i < layout.local_size(); ++i) {
      const double g = static_cast<double>(layout.first_row() * length + i);
      x.local[i] = std::sin(0.013 * g + phase) * (1.0 + 1e-3 * g);
    }
    return x;
  };
  // dot, WRMS, masked WRMS, L1, weighted L2, max norm, min, min quotient, and x + 2y's max norm
  // (an element-wise op feeding a reduction).
  const auto reductions = [&](const RowLayout& layout) {
    DistributedVector x = values(layout, 0.0), y = values(layout, 1.0), m = values(layout, 2.0);
    N_Vector a = sundials::make_distributed_nvector_view(x, context);
    N_Vector b = sundials::make_distributed_nvector_view(y, context);
    N_Vector mask = sundials::make_distributed_nvector_view(m, context);
    N_Vector z = N_VClone(a);
    N_VLinearSum(1.0, a, 2.0, b, z);
    std::vector<double> r = {N_VDotProd(a, b),
                             N_VWrmsNorm(a, b),
                             N_VWrmsNormMask(a, b, mask),
                             N_VL1Norm(a),
                             N_VWL2Norm(a, b),
                             N_VMaxNorm(a),
                             N_VMin(a),
                             N_VMinQuotient(a, b),
                             N_VMaxNorm(z),
                             static_cast<double>(N_VGetLength(a))};
    EXPECT_EQ(*static_cast<MPI_Comm*>(N_VGetCommunicator(a)), layout.communicator().handle());
    EXPECT_EQ(sundials::distributed_vector(z)->layout, &layout) << "a clone keeps the layout";
    for (N_Vector v : {a, b, mask, z}) N_VDestroy(v);
    return r;
  };
  const RowLayout one(self(), 1, rows, length);
  const std::vector<double> reference = reductions(one);
  EXPECT_EQ(reference.back(), static_cast<double>(rows * length)) << "N_VGetLength is global";
  const RowLayout split(world(), 1, rows, length);
  for (int threads : {1, 2}) {
    if (threads > 1 && !kThreadsAvailable) break;  // a build without OpenMP has one thread
    ThreadCount use(threads);
    const std::vector<double> r = reductions(split);
    for (std::size_t j = 0; j < r.size(); ++j)
      EXPECT_TRUE(same_bits(r[j], reference[j])) << "reduction " << j << " with " << threads
                                                 << " threads: " << r[j] << " vs " << reference[j];
  }
  SUNContext_Free(&context);
}

CvodesOptions gmres_options() {
  CvodesOptions o;
  o.linear_solver = CvodesLinearSolver::gmres;
  o.rtol = 1e-5;
  o.atol = {1e-7};
  o.rtol_adjoint = 1e-5;
  o.atol_adjoint = 1e-7;
  o.atol_quadrature = 1e-6;
  o.steps_per_adjoint_checkpoint = 20;
  return o;
}

// Diffusion strong enough that the problem is stiff on the test grid (eigenvalues of α∇² down
// to −8αn² ≈ −31 at n = 14) and GMRES does real work.
constexpr double kAlpha = 0.02;

struct Gradient {
  double loss = 0.0;
  std::vector<double> grad_y0;  // this rank's rows (all of them for the one-process run)
  std::vector<double> grad_theta;
};

// The BDF + GMRES gradient of ½|y(T)|² on `comm`, under a revolve schedule (2 snapshots for 5
// intervals) and under store-all; both must agree to the bit.
Gradient bdf_gradient(Index n, Communicator comm, const char* what) {
  const DistributedBrusselator problem(n, comm);  // puts its layout in use for what follows
  CvodesIntervalStepper stepper(problem, gmres_options(), IntervalGrid{0.0, 2.0, 5});
  const auto objective = Objective<B>::terminal_squared_norm();
  const DistributedVector y0 = problem.default_initial_state();
  const DistributedVector theta = DistributedBrusselator::default_parameters(1.0, 3.4, kAlpha);
  CheckpointOptions options;
  options.drift_policy = DriftPolicy::fail;
  CheckpointedAdjoint revolve(stepper, objective, options);
  const auto r = revolve.run(y0, theta, revolve_schedule(2));
  EXPECT_GT(r.summary.recomputed_steps, 0) << what << ": revolve must replay intervals";
  StoreAllAdjoint store_all(stepper, objective);
  const auto s = store_all.run(y0, theta);
  EXPECT_TRUE(same_bits(r.loss, s.loss)) << what << ": loss, revolve vs store-all";
  EXPECT_TRUE(same_bits(local_values(r.grad_y0), local_values(s.grad_y0)))
      << what << ": dJ/dy0, revolve vs store-all";
  EXPECT_TRUE(same_bits(local_values(r.grad_theta), local_values(s.grad_theta)))
      << what << ": dJ/dtheta, revolve vs store-all";
  return {r.loss, local_values(r.grad_y0), local_values(r.grad_theta)};
}

TEST(DistributedBrusselator, BdfGradientHasTheSameBitsForEveryRankAndThreadCount) {
  const Index n = 14;  // 14 rows: 7+7, 4+5+5, 3+4+3+4 over 2, 3, 4 ranks
  // The reference: the same code in one process (this rank alone, one rank's layout).
  const Gradient reference = bdf_gradient(n, self(), "one process");
  // Sanity: the serial Brusselator through the Eigen N_Vector (other reduction bits, the same
  // continuous adjoint to the solver tolerances).
  {
    const Brusselator2D serial(n);
    CvodesIntervalStepper stepper(serial, gmres_options(), IntervalGrid{0.0, 2.0, 5});
    StoreAllAdjoint driver(stepper, Objective<EigenBackend>::terminal_squared_norm());
    V theta = serial.default_parameters();
    theta[2] = kAlpha;
    const auto s = driver.run(serial.default_initial_state(), theta);
    EXPECT_NEAR(reference.loss, s.loss, 1e-6 * std::abs(s.loss));
    for (int j = 0; j < 3; ++j)
      EXPECT_NEAR(reference.grad_theta[static_cast<std::size_t>(j)], s.grad_theta[j],
                  1e-3 * s.grad_theta.norm());
    for (Index i = 0; i < s.grad_y0.size(); ++i)
      EXPECT_NEAR(reference.grad_y0[static_cast<std::size_t>(i)], s.grad_y0[i],
                  1e-3 * s.grad_y0.lpNorm<Eigen::Infinity>());
  }
  for (int threads : {1, 2}) {
    if (threads > 1 && !kThreadsAvailable) break;  // a build without OpenMP has one thread
    ThreadCount use(threads);
    const std::string what =
        std::to_string(world().size()) + " ranks, " + std::to_string(threads) + " threads";
    const Gradient g = bdf_gradient(n, world(), what.c_str());
    const RowLayout layout(world(), 1, n, 2 * n);
    EXPECT_TRUE(same_bits(g.loss, reference.loss))
        << what << ": loss " << g.loss << " vs " << reference.loss;
    EXPECT_TRUE(same_bits(g.grad_y0, my_rows(layout, reference.grad_y0.data())))
        << what << ": this rank's dJ/dy0";
    for (int j = 0; j < 3; ++j)
      EXPECT_TRUE(same_bits(g.grad_theta[static_cast<std::size_t>(j)],
                            reference.grad_theta[static_cast<std::size_t>(j)]))
          << what << ": dJ/dtheta[" << j << "] " << g.grad_theta[static_cast<std::size_t>(j)]
          << " vs " << reference.grad_theta[static_cast<std::size_t>(j)];
  }
}

TEST(DistributedBrusselator, DenseAndBandSolversAreRefusedBeforeAnyWork) {
  const DistributedBrusselator problem(8, world());
  for (CvodesLinearSolver solver : {CvodesLinearSolver::dense, CvodesLinearSolver::band}) {
    CvodesOptions o = gmres_options();
    o.linear_solver = solver;
    o.band_upper = o.band_lower = 16;
    try {
      CvodesIntervalStepper stepper(problem, o, IntervalGrid{0.0, 1.0, 2});
      FAIL() << "a matrix-based linear solver was accepted on distributed vectors";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("does not distribute"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("gmres"), std::string::npos) << e.what();
    }
  }
  CvodesOptions serial_vectors = gmres_options();
  serial_vectors.vectors = CvodesVectors::serial;
  EXPECT_THROW(CvodesIntervalStepper(problem, serial_vectors, IntervalGrid{0.0, 1.0, 2}),
               InvalidArgument);
}

}  // namespace
}  // namespace rwd
