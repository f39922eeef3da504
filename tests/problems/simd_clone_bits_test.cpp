// The loops compiled for AVX2 as well as for the baseline (REWIND_SIMD_CLONES: the backend's
// linear combinations, scalings, axpys, max norms and lane sums, the Gray–Scott and Lorenz-96
// stencils) against scalar code written here, unmarked, element by element in the documented
// order. On a CPU with AVX2 the library runs the AVX2 versions, so this is where a clone that
// reordered or fused an operation (and so changed a gradient's bits between machines) is caught.
// (Heat2D's marked rows are checked against its cell kernels in heat2d_test.cpp.) Lengths are
// chosen to leave tails after every vector width and block (512 in combine, 4 lanes, 4096 per
// reduction block).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "rewind/backend/eigen_backend.hpp"
#include "rewind/parallel.hpp"
#include "rewind/problems/gray_scott.hpp"
#include "rewind/problems/lorenz96.hpp"

namespace rwd {
namespace {

using B = EigenBackend;
using Vector = B::Vector;

Vector random_vector(Index n, std::mt19937_64& rng, double lo = -1.0, double hi = 1.0) {
  std::uniform_real_distribution<double> d(lo, hi);
  Vector v(n);
  for (Index i = 0; i < n; ++i) v[i] = d(rng);
  return v;
}

// Bitwise equality, element by element (EXPECT_EQ on doubles compares values; 0.0 == -0.0).
void expect_same_bits(const Vector& got, const Vector& want, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (Index i = 0; i < got.size(); ++i)
    ASSERT_EQ(std::signbit(got[i]), std::signbit(want[i])) << what << " at " << i;
  EXPECT_TRUE(got == want) << what;
}

TEST(SimdCloneBits, LinearCombinationsAddTermByTermInOrder) {
  // Which versions the checks below compare against scalar code, for the log.
  RecordProperty("avx2", __builtin_cpu_supports("avx2") ? "yes" : "no");
  std::mt19937_64 rng(1);
  for (Index n : {1, 3, 7, 511, 513, 1029}) {
    const Vector x = random_vector(n, rng);
    std::vector<Vector> v;
    for (int j = 0; j < 9; ++j) v.push_back(random_vector(n, rng));
    const double a = 0.37;
    // Up to 7 terms each count has a loop of its own; 8 and 9 take the general blocked loop.
    const std::vector<double> c = {1.5, -0.25, 1.0 / 3.0, 2.0, -7.125, 0.1, -1e-3, 3.3, 0.7};
    for (std::size_t terms = 0; terms <= c.size(); ++terms) {
      std::vector<const Vector*> vp;
      for (std::size_t j = 0; j < terms; ++j) vp.push_back(&v[j]);
      const std::span<const double> cs(c.data(), terms);
      Vector got(n), got_no_x(n), want(n), want_no_x(n);
      B::linear_combination(got, a, x, cs, vp);
      B::linear_combination(got_no_x, cs, vp);
      for (Index i = 0; i < n; ++i) {
        double o = a * x[i], p = 0.0;
        for (std::size_t j = 0; j < terms; ++j) {
          o += c[j] * v[j][i];
          p += c[j] * v[j][i];
        }
        want[i] = o;
        want_no_x[i] = p;
      }
      expect_same_bits(got, want, "a x + Σ c_j v_j");
      expect_same_bits(got_no_x, want_no_x, "Σ c_j v_j");
      Vector in_place = x;  // out = x, as the steppers update a state in place
      B::linear_combination(in_place, a, in_place, cs, vp);
      expect_same_bits(in_place, want, "x ← a x + Σ c_j v_j");
    }
  }
}

TEST(SimdCloneBits, ScaleAxpyAndMaxNorm) {
  std::mt19937_64 rng(2);
  for (Index n : {1, 6, 1031}) {
    const Vector x = random_vector(n, rng);
    Vector y = random_vector(n, rng), scaled = x;
    Vector want_y = y, want_scaled = x;
    B::axpy(-0.3, x, y);
    B::scale(1.7, scaled);
    double want_max = 0.0;
    for (Index i = 0; i < n; ++i) {
      want_y[i] += -0.3 * x[i];
      want_scaled[i] *= 1.7;
      want_max = std::max(want_max, std::abs(x[i]));
    }
    expect_same_bits(y, want_y, "axpy");
    expect_same_bits(scaled, want_scaled, "scale");
    EXPECT_EQ(B::max_norm(x), want_max);
  }
}

TEST(SimdCloneBits, DotSumsFourLanesPerBlockThenBlocksInOrder) {
  std::mt19937_64 rng(3);
  for (Index n : {1, 5, 4095, 4096, 4097, 10003}) {
    const Vector x = random_vector(n, rng), y = random_vector(n, rng);
    double want = 0.0;
    for (Index begin = 0; begin < n; begin += detail::kReductionBlock) {
      const Index end = std::min(n, begin + detail::kReductionBlock);
      double lane[4] = {0.0, 0.0, 0.0, 0.0};
      for (Index i = begin; i < end; ++i) lane[(i - begin) % 4] += x[i] * y[i];
      want = want + ((lane[0] + lane[1]) + (lane[2] + lane[3]));
    }
    EXPECT_EQ(B::dot(x, y), want) << "n = " << n;
  }
}

TEST(SimdCloneBits, GrayScottRowsAgreeWithScalarCells) {
  std::mt19937_64 rng(4);
  for (Index n : {5, 17, 71}) {
    const Index cells = n * n;
    GrayScott<> problem(n);
    const Vector y = random_vector(2 * cells, rng, 0.0, 1.0);
    const Vector a = random_vector(2 * cells, rng);
    const Vector theta = problem.default_parameters();
    const auto p = detail::GrayScottParameters::load(theta.data());
    Vector f(2 * cells), out(2 * cells), g(4);
    problem.rhs(0.0, y, theta, f);
    problem.vjp(0.0, y, theta, a, out, g);

    Vector want_f(2 * cells), want_out(2 * cells);
    double want_g[4] = {0.0, 0.0, 0.0, 0.0};
    auto at = [n](Index r, Index c) { return ((r + n) % n) * n + (c + n) % n; };
    for (Index r = 0; r < n; ++r) {
      // One row's parameter terms as the row kernel adds them: interior column c into lane
      // (c − 1) mod 4, the lanes as (l0 + l1) + (l2 + l3), then column 0, then column n − 1; the
      // rows added in order (sum_index: one partial per row).
      double lanes[4][4] = {};
      Sums<4> row_sum = Sums<4>::zero();
      for (const Index c : [&] {
             std::vector<Index> order;
             for (Index k = 1; k < n - 1; ++k) order.push_back(k);
             order.push_back(0);
             order.push_back(n - 1);
             return order;
           }()) {
        const Index i = at(r, c), up = at(r - 1, c), down = at(r + 1, c), left = at(r, c - 1),
                    right = at(r, c + 1);
        const double* u = y.data();
        const double* v = y.data() + cells;
        const double* au = a.data();
        const double* av = a.data() + cells;
        detail::gray_scott_rhs_cell(
            p, u[i], detail::gray_scott_laplacian(u[i], u[up], u[down], u[left], u[right]), v[i],
            detail::gray_scott_laplacian(v[i], v[up], v[down], v[left], v[right]), want_f[i],
            want_f[cells + i]);
        const double lap_au =
            detail::gray_scott_laplacian(au[i], au[up], au[down], au[left], au[right]);
        const double lap_av =
            detail::gray_scott_laplacian(av[i], av[up], av[down], av[left], av[right]);
        detail::gray_scott_vjp_cell(p, u[i], v[i], au[i], lap_au, av[i], lap_av, want_out[i],
                                    want_out[cells + i]);
        const Sums<4> t =
            detail::gray_scott_parameter_terms(u[i], v[i], au[i], lap_au, av[i], lap_av);
        if (c >= 1 && c < n - 1) {
          for (int q = 0; q < 4; ++q) lanes[q][(c - 1) % 4] += t.v[q];
          if (c == n - 2)
            for (int q = 0; q < 4; ++q)
              row_sum.v[q] = (lanes[q][0] + lanes[q][1]) + (lanes[q][2] + lanes[q][3]);
        } else {
          row_sum = row_sum + t;
        }
      }
      for (int q = 0; q < 4; ++q) want_g[q] = want_g[q] + row_sum.v[q];
    }
    expect_same_bits(f, want_f, "Gray–Scott rhs");
    expect_same_bits(out, want_out, "Gray–Scott (∂f/∂y)ᵀ a");
    for (int q = 0; q < 4; ++q) EXPECT_EQ(g[q], want_g[q]) << "parameter " << q << ", n = " << n;
  }
}

TEST(SimdCloneBits, Lorenz96AgreesWithScalarIndices) {
  std::mt19937_64 rng(5);
  // Sizes up to three reduction blocks: the forcing gradient's lanes are filled block by block
  // inside the vjp's loop.
  for (Index n :
       {Index{4}, Index{5}, Index{9}, Index{40}, Index{1001}, 2 * detail::kReductionBlock + 7}) {
    Lorenz96<> problem(n);
    const Vector y = random_vector(n, rng, -8.0, 12.0), v = random_vector(n, rng);
    const Vector theta = problem.default_parameters();
    Vector f(n), out(n), g(1), want_f(n), want_out(n);
    problem.rhs(0.0, y, theta, f);
    problem.vjp(0.0, y, theta, v, out, g);
    for (Index i = 0; i < n; ++i) {
      detail::Lorenz96RhsKernel{y.data(), theta.data(), want_f.data(), n}(i);
      detail::Lorenz96VjpKernel{y.data(), v.data(), want_out.data(), n}(i);
    }
    // Σ v_i in ordered_element_sum's order: four lanes per block, the blocks added in order.
    double want_g = 0.0;
    for (Index begin = 0; begin < n; begin += detail::kReductionBlock) {
      double lane[4] = {0.0, 0.0, 0.0, 0.0};
      for (Index i = begin; i < std::min(n, begin + detail::kReductionBlock); ++i)
        lane[(i - begin) % 4] += v[i];
      want_g = want_g + ((lane[0] + lane[1]) + (lane[2] + lane[3]));
    }
    expect_same_bits(f, want_f, "Lorenz-96 rhs");
    expect_same_bits(out, want_out, "Lorenz-96 (∂f/∂y)ᵀ v");
    EXPECT_EQ(std::bit_cast<std::uint64_t>(g[0]), std::bit_cast<std::uint64_t>(want_g))
        << "n = " << n;
  }
}

}  // namespace
}  // namespace rwd
