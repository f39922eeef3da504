// rewind/integrators/cvodes_nvector.hpp — one SUNDIALS N_Vector over any rewind backend: every
// operation CVODES calls, written once as REWIND_HOST_DEVICE kernels over raw pointers and run
// through the backend's own loops and fixed-order reductions.
//
//   // a backend says how its loops and reductions run (see NVectorKernels below) …
//   template <> struct rwd::sundials::NVectorKernels<MyBackend> { … };
//   // … and gets an N_Vector:
//   using NV = rwd::sundials::BackendNVector<MyBackend>;
//   N_Vector v = NV::view(y, ctx);          // over y's values, no copy; N_VDestroy leaves y alone
//   MyBackend::Vector* same = NV::vector(v);   // &y (a clone: its own vector); null if not NV's
//
// Three backends have one: rwd::EigenBackend (rewind/integrators/eigen_nvector.hpp),
// rwd::ThrustBackend (rewind/integrators/thrust_cvodes.hpp) and rwd::DistributedBackend
// (rewind/distributed/distributed_nvector.hpp). All three pass one op-by-op conformance suite
// (tests/integrators/cvodes_nvector_conformance.hpp).
//
// Why rewind has its own N_Vector at all: Debian's SUNDIALS is built without optimisation, and
// CVODES spends much of its time in vector kernels; these run compiled with the project's flags,
// on the backend's device (GPU threads for Thrust under CUDA, OpenMP threads on the CPU), and a
// callback gets the backend vector behind an N_Vector without a copy.
//
// What the operations compute (the SUNDIALS 6.4 N_Vector contract; n is the global length):
//   element-wise: linear sum a x + b y, constant, product, quotient, scale, |x|, 1/x, x + b,
//     compare (|x_i| ≥ c → 1, else 0), scale-add-multi (z_j = a_j x + y_j) and the fused linear
//     combination z = Σ_j c_j x_j, each element as ((c_0 x_0 + c_1 x_1) + c_2 x_2) + …; z may be
//     any input of an element-wise operation and x_0 of the linear combination.
//   reductions: dot Σ x_i y_i, WRMS sqrt(Σ (x_i w_i)² / n) (0 for n = 0), masked WRMS (terms with
//     id_i > 0), weighted L2 sqrt(Σ (x_i w_i)²), L1 Σ |x_i|, max |x_i| (0 for n = 0), min x_i
//     (+∞ for n = 0), min quotient (min of num_i/denom_i over denom_i ≠ 0, BIG_REAL if none);
//     a NaN anywhere is the result of max, min and min quotient.
//   tests: inv test (z_i = 1/x_i where x_i ≠ 0; false if any x_i = 0), constraint mask (m_i = 1
//     where x_i breaks constraint code c_i ∈ {2: > 0, 1: ≥ 0, −1: ≤ 0, −2: < 0}; false if any).
// Every sum is folded in the backend's fixed decomposition (NVectorKernels::sum), so a replayed
// interval takes the steps it took the first time and the gradient has the same bits for every
// schedule, thread count and (on the distributed backend) number of ranks. A backend may replace
// a reduction with its own (NVectorKernels::dot and friends) where its vectors are summed in
// another fixed order already: the Eigen N_Vector keeps Eigen's own sums, see eigen_nvector.hpp.
//
// Vector-array operations are left to SUNDIALS' defaults, which call these one by one; the
// "local" reductions of SUNDIALS' MPI many-vector are absent (no module rewind uses calls them).
#pragma once

#include <sundials/sundials_context.h>
#include <sundials/sundials_nvector.h>
#include <sundials/sundials_types.h>  // BIG_REAL

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <new>

#include "rewind/backend/backend.hpp"  // kMaxCombinationTerms
#include "rewind/host_device.hpp"
#include "rewind/types.hpp"

