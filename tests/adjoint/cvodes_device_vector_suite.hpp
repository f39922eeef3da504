// tests/adjoint/cvodes_device_vector_suite.hpp — CVODES over rwd::ThrustBackend (rewind's device
// N_Vector, rewind/integrators/thrust_cvodes.hpp), shared by the CPP device system
// (cvodes_device_vector_test.cpp, every build with SUNDIALS) and CUDA
// (cvodes_device_vector_cuda_test.cu, on a GPU machine).
//
//   expect_vector_operations_match_the_cpu(n, elementwise_tolerance)
//       every N_Vector operation on device vectors against rewind's Eigen N_Vector on the same
//       values: element-wise results the same bits (tolerance 0; under CUDA nvcc's fused
//       multiply-adds change the last bit of a·x + b·y), reductions to round-off;
//   expect_bdf_gradient_close_to_cpu(n, tolerance)
//       a BDF (GMRES) gradient of the Brusselator with the state on the device against the CPU
//       problem's, both at rtol 1e-9;
//   expect_schedule_independence(n)
//       store-all and revolve with 2 and 3 snapshots over the intervals: the same bits;
//   expect_esdirk_gradient_close_to_cpu(n, tolerance)
//       the implicit Runge–Kutta engine on device vectors (esdirk43, adaptive, its stages solved
//       by matrix-free GMRES over the device N_Vector) against the CPU problem's GMRES run;
//   expect_esdirk_schedule_independence(n)
//       its exact discrete adjoint on fixed steps: store-all, revolve with 2 and 3 snapshots and
//       a stage-aware schedule (esdirk43's 6 stages to a stage snapshot) give the same bits.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "rewind/adjoint/checkpointed_adjoint.hpp"
#include "rewind/adjoint/store_all_adjoint.hpp"
#include "rewind/backend/thrust_backend.hpp"
#include "rewind/integrators/cvodes_interval_stepper.hpp"
#include "rewind/integrators/diagonally_implicit_runge_kutta.hpp"
#include "rewind/integrators/eigen_nvector.hpp"
#include "rewind/integrators/thrust_cvodes.hpp"
#include "rewind/objective.hpp"
#include "rewind/problems/brusselator2d.hpp"
#include "rewind/problems/device_brusselator2d.hpp"
#include "rewind/schedule/schedules.hpp"
#include "support/host_vectors.hpp"
#include "support/random_data.hpp"

