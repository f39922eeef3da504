// rewind/problems/lorenz96.hpp — the Lorenz-96 model, a scalable chaotic toy atmosphere.
//
//   dy_i/dt = (y_{i+1} − y_{i−2}) y_{i−1} − y_i + F,     i = 0 … N−1, indices cyclic (mod N)
//
// State y of any size N ≥ 4 (for N < 4 the stencil's four neighbours are not distinct and the
// model is degenerate). Parameters θ = (F), the forcing; F = 8 (default) is chaotic at the usual
// sizes (N = 36, 40), with a largest Lyapunov exponent ≈ 1.7 at N = 40 (doubling time ≈ 0.4). The
// default initial state is the equilibrium y_i = F with y_0 perturbed by +0.01. RK4 with dt = 0.01
// is accurate; dt = 0.05 (the usual "6 hours") is stable.
//
//   rwd::Lorenz96<> l96(40);
//   auto theta = l96.default_parameters();          // (8)
//   auto y = l96.default_initial_state();           // y_i = 8, y_0 = 8.01
//   auto f = rwd::EigenBackend::zeros(40);
//   l96.rhs(0.0, y, theta, f);
//
// Each rhs or vjp is one pass over memory; the parameter derivative Σ_i v_i is one reduction (on
// the Eigen backend in the backend's own summation order, four lanes per block, added in the
// vjp's own loop). On the Eigen
// backend the interior indices
// 2 … N−3 run as a plain loop without cyclic index arithmetic (at N = 10^5, rhs 2.3× and vjp
// 2.6× faster than one index at a time, bench/gradient_cost_bench); the arithmetic is the
// kernels', so the bits are the same as on any other backend built by the same compiler. Large
// states run on rwd::thread_count() threads with the same bits (rewind/parallel.hpp).
#pragma once

#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "rewind/backend/eigen_backend.hpp"
#include "rewind/error.hpp"
#include "rewind/host_device.hpp"
#include "rewind/parallel.hpp"
#include "rewind/problems/detail/problem_support.hpp"
#include "rewind/problems/problem_facts.hpp"
#include "rewind/simd_clones.hpp"
#include "rewind/types.hpp"

namespace rwd {
namespace detail {

// Cyclic neighbours of i in [0, n) without a modulo: i − 2, i − 1, i + 1, i + 2.
struct Lorenz96Neighbours {
  Index m2, m1, p1, p2;
  REWIND_HOST_DEVICE Lorenz96Neighbours(Index i, Index n)
      : m2(i >= 2 ? i - 2 : i - 2 + n),
        m1(i >= 1 ? i - 1 : n - 1),
        p1(i + 1 < n ? i + 1 : 0),
        p2(i + 2 < n ? i + 2 : i + 2 - n) {}
};

// --- the arithmetic, written once ---------------------------------------------------------------
// The kernels, the Eigen backend's loops and the distributed problem
// (rewind/distributed/distributed_lorenz96.hpp, whose neighbours may be halo values received from
// another rank) all call these, with the same operands in the same order: the same bits.

// f_i from y_{i−2}, y_{i−1}, y_i, y_{i+1} and F.
REWIND_HOST_DEVICE inline double lorenz96_rhs_value(double y_m2, double y_m1, double y_0,
                                                    double y_p1, double forcing) {
  return (y_p1 - y_m2) * y_m1 - y_0 + forcing;
}

// ((∂f/∂y)ᵀ v)_j from v_{j−1 … j+2} and y_{j−2 … j+2} (y_j does not enter; see the kernel below).
REWIND_HOST_DEVICE inline double lorenz96_vjp_value(double v_m1, double v_0, double v_p1,
                                                    double v_p2, double y_m2, double y_m1,
                                                    double y_p1, double y_p2) {
  return v_m1 * y_m2 - v_p2 * y_p1 + v_p1 * (y_p2 - y_m1) - v_0;
}

struct Lorenz96RhsKernel {
  const double* y;
  const double* theta;
  double* f;
  Index n;