namespace rwd::sundials {

// What a backend adds to its trait for the N_Vector. A specialisation provides:
//   using Vector;                               the backend's vector type
//   static constexpr const char* name;          for messages
//   static constexpr N_Vector_ID id;            what N_VGetVectorID reports
//   static constexpr bool host_arrays;          one process's values in host memory, which
//                                               SUNDIALS' dense and band solvers may read and
//                                               re-point (N_VSetArrayPointer, N_VCloneEmpty)
//   static double* values(Vector&);             this process's values
//   static Index local_size(const Vector&);     how many
//   static Index global_size(const Vector&);    the length over every process
//   static Vector like(const Vector&, Index local_size);   a new vector of the same kind (may
//                                               throw; its values need not be set)
//   template <class F> static void for_each(Index n, const F& f);   f(i) for i in [0, n), in any
//                                               order, possibly concurrently
//   template <class T> static double sum(const Vector& shape, Index n, const T& term);
//                                               Σ term(i) over every process in a fixed order
//                                               (term(i) is called once per i and may write
//                                               element i of an output)
//   template <class M> static double minimum(const Vector& shape, Index n, const M& value,
//                                            double start);   and maximum: the extreme of start
//                                               and value(i) over every process, NaN winning
// and optionally:
//   template <class F> static void for_each_range(Index n, const F& f):  f(begin, end) over
//                                               contiguous ranges covering [0, n), for a backend
//                                               whose loops run on the host: the fused linear
//                                               combination then runs term by term over blocks
//                                               (the same bits; see linear_combination)
//   using CommunicatorHandle; static bool communicator(const Vector&, CommunicatorHandle&):
//                                               N_VGetCommunicator's answer (its address)
//   static double dot(x, y, n), wrms_sum(x, w, n), wrms_mask_sum(x, w, id, n), l1_norm(x, n)
//                                               (const double* x, y, w, id; Index n): the
//                                               backend's own sums of one process's values in
//                                               place of the generic ones (wrms_sum: Σ (x_i w_i)²,
//                                               behind the WRMS and weighted L2 norms).
template <class Backend>
struct NVectorKernels;

// The kernels every backend runs (host and device alike).
namespace nvector_kernels {

// --- element-wise: z may be any of the inputs (index i reads before it writes) ----------------
struct LinearSum {
  double a, b;
  const double *x, *y;
  double* z;
  REWIND_HOST_DEVICE void operator()(Index i) const { z[i] = a * x[i] + b * y[i]; }
};
struct Constant {
  double c;
  double* z;
  REWIND_HOST_DEVICE void operator()(Index i) const { z[i] = c; }
};
struct Product {
  const double *x, *y;
  double* z;
  REWIND_HOST_DEVICE void operator()(Index i) const { z[i] = x[i] * y[i]; }
};
struct Quotient {
  const double *x, *y;
  double* z;
  REWIND_HOST_DEVICE void operator()(Index i) const { z[i] = x[i] / y[i]; }
};
struct Scaled {
  double c;
  const double* x;
  double* z;
  REWIND_HOST_DEVICE void operator()(Index i) const { z[i] = c * x[i]; }
};
struct Absolute {
  const double* x;
  double* z;
  REWIND_HOST_DEVICE void operator()(Index i) const { z[i] = ::fabs(x[i]); }
};
struct Reciprocal {
  const double* x;
  double* z;
  REWIND_HOST_DEVICE void operator()(Index i) const { z[i] = 1.0 / x[i]; }
};
struct AddConstant {
  const double* x;
  double b;
  double* z;
  REWIND_HOST_DEVICE void operator()(Index i) const { z[i] = x[i] + b; }
};
struct CompareAbs {
  double c;
  const double* x;
  double* z;
  REWIND_HOST_DEVICE void operator()(Index i) const { z[i] = ::fabs(x[i]) >= c ? 1.0 : 0.0; }
};
// z = a x + y.
struct ScaleAdd {
  double a;
  const double *x, *y;
  double* z;
  REWIND_HOST_DEVICE void operator()(Index i) const { z[i] = a * x[i] + y[i]; }
};
// The most terms one combination kernel takes (rwd::kMaxCombinationTerms, 16); longer
// combinations are chained (BackendNVector::linear_combination).
inline constexpr int kCombinationTerms = kMaxCombinationTerms;
// z = Σ_j c_j x_j in term order (z may be x_0).
struct Combination {
  int count;
  double c[kCombinationTerms];
  const double* x[kCombinationTerms];
  double* z;
  REWIND_HOST_DEVICE void operator()(Index i) const {
    double s = c[0] * x[0][i];
    for (int j = 1; j < count; ++j) s += c[j] * x[j][i];
    z[i] = s;
  }
};

// --- terms of sums ------------------------------------------------------------------------
struct ProductTerm {
  const double *x, *y;
  REWIND_HOST_DEVICE double operator()(Index i) const { return x[i] * y[i]; }
};
// (x_i w_i)², or 0 where mask_i ≤ 0 (mask may be null: every term).
struct WeightedSquare {
  const double *x, *w, *mask;
  REWIND_HOST_DEVICE double operator()(Index i) const {
    const double r = (mask == nullptr || mask[i] > 0.0) ? x[i] * w[i] : 0.0;
    return r * r;
  }
};
struct AbsoluteTerm {
  const double* x;
  REWIND_HOST_DEVICE double operator()(Index i) const { return ::fabs(x[i]); }
};
struct Value {
  const double* x;
  REWIND_HOST_DEVICE double operator()(Index i) const { return x[i]; }
};
// num_i / denom_i where denom_i ≠ 0, else BIG_REAL (SUNDIALS' "no quotient").
struct QuotientOrBig {
  const double *num, *denom;
  REWIND_HOST_DEVICE double operator()(Index i) const {
    return denom[i] != 0.0 ? num[i] / denom[i] : BIG_REAL;
  }
};
// z_i = 1/x_i where x_i ≠ 0; the term counts the zeros.
struct ReciprocalTest {
  const double* x;
  double* z;
  REWIND_HOST_DEVICE double operator()(Index i) const {
    if (x[i] == 0.0) return 1.0;
    z[i] = 1.0 / x[i];
    return 0.0;
  }
};
// m_i = 1 where x_i breaks constraint c_i, else 0; the term counts the violations.
struct ConstraintMask {
  const double *c, *x;
  double* m;
  REWIND_HOST_DEVICE double operator()(Index i) const {
    const double ci = c[i], xi = x[i];
    bool violated = false;
    if (ci == 2.0)
      violated = !(xi > 0.0);
    else if (ci == 1.0)
      violated = !(xi >= 0.0);
    else if (ci == -1.0)
      violated = !(xi <= 0.0);
    else if (ci == -2.0)
      violated = !(xi < 0.0);
    m[i] = violated ? 1.0 : 0.0;
    return violated ? 1.0 : 0.0;
  }
};

// --- extremes: a NaN on either side wins -------------------------------------------------------
struct NanMin {
  REWIND_HOST_DEVICE double operator()(double a, double b) const {
    return (b < a || b != b) ? b : a;
  }
};
struct NanMax {
  REWIND_HOST_DEVICE double operator()(double a, double b) const {
    return (b > a || b != b) ? b : a;
  }
};

}  // namespace nvector_kernels

// The N_Vector over Backend's vectors. Its operations are the static members below, installed in
// every vector's ops table; view/make/vector/owns are the way in and out.
template <class Backend>
class BackendNVector {
 public:
  using K = NVectorKernels<Backend>;
  using Vector = typename K::Vector;

