// rewind/backend/eigen_backend.hpp — the CPU backend over Eigen::VectorXd.
//
//   using B = rwd::EigenBackend;
//   B::Vector y = B::zeros(3);
//   B::axpy(0.5, x, y);          // y += 0.5 x
//
// Fused linear combinations are computed in cache-sized blocks so that one pass over memory
// serves every term; the order of floating-point operations is fixed (a·x first, then the terms
// in the order given), so results are reproducible bit for bit. Long vectors are shared out among
// rwd::thread_count() threads (OpenMP); reductions fold fixed blocks in block order, so every
// result has the same bits whatever the thread count (rewind/parallel.hpp).
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>

#include "rewind/backend/backend.hpp"
#include "rewind/error.hpp"
#include "rewind/parallel.hpp"
#include "rewind/simd_clones.hpp"
#include "rewind/types.hpp"

#if defined(__SSE2__) && !defined(__CUDA_ARCH__)
#include <emmintrin.h>
#define REWIND_STREAMING_STORES 1
#endif

namespace rwd {

struct EigenBackend {
  using Vector = Eigen::VectorXd;
  static constexpr const char* name = "eigen";
  static constexpr bool deterministic = true;

  static Vector zeros(Index n) { return Vector::Zero(static_cast<Eigen::Index>(n)); }
  static Index size(const Vector& x) { return static_cast<Index>(x.size()); }
  static double* data(Vector& x) { return x.data(); }
  static const double* data(const Vector& x) { return x.data(); }

  static void fill(Vector& x, double a) {
    double* d = x.data();
    detail::for_each_range(x.size(), [&](Index b, Index e) { std::fill(d + b, d + e, a); });
  }
  static void copy(const Vector& src, Vector& dst) {
    if (dst.size() != src.size()) dst.resize(src.size());
    const double* s = src.data();
    double* d = dst.data();
    detail::for_each_range(src.size(), [&](Index b, Index e) { std::copy(s + b, s + e, d + b); });
  }
  // copy() for a copy that nothing reads again soon — a state or stage a driver keeps for its
  // reverse sweep — with non-temporal stores (SSE2), which write each line to memory without
  // first reading it into the cache. An ordinary copy reads every line of dst before writing it
  // (write-allocate): twice the memory traffic, and it pushes the step's working vectors out of
  // the cache. Measured on the store-all gradients of bench/gradient_cost_bench: see
  // bench/results/gradient_cost.md. Vectors under kStreamingMinElements are copied as usual:
  // they stay in the cache until read back, and a fence per copy would cost more than it saves.
  static constexpr Index kStreamingMinElements = 4096;  // 32 KiB, the size of an L1 cache
  static void copy_streaming(const Vector& src, Vector& dst) {
#if defined(REWIND_STREAMING_STORES)
    if (src.size() >= kStreamingMinElements) {
      if (dst.size() != src.size()) dst.resize(src.size());
      const double* s = src.data();
      double* d = dst.data();
      detail::for_each_range(src.size(),
                             [&](Index b, Index e) { stream_range(s + b, d + b, e - b); });
      return;
    }
#endif
    copy(src, dst);
  }
  static void scale(double a, Vector& x) {
    double* d = x.data();
    detail::for_each_range(x.size(), [&](Index b, Index e) { scale_range(a, d + b, e - b); });
  }
  static void axpy(double a, const Vector& x, Vector& y) {
    const double* xs = x.data();
    double* ys = y.data();
    detail::for_each_range(y.size(),
                           [&](Index b, Index e) { axpy_range(a, xs + b, ys + b, e - b); });
  }

  static void linear_combination(Vector& out, double a, const Vector& x, std::span<const double> c,
                                 std::span<const Vector* const> v) {
    combine(out.data(), a, x.data(), c, v, out.size());
  }
  static void linear_combination(Vector& out, std::span<const double> c,
                                 std::span<const Vector* const> v) {
    combine(out.data(), 0.0, nullptr, c, v, out.size());
  }