  REWIND_HOST_DEVICE void operator()(Index i) const {
    const Lorenz96Neighbours k(i, n);
    f[i] = lorenz96_rhs_value(y[k.m2], y[k.m1], y[i], y[k.p1], theta[0]);
  }
};

// Row i of the Jacobian has ∂f_i/∂y_{i+1} = y_{i−1}, ∂f_i/∂y_{i−2} = −y_{i−1},
// ∂f_i/∂y_{i−1} = y_{i+1} − y_{i−2}, ∂f_i/∂y_i = −1. Column j therefore collects (for N ≥ 4 the
// four rows j−1, j+2, j+1, j are distinct):
//   (Jᵀv)_j = v_{j−1} y_{j−2} − v_{j+2} y_{j+1} + v_{j+1} (y_{j+2} − y_{j−1}) − v_j.
struct Lorenz96VjpKernel {
  const double* y;
  const double* v;
  double* out_y;
  Index n;

  REWIND_HOST_DEVICE void operator()(Index j) const {
    const Lorenz96Neighbours k(j, n);
    out_y[j] =
        lorenz96_vjp_value(v[k.m1], v[j], v[k.p1], v[k.p2], y[k.m2], y[k.m1], y[k.p1], y[k.p2]);
  }
};

// ∂f_i/∂F = 1, so (∂f/∂θ)ᵀ v = Σ_i v_i.
struct Lorenz96ForcingGradientKernel {
  const double* v;
  REWIND_HOST_DEVICE Sums<1> operator()(Index i) const {
    Sums<1> s;
    s.v[0] = v[i];
    return s;
  }
};

// --- the Eigen backend's loops: the kernels above at the wrapping indices, plain loops inside ----
// __restrict: the output never overlaps y or v, which lets the rhs loop vectorise without a
// run-time overlap check (whether the compiler emits one depends on where the loop is inlined).

template <class B>
inline constexpr bool kLorenz96HostLoops = std::is_same_v<B, EigenBackend>;

REWIND_SIMD_CLONES inline void lorenz96_rhs_interior(const double* __restrict y, double forcing,
                                                     double* __restrict f, Index begin, Index end) {
  for (Index i = begin; i < end; ++i)
    f[i] = lorenz96_rhs_value(y[i - 2], y[i - 1], y[i], y[i + 1], forcing);
}

inline void lorenz96_rhs_host(const double* y, double forcing, double* f, Index n) {
  const double theta[1] = {forcing};
  const Lorenz96RhsKernel edge{y, theta, f, n};
  edge(0);
  edge(1);
  // Element-wise, so it may be shared out among threads in any ranges.
  for_each_range(n - 3,
                 [&](Index b, Index e) { lorenz96_rhs_interior(y, forcing, f, b + 2, e + 2); });
  edge(n - 1);
}

// out_y[j] = ((∂f/∂y)ᵀ v)_j for interior j in [begin, end) (2 <= j < n − 2, where the stencil
// does not wrap), a plain loop that vectorises (the distributed problem's interior; the serial
// vjp below adds the forcing sums in the same loop).
REWIND_SIMD_CLONES inline void lorenz96_vjp_interior(const double* __restrict y,
                                                     const double* __restrict v,
                                                     double* __restrict out_y, Index begin,
                                                     Index end) {
  for (Index j = begin; j < end; ++j)
    out_y[j] = lorenz96_vjp_value(v[j - 1], v[j], v[j + 1], v[j + 2], y[j - 2], y[j - 1], y[j + 1],
                                  y[j + 2]);
}

// lorenz96_vjp_interior over [begin, end) (end − begin a multiple of 4), and v_j added into
// lane[(j − begin) mod 4], in order, in the same loop: the forcing gradient's partial sums. On
// their own they are a chain of dependent additions, one per four elements (0.8 of an rhs at
// N = 10^5); beside the vjp's arithmetic the chain's latency is hidden. Written with vectors of
// four doubles (GCC's vector extension, element-wise IEEE arithmetic; the accumulator's element
// k is lane k): as a loop over four scalar columns GCC vectorised it across iterations, with
// shuffles, at half the speed. The expression is lorenz96_vjp_value's, operand for operand
// (tests/problems/simd_clone_bits_test.cpp compares the two bit for bit); the vectors stay in
// this function, since passing them to another would depend on the clone's ABI.
REWIND_SIMD_CLONES inline void lorenz96_vjp_interior_summed(const double* __restrict y,
                                                            const double* __restrict v,
                                                            double* __restrict out_y, Index begin,
                                                            Index end, double (&lane)[4]) {
  typedef double Four __attribute__((vector_size(32)));
  Four sum = {lane[0], lane[1], lane[2], lane[3]};
  for (Index i = begin; i < end; i += 4) {
    Four v_m1, v_0, v_p1, v_p2, y_m2, y_m1, y_p1, y_p2;
    std::memcpy(&v_m1, v + i - 1, sizeof(Four));
    std::memcpy(&v_0, v + i, sizeof(Four));
    std::memcpy(&v_p1, v + i + 1, sizeof(Four));
    std::memcpy(&v_p2, v + i + 2, sizeof(Four));
    std::memcpy(&y_m2, y + i - 2, sizeof(Four));
    std::memcpy(&y_m1, y + i - 1, sizeof(Four));
    std::memcpy(&y_p1, y + i + 1, sizeof(Four));
    std::memcpy(&y_p2, y + i + 2, sizeof(Four));
    const Four out = v_m1 * y_m2 - v_p2 * y_p1 + v_p1 * (y_p2 - y_m1) - v_0;
    std::memcpy(out_y + i, &out, sizeof(Four));
    sum += v_0;
  }
  for (int k = 0; k < 4; ++k) lane[k] = sum[k];
}

// Below this many values the vjp takes the sum in a pass of its own: the fused loop's
// element-at-a-time head and tail cost more than the sum (N = 40: 0.063 against 0.045 µs).
inline constexpr Index kLorenz96FusedSumMinSize = 1024;

// out_y = (∂f/∂y)ᵀ v; returns dJ/dF = Σ_i v_i as the backend sums a vector (ordered_element_sum:
// blocks of kReductionBlock indices, four interleaved lanes inside each, the blocks added in
// order), so the bits do not depend on the thread count; the lanes are filled by the loop that
// computes out_y, block by block. The lanes matter: one chain of dependent additions (a former
// fused loop) bounded the whole vjp at large N.
inline double lorenz96_vjp_host(const double* y, const double* v, double* out_y, Index n) {
  const Lorenz96VjpKernel cell{y, v, out_y, n};
  if (n < kLorenz96FusedSumMinSize) {
    // Small states: the vjp's loop, then the sum on its own (the same bits).
    cell(0);
    cell(1);
    lorenz96_vjp_interior(y, v, out_y, 2, n - 2);
    cell(n - 2);
    cell(n - 1);
    return ordered_element_sum(n, [v](Index i) { return v[i]; });
  }
  const Index blocks = (n + kReductionBlock - 1) / kReductionBlock;
  const Sums<1> total = ordered_fold<1>(blocks, threads_for(n, kParallelMinElements), [&](Index b) {
    const Index begin = b * kReductionBlock, end = std::min(n, begin + kReductionBlock);
    double lane[4] = {0.0, 0.0, 0.0, 0.0};
    // Whole groups of four (from begin, a multiple of 4) inside [2, n − 2) run vectorised; the
    // indices before and after them, where the stencil may wrap, one at a time by the kernel.
    const Index lo = std::min(end, std::max<Index>(begin, 4));
    const Index last = std::min(end, n - 2);
    const Index hi = last > lo ? lo + (last - lo) / 4 * 4 : lo;
    auto one = [&](Index j) {
      cell(j);
      lane[(j - begin) % 4] += v[j];
    };
    for (Index j = begin; j < lo; ++j) one(j);
    lorenz96_vjp_interior_summed(y, v, out_y, lo, hi, lane);
    for (Index j = hi; j < end; ++j) one(j);
    Sums<1> s;
    s.v[0] = (lane[0] + lane[1]) + (lane[2] + lane[3]);
    return s;
  });
  return total.v[0];
}

}  // namespace detail

template <class B = EigenBackend>
class Lorenz96 {
 public:
  using Backend = B;
  using Vector = typename B::Vector;
  static constexpr const char* name = "lorenz96";
  static constexpr Index kMinStateSize = 4;