  // An N_Vector over v's values (no copy; v must outlive it and keep its size). Destroying it
  // leaves v alone; clones own values of v's kind.
  static N_Vector view(Vector& v, SUNContext context) {
    N_Vector n = new_vector(context);
    auto* c = new (std::nothrow) Content;
    if (!c) {
      N_VFreeEmpty(n);
      throw std::bad_alloc();
    }
    c->vector = &v;
    c->length = K::local_size(v);
    set_communicator(*c);
    n->content = c;
    return n;
  }
  // A new N_Vector of `local_size` values of like's kind (zeros) that owns them.
  static N_Vector make(const Vector& like, Index local_size, SUNContext context) {
    N_Vector n = new_vector(context);
    Content* c = owning_content(like, local_size, true);
    if (!c) {
      N_VFreeEmpty(n);
      throw std::bad_alloc();
    }
    n->content = c;
    return n;
  }
  // An N_Vector of `length` values at `data` (someone else's host memory), as SUNDIALS' own
  // N_VMake_Serial; only for backends with host arrays.
  static N_Vector view_array(double* data, Index length,
                             SUNContext context) requires(K::host_arrays) {
    N_Vector n = make(Vector{}, 0, context);
    content(n)->length = length;
    content(n)->foreign = data;
    return n;
  }

