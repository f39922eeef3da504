// rewind/backend/thrust_backend.hpp — the Thrust backend over thrust::device_vector<double>.
//
//   // g++, linked to rewind::thrust_cpp (THRUST_DEVICE_SYSTEM_CPP), or nvcc in a .cu file linked
//   // to rewind::thrust_cuda (THRUST_DEVICE_SYSTEM_CUDA):
//   using B = rwd::ThrustBackend;
//   B::Vector y = B::zeros(n);
//   B::axpy(0.5, x, y);                                  // y += 0.5 x, on the device
//   double* p = B::data(y);                              // device pointer under CUDA
//   B::for_each_index(n, Square{p});                     // Square: a REWIND_HOST_DEVICE functor
//   rwd::Sums<2> s = B::sum_index<2>(n, Moments{p});     // two sums in one pass
//
// The same code compiles for every Thrust device system: CUDA on a GPU with nvcc, or the CPP
// (sequential) and OMP device systems with an ordinary C++ compiler, so the GPU code path is
// tested on CPU. Every kernel is a named REWIND_HOST_DEVICE functor over raw pointers; nothing
// here loops over elements on the host. Functors given to for_each_index and sum_index must be
// callable on the device: REWIND_HOST_DEVICE structs, or __host__ __device__ lambdas under
// nvcc --extended-lambda (a __device__-only lambda cannot be used with sum_index: Thrust has to
// name its return type on the host).
//
// Sizes are checked on the host before any kernel runs: vectors of different sizes, more than
// kMaxCombinationTerms terms, or coefficient and vector counts that differ throw
// rwd::InvalidArgument (EigenBackend only asserts in debug builds; a kernel would read out of
// bounds silently).
//
// Determinism: element-wise operations (fill, copy, scale, axpy, linear_combination) give the
// same bits on every call on every device system; linear_combination evaluates a·x first and
// then the terms in the order given. Reductions (dot, max_norm, wrms_norm, error_norm,
// all_finite, sum_index) fold in a fixed decomposition that depends on the vector length alone
// (rewind/backend/thrust_fixed_reduction.hpp): the CPP system, the OMP system with any thread
// count and the CUDA system with any launch configuration sum the same terms in the same order,
// with no atomics, so `deterministic` is true on every device system. nvcc contracts a·x + c·v
// into fused multiply-adds in device code (--fmad=true, its default), so CUDA results differ
// from CPU results in the last bits, element-wise and in reductions; configure with
// -DREWIND_CUDA_FMAD=OFF (nvcc --fmad=false) to make them equal bit for bit.
//
// Errors: on CUDA every entry point turns a CUDA failure into rwd::DeviceError naming the
// operation and CUDA's error string (rewind/backend/cuda_check.hpp), and zeros and a resizing
// copy refuse a vector larger than the device's free memory before allocating it ("a state that
// does not fit the device", with the bytes requested and free). Element-wise kernels are queued
// without waiting (thrust::cuda::par_nosync): a fault inside one is reported by the next call
// that waits for the device (a reduction or a copy to the host).
//
// Device systems in one program: a translation unit sees one THRUST_DEVICE_SYSTEM (the macro
// decides what thrust::device_vector is), and ThrustBackend lives in an inline namespace named
// after it (rwd::thrust_cpp::ThrustBackend, rwd::thrust_cuda::ThrustBackend, …), so a program may
// hold .cpp files on the CPP system and .cu files on the CUDA system without two different
// definitions of one symbol: everything instantiated on the backend (problems, steppers,
// drivers) gets a distinct name. Thrust itself does the same for its own symbols under CUDA (the
// toolkit's CCCL puts them in a versioned ABI namespace, apart from Debian's Thrust 1.x). Within
// one translation unit there is one ThrustBackend, spelled rwd::ThrustBackend.
#pragma once

#include <thrust/copy.h>
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/fill.h>
#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/transform.h>
#include <thrust/version.h>

#include <cmath>
#include <cstddef>
#include <span>
#include <utility>

#include "rewind/backend/backend.hpp"
#include "rewind/backend/device_error.hpp"
#include "rewind/backend/thrust_fixed_reduction.hpp"
#include "rewind/backend/thrust_launch.hpp"
#include "rewind/backend/thrust_system.hpp"
#include "rewind/error.hpp"
#include "rewind/host_device.hpp"
#include "rewind/types.hpp"

