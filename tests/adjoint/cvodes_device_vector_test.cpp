// CVODES with the state in rwd::ThrustBackend vectors (rewind's device N_Vector) on the CPP device
// system: the vector operations against the CPU N_Vector, a BDF gradient of the Brusselator
// against the CPU problem, schedule independence, the same for esdirk43 (the implicit
// Runge–Kutta engine over device vectors), and what is refused. The same checks run on a
// GPU in cvodes_device_vector_cuda_test.cu.
#include <gtest/gtest.h>

#include <string>

#include "cvodes_device_vector_suite.hpp"

namespace {

using namespace rwd::cvodes_device_checks;

TEST(CvodesDeviceVector, OperationsMatchTheCpuVector) {
  expect_vector_operations_match_the_cpu(1000);
}

TEST(CvodesDeviceVector, BdfGradientMatchesTheCpuProblem) {
  expect_bdf_gradient_close_to_cpu(12, 1e-10);
}

TEST(CvodesDeviceVector, EveryScheduleGivesTheSameBits) {
  expect_schedule_independence(10);
}

// The implicit Runge–Kutta engine with the state on the device: its stage solves by GMRES over the
// device N_Vector, its adjoint exact; against the CPU problem to round-off (the reductions fold
// in another order), and the same bits under every schedule.
TEST(CvodesDeviceVector, Esdirk43GradientMatchesTheCpuProblem) {
  expect_esdirk_gradient_close_to_cpu(12, 1e-11);
}

TEST(CvodesDeviceVector, Esdirk43EveryScheduleGivesTheSameBits) {
  expect_esdirk_schedule_independence(10);
}

// On the CPP device system the device problem's rhs and jvp are the CPU problem's bits (the same
// per-cell arithmetic); its vjp's state part too.
TEST(CvodesDeviceVector, DeviceBrusselatorIsTheCpuArithmetic) {
  const rwd::Brusselator2D cpu(9);
  const rwd::DeviceBrusselator2D<B> device(9);
  const Host y = pseudo_random(162, 5, 0.5, 3.5), v = pseudo_random(162, 6, -1.0, 1.0);
  const Eigen::VectorXd ye = Eigen::Map<const Eigen::VectorXd>(y.data(), 162),
                        ve = Eigen::Map<const Eigen::VectorXd>(v.data(), 162);
  const B::Vector yd = rwd::testing::to_backend<B>(y), vd = rwd::testing::to_backend<B>(v);
  Eigen::VectorXd f(162), jv(162), gy(162), gt(3);
  B::Vector fd = B::zeros(162), jvd = B::zeros(162), gyd = B::zeros(162), gtd = B::zeros(3);
  cpu.rhs(0.0, ye, cpu.default_parameters(), f);
  device.rhs(0.0, yd, device.default_parameters(), fd);
  cpu.jvp(0.0, ye, cpu.default_parameters(), ve, jv);
  device.jvp(0.0, yd, device.default_parameters(), vd, jvd);
  cpu.vjp(0.0, ye, cpu.default_parameters(), ve, gy, gt);
  device.vjp(0.0, yd, device.default_parameters(), vd, gyd, gtd);
  EXPECT_TRUE(rwd::testing::to_host<B>(fd) == Host(f.data(), f.data() + 162));
  EXPECT_TRUE(rwd::testing::to_host<B>(jvd) == Host(jv.data(), jv.data() + 162));
  EXPECT_TRUE(rwd::testing::to_host<B>(gyd) == Host(gy.data(), gy.data() + 162));
  EXPECT_LT(max_relative(rwd::testing::to_host<B>(gtd), Host(gt.data(), gt.data() + 3)), 1e-13);
}

TEST(CvodesDeviceVector, MatrixSolversAreRefused) {
  const rwd::DeviceBrusselator2D<B> problem(6);
  for (const auto solver : {rwd::CvodesLinearSolver::dense, rwd::CvodesLinearSolver::band}) {
    rwd::CvodesOptions o = gmres_options();
    o.linear_solver = solver;
    try {
      rwd::CvodesIntervalStepper stepper(problem, o, rwd::IntervalGrid{0.0, 1.0, 2});
      ADD_FAILURE() << "a matrix solver over device vectors was not refused";
    } catch (const rwd::InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("GMRES"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