  // n: the number of variables, n ≥ 4.
  explicit Lorenz96(Index n) : n_(n) {
    if (n < kMinStateSize)
      detail::fail<InvalidArgument>("Lorenz96: state size N = ", n, " must be >= ", kMinStateSize,
                                    " (the stencil y_{i-2}, y_{i-1}, y_i, y_{i+1} needs four "
                                    "distinct variables)");
  }

  Index state_size() const { return n_; }
  Index parameter_size() const { return 1; }

  // θ = (F); default F = 8 (chaotic).
  static Vector default_parameters(double forcing = 8.0) {
    return detail::vector_from_host<B>({forcing});
  }
  static std::vector<std::string> parameter_names() { return {"F"}; }

  // y_i = F for all i, then y_0 += perturbation (the equilibrium, nudged off it).
  Vector default_initial_state(double forcing = 8.0, double perturbation = 0.01) const {
    std::vector<double> host(static_cast<std::size_t>(n_), forcing);
    host[0] += perturbation;
    return detail::vector_from_host<B>(host);
  }

  void rhs(double /*t*/, const Vector& y, const Vector& theta, Vector& f) const {
    detail::require_rhs_sizes<B>(name, n_, 1, y, theta, f);
    if constexpr (detail::kLorenz96HostLoops<B>) {
      detail::lorenz96_rhs_host(B::data(y), B::data(theta)[0], B::data(f), n_);
    } else {
      B::for_each_index(n_, detail::Lorenz96RhsKernel{B::data(y), B::data(theta), B::data(f), n_});
    }
  }

