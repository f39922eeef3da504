// rewind/parallel.hpp — threads inside one process, with results that do not depend on how many.
//
//   rwd::set_thread_count(4);          // rewind's CPU loops now use 4 threads (OpenMP)
//   int t = rwd::thread_count();       // 4; without a call: OMP_NUM_THREADS or every core
//
// Every loop over a state (the Eigen backend's vector operations and reductions, the built-in
// PDE right-hand sides and vector-Jacobian products) is cut into pieces that depend only on its
// length, never on the thread count; threads take whole pieces. Element-wise work gives the same
// bits however it is cut. Sums are folded in a fixed order: each piece is summed on its own from
// zero, and the pieces' sums are then added one after the other in piece order, by one thread.
// So a gradient computed with 1, 2 or 16 threads is the same to the last bit — the schedule-
// independence contract extended to threads (tests/core/parallel_test.cpp,
// tests/adjoint/thread_count_independence_test.cpp).
//
// Built without OpenMP (REWIND_WITH_OPENMP=OFF, or a compiler without it), everything runs on
// one thread with the same bits, and set_thread_count refuses anything but 1.
//
// Small loops stay on the calling thread (starting threads costs microseconds, a 3-variable
// step costs less); loops already inside a parallel region never start more threads.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "rewind/error.hpp"
#include "rewind/simd_clones.hpp"
#include "rewind/types.hpp"