  // True for vectors made here and their clones.
  static bool owns(N_Vector v) { return v && v->ops && v->ops->nvclone == clone && v->content; }
  // The backend vector behind v, or nullptr when v is not one of these or its values are
  // elsewhere (after N_VSetArrayPointer, or made by view_array).
  static Vector* vector(N_Vector v) {
    if (!owns(v)) return nullptr;
    Content* c = content(v);
    return c->foreign == nullptr && K::local_size(*c->vector) == c->length ? c->vector : nullptr;
  }
  // This process's values and their number, wherever they are.
  static double* values(N_Vector v) {
    Content* c = content(v);
    return c->foreign != nullptr ? c->foreign : K::values(*c->vector);
  }
  static Index local_length(N_Vector v) { return content(v)->length; }

 private:
  template <class Kernels>
  struct HandleOf {
    using type = std::nullptr_t;
  };
  template <class Kernels>
  requires requires { typename Kernels::CommunicatorHandle; }
  struct HandleOf<Kernels> {
    using type = typename Kernels::CommunicatorHandle;
  };
  using CommunicatorHandle = typename HandleOf<K>::type;

  struct Content {
    Vector storage;             // the values of a vector made here
    Vector* vector = nullptr;   // &storage, or the backend vector a view looks at
    double* foreign = nullptr;  // set by N_VSetArrayPointer: the values are there instead
    Index length = 0;           // values on this process
    CommunicatorHandle communicator{};
    bool has_communicator = false;
  };

  static Content* content(N_Vector v) { return static_cast<Content*>(v->content); }
  static const Vector& shape(N_Vector v) { return *content(v)->vector; }

  static void set_communicator([[maybe_unused]] Content& c) {
    if constexpr (requires { typename K::CommunicatorHandle; })
      c.has_communicator = K::communicator(*c.vector, c.communicator);
  }

  // Content owning `local_size` values of like's kind (zeros when asked), or null when the
  // allocation fails (SUNDIALS checks clones for null).
  static Content* owning_content(const Vector& like, Index local_size, bool zero) noexcept {
    auto* c = new (std::nothrow) Content;
    if (!c) return nullptr;
    try {  // a failed (device) allocation
      c->storage = K::like(like, local_size);
      if (zero) K::for_each(local_size, nvector_kernels::Constant{0.0, K::values(c->storage)});
    } catch (...) {
      delete c;
      return nullptr;
    }
    c->vector = &c->storage;
    c->length = local_size;
    set_communicator(*c);
    return c;
  }

