// rewind/integrators/thrust_cvodes.hpp — CVODES over rwd::ThrustBackend: an N_Vector whose
// values live in a thrust::device_vector (the GPU's memory under CUDA) and whose operations are
// the backend's kernels, and the CvodesVectorTraits that let rwd::CvodesIntervalStepper run BDF
// with the state on the device.
//
//   #include "rewind/integrators/thrust_cvodes.hpp"   // in a .cu file (CUDA) or a .cpp (CPP/OMP)
//   rwd::DeviceBrusselator2D<rwd::ThrustBackend> problem(1024);
//   rwd::CvodesOptions options;
//   options.linear_solver = rwd::CvodesLinearSolver::gmres;     // the only one over device vectors
//   rwd::CvodesIntervalStepper stepper(problem, options, grid);
//
// CVODES itself runs on the host and calls the vector operations; each is one kernel launch over
// the device values (a linear sum, a scaling, …), and each reduction (dot products, weighted
// norms, minima) one fixed-order reduction whose result comes back to the host
// (rewind/backend/thrust_fixed_reduction.hpp): the same bits for every launch configuration and
// thread count, so a replayed interval takes exactly the steps it took the first time and the
// gradient is the same bits for every schedule. Only the matrix-free GMRES solver runs: SUNDIALS'
// dense and band solvers read the values through a host array pointer.
//
// Fused operations: N_VLinearCombination (up to kMaxCombinationTerms terms in one kernel, longer
// ones as a chain) and N_VScaleAddMulti; the other fused and vector-array operations are left to
// SUNDIALS' defaults, which call the operations here one by one. The element-wise kernels are
// written here with their term counts fixed rather than routed through ThrustBackend's general
// linear_combination: routed through it, a BDF run on the CPP device system took 0.23–0.24 s
// instead of 0.16–0.20 s (Brusselator n = 64, 4 intervals), the same bits.
// N_VGetArrayPointer returns the device pointer (for CUDA, memory the host cannot read); no
// SUNDIALS module rewind uses with GMRES reads through it. N_VSetArrayPointer is refused.
#pragma once

#include <sundials/sundials_context.h>
#include <sundials/sundials_nvector.h>
#include <sundials/sundials_types.h>  // BIG_REAL

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <new>
#include <span>
#include <vector>

#include "rewind/backend/thrust_backend.hpp"
#include "rewind/error.hpp"
#include "rewind/host_device.hpp"
#include "rewind/integrators/cvodes_vector_traits.hpp"
#include "rewind/types.hpp"