  // out_y = (∂f/∂y)ᵀ v and out_theta = (Σ_i v_i), in one pass over memory.
  void vjp(double /*t*/, const Vector& y, const Vector& theta, const Vector& v, Vector& out_y,
           Vector& out_theta) const {
    detail::require_vjp_sizes<B>(name, n_, 1, y, theta, v, out_y, out_theta);
    Sums<1> s;
    if constexpr (detail::kLorenz96HostLoops<B>) {
      s.v[0] = detail::lorenz96_vjp_host(B::data(y), B::data(v), B::data(out_y), n_);
    } else {
      using Kernel = detail::OnePassVjpKernel<1, detail::Lorenz96VjpKernel,
                                              detail::Lorenz96ForcingGradientKernel>;
      s = B::template sum_index<1>(
          n_, Kernel{{B::data(y), B::data(v), B::data(out_y), n_}, {B::data(v)}});
    }
    const double host[1] = {s.v[0]};
    B::copy_from_host(std::span<const double>(host, 1), out_theta);
  }

 private:
  Index n_;
};

// What the tools that run problems by name know about Lorenz96 (rewind/problems/problem_facts.hpp).
// Device form: Lorenz96<B> itself; split across ranks: rwd::DistributedLorenz96.
struct Lorenz96Declaration {
  static ProblemFacts facts() {
    return {.name = "lorenz96",
            .description = "Lorenz-96 ring of N variables, chaotic; theta = (F) = (8)",
            .size_meaning = "N",
            .default_n = 40,
            .default_dt = 0.01,
            .default_steps = 200,
            .horizon =
                "at N = 40 dJ/dy0 grows like e^(1.7 t) and overflows double near t = 418 "
                "(41 800 steps): a NaN/Inf error",
            .parameters = {{"F", ParameterDomain::any}},  // the forcing may have either sign
            .device_form = true,
            .distributed_form = true};
  }
  static Lorenz96<> make(Index n) { return Lorenz96<>(n); }
  template <class B>
  using DeviceModel = Lorenz96<B>;
};

}  // namespace rwd