  // --- identity, memory, layout -------------------------------------------------------------
  static N_Vector_ID get_id(N_Vector) { return K::id; }
  static void destroy(N_Vector v) {
    if (!v) return;
    delete content(v);
    v->content = nullptr;
    N_VFreeEmpty(v);
  }
  static N_Vector copy_ops(N_Vector w) {
    N_Vector v = N_VNewEmpty(w->sunctx);
    if (!v) return nullptr;
    if (N_VCopyOps(w, v) != 0) {
      N_VFreeEmpty(v);
      return nullptr;
    }
    return v;
  }
  static N_Vector clone(N_Vector w) {
    N_Vector v = copy_ops(w);
    if (!v) return nullptr;
    Content* c = owning_content(shape(w), local_length(w), false);
    if (!c) {
      N_VFreeEmpty(v);
      return nullptr;
    }
    v->content = c;
    return v;
  }
  // A vector of w's kind and length without values of its own, for N_VSetArrayPointer (SUNDIALS'
  // difference-quotient Jacobians point one at each matrix column); host arrays only.
  static N_Vector clone_empty(N_Vector w) {
    N_Vector v = copy_ops(w);
    if (!v) return nullptr;
    Content* c = owning_content(shape(w), 0, false);
    if (!c) {
      N_VFreeEmpty(v);
      return nullptr;
    }
    c->length = local_length(w);
    v->content = c;
    return v;
  }
  static void space(N_Vector v, sunindextype* real_words, sunindextype* integer_words) {
    *real_words = static_cast<sunindextype>(local_length(v));
    *integer_words = 2;
  }
  static realtype* get_array(N_Vector v) { return values(v); }
  static void set_array(realtype* data, N_Vector v) {
    Content* c = content(v);
    if constexpr (K::host_arrays) {
      c->foreign = (c->length == K::local_size(*c->vector) && data == K::values(*c->vector))
                       ? nullptr
                       : data;
    } else {
      if (data == values(v)) return;
      // Only SUNDIALS' dense and band difference-quotient Jacobians point a vector at foreign
      // memory; the stepper refuses those solvers on this vector before any work. Reaching here
      // is a bug, and returning would compute with the wrong values.
      std::fprintf(stderr,
                   "rewind: N_VSetArrayPointer on a %s N_Vector is not supported (only the "
                   "matrix-free GMRES solver runs over these vectors)\n",
                   K::name);
      std::abort();
    }
  }
  // The global length (CVODES's iterative linear-solver interface converts WRMS to L2 norms with
  // it); a host-array backend runs on one process, so its vectors' own length.
  static sunindextype get_length(N_Vector v) {
    if constexpr (K::host_arrays) return static_cast<sunindextype>(local_length(v));
    return static_cast<sunindextype>(K::global_size(shape(v)));
  }
  static void* get_communicator(N_Vector v) {
    Content* c = content(v);
    return c->has_communicator ? static_cast<void*>(&c->communicator) : nullptr;
  }

  // --- element-wise ---------------------------------------------------------------------------
  template <class F>
  static void each(N_Vector z, const F& f) {
    K::for_each(local_length(z), f);
  }
  static void linear_sum(realtype a, N_Vector x, realtype b, N_Vector y, N_Vector z) {
    each(z, nvector_kernels::LinearSum{a, b, values(x), values(y), values(z)});
  }
  static void constant(realtype c, N_Vector z) { each(z, nvector_kernels::Constant{c, values(z)}); }
  static void prod(N_Vector x, N_Vector y, N_Vector z) {
    each(z, nvector_kernels::Product{values(x), values(y), values(z)});
  }
  static void div(N_Vector x, N_Vector y, N_Vector z) {
    each(z, nvector_kernels::Quotient{values(x), values(y), values(z)});
  }
  static void scale(realtype c, N_Vector x, N_Vector z) {
    each(z, nvector_kernels::Scaled{c, values(x), values(z)});
  }
  static void abs_value(N_Vector x, N_Vector z) {
    each(z, nvector_kernels::Absolute{values(x), values(z)});
  }
  static void inv(N_Vector x, N_Vector z) {
    each(z, nvector_kernels::Reciprocal{values(x), values(z)});
  }
  static void add_const(N_Vector x, realtype b, N_Vector z) {
    each(z, nvector_kernels::AddConstant{values(x), b, values(z)});
  }
  static void compare(realtype c, N_Vector x, N_Vector z) {
    each(z, nvector_kernels::CompareAbs{c, values(x), values(z)});
  }