namespace rwd {
inline namespace REWIND_THRUST_SYSTEM_NAMESPACE {
namespace thrust_nvector {

using V = ThrustBackend::Vector;
inline constexpr double kInfinity = std::numeric_limits<double>::infinity();

// --- element-wise kernels (z may be any of the inputs: index i reads before it writes)
// ------------
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
// z = Σ_j c_j x_j in term order (z may be x_0).
struct Combination {
  int count;
  double c[kMaxCombinationTerms];
  const double* x[kMaxCombinationTerms];
  double* z;
  REWIND_HOST_DEVICE void operator()(Index i) const {
    double s = c[0] * x[0][i];
    for (int j = 1; j < count; ++j) s += c[j] * x[j][i];
    z[i] = s;
  }
};
// z = a x + y.
struct ScaleAdd {
  double a;
  const double *x, *y;
  double* z;
  REWIND_HOST_DEVICE void operator()(Index i) const { z[i] = a * x[i] + y[i]; }
};

// --- reductions (Sums<1> terms for the backend's fixed-order sum)
// ---------------------------------
struct Dot {
  const double *x, *y;
  REWIND_HOST_DEVICE Sums<1> operator()(Index i) const { return one(x[i] * y[i]); }
  REWIND_HOST_DEVICE static Sums<1> one(double v) {
    Sums<1> s;
    s.v[0] = v;
    return s;
  }
};
struct WeightedSquare {
  const double *x, *w, *mask;  // mask may be null
  REWIND_HOST_DEVICE Sums<1> operator()(Index i) const {
    const double r = (mask == nullptr || mask[i] > 0.0) ? x[i] * w[i] : 0.0;
    return Dot::one(r * r);
  }
};
struct AbsoluteTerm {
  const double* x;
  REWIND_HOST_DEVICE Sums<1> operator()(Index i) const { return Dot::one(::fabs(x[i])); }
};
// z_i = 1/x_i where x_i ≠ 0; the term counts the zeros.
struct ReciprocalTest {
  const double* x;
  double* z;
  REWIND_HOST_DEVICE Sums<1> operator()(Index i) const {
    if (x[i] == 0.0) return Dot::one(1.0);
    z[i] = 1.0 / x[i];
    return Dot::one(0.0);
  }
};
// Constraint codes (SUNDIALS): 2: x > 0, 1: x ≥ 0, −1: x ≤ 0, −2: x < 0; m_i = 1 where
// violated; the term counts the violations.
struct ConstraintMask {
  const double *c, *x;
  double* m;
  REWIND_HOST_DEVICE Sums<1> operator()(Index i) const {
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
    return Dot::one(violated ? 1.0 : 0.0);
  }
};
// The smaller of two values; a NaN wins (so a NaN anywhere is the minimum).
struct NanMin {
  REWIND_HOST_DEVICE double operator()(double a, double b) const {
    return (b < a || b != b) ? b : a;
  }
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

// --- the N_Vector
// ----------------------------------------------------------------------------------
struct Content {
  V storage;            // a clone's own values
  V* vector = nullptr;  // &storage, or the backend vector a view looks at
};

inline Content* content(N_Vector v) {
  return static_cast<Content*>(v->content);
}
inline V& vec(N_Vector v) {
  return *content(v)->vector;
}
inline double* values(N_Vector v) {
  return ThrustBackend::data(vec(v));
}
inline Index length(N_Vector v) {
  return ThrustBackend::size(vec(v));
}

template <class F>
void each(N_Vector z, F f) {
  ThrustBackend::for_each_index(length(z), f);
}
template <class F>
double sum(N_Vector x, F f) {
  return ThrustBackend::sum_index<1>(length(x), f).v[0];
}
template <class Map>
double minimum(N_Vector x, Map map) {
  return thrust_detail::guarded("N_Vector minimum", [&] {
    return thrust_detail::fixed_reduce(length(x), map, NanMin{}, kInfinity);
  });
}

inline N_Vector_ID get_id(N_Vector) {
  return SUNDIALS_NVEC_CUSTOM;
}
inline void destroy(N_Vector v) {
  if (!v) return;
  delete content(v);
  v->content = nullptr;
  N_VFreeEmpty(v);
}
inline N_Vector clone(N_Vector w) {
  N_Vector v = N_VNewEmpty(w->sunctx);
  if (!v) return nullptr;
  if (N_VCopyOps(w, v) != 0) {
    N_VFreeEmpty(v);
    return nullptr;
  }
  auto* c = new (std::nothrow) Content;
  if (!c) {
    N_VFreeEmpty(v);
    return nullptr;
  }
  try {
    c->storage = ThrustBackend::zeros(length(w));
  } catch (...) {  // a device allocation that failed: SUNDIALS checks for null
    delete c;
    N_VFreeEmpty(v);
    return nullptr;
  }
  c->vector = &c->storage;
  v->content = c;
  return v;
}
inline void space(N_Vector v, sunindextype* real_words, sunindextype* integer_words) {
  *real_words = static_cast<sunindextype>(length(v));
  *integer_words = 2;
}
inline realtype* get_array(N_Vector v) {
  return values(v);
}
inline void set_array(realtype* data, N_Vector v) {
  if (data == values(v)) return;
  // Only SUNDIALS' dense and band difference-quotient Jacobians point a vector elsewhere; the
  // stepper refuses those solvers over device vectors before any work, so reaching here is a bug
  // (and returning would compute with the wrong values).
  std::fprintf(stderr,
               "rewind: N_VSetArrayPointer on a device N_Vector is not supported (only the "
               "matrix-free GMRES solver runs over device vectors)\n");
  std::abort();
}
inline sunindextype get_length(N_Vector v) {
  return static_cast<sunindextype>(length(v));
}

inline void linear_sum(realtype a, N_Vector x, realtype b, N_Vector y, N_Vector z) {
  each(z, LinearSum{a, b, values(x), values(y), values(z)});
}
inline void constant(realtype c, N_Vector z) {
  each(z, Constant{c, values(z)});
}
inline void prod(N_Vector x, N_Vector y, N_Vector z) {
  each(z, Product{values(x), values(y), values(z)});
}
inline void div(N_Vector x, N_Vector y, N_Vector z) {
  each(z, Quotient{values(x), values(y), values(z)});
}
inline void scale(realtype c, N_Vector x, N_Vector z) {
  each(z, Scaled{c, values(x), values(z)});
}
inline void abs_value(N_Vector x, N_Vector z) {
  each(z, Absolute{values(x), values(z)});
}
inline void inv(N_Vector x, N_Vector z) {
  each(z, Reciprocal{values(x), values(z)});
}
inline void add_const(N_Vector x, realtype b, N_Vector z) {
  each(z, AddConstant{values(x), b, values(z)});
}
inline void compare(realtype c, N_Vector x, N_Vector z) {
  each(z, CompareAbs{c, values(x), values(z)});
}

inline realtype dot(N_Vector x, N_Vector y) {
  return sum(x, Dot{values(x), values(y)});
}
inline realtype max_norm(N_Vector x) {
  return ThrustBackend::max_norm(vec(x));
}
inline realtype min_value(N_Vector x) {
  return minimum(x, Value{values(x)});
}
inline realtype wrms_norm(N_Vector x, N_Vector w) {
  const Index n = length(x);
  if (n == 0) return 0.0;
  return std::sqrt(sum(x, WeightedSquare{values(x), values(w), nullptr}) / static_cast<double>(n));
}
inline realtype wrms_norm_mask(N_Vector x, N_Vector w, N_Vector id) {
  const Index n = length(x);
  if (n == 0) return 0.0;
  return std::sqrt(sum(x, WeightedSquare{values(x), values(w), values(id)}) /
                   static_cast<double>(n));
}
inline realtype wl2_norm(N_Vector x, N_Vector w) {
  return std::sqrt(sum(x, WeightedSquare{values(x), values(w), nullptr}));
}
inline realtype l1_norm(N_Vector x) {
  return sum(x, AbsoluteTerm{values(x)});
}
inline booleantype inv_test(N_Vector x, N_Vector z) {
  return sum(x, ReciprocalTest{values(x), values(z)}) == 0.0 ? SUNTRUE : SUNFALSE;
}
inline booleantype constr_mask(N_Vector c, N_Vector x, N_Vector m) {
  return sum(x, ConstraintMask{values(c), values(x), values(m)}) == 0.0 ? SUNTRUE : SUNFALSE;
}
inline realtype min_quotient(N_Vector num, N_Vector denom) {
  const double q = minimum(num, QuotientOrBig{values(num), values(denom)});
  return q == kInfinity ? BIG_REAL : q;  // an empty vector
}

// z = Σ_j c_j x_j, element by element in term order (z may be x_0). Beyond kMaxCombinationTerms
// terms, later kernels carry the running sum in z as their first term (coefficient 1, exact), so
// the additions are those of one chain.
inline int linear_combination(int count, realtype* c, N_Vector* x, N_Vector z) {
  if (count < 1) return -1;
  int next = 0;
  while (next < count) {
    Combination f{};
    int k = 0;
    if (next > 0) {
      f.c[0] = 1.0;
      f.x[0] = values(z);
      k = 1;
    }
    for (; k < kMaxCombinationTerms && next < count; ++k, ++next) {
      f.c[k] = c[next];
      f.x[k] = values(x[next]);
    }
    f.count = k;
    f.z = values(z);
    each(z, f);
  }
  return 0;
}
inline int scale_add_multi(int count, realtype* a, N_Vector x, N_Vector* y, N_Vector* z) {
  for (int j = 0; j < count; ++j) each(z[j], ScaleAdd{a[j], values(x), values(y[j]), values(z[j])});
  return 0;
}

inline N_Vector new_vector(SUNContext context) {
  N_Vector v = N_VNewEmpty(context);
  if (!v) throw std::bad_alloc();
  N_Vector_Ops ops = v->ops;
  ops->nvgetvectorid = get_id;
  ops->nvclone = clone;
  ops->nvcloneempty = clone;
  ops->nvdestroy = destroy;
  ops->nvspace = space;
  ops->nvgetarraypointer = get_array;
  ops->nvsetarraypointer = set_array;
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
  return v;
}

// An N_Vector over the backend vector v (no copy; destroying it leaves v alone).
inline N_Vector view(V& v, SUNContext context) {
  N_Vector n = new_vector(context);
  auto* c = new (std::nothrow) Content;
  if (!c) {
    N_VFreeEmpty(n);
    throw std::bad_alloc();
  }
  c->vector = &v;
  n->content = c;
  return n;
}

// True for vectors made here (and their clones).
inline bool is_device_nvector(N_Vector v) {
  return v && v->ops && v->ops->nvclone == clone && v->content;
}

}  // namespace thrust_nvector
}  // namespace REWIND_THRUST_SYSTEM_NAMESPACE

template <>
struct CvodesVectorTraits<ThrustBackend> {
  using Vector = ThrustBackend::Vector;
  static constexpr bool matrix_solvers = false;  // GMRES only (see the top)

  static N_Vector view(Vector& v, CvodesVectors, SUNContext context) {
    return thrust_nvector::view(v, context);
  }
  // CVODES clones the vectors it is given, so every vector a callback sees is one of these.
  static const Vector& in(N_Vector source, Vector&) { return own(source); }
  static Vector& out(N_Vector target, Vector&) { return own(target); }
  static void store(N_Vector target, const Vector& written) {
    Vector& v = own(target);
    if (&v != &written) ThrustBackend::copy(written, v);
  }
  static bool all_finite(const Vector& v) { return ThrustBackend::all_finite(v); }
  // v (already of the full size) = the values, or the one value everywhere.
  static void assign(Vector& v, const std::vector<double>& values) {
    if (values.size() == 1) {
      ThrustBackend::fill(v, values[0]);
      return;
    }
    ThrustBackend::copy_from_host(std::span<const double>(values), v);
  }

 private:
  static Vector& own(N_Vector v) {
    if (!thrust_nvector::is_device_nvector(v)) {
      std::fprintf(stderr, "rewind: CVODES handed a foreign N_Vector to a device callback\n");
      std::abort();
    }
    return thrust_nvector::vec(v);
  }
};

}  // namespace rwd