namespace rwd::cvodes_device_checks {

using Host = std::vector<double>;
using B = ThrustBackend;

// n values uniform in [lo, hi), seeded.
inline Host pseudo_random(std::size_t n, std::uint64_t seed, double lo, double hi) {
  return testing::random_values(static_cast<Index>(n), seed, lo, hi);
}

inline double relative(double a, double b) {
  return std::abs(a - b) / std::max(std::abs(b), 1e-300);
}

// A pair of N_Vectors with the same values: one over a device vector, one rewind's Eigen vector.
struct Pair {
  B::Vector device;
  N_Vector d = nullptr, e = nullptr;
  Pair(const Host& values, SUNContext context) : device(testing::to_backend<B>(values)) {
    d = ThrustNVector::view(device, context);
    e = sundials::make_eigen_nvector(static_cast<Index>(values.size()), context);
    std::copy(values.begin(), values.end(), N_VGetArrayPointer(e));
  }
  ~Pair() {
    N_VDestroy(d);
    N_VDestroy(e);
  }
  Pair(const Pair&) = delete;
  Pair& operator=(const Pair&) = delete;
  Host device_values() const { return testing::to_host<B>(device); }
  Host cpu_values() const {
    const double* p = N_VGetArrayPointer(e);
    return Host(p, p + N_VGetLength(e));
  }
};

inline double max_relative(const Host& a, const Host& b);

inline void expect_vector_operations_match_the_cpu(Index n, double elementwise_tolerance = 0.0) {
  SUNContext context = nullptr;
  ASSERT_EQ(SUNContext_Create(nullptr, &context), 0);
  const auto size = static_cast<std::size_t>(n);
  {
    Pair x(pseudo_random(size, 1, -2.0, 2.0), context),
        y(pseudo_random(size, 2, -1.0, 3.0), context);
    Pair w(pseudo_random(size, 3, 0.1, 1.0), context), z(Host(size, 0.0), context);
    Host ids = pseudo_random(size, 4, -1.0, 1.0), codes(size);
    for (std::size_t i = 0; i < size; ++i)
      codes[i] = (i % 5 == 0) ? 2.0 : (i % 7 == 0 ? -1.0 : 0.0);
    Pair id(ids, context), c(codes, context);
    const auto close = [&](const Pair& p, const char* what) {
      if (elementwise_tolerance == 0.0)
        EXPECT_TRUE(p.device_values() == p.cpu_values()) << what;
      else
        EXPECT_LE(max_relative(p.device_values(), p.cpu_values()), elementwise_tolerance) << what;
    };
    const auto same = [&](const char* what) { close(z, what); };
    N_VLinearSum(0.7, x.d, -1.3, y.d, z.d), N_VLinearSum(0.7, x.e, -1.3, y.e, z.e);
    same("N_VLinearSum");
    N_VConst(2.5, z.d), N_VConst(2.5, z.e);
    same("N_VConst");
    N_VProd(x.d, y.d, z.d), N_VProd(x.e, y.e, z.e);
    same("N_VProd");
    N_VDiv(x.d, w.d, z.d), N_VDiv(x.e, w.e, z.e);
    same("N_VDiv");
    N_VScale(-0.25, x.d, z.d), N_VScale(-0.25, x.e, z.e);
    same("N_VScale");
    N_VAbs(x.d, z.d), N_VAbs(x.e, z.e);
    same("N_VAbs");
    N_VInv(w.d, z.d), N_VInv(w.e, z.e);
    same("N_VInv");
    N_VAddConst(x.d, 0.5, z.d), N_VAddConst(x.e, 0.5, z.e);
    same("N_VAddConst");
    N_VCompare(1.0, x.d, z.d), N_VCompare(1.0, x.e, z.e);
    same("N_VCompare");
    EXPECT_LT(relative(N_VDotProd(x.d, y.d), N_VDotProd(x.e, y.e)), 1e-13);
    EXPECT_EQ(N_VMaxNorm(x.d), N_VMaxNorm(x.e));
    EXPECT_EQ(N_VMin(y.d), N_VMin(y.e));
    EXPECT_LT(relative(N_VWrmsNorm(x.d, w.d), N_VWrmsNorm(x.e, w.e)), 1e-13);
    EXPECT_LT(relative(N_VWrmsNormMask(x.d, w.d, id.d), N_VWrmsNormMask(x.e, w.e, id.e)), 1e-13);
    EXPECT_LT(relative(N_VWL2Norm(x.d, w.d), N_VWL2Norm(x.e, w.e)), 1e-13);
    EXPECT_LT(relative(N_VL1Norm(x.d), N_VL1Norm(x.e)), 1e-13);
    EXPECT_EQ(N_VInvTest(w.d, z.d), SUNTRUE);
    EXPECT_EQ(N_VInvTest(w.e, z.e), SUNTRUE);
    same("N_VInvTest");
    EXPECT_EQ(N_VInvTest(x.d, z.d), N_VInvTest(x.e, z.e));  // no zero in x either
    EXPECT_EQ(N_VConstrMask(c.d, y.d, z.d), N_VConstrMask(c.e, y.e, z.e));
    EXPECT_EQ(N_VConstrMask(c.d, y.d, z.d), SUNFALSE);  // y < 0 somewhere where y > 0 is asked
    same("N_VConstrMask");
    EXPECT_EQ(N_VMinQuotient(x.d, y.d), N_VMinQuotient(x.e, y.e));
    // Fused: a linear combination longer than one kernel's terms, and scale-add of several.
    std::vector<Pair*> terms;
    std::vector<N_Vector> td, te;
    Host coefficients;
    std::vector<std::unique_ptr<Pair>> own;
    for (int j = 0; j < kMaxCombinationTerms + 5; ++j) {
      own.push_back(std::make_unique<Pair>(pseudo_random(size, 10 + j, -1.0, 1.0), context));
      td.push_back(own.back()->d);
      te.push_back(own.back()->e);
      coefficients.push_back(0.1 * (j + 1) * (j % 2 ? -1.0 : 1.0));
    }
    const int count = static_cast<int>(td.size());
    N_VLinearCombination(count, coefficients.data(), td.data(), z.d);
    N_VLinearCombination(count, coefficients.data(), te.data(), z.e);
    close(z, "N_VLinearCombination");
    double a[2] = {0.5, -2.0};
    N_Vector yd[2] = {y.d, w.d}, ye[2] = {y.e, w.e}, zd[2] = {z.d, id.d}, ze[2] = {z.e, id.e};
    N_VScaleAddMulti(2, a, x.d, yd, zd), N_VScaleAddMulti(2, a, x.e, ye, ze);
    same("N_VScaleAddMulti");
    close(id, "N_VScaleAddMulti");
    // A clone has the same length and its own values.
    N_Vector clone = N_VClone(x.d);
    ASSERT_NE(clone, nullptr);
    EXPECT_EQ(N_VGetLength(clone), static_cast<sunindextype>(n));
    N_VConst(1.0, clone);
    EXPECT_EQ(N_VL1Norm(clone), static_cast<double>(n));
    EXPECT_NE(N_VL1Norm(x.d), static_cast<double>(n));
    N_VDestroy(clone);
  }
  SUNContext_Free(&context);
}

inline CvodesOptions gmres_options() {
  CvodesOptions o;
  o.rtol = 1e-9;
  o.atol = {1e-11};
  o.rtol_adjoint = 1e-9;
  o.atol_adjoint = 1e-11;
  o.linear_solver = CvodesLinearSolver::gmres;
  return o;
}

struct HostResult {
  double loss;
  Host grad_y0, grad_theta, y_final;
};

template <class Backend, class Result>
HostResult on_host(const Result& r) {
  return {r.loss, testing::to_host<Backend>(r.grad_y0), testing::to_host<Backend>(r.grad_theta),
          testing::to_host<Backend>(r.y_final)};
}

inline double max_relative(const Host& a, const Host& b) {
  double d = 0.0, s = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    d = std::max(d, std::abs(a[i] - b[i]));
    s = std::max(s, std::abs(b[i]));
  }
  return d / std::max(s, 1e-300);
}