  // --- reductions -----------------------------------------------------------------------------
  template <class T>
  static double sum(N_Vector x, const T& term) {
    return K::sum(shape(x), local_length(x), term);
  }
  static double squares(N_Vector x, N_Vector w, N_Vector mask) {
    const double *xs = values(x), *ws = values(w);
    const Index n = local_length(x);
    if (mask == nullptr) {
      if constexpr (requires { K::wrms_sum(xs, ws, n); }) return K::wrms_sum(xs, ws, n);
      return sum(x, nvector_kernels::WeightedSquare{xs, ws, nullptr});
    }
    const double* ids = values(mask);
    if constexpr (requires { K::wrms_mask_sum(xs, ws, ids, n); })
      return K::wrms_mask_sum(xs, ws, ids, n);
    return sum(x, nvector_kernels::WeightedSquare{xs, ws, ids});
  }
  static realtype dot(N_Vector x, N_Vector y) {
    const double *xs = values(x), *ys = values(y);
    if constexpr (requires { K::dot(xs, ys, Index{0}); }) return K::dot(xs, ys, local_length(x));
    return sum(x, nvector_kernels::ProductTerm{xs, ys});
  }
  static realtype wrms_norm(N_Vector x, N_Vector w) {
    const sunindextype n = get_length(x);
    return n == 0 ? 0.0 : std::sqrt(squares(x, w, nullptr) / static_cast<double>(n));
  }
  static realtype wrms_norm_mask(N_Vector x, N_Vector w, N_Vector id) {
    const sunindextype n = get_length(x);
    return n == 0 ? 0.0 : std::sqrt(squares(x, w, id) / static_cast<double>(n));
  }
  static realtype wl2_norm(N_Vector x, N_Vector w) { return std::sqrt(squares(x, w, nullptr)); }
  static realtype l1_norm(N_Vector x) {
    const double* xs = values(x);
    if constexpr (requires { K::l1_norm(xs, Index{0}); }) return K::l1_norm(xs, local_length(x));
    return sum(x, nvector_kernels::AbsoluteTerm{xs});
  }
  static realtype max_norm(N_Vector x) {
    return K::maximum(shape(x), local_length(x), nvector_kernels::AbsoluteTerm{values(x)}, 0.0);
  }
  static realtype min_value(N_Vector x) {
    return K::minimum(shape(x), local_length(x), nvector_kernels::Value{values(x)},
                      std::numeric_limits<double>::infinity());
  }
  static realtype min_quotient(N_Vector num, N_Vector denom) {
    const double q = K::minimum(shape(num), local_length(num),
                                nvector_kernels::QuotientOrBig{values(num), values(denom)},
                                std::numeric_limits<double>::infinity());
    return q == std::numeric_limits<double>::infinity() ? BIG_REAL : q;  // no value at all
  }
  static booleantype inv_test(N_Vector x, N_Vector z) {
    const double zeros = sum(x, nvector_kernels::ReciprocalTest{values(x), values(z)});
    return zeros == 0.0 ? SUNTRUE : SUNFALSE;
  }
  static booleantype constr_mask(N_Vector c, N_Vector x, N_Vector m) {
    const double violations =
        sum(x, nvector_kernels::ConstraintMask{values(c), values(x), values(m)});
    return violations == 0.0 ? SUNTRUE : SUNFALSE;
  }