#if THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_CUDA && !defined(__CUDACC__)
#error \
    "rewind/backend/thrust_backend.hpp: the CUDA device system needs nvcc (a .cu file linked \
to rewind::thrust_cuda); for the CPU build link rewind::thrust_cpp, which defines \
THRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_CPP"
#endif

#if defined(__CUDACC__) && defined(__CUDACC_VER_MAJOR__) && __CUDACC_VER_MAJOR__ >= 12 && \
    THRUST_VERSION < 200000
#error \
    "rewind/backend/thrust_backend.hpp: nvcc picked up a Thrust 1.x (probably Debian's \
/usr/include/thrust) instead of the CUDA toolkit's own CCCL, which nvcc itself puts first \
(-isystem <cuda>/include/cccl); look for an include flag that brings another Thrust ahead of it"
#endif

#if THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_CUDA
#include "rewind/backend/cuda_check.hpp"
#endif

namespace rwd {
inline namespace REWIND_THRUST_SYSTEM_NAMESPACE {

namespace thrust_detail {

#if THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_CPP
inline constexpr const char* kName = "thrust-cpp";
#elif THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_CUDA
inline constexpr const char* kName = "thrust-cuda";
#elif THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_OMP
inline constexpr const char* kName = "thrust-omp";
#else
inline constexpr const char* kName = "thrust-tbb";
#endif

// |x| with |-0| = +0 (a plain x < 0 ? -x : x keeps -0, which would let max_norm's result
// depend on where the reduction puts its initial +0).
REWIND_HOST_DEVICE inline double abs_value(double x) {
  return ::fabs(x);
}

// x_i = a
struct Fill {
  double* x;
  double a;
  REWIND_HOST_DEVICE void operator()(Index i) const { x[i] = a; }
};

// x_i = a·x_i
struct Scale {
  double* x;
  double a;
  REWIND_HOST_DEVICE void operator()(Index i) const { x[i] = a * x[i]; }
};

// y_i = y_i + a·x_i
struct Axpy {
  const double* x;
  double* y;
  double a;
  REWIND_HOST_DEVICE void operator()(Index i) const { y[i] = y[i] + a * x[i]; }
};

// out_i = a·x_i + Σ_j c_j v_j,i  (kHasX) or  0 + Σ_j c_j v_j,i: one read of every input and
// one write per element. out may alias x: element i is read before it is written.
template <bool kHasX>
struct FusedCombination {
  double* out;
  const double* x;
  double a;
  int terms;
  double c[kMaxCombinationTerms];
  const double* v[kMaxCombinationTerms];

  REWIND_HOST_DEVICE void operator()(Index i) const {
    double o = 0.0;
    if constexpr (kHasX) o = a * x[i];
    for (int j = 0; j < terms; ++j) o += c[j] * v[j][i];
    out[i] = o;
  }
};

struct Plus {
  REWIND_HOST_DEVICE double operator()(double a, double b) const { return a + b; }
};

template <int K>
struct SumsPlus {
  REWIND_HOST_DEVICE Sums<K> operator()(const Sums<K>& a, const Sums<K>& b) const { return a + b; }
};

// Maximum that propagates NaN from either side (a NaN never hides behind a larger value).
struct NanMax {
  REWIND_HOST_DEVICE double operator()(double a, double b) const {
    return (b > a || b != b) ? b : a;
  }
};

// |x_i|
struct AbsValue {
  const double* x;
  REWIND_HOST_DEVICE double operator()(Index i) const { return abs_value(x[i]); }
};

// x_i y_i
struct Product {
  const double* x;
  const double* y;
  REWIND_HOST_DEVICE double operator()(Index i) const { return x[i] * y[i]; }
};

// (x_i w_i)^2
struct WeightedSquare {
  const double* x;
  const double* w;
  REWIND_HOST_DEVICE double operator()(Index i) const {
    const double p = x[i] * w[i];
    return p * p;
  }
};

// (e_i / (atol + rtol·max(|y0_i|, |y1_i|)))^2
struct ScaledErrorSquare {
  const double* e;
  const double* y0;
  const double* y1;
  double rtol;
  double atol;
  REWIND_HOST_DEVICE double operator()(Index i) const {
    const double a0 = abs_value(y0[i]);
    const double a1 = abs_value(y1[i]);
    const double scale = atol + rtol * (a0 < a1 ? a1 : a0);
    const double r = e[i] / scale;
    return r * r;
  }
};

// x_i - x_i: 0 for a finite value, NaN for NaN and ±Inf; the sum is 0 exactly when all are
// finite.
struct SelfDifference {
  const double* x;
  REWIND_HOST_DEVICE double operator()(Index i) const { return x[i] - x[i]; }
};

// Runs f, turning a CUDA failure into an rwd::DeviceError that names the operation
// (rewind/backend/cuda_check.hpp); on CPU device systems f runs as it is.
template <class F>
decltype(auto) guarded([[maybe_unused]] const char* operation, F&& f) {
#if THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_CUDA
  return cuda::translate_errors(operation, std::forward<F>(f));
#else
  return std::forward<F>(f)();
#endif
}

// Refuses, before allocating, a vector of `count` doubles larger than the device's free memory.
inline void fits_on_device([[maybe_unused]] std::size_t count,
                           [[maybe_unused]] const char* operation) {
#if THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_CUDA
  cuda::check_fits(count * sizeof(double), operation);
#endif
}

}  // namespace thrust_detail

struct ThrustBackend {
  using Vector = thrust::device_vector<double>;

  static constexpr const char* name = thrust_detail::kName;
  static constexpr bool deterministic = true;

  static Vector zeros(Index n) {
    if (n < 0) detail::fail<InvalidArgument>("vector size ", n, " must be >= 0");
    return thrust_detail::guarded("zeros", [&] {
      thrust_detail::fits_on_device(static_cast<std::size_t>(n), "zeros");
      return Vector(static_cast<std::size_t>(n), 0.0);
    });
  }
  static Index size(const Vector& x) { return static_cast<Index>(x.size()); }
  static double* data(Vector& x) { return thrust::raw_pointer_cast(x.data()); }
  static const double* data(const Vector& x) { return thrust::raw_pointer_cast(x.data()); }

  static void fill(Vector& x, double a) {
    launch_for_each("fill", size(x), thrust_detail::Fill{data(x), a});
  }
  static void copy(const Vector& src, Vector& dst) {
    thrust_detail::guarded("copy", [&] {
      if (dst.size() == src.size()) {
        if (src.empty()) return;  // Thrust's CPU copy would memmove null pointers (undefined)
        thrust::copy(thrust_detail::kNoWait, src.begin(), src.end(), dst.begin());
      } else {
        thrust_detail::fits_on_device(src.size(), "copy");
        dst = src;  // like Eigen's assignment: resize, then copy
      }
    });
  }
  static void scale(double a, Vector& x) {
    launch_for_each("scale", size(x), thrust_detail::Scale{data(x), a});
  }
  static void axpy(double a, const Vector& x, Vector& y) {
    check_same_size("axpy", x.size(), y.size());
    launch_for_each("axpy", size(y), thrust_detail::Axpy{data(x), data(y), a});
  }

  static void linear_combination(Vector& out, double a, const Vector& x, std::span<const double> c,
                                 std::span<const Vector* const> v) {
    check_same_size("linear_combination", x.size(), out.size());
    thrust_detail::FusedCombination<true> f{};
    f.out = data(out);
    f.x = data(x);
    f.a = a;
    pack_terms(f, c, v, out.size());
    launch_for_each("linear_combination", size(out), f);
  }
  static void linear_combination(Vector& out, std::span<const double> c,
                                 std::span<const Vector* const> v) {
    thrust_detail::FusedCombination<false> f{};
    f.out = data(out);
    f.x = nullptr;
    f.a = 0.0;
    pack_terms(f, c, v, out.size());
    launch_for_each("linear_combination", size(out), f);
  }

  static double dot(const Vector& x, const Vector& y) {
    check_same_size("dot", x.size(), y.size());
    return reduce_index("dot", size(x), thrust_detail::Product{data(x), data(y)});
  }
  static double max_norm(const Vector& x) {
    return thrust_detail::guarded("max_norm", [&] {
      return thrust_detail::fixed_reduce(size(x), thrust_detail::AbsValue{data(x)},
                                         thrust_detail::NanMax{}, 0.0);
    });
  }
  static double wrms_norm(const Vector& x, const Vector& w) {
    check_same_size("wrms_norm", x.size(), w.size());
    const Index n = size(x);
    if (n == 0) return 0.0;
    const double sum =
        reduce_index("wrms_norm", n, thrust_detail::WeightedSquare{data(x), data(w)});
    return std::sqrt(sum / static_cast<double>(n));
  }
  static double error_norm(const Vector& e, const Vector& y0, const Vector& y1, double rtol,
                           double atol) {
    check_same_size("error_norm", e.size(), y0.size());
    check_same_size("error_norm", e.size(), y1.size());
    const Index n = size(e);
    if (n == 0) return 0.0;
    const double sum = reduce_index(
        "error_norm", n, thrust_detail::ScaledErrorSquare{data(e), data(y0), data(y1), rtol, atol});
    return std::sqrt(sum / static_cast<double>(n));
  }
  static bool all_finite(const Vector& x) {
    return reduce_index("all_finite", size(x), thrust_detail::SelfDifference{data(x)}) == 0.0;
  }

  static void copy_to_host(const Vector& x, std::span<double> host) {
    check_host_size(x.size(), host.size());
    // Nothing to copy for an empty vector: Thrust's CPU copy would memmove from or to a null
    // pointer, which is undefined even for zero bytes.
    if (host.empty()) return;
    thrust_detail::guarded("copy_to_host", [&] { thrust::copy(x.begin(), x.end(), host.data()); });
  }
  static void copy_from_host(std::span<const double> host, Vector& x) {
    check_host_size(x.size(), host.size());
    if (host.empty()) return;
    thrust_detail::guarded(
        "copy_from_host", [&] { thrust::copy(host.data(), host.data() + host.size(), x.begin()); });
  }

  // f(i) for i in [0, n) on the device; f is a REWIND_HOST_DEVICE functor taking Index.
  template <class F>
  static void for_each_index(Index n, F f) {
    launch_for_each("for_each_index", n, f);
  }
  // Σ_i f(i) for f returning Sums<K>, one pass on the device, in the fixed decomposition.
  template <int K, class F>
  static Sums<K> sum_index(Index n, F f) {
    return thrust_detail::guarded("sum_index", [&] {
      return thrust_detail::fixed_reduce(n, f, thrust_detail::SumsPlus<K>{}, Sums<K>::zero());
    });
  }

 private:
  template <class F>
  static void launch_for_each(const char* operation, Index n, const F& f) {
    if (n <= 0) return;
    thrust_detail::guarded(operation, [&] { thrust_detail::launch_indices(operation, n, f); });
  }

  template <class F>
  static double reduce_index(const char* operation, Index n, F f) {
    return thrust_detail::guarded(
        operation, [&] { return thrust_detail::fixed_reduce(n, f, thrust_detail::Plus{}, 0.0); });
  }

  template <class Combination>
  static void pack_terms(Combination& f, std::span<const double> c,
                         std::span<const Vector* const> v, std::size_t n) {
    if (c.size() != v.size())
      detail::fail<InvalidArgument>("linear_combination got ", c.size(), " coefficients but ",
                                    v.size(), " vectors; they must match");
    if (c.size() > static_cast<std::size_t>(kMaxCombinationTerms))
      detail::fail<InvalidArgument>("linear_combination got ", c.size(),
                                    " terms; at most kMaxCombinationTerms = ", kMaxCombinationTerms,
                                    " are supported");
    f.terms = static_cast<int>(c.size());
    for (std::size_t j = 0; j < c.size(); ++j) {
      if (v[j] == nullptr)
        detail::fail<InvalidArgument>("linear_combination: vector ", j, " is null");
      check_same_size("linear_combination", v[j]->size(), n);
      f.c[j] = c[j];
      f.v[j] = data(*v[j]);
    }
  }

  static void check_same_size(const char* what, std::size_t a, std::size_t b) {
    if (a != b)
      detail::fail<InvalidArgument>(what, ": vectors have ", a, " and ", b,
                                    " elements; they must match");
  }
  static void check_host_size(std::size_t n, std::size_t host) {
    if (n != host)
      detail::fail<InvalidArgument>("host buffer has ", host, " elements but the vector has ", n,
                                    "; they must match");
  }
};

static_assert(VectorBackend<ThrustBackend>);

}  // namespace REWIND_THRUST_SYSTEM_NAMESPACE
}  // namespace rwd