inline void expect_bdf_gradient_close_to_cpu(Index n, double tolerance) {
  const IntervalGrid grid{0.0, 1.5, 3};
  const DeviceBrusselator2D<B> device(n);
  CvodesIntervalStepper device_stepper(device, gmres_options(), grid);
  StoreAllAdjoint device_driver(device_stepper, Objective<B>::terminal_squared_norm());
  const HostResult d =
      on_host<B>(device_driver.run(device.default_initial_state(), device.default_parameters()));

  const Brusselator2D cpu(n);
  CvodesIntervalStepper cpu_stepper(cpu, gmres_options(), grid);
  StoreAllAdjoint cpu_driver(cpu_stepper, Objective<EigenBackend>::terminal_squared_norm());
  const HostResult c =
      on_host<EigenBackend>(cpu_driver.run(cpu.default_initial_state(), cpu.default_parameters()));
  EXPECT_LT(relative(d.loss, c.loss), tolerance);
  EXPECT_LT(max_relative(d.y_final, c.y_final), tolerance);
  EXPECT_LT(max_relative(d.grad_y0, c.grad_y0), tolerance);
  EXPECT_LT(max_relative(d.grad_theta, c.grad_theta), tolerance);
  EXPECT_GT(c.loss, 0.0);
}

inline void expect_schedule_independence(Index n) {
  const DeviceBrusselator2D<B> problem(n);
  CvodesIntervalStepper stepper(problem, gmres_options(), IntervalGrid{0.0, 1.5, 6});
  const auto J = Objective<B>::terminal_squared_norm();
  StoreAllAdjoint store_all(stepper, J);
  const HostResult s =
      on_host<B>(store_all.run(problem.default_initial_state(), problem.default_parameters()));
  CheckpointedAdjoint checkpointed(stepper, J);
  for (const int snapshots : {2, 3}) {
    SCOPED_TRACE(::testing::Message() << "revolve with " << snapshots << " snapshots");
    const auto r = checkpointed.run(problem.default_initial_state(), problem.default_parameters(),
                                    revolve_schedule(snapshots));
    const HostResult h = on_host<B>(r);
    EXPECT_EQ(h.loss, s.loss);
    EXPECT_TRUE(h.grad_y0 == s.grad_y0);
    EXPECT_TRUE(h.grad_theta == s.grad_theta);
    EXPECT_TRUE(h.y_final == s.y_final);
    EXPECT_GT(r.summary.recomputed_steps, 0);
  }
}

