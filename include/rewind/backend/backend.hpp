// rewind/backend/backend.hpp — the vector backend trait every integrator and driver is written
// against.
//
// A backend is a struct of static functions over one vector type (odeint's "algebra +
// operations"): the Runge–Kutta engine, the adjoint driver and the snapshot stores only ever
// combine vectors through it, so the same code runs on Eigen (CPU) and Thrust (CPU device
// systems or CUDA). Two backends ship: EigenBackend (rewind/backend/eigen_backend.hpp) and
// ThrustBackend (rewind/backend/thrust_backend.hpp).
//
// Semantics every backend implements (checked by tests/core/backend_conformance_test.cpp):
//   zeros(n)                          a new vector of n zeros (allocates; never inside a step loop)
//   size(x), data(x)                  length; raw pointer to the elements (device pointer on a GPU)
//   fill(x, a)                        x_i = a
//   copy(src, dst)                    dst = src (same size)
//   scale(a, x)                       x = a·x
//   axpy(a, x, y)                     y = y + a·x
//   linear_combination(out, a, x, c, v)  out = a·x + Σ_j c_j·v_j   (fused; out may be x)
//   linear_combination(out, c, v)        out = Σ_j c_j·v_j         (out may not be any v_j)
//   dot(x, y), max_norm(x)            Σ x_i y_i, max |x_i|
//   wrms_norm(x, w)                   sqrt(1/n Σ (x_i w_i)^2)  (SUNDIALS' weighted RMS norm)
//   error_norm(e, y0, y1, rtol, atol) sqrt(1/n Σ (e_i / (atol + rtol·max(|y0_i|, |y1_i|)))^2)
//   all_finite(x)                     no NaN or Inf
//   copy_to_host(x, span), copy_from_host(span, x)   element-wise transfer to a host buffer
//   copy_streaming(src, dst)          optional: copy(), for a copy nothing reads again soon (a
//                                     state or stage kept for the reverse sweep), written past
//                                     the caches where the backend can; copy_streaming<B>() below
//                                     falls back to copy()
//   for_each_index(n, f)              f(i) for i in [0, n), on the backend's device, in any order
//                                     and possibly concurrently (GPU threads, CPU threads): f(i)
//                                     must write only what index i owns
//   sum_index<K>(n, f)                Σ_i f(i) for f returning Sums<K>, one pass (each f(i)
//                                     called once, possibly concurrently)
// Reductions are deterministic on every backend that claims `deterministic == true`: the same
// inputs give the same bits on every call, which is what schedule independence rests on. On the
// Eigen backend they are also independent of the thread count (rewind/parallel.hpp).
#pragma once

#include <concepts>
#include <span>

#include "rewind/types.hpp"

namespace rwd {

// The largest number of vectors one fused linear combination takes. Runge–Kutta stages need at
// most (stages) terms; 16 covers every tableau shipped and most published explicit methods.
inline constexpr int kMaxCombinationTerms = 16;

template <class B>
concept VectorBackend = requires(typename B::Vector& x, const typename B::Vector& cx, double a,
                                 Index n, std::span<const double> coefficients,
                                 std::span<const typename B::Vector* const> vectors,
                                 std::span<double> host_out, std::span<const double> host_in) {
  typename B::Vector;
  { B::name } -> std::convertible_to<const char*>;
  { B::deterministic } -> std::convertible_to<bool>;
  { B::zeros(n) } -> std::same_as<typename B::Vector>;
  { B::size(cx) } -> std::same_as<Index>;
  { B::data(x) } -> std::same_as<double*>;
  { B::data(cx) } -> std::same_as<const double*>;
  B::fill(x, a);
  B::copy(cx, x);
  B::scale(a, x);
  B::axpy(a, cx, x);
  B::linear_combination(x, a, cx, coefficients, vectors);
  B::linear_combination(x, coefficients, vectors);
  { B::dot(cx, cx) } -> std::same_as<double>;
  { B::max_norm(cx) } -> std::same_as<double>;
  { B::wrms_norm(cx, cx) } -> std::same_as<double>;
  { B::error_norm(cx, cx, cx, a, a) } -> std::same_as<double>;
  { B::all_finite(cx) } -> std::same_as<bool>;
  B::copy_to_host(cx, host_out);
  B::copy_from_host(host_in, x);
};

// A backend on host memory whose reductions over indices a caller can run piece by piece:
// B::sum_index_ranges<K>(n, sum_range) gives B::sum_index<K>(n, f)'s bits when sum_range(begin,
// end) returns what adding f(begin), …, f(end − 1) from zero returns — so a vectorised kernel can
// replace f (the drift monitor's fingerprint). The Eigen and distributed backends.
template <class B>
concept RangeSumBackend = requires {
  B::template sum_index_ranges<1>(Index{}, [](Index, Index) { return Sums<1>{}; });
};

// dst = src for a copy that nothing reads again soon: B::copy_streaming where the backend has
// one (the Eigen backend's non-temporal stores), else B::copy. The same values either way.
template <class B>
void copy_streaming(const typename B::Vector& src, typename B::Vector& dst) {
  if constexpr (requires { B::copy_streaming(src, dst); })
    B::copy_streaming(src, dst);
  else
    B::copy(src, dst);
}

// The number of values of x this process holds: all of them, except on a backend whose vectors
// are split across processes (rewind/distributed/distributed_backend.hpp), which says so through
// B::host_size. Host buffers for copy_to_host / copy_from_host have this length.
template <class B>
Index host_size(const typename B::Vector& x) {
  if constexpr (requires { B::host_size(x); })
    return B::host_size(x);
  else
    return B::size(x);
}

// Whether `mine` is true in any process that shares the run: `mine` itself, except on a backend
// split across processes, where it is a collective (B::any_rank) so that every rank reaches the
// same verdict (the drift monitor's).
template <class B>
bool true_on_any_process(bool mine) {
  if constexpr (requires { B::any_rank(mine); })
    return B::any_rank(mine);
  else
    return mine;
}

// The number of processes that share the run's state: B::ranks() on a backend split across
// processes (MPI ranks), else 1.
template <class B>
int process_count() {
  if constexpr (requires { B::ranks(); })
    return B::ranks();
  else
    return 1;
}

// The largest `mine` over the processes that share the run (a collective on a backend split
// across processes, B::max_over_ranks): what every rank must agree on before it plans — a
// measured time, the largest slice of a state.
template <class B>
double max_on_any_process(double mine) {
  if constexpr (requires { B::max_over_ranks(mine); })
    return B::max_over_ranks(mine);
  else
    return mine;
}

}  // namespace rwd
