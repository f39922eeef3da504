// Lorenz-96: rhs against hand values and an independent modulo implementation, the vjp against
// the explicit transposed Jacobian, the equilibrium and defaults. The contract every problem keeps
// (finite differences up to N = 200, outputs overwritten, N < 4 and wrong sizes refused) is
// checked in problem_contract_test.cpp.
#include <gtest/gtest.h>

#include <random>

#include "rewind/problems/lorenz96.hpp"
#include "support/random_data.hpp"

namespace rwd {
namespace {

using B = EigenBackend;
using Vector = B::Vector;

using testing::random_vector;

Index wrap(Index i, Index n) {
  return ((i % n) + n) % n;
}

// The textbook formula with explicit modulo indexing.
Vector reference_rhs(const Vector& y, double forcing) {
  const Index n = y.size();
  Vector f(n);
  for (Index i = 0; i < n; ++i)
    f[i] = (y[wrap(i + 1, n)] - y[wrap(i - 2, n)]) * y[wrap(i - 1, n)] - y[i] + forcing;
  return f;
}

// The dense Jacobian ∂f/∂y built row by row.
Eigen::MatrixXd reference_jacobian(const Vector& y) {
  const Index n = y.size();
  Eigen::MatrixXd j = Eigen::MatrixXd::Zero(n, n);
  for (Index i = 0; i < n; ++i) {
    j(i, wrap(i + 1, n)) += y[wrap(i - 1, n)];
    j(i, wrap(i - 2, n)) -= y[wrap(i - 1, n)];
    j(i, wrap(i - 1, n)) += y[wrap(i + 1, n)] - y[wrap(i - 2, n)];
    j(i, i) -= 1.0;
  }
  return j;
}

TEST(Lorenz96, RhsMatchesHandComputedValues) {
  Lorenz96<> p(4);
  Vector f(4);
  p.rhs(0.0, Vector{{1, 2, 3, 4}}, Vector{{8.0}}, f);
  // f_0 = (y1 − y2) y3 − y0 + 8 = 3, f_1 = (y2 − y3) y0 − y1 + 8 = 5,
  // f_2 = (y3 − y0) y1 − y2 + 8 = 11, f_3 = (y0 − y1) y2 − y3 + 8 = 1.
  EXPECT_EQ(f, (Vector{{3, 5, 11, 1}}));
}

TEST(Lorenz96, RhsMatchesTheModuloFormula) {
  std::mt19937_64 rng(96);
  for (Index n : {4, 5, 7, 40, 1000}) {
    Lorenz96<> p(n);
    const Vector y = random_vector(n, rng, -10, 10);
    Vector f(n);
    p.rhs(0.0, y, Vector{{7.5}}, f);
    EXPECT_EQ(f, reference_rhs(y, 7.5)) << "N = " << n;
  }
}

TEST(Lorenz96, VjpIsTheTransposedJacobian) {
  std::mt19937_64 rng(97);
  for (Index n : {4, 5, 6, 33}) {
    Lorenz96<> p(n);
    const Vector y = random_vector(n, rng, -10, 10), v = random_vector(n, rng, -1, 1);
    Vector out_y(n), out_theta(1);
    p.vjp(0.0, y, Vector{{8.0}}, v, out_y, out_theta);
    EXPECT_LT((out_y - reference_jacobian(y).transpose() * v).cwiseAbs().maxCoeff(), 1e-13)
        << "N = " << n;
    EXPECT_NEAR(out_theta[0], v.sum(), 1e-14);
  }
}

TEST(Lorenz96, VjpHasTheBitsOfTheKernelsAndOfTheBackendsSum) {
  // The Eigen backend's vjp runs its interior as a plain loop and the wrapping columns through
  // the per-index kernel: every entry must have the kernel's bits (which the Thrust backend and
  // the distributed problem compute), and Σ v_i must be the backend's vector sum,
  // ordered_element_sum (the bits the distributed problem's dJ/dF is compared with) — at sizes
  // around a reduction block (kReductionBlock) and the wrapping columns, on 1 and 2 threads, so
  // that a faster vjp (a fused sum, say) keeps both.
  std::mt19937_64 rng(960);
  const Index block = detail::kReductionBlock;
  const int saved = thread_count();
  for (int threads : {1, 2}) {
    if (threads > 1 && !kThreadsAvailable) break;
    set_thread_count(threads);
    for (Index n : {Index{4}, Index{5}, Index{6}, Index{7}, Index{9}, block - 1, block, block + 1,
                    block + 2, block + 3, 2 * block + 5, Index{70001}}) {
      Lorenz96<> p(n);
      const Vector y = random_vector(n, rng, -10, 10), v = random_vector(n, rng, -1, 1);
      Vector out_y(n), out_theta(1);
      p.vjp(0.0, y, Vector{{8.0}}, v, out_y, out_theta);
      Vector expected(n);
      const detail::Lorenz96VjpKernel kernel{y.data(), v.data(), expected.data(), n};
      for (Index j = 0; j < n; ++j) kernel(j);
      EXPECT_EQ(out_y, expected) << "N = " << n << ", " << threads << " threads";
      const double sum = detail::ordered_element_sum(n, [&v](Index i) { return v[i]; });
      EXPECT_EQ(out_theta[0], sum) << "N = " << n << ", " << threads << " threads";
    }
  }
  set_thread_count(saved);
}

TEST(Lorenz96, DefaultsAndEquilibrium) {
  Lorenz96<> p(40);
  EXPECT_EQ(p.state_size(), 40);
  EXPECT_EQ(p.parameter_size(), 1);
  EXPECT_EQ(p.default_parameters(), (Vector{{8.0}}));
  const Vector y = p.default_initial_state();
  ASSERT_EQ(y.size(), 40);
  EXPECT_EQ(y[0], 8.01);
  for (Index i = 1; i < 40; ++i) EXPECT_EQ(y[i], 8.0);
  // y_i = F is an equilibrium.
  Vector f(40);
  p.rhs(0.0, Vector::Constant(40, 3.5), Vector{{3.5}}, f);
  EXPECT_EQ(f, Vector::Zero(40));
  EXPECT_EQ(p.default_initial_state(5.0, 0.0), Vector::Constant(40, 5.0));
}

}  // namespace
}  // namespace rwd