inline NewtonOptions gmres_newton() {
  NewtonOptions newton;
  newton.linear_solver = ImplicitLinearSolver::gmres;
  return newton;
}

inline void expect_esdirk_gradient_close_to_cpu(Index n, double tolerance) {
  const StepControl control = StepControl::adaptive(0.0, 1.0, 1e-8, 1e-10);
  const DeviceBrusselator2D<B> device(n);
  DiagonallyImplicitRungeKutta device_stepper(device, ImplicitTableau::esdirk43(), control,
                                              gmres_newton());
  StoreAllAdjoint device_driver(device_stepper, Objective<B>::terminal_squared_norm());
  const auto dr = device_driver.run(device.default_initial_state(), device.default_parameters());
  const HostResult d = on_host<B>(dr);

  const Brusselator2D cpu(n);
  DiagonallyImplicitRungeKutta cpu_stepper(cpu, ImplicitTableau::esdirk43(), control,
                                           gmres_newton());
  StoreAllAdjoint cpu_driver(cpu_stepper, Objective<EigenBackend>::terminal_squared_norm());
  const auto cr = cpu_driver.run(cpu.default_initial_state(), cpu.default_parameters());
  const HostResult c = on_host<EigenBackend>(cr);
  EXPECT_GT(cr.summary.steps, 5);
  EXPECT_LT(relative(d.loss, c.loss), tolerance);
  EXPECT_LT(max_relative(d.y_final, c.y_final), tolerance);
  EXPECT_LT(max_relative(d.grad_y0, c.grad_y0), tolerance);
  EXPECT_LT(max_relative(d.grad_theta, c.grad_theta), tolerance);
}

inline void expect_esdirk_schedule_independence(Index n) {
  const DeviceBrusselator2D<B> problem(n);
  DiagonallyImplicitRungeKutta stepper(problem, ImplicitTableau::esdirk43(),
                                       StepControl::fixed(0.0, 0.05, 12), gmres_newton());
  const auto J = Objective<B>::terminal_squared_norm();
  StoreAllAdjoint store_all(stepper, J);
  const HostResult s =
      on_host<B>(store_all.run(problem.default_initial_state(), problem.default_parameters()));
  CheckpointedAdjoint checkpointed(stepper, J);
  for (const auto& [name, planner] : std::vector<std::pair<std::string, Planner>>{
           {"revolve c=2", revolve_schedule(2)},
           {"revolve c=3", revolve_schedule(3)},
           {"stage-aware, 12 units", stage_aware_schedule(12, 6)}}) {
    SCOPED_TRACE(name);
    const auto r =
        checkpointed.run(problem.default_initial_state(), problem.default_parameters(), planner);
    const HostResult h = on_host<B>(r);
    EXPECT_EQ(h.loss, s.loss);
    EXPECT_TRUE(h.grad_y0 == s.grad_y0);
    EXPECT_TRUE(h.grad_theta == s.grad_theta);
    EXPECT_TRUE(h.y_final == s.y_final);
  }
}

}  // namespace rwd::cvodes_device_checks