  // Reductions: blocks of detail::kReductionBlock elements, folded in block order
  // (rewind/parallel.hpp), so the bits depend on the length only, not on the thread count.
  static double dot(const Vector& x, const Vector& y) {
    const double *a = x.data(), *b = y.data();
    return detail::ordered_element_sum(x.size(), [a, b](Index i) { return a[i] * b[i]; });
  }
  static double max_norm(const Vector& x) {
    const double* d = x.data();
    const Index n = x.size();
    const int threads = detail::threads_for(n, detail::kParallelMinElements);
    if (threads <= 1) return block_max_norm(d, 0, n);
    // Per-block maxima on the threads, then their maximum (max is exact: any order gives it).
    const Index blocks = (n + detail::kReductionBlock - 1) / detail::kReductionBlock;
    Sums<1>* m = detail::fold_scratch<1>(blocks);
    detail::parallel_indices(blocks, threads, [&](Index b) {
      const Index begin = b * detail::kReductionBlock;
      m[b].v[0] = block_max_norm(d, begin, std::min(n, begin + detail::kReductionBlock));
    });
    double result = 0.0;
    for (Index b = 0; b < blocks; ++b) result = nan_propagating_max(result, m[b].v[0]);
    return result;
  }
  static double wrms_norm(const Vector& x, const Vector& w) {
    const Index n = x.size();
    if (n == 0) return 0.0;
    const double *a = x.data(), *b = w.data();
    const double sum = detail::ordered_element_sum(n, [a, b](Index i) {
      const double r = a[i] * b[i];
      return r * r;
    });
    return std::sqrt(sum / static_cast<double>(n));
  }
  static double error_norm(const Vector& e, const Vector& y0, const Vector& y1, double rtol,
                           double atol) {
    const Index n = e.size();
    if (n == 0) return 0.0;
    const double *es = e.data(), *a = y0.data(), *b = y1.data();
    const double sum = detail::ordered_element_sum(n, [=](Index i) {
      const double scale = atol + rtol * std::max(std::abs(a[i]), std::abs(b[i]));
      const double r = es[i] / scale;
      return r * r;
    });
    return std::sqrt(sum / static_cast<double>(n));
  }
  static bool all_finite(const Vector& x) {
    // x − x is 0 for finite values and NaN for NaN/Inf: one branch-free pass whose sum is 0
    // exactly when every element is finite.
    const double* d = x.data();
    return detail::ordered_element_sum(x.size(), [d](Index i) { return d[i] - d[i]; }) == 0.0;
  }

  static void copy_to_host(const Vector& x, std::span<double> host) {
    check_host_size(x.size(), host.size());
    // An empty vector's data() may be null, and memcpy from or to null is undefined even for
    // zero bytes.
    if (!host.empty()) std::memcpy(host.data(), x.data(), host.size() * sizeof(double));
  }
  static void copy_from_host(std::span<const double> host, Vector& x) {
    check_host_size(x.size(), host.size());
    if (!host.empty()) std::memcpy(x.data(), host.data(), host.size() * sizeof(double));
  }

  // f(i) for every i, on several threads when the loop's work (n × the kernel's
  // elements_per_index(), see rewind/parallel.hpp) is at least detail::kParallelMinElements: f
  // must only write what index i owns (every built-in kernel writes one cell or one row per index).
  template <class F>
  static void for_each_index(Index n, F&& f) {
    detail::parallel_indices(
        n, detail::threads_for(n * detail::elements_per_index(f), detail::kParallelMinElements), f);
  }
  // Σ_i f(i) folded in index order (in blocks of indices for n > 2^16), every f(i) called exactly
  // once, possibly on several threads; the bits do not depend on the thread count.
  template <int K, class F>
  static Sums<K> sum_index(Index n, F&& f) {
    return detail::ordered_index_sum<K>(n, f);
  }
  // sum_index's bits with each of its pieces summed by sum_range(begin, end) (see
  // detail::ordered_range_sum: a vectorised kernel for what f adds index by index).
  template <int K, class SumRange>
  static Sums<K> sum_index_ranges(Index n, SumRange&& sum_range) {
    return detail::ordered_range_sum<K>(n, sum_range);
  }

 private:
  static void check_host_size(Eigen::Index n, std::size_t host) {
    if (static_cast<std::size_t>(n) != host)
      detail::fail<InvalidArgument>("host buffer has ", host, " elements but the vector has ", n,
                                    "; they must match");
  }

  // max that keeps a NaN once it has seen one (std::max would drop a NaN in its first argument).
  static double nan_propagating_max(double m, double a) {
    return (a > m || a != a) ? a : m;
  }

  // The loops below (and lane_sum, behind every reduction) are compiled for AVX2 too and picked
  // when the program starts (REWIND_SIMD_CLONES): the same products and sums in the same order,
  // four doubles per instruction, so the same bits on any x86-64.
  REWIND_SIMD_CLONES static double block_max_norm(const double* d, Index begin, Index end) {
    double m = 0.0;
    for (Index i = begin; i < end; ++i) m = nan_propagating_max(m, std::abs(d[i]));
    return m;
  }

  REWIND_SIMD_CLONES static void scale_range(double a, double* __restrict x, Index n) {
    for (Index i = 0; i < n; ++i) x[i] *= a;
  }
  REWIND_SIMD_CLONES static void axpy_range(double a, const double* __restrict x,
                                            double* __restrict y, Index n) {
    for (Index i = 0; i < n; ++i) y[i] += a * x[i];
  }

