// A templated model that declares the band of its Jacobian (rwd::JacobianBand, rewind/model.hpp):
// rwd::auto_problem derives the band Jacobian with upper + lower + 1 forward-mode components
// (compressed columns), equal to the dense derived Jacobian entry for entry, and CVODES's band
// solver takes it instead of difference quotients — a BDF gradient as the dense derived Jacobian
// gives, to the solver's tolerances. Widths narrower than the declared band are refused.
#include <gtest/gtest.h>

#include <array>
#include <random>
#include <string>

#include "rewind/adjoint/differentiate.hpp"
#include "rewind/integrators/cvodes_interval_stepper.hpp"
#include "rewind/model.hpp"
#include "support/error_message.hpp"
#include "support/random_data.hpp"

namespace rwd {
namespace {

using B = EigenBackend;
using Vector = B::Vector;

// A reaction–diffusion–advection chain of 10 cells with walls (values beyond the ends are 0):
// f_i = D (y_{i−1} − 2 y_i + y_{i+1}) + a (y_{i−2} − y_{i−1}) − k y_i², so ∂f_i/∂y_j ≠ 0 for
// j ∈ {i − 2, …, i + 1}: one super-diagonal, two sub-diagonals.
struct Chain {
  static constexpr int kCells = 10;
  static constexpr std::array<const char*, kCells> state_names{"u0", "u1", "u2", "u3", "u4",
                                                               "u5", "u6", "u7", "u8", "u9"};
  static constexpr std::array<const char*, 3> parameter_names{"D", "a", "k"};
  static constexpr std::array<double, 3> default_parameters{0.8, 0.3, 2.0};
  static constexpr JacobianBand jacobian_band{/*upper=*/1, /*lower=*/2};
  template <class T>
  void rhs(double /*t*/, const T* y, const T* p, T* f) const {
    for (int i = 0; i < kCells; ++i) {
      const T left = i >= 1 ? y[i - 1] : T(0.0);
      const T left2 = i >= 2 ? y[i - 2] : T(0.0);
      const T right = i + 1 < kCells ? y[i + 1] : T(0.0);
      f[i] = p[0] * (left - 2.0 * y[i] + right) + p[1] * (left2 - left) - p[2] * y[i] * y[i];
    }
  }
};

// The chain problem with its band Jacobian calls counted (to see that CVODES takes it).
struct CountingChain {
  using Backend = B;
  using Vector = B::Vector;
  AutoProblem<Chain> inner;
  mutable Index band_jacobians = 0;
  Index state_size() const { return inner.state_size(); }
  Index parameter_size() const { return inner.parameter_size(); }
  void rhs(double t, const Vector& y, const Vector& th, Vector& f) const { inner.rhs(t, y, th, f); }
  void vjp(double t, const Vector& y, const Vector& th, const Vector& v, Vector& oy,
           Vector& ot) const {
    inner.vjp(t, y, th, v, oy, ot);
  }
  Index band_upper() const { return inner.band_upper(); }
  Index band_lower() const { return inner.band_lower(); }
  void band_jacobian(double t, const Vector& y, const Vector& th, Eigen::MatrixXd& bands) const {
    ++band_jacobians;
    inner.band_jacobian(t, y, th, bands);
  }
};

static_assert(AutoProblem<Chain>::band_upper() == 1 && AutoProblem<Chain>::band_lower() == 2);
static_assert(detail::HasBandJacobian<AutoProblem<Chain>>);
static_assert(detail::HasBandJacobian<CountingChain>);

TEST(AutoProblemBand, BandJacobianEqualsTheDenseDerivedJacobian) {
  const auto problem = auto_problem(Chain{});
  std::mt19937_64 rng(4);
  for (int trial = 0; trial < 10; ++trial) {
    const Vector y = testing::random_vector(Chain::kCells, rng, -1.0, 2.0);
    const Vector theta = problem.default_parameters() + testing::random_vector(3, rng, -0.1, 0.1);
    Eigen::MatrixXd dense, bands;
    problem.jacobian(0.0, y, theta, dense);
    problem.band_jacobian(0.0, y, theta, bands);
    ASSERT_EQ(bands.rows(), 1 + 2 + 1);
    ASSERT_EQ(bands.cols(), Chain::kCells);
    for (Index j = 0; j < Chain::kCells; ++j)
      for (Index i = 0; i < Chain::kCells; ++i) {
        SCOPED_TRACE("entry (" + std::to_string(i) + ", " + std::to_string(j) + ")");
        if (i - j > 2 || j - i > 1) {
          EXPECT_EQ(dense(i, j), 0.0);  // outside the declared band
        } else {
          EXPECT_EQ(bands(1 + i - j, j), dense(i, j));  // the same derivative arithmetic
        }
      }
    // The band's corners outside the matrix are 0: column 0 has no super-diagonal entry.
    EXPECT_EQ(bands(0, 0), 0.0);
    EXPECT_EQ(bands(3, Chain::kCells - 1), 0.0);
  }
}

// BDF (CVODES) with the band solver on the derived band Jacobian against the dense solver on the
// dense derived Jacobian: the same gradient to the solver's tolerances, and the band Jacobian
// is the one CVODES used.
TEST(AutoProblemBand, BdfBandGradientMatchesTheDenseOne) {
  CountingChain counted{auto_problem(Chain{})};
  const auto& dense_problem = counted.inner;
  Vector y0(Chain::kCells);
  for (Index i = 0; i < Chain::kCells; ++i) y0[i] = 1.0 + 0.1 * static_cast<double>(i % 3);
  const Vector theta = dense_problem.default_parameters();
  const auto objective = Objective<B>::terminal_squared_norm();
  const IntervalGrid grid{0.0, 2.0, 4};
  CvodesOptions band_options, dense_options;
  band_options.linear_solver = CvodesLinearSolver::band;
  dense_options.linear_solver = CvodesLinearSolver::dense;
  for (CvodesOptions* o : {&band_options, &dense_options}) {
    o->rtol = o->rtol_adjoint = 1e-9;
    o->atol = {1e-11};
    o->atol_adjoint = o->atol_quadrature = 1e-11;
  }
  CvodesIntervalStepper band_stepper(counted, band_options, grid);
  CvodesIntervalStepper dense_stepper(dense_problem, dense_options, grid);
  const auto band = differentiate(band_stepper, objective, y0, theta, StoreAllStrategy{});
  EXPECT_GT(counted.band_jacobians, 0);
  const auto dense = differentiate(dense_stepper, objective, y0, theta, StoreAllStrategy{});
  EXPECT_NEAR(band.loss, dense.loss, 1e-8 * std::abs(dense.loss));
  const double scale_theta = dense.grad_theta.cwiseAbs().maxCoeff();
  const double scale_y0 = dense.grad_y0.cwiseAbs().maxCoeff();
  EXPECT_LE((band.grad_theta - dense.grad_theta).cwiseAbs().maxCoeff(), 1e-6 * scale_theta)
      << band.grad_theta.transpose() << "\nvs " << dense.grad_theta.transpose();
  EXPECT_LE((band.grad_y0 - dense.grad_y0).cwiseAbs().maxCoeff(), 1e-6 * scale_y0)
      << band.grad_y0.transpose() << "\nvs " << dense.grad_y0.transpose();
  // The band run's half-bandwidths came from the model: a wider band is accepted too.
  CvodesOptions wider = band_options;
  wider.band_upper = 3;
  wider.band_lower = 3;
  CvodesIntervalStepper wider_stepper(dense_problem, wider, grid);
  const auto wide = differentiate(wider_stepper, objective, y0, theta, StoreAllStrategy{});
  EXPECT_LE((wide.grad_theta - band.grad_theta).cwiseAbs().maxCoeff(), 1e-6 * scale_theta);
}

TEST(AutoProblemBand, RefusesABandNarrowerThanTheModels) {
  const auto problem = auto_problem(Chain{});
  CvodesOptions options;
  options.linear_solver = CvodesLinearSolver::band;
  options.band_upper = 1;
  options.band_lower = 1;
  const std::string message = testing::error_message<InvalidArgument>([&] {
    CvodesIntervalStepper stepper(problem, options, IntervalGrid{0.0, 1.0, 2});
  });
  testing::expect_message(message,
                          "half-bandwidths (1, 1) are narrower than the problem's band "
                          "Jacobian (1, 2)");
}

}  // namespace
}  // namespace rwd