namespace rwd {

// Whether this build can run loops on several threads.
#ifdef _OPENMP
inline constexpr bool kThreadsAvailable = true;
#else
inline constexpr bool kThreadsAvailable = false;
#endif

// The processors this process may run on (1 if unknown).
inline int available_cores() {
#ifdef _OPENMP
  return std::max(1, omp_get_num_procs());
#else
  return std::max(1u, std::thread::hardware_concurrency());
#endif
}

namespace detail {
// 0 until set_thread_count is called: then OpenMP's own default applies.
inline std::atomic<int>& thread_count_setting() {
  static std::atomic<int> threads{0};
  return threads;
}
}  // namespace detail

// The number of threads rewind's CPU loops use: set_thread_count's value, or OpenMP's default
// (OMP_NUM_THREADS, else every core) when it was never called; 1 without OpenMP.
inline int thread_count() {
#ifdef _OPENMP
  const int set = detail::thread_count_setting().load(std::memory_order_relaxed);
  return set > 0 ? set : std::max(1, omp_get_max_threads());
#else
  return 1;
#endif
}

// Sets the number of threads for every later loop, in every thread of the process. threads must
// be >= 1; without OpenMP only 1 is accepted. Results do not depend on it, only speed does.
inline void set_thread_count(int threads) {
  if (threads < 1) detail::fail<InvalidArgument>("thread count ", threads, " must be >= 1");
  if (!kThreadsAvailable && threads > 1)
    detail::fail<InvalidArgument>("thread count ", threads,
                                  ": this build of rewind has no OpenMP and runs on one thread "
                                  "(configure with a compiler that supports OpenMP and "
                                  "REWIND_WITH_OPENMP=ON)");
  detail::thread_count_setting().store(threads, std::memory_order_relaxed);
}

namespace detail {

// The fixed decomposition. Changing any of these changes the bits of every reduction.
inline constexpr Index kReductionBlock = 4096;  // elements per partial sum (dot, norms)
inline constexpr Index kIndexSumDirectLimit = 1
                                              << 16;  // sum_index up to this: one partial per index
inline constexpr Index kIndexSumBlock = 1024;         // beyond it: one partial per 1024 indices

// Below this much work (in elements: one vector entry, one grid cell of one field) a loop stays
// on the calling thread; the pieces, hence the bits, are the same either way. Starting a parallel
// region costs a few microseconds on a quiet machine, and far more on a busy one: a thread that
// spins at the closing barrier while its partner waits for a core stalls the whole loop. A loop
// over 8192 grid cells (Gray–Scott at 64², once per step in the drift monitor) ran several times
// slower on 2 threads than on 1 with another program on the machine
// (bench/results/code_comments.md), so only loops long enough to repay
// that risk (2^15 elements, tens of microseconds of work) are split.
inline constexpr Index kParallelMinElements = Index{1} << 15;

// How many threads a loop of `work` elements should use (1 below `threshold` or when nested).
inline int threads_for(Index work, Index threshold) {
#ifdef _OPENMP
  if (work < threshold || omp_in_parallel()) return 1;
  return thread_count();
#else
  (void)work;
  (void)threshold;
  return 1;
#endif
}

// Threads for a loop over `rows` grid rows of `elements_per_row` elements each (all fields).
inline int threads_for_rows(Index rows, Index elements_per_row) {
  return threads_for(rows * elements_per_row, kParallelMinElements);
}

// The work of one call f(i), in elements. A kernel called once per grid row says how many
// elements a row holds through `Index elements_per_index() const`; any other kernel (one cell,
// one vector entry per index) does one element's work.
template <class F>
inline Index elements_per_index(const F& f) {
  if constexpr (requires { static_cast<Index>(f.elements_per_index()); })
    return static_cast<Index>(f.elements_per_index());
  else
    return 1;
}

// f(i) for every i in [0, count), on `threads` threads (whole indices per thread).
template <class F>
inline void parallel_indices(Index count, int threads, F&& f) {
#ifdef _OPENMP
  if (threads > 1) {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (Index i = 0; i < count; ++i) f(i);
    return;
  }
#endif
  (void)threads;
  for (Index i = 0; i < count; ++i) f(i);
}

// f(begin, end) over [0, n) in contiguous ranges, one per thread; for element-wise work, whose
// bits do not depend on where the ranges start.
template <class F>
inline void for_each_range(Index n, F&& f) {
  const int threads = threads_for(n, kParallelMinElements);
  if (threads <= 1) {
    if (n > 0) f(Index{0}, n);
    return;
  }
  // Ranges of whole cache lines (8 doubles), so threads never write to the same line.
  const Index lines = (n + 7) / 8;
  parallel_indices(threads, threads, [&](Index t) {
    const Index begin = std::min(n, lines * t / threads * 8);
    const Index end = std::min(n, lines * (t + 1) / threads * 8);
    if (begin < end) f(begin, end);
  });
}

// A growable per-thread buffer for the partial sums of a parallel fold; it allocates only when a
// longer fold than any before on this thread comes along (never in a steady step loop).
template <int K>
inline Sums<K>* fold_scratch(Index count) {
  thread_local std::vector<Sums<K>> scratch;
  if (static_cast<Index>(scratch.size()) < count) scratch.resize(static_cast<std::size_t>(count));
  return scratch.data();
}

// Σ_p partial(p) over p in [0, count), added in order p = 0, 1, … from zero, whatever the number
// of threads (`threads`) that computed the partials.
template <int K, class Partial>
inline Sums<K> ordered_fold(Index count, int threads, Partial&& partial) {
  Sums<K> s = Sums<K>::zero();
  if (threads <= 1 || count < 2) {
    for (Index p = 0; p < count; ++p) s = s + partial(p);
    return s;
  }
  Sums<K>* parts = fold_scratch<K>(count);
  parallel_indices(count, threads, [&](Index p) { parts[p] = partial(p); });
  for (Index p = 0; p < count; ++p) s = s + parts[p];
  return s;
}

// Σ_i f(i) over i in [0, n) in the fixed decomposition of sum_index: one partial per index up to
// kIndexSumDirectLimit (the same bits as adding f(0), f(1), … in order), one per block of
// kIndexSumBlock indices beyond. For kernels called once per index (often once per grid row).
template <int K, class F>
inline Sums<K> ordered_index_sum(Index n, F&& f) {
  const int threads = threads_for(n * elements_per_index(f), kParallelMinElements);
  if (n <= kIndexSumDirectLimit) return ordered_fold<K>(n, threads, f);
  const Index blocks = (n + kIndexSumBlock - 1) / kIndexSumBlock;
  return ordered_fold<K>(blocks, threads, [&](Index b) {
    const Index end = std::min(n, (b + 1) * kIndexSumBlock);
    Sums<K> s = Sums<K>::zero();
    for (Index i = b * kIndexSumBlock; i < end; ++i) s = s + f(i);
    return s;
  });
}

// ordered_index_sum's bits where the caller sums each of its pieces itself: sum_range(begin, end)
// must return what adding f(begin), …, f(end − 1) one after the other from zero returns (a
// vectorised loop may: the drift monitor's fingerprint). The pieces are ordered_index_sum's: the
// whole range up to kIndexSumDirectLimit, blocks of kIndexSumBlock beyond, added in order.
template <int K, class SumRange>
inline Sums<K> ordered_range_sum(Index n, SumRange&& sum_range) {
  if (n <= kIndexSumDirectLimit) return sum_range(Index{0}, n);
  const Index blocks = (n + kIndexSumBlock - 1) / kIndexSumBlock;
  return ordered_fold<K>(blocks, threads_for(n, kParallelMinElements), [&](Index b) {
    return sum_range(b * kIndexSumBlock, std::min(n, (b + 1) * kIndexSumBlock));
  });
}

// Σ_i term(i) over [begin, end) in four interleaved partial sums (element i into lane
// (i − begin) mod 4, combined as (l0 + l1) + (l2 + l3)): one piece of a fixed decomposition.
template <class Term>
REWIND_SIMD_CLONES inline double lane_sum(Index begin, Index end, Term&& term) {
  double lane[4] = {0.0, 0.0, 0.0, 0.0};
  Index i = begin;
  for (; i + 4 <= end; i += 4)
    for (int k = 0; k < 4; ++k) lane[k] += term(i + k);
  for (int k = 0; i < end; ++i, ++k) lane[k] += term(i);
  return (lane[0] + lane[1]) + (lane[2] + lane[3]);
}

// Σ_i term(i) over elements i in [0, n), in blocks of kReductionBlock elements; inside a block
// four interleaved partial sums (element i into lane i mod 4, combined as (l0 + l1) + (l2 + l3)),
// so the loop is not bound by the latency of one addition per element. For dot products and
// norms: the bits depend on n only.
template <class Term>
inline double ordered_element_sum(Index n, Term&& term) {
  const Index blocks = (n + kReductionBlock - 1) / kReductionBlock;
  const int threads = threads_for(n, kParallelMinElements);
  const Sums<1> total = ordered_fold<1>(blocks, threads, [&](Index b) {
    Sums<1> s;
    s.v[0] = lane_sum(b * kReductionBlock, std::min(n, (b + 1) * kReductionBlock), term);
    return s;
  });
  return total.v[0];
}

}  // namespace detail
}  // namespace rwd