  // out = a·x + Σ c_j v_j, each element as ((a·x_i + c_0 v_0i) + c_1 v_1i) + …; the ranges are
  // shared out among threads (element-wise, so the bits do not depend on it).
  static void combine(double* out, double a, const double* x, std::span<const double> c,
                      std::span<const Vector* const> v, Eigen::Index n) {
    detail::for_each_range(
        n, [&](Index begin, Index end) { combine_range(out, a, x, c, v, begin, end); });
  }
  static void combine_range(double* out, double a, const double* x, std::span<const double> c,
                            std::span<const Vector* const> v, Index begin, Index end) {
    switch (c.size()) {  // the term counts of the built-in tableaux (RK4: 4, Dormand–Prince: 7)
      case 0:
        return combine_terms<0>(out, a, x, c.data(), v.data(), begin, end);
      case 1:
        return combine_terms<1>(out, a, x, c.data(), v.data(), begin, end);
      case 2:
        return combine_terms<2>(out, a, x, c.data(), v.data(), begin, end);
      case 3:
        return combine_terms<3>(out, a, x, c.data(), v.data(), begin, end);
      case 4:
        return combine_terms<4>(out, a, x, c.data(), v.data(), begin, end);
      case 5:
        return combine_terms<5>(out, a, x, c.data(), v.data(), begin, end);
      case 6:
        return combine_terms<6>(out, a, x, c.data(), v.data(), begin, end);
      case 7:
        return combine_terms<7>(out, a, x, c.data(), v.data(), begin, end);
      default:
        return combine_blocks(out, a, x, c, v, begin, end);
    }
  }
#if defined(REWIND_STREAMING_STORES)
  // d[0, n) = s[0, n) with 16-byte non-temporal stores (d 16-byte aligned after a scalar head),
  // then a store fence: the streamed lines are in memory, in order, before anything later runs.
  static void stream_range(const double* s, double* d, Index n) {
    Index i = 0;
    for (; i < n && reinterpret_cast<std::uintptr_t>(d + i) % 16 != 0; ++i) d[i] = s[i];
    for (; i + 2 <= n; i += 2) _mm_stream_pd(d + i, _mm_loadu_pd(s + i));
    for (; i < n; ++i) d[i] = s[i];
    _mm_sfence();
  }
#endif
  // A fixed number of terms: each element's sum is built in a register and stored once (one
  // read of every input, one write of out), the same operations in the same order as
  // combine_blocks. out may be x itself, as the steppers' in-place updates have it (element i is
  // read before it is written, in the same iteration), never a shifted view of an input: no
  // dependence crosses iterations, which REWIND_IVDEP tells the vectoriser instead of a run-time
  // overlap check.
  template <int T>
  REWIND_SIMD_CLONES static void combine_terms(double* out, double a, const double* x,
                                               const double* c, const Vector* const* v, Index begin,
                                               Index end) {
    if constexpr (T == 0) {
      if (x != nullptr)
        for (Index i = begin; i < end; ++i) out[i] = a * x[i];
      else
        for (Index i = begin; i < end; ++i) out[i] = 0.0;
    } else {
      double k[T];
      const double* p[T];
      for (int j = 0; j < T; ++j) {
        k[j] = c[j];
        p[j] = v[j]->data();
      }
      if (x != nullptr) {
        REWIND_IVDEP
        for (Index i = begin; i < end; ++i) {
          double s = a * x[i];
          for (int j = 0; j < T; ++j) s += k[j] * p[j][i];
          out[i] = s;
        }
      } else {
        REWIND_IVDEP
        for (Index i = begin; i < end; ++i) {
          double s = 0.0;  // 0 + c_0 v_0i, not c_0 v_0i: a −0 term gives +0, as combine_blocks
          for (int j = 0; j < T; ++j) s += k[j] * p[j][i];
          out[i] = s;
        }
      }
    }
  }
  // Any number of terms, in blocks that stay in L1 so every term is one streaming pass.
  REWIND_SIMD_CLONES static void combine_blocks(double* out, double a, const double* x,
                                                std::span<const double> c,
                                                std::span<const Vector* const> v, Index begin,
                                                Index end) {
    constexpr Eigen::Index kBlock = 512;
    const std::size_t terms = c.size();
    for (Eigen::Index start = begin; start < end; start += kBlock) {
      const Eigen::Index len = std::min(kBlock, end - start);
      double* o = out + start;
      if (x != nullptr) {
        const double* xs = x + start;
        for (Eigen::Index i = 0; i < len; ++i) o[i] = a * xs[i];
      } else {
        for (Eigen::Index i = 0; i < len; ++i) o[i] = 0.0;
      }
      for (std::size_t j = 0; j < terms; ++j) {
        const double cj = c[j];
        const double* vj = v[j]->data() + start;
        for (Eigen::Index i = 0; i < len; ++i) o[i] += cj * vj[i];
      }
    }
  }
};

static_assert(VectorBackend<EigenBackend>);

}  // namespace rwd