  // --- fused ----------------------------------------------------------------------------------
  // z = Σ_j c_j x_j, element by element in term order (z may be x_0). Beyond kCombinationTerms
  // terms, later kernels carry the running sum in z as their first term (coefficient 1, exact),
  // so the additions are those of one chain.
  static int linear_combination(int count, realtype* c, N_Vector* x, N_Vector z) {
    if (count < 1) return -1;
    if constexpr (requires { K::for_each_range(Index{0}, [](Index, Index) {}); }) {
      combine_on_host(count, c, x, z);
      return 0;
    }
    int next = 0;
    while (next < count) {
      nvector_kernels::Combination f{};
      int k = 0;
      if (next > 0) {
        f.c[0] = 1.0;
        f.x[0] = values(z);
        k = 1;
      }
      for (; k < nvector_kernels::kCombinationTerms && next < count; ++k, ++next) {
        f.c[k] = c[next];
        f.x[k] = values(x[next]);
      }
      f.count = k;
      f.z = values(z);
      each(z, f);
    }
    return 0;
  }
  // The combination on a host backend: term by term over blocks of 512 elements that stay in the
  // L1 cache, each element built as ((c_0 x_0 + c_1 x_1) + c_2 x_2) + … exactly as the kernel
  // builds it, so the same bits. Each pass is a loop the compiler vectorises; the kernel's loop
  // over a run-time number of terms inside the loop over elements is not, and took twice the
  // instructions on the host (bench/results/nvector.md).
  static void combine_on_host(int count, const double* c, N_Vector* x, N_Vector z) {
    double* out = values(z);
    K::for_each_range(local_length(z), [&](Index begin, Index end) {
      constexpr Index kBlock = 512;
      for (Index start = begin; start < end; start += kBlock) {
        const Index length = end - start < kBlock ? end - start : kBlock;
        double* o = out + start;
        const double c0 = c[0];
        const double* x0 = values(x[0]) + start;
        for (Index i = 0; i < length; ++i) o[i] = c0 * x0[i];  // o may be x0
        for (int j = 1; j < count; ++j) {
          const double cj = c[j];
          const double* xj = values(x[j]) + start;
          for (Index i = 0; i < length; ++i) o[i] += cj * xj[i];
        }
      }
    });
  }
  static int scale_add_multi(int count, realtype* a, N_Vector x, N_Vector* y, N_Vector* z) {
    for (int j = 0; j < count; ++j)
      each(z[j], nvector_kernels::ScaleAdd{a[j], values(x), values(y[j]), values(z[j])});
    return 0;
  }
  static int dot_prod_multi(int count, N_Vector x, N_Vector* y, realtype* d) {
    for (int j = 0; j < count; ++j) d[j] = dot(x, y[j]);
    return 0;
  }

  static N_Vector new_vector(SUNContext context) {
    N_Vector v = N_VNewEmpty(context);
    if (!v) throw std::bad_alloc();
    N_Vector_Ops ops = v->ops;
    ops->nvgetvectorid = get_id;
    ops->nvclone = clone;
    ops->nvcloneempty = K::host_arrays ? clone_empty : clone;
    ops->nvdestroy = destroy;
    ops->nvspace = space;
    ops->nvgetarraypointer = get_array;
    ops->nvsetarraypointer = set_array;
    ops->nvgetcommunicator = get_communicator;
    ops->nvgetlength = get_length;
    ops->nvlinearsum = linear_sum;
    ops->nvconst = constant;
    ops->nvprod = prod;
    ops->nvdiv = div;
    ops->nvscale = scale;
    ops->nvabs = abs_value;
    ops->nvinv = inv;
    ops->nvaddconst = add_const;
    ops->nvdotprod = dot;
    ops->nvmaxnorm = max_norm;
    ops->nvwrmsnorm = wrms_norm;
    ops->nvwrmsnormmask = wrms_norm_mask;
    ops->nvmin = min_value;
    ops->nvwl2norm = wl2_norm;
    ops->nvl1norm = l1_norm;
    ops->nvcompare = compare;
    ops->nvinvtest = inv_test;
    ops->nvconstrmask = constr_mask;
    ops->nvminquotient = min_quotient;
    ops->nvlinearcombination = linear_combination;
    ops->nvscaleaddmulti = scale_add_multi;
    ops->nvdotprodmulti = dot_prod_multi;
    return v;
  }
};

}  // namespace rwd::sundials
