// src/distributed/src/distributed_nvector.cpp — see rewind/distributed/distributed_nvector.hpp.
#include "rewind/distributed/distributed_nvector.hpp"

#include <sundials/sundials_types.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <new>
#include <vector>

#include "rewind/parallel.hpp"

namespace rwd::sundials {
namespace {

struct Content {
  DistributedVector storage;            // a clone's own values
  DistributedVector* vector = nullptr;  // &storage, or the vector a view looks at
  MPI_Comm comm = MPI_COMM_NULL;        // N_VGetCommunicator's answer points here
};

Content* content(N_Vector v) {
  return static_cast<Content*>(v->content);
}
DistributedVector& vec(N_Vector v) {
  return *content(v)->vector;
}
double* values(N_Vector v) {
  return vec(v).local.data();
}
Index local_length(N_Vector v) {
  return static_cast<Index>(vec(v).local.size());
}
const RowLayout* layout(N_Vector v) {
  return vec(v).layout;
}

// z_i = f(i) for this rank's indices, on its threads (element-wise: the bits do not depend on how
// the indices are shared out, nor on which rank holds them).
template <class F>
void elementwise(N_Vector z, F&& f) {
  double* out = values(z);
  detail::for_each_range(local_length(z), [&](Index begin, Index end) {
    for (Index i = begin; i < end; ++i) out[i] = f(i);
  });
}

// Σ_i term(i) over the whole vector: for a split one, one partial per global row (four lanes
// inside a row, as DistributedBackend's reductions), folded in global row order on every rank; a
// replicated one sums its values like the Eigen backend.
template <class Term>
double global_sum(N_Vector x, Term&& term) {
  const RowLayout* l = layout(x);
  if (!l) return detail::ordered_element_sum(local_length(x), term);
  const Index length = l->row_length();
  const Sums<1> total = l->fold_rows<1>([&](Index b) {
    Sums<1> s;
    s.v[0] = detail::lane_sum(b * length, (b + 1) * length, term);
    return s;
  });
  return total.v[0];
}

// The largest (or smallest) of values[0, n) and `start`; a NaN wins.
double extreme(const double* values, Index n, double start, bool largest) {
  double m = start;
  for (Index i = 0; i < n && m == m; ++i) {
    const double a = values[i];
    if (a != a || (largest ? a > m : a < m)) m = a;
  }
  return m;
}

// The largest (or smallest) of every rank's `mine`; a NaN anywhere wins everywhere.
double global_extreme(N_Vector x, double mine, bool largest) {
  const RowLayout* l = layout(x);
  if (!l) return mine;
  const Communicator& comm = l->communicator();
  thread_local std::vector<double> all;
  thread_local std::vector<int> counts;
  all.resize(static_cast<std::size_t>(comm.size()));
  counts.assign(static_cast<std::size_t>(comm.size()), 1);
  comm.all_gather(std::span<const double>(&mine, 1), counts, all);
  return extreme(all.data(), static_cast<Index>(all.size()), all[0], largest);
}

// True when `mine` holds on every rank (a collective for split vectors).
bool on_every_rank(N_Vector x, bool mine) {
  const RowLayout* l = layout(x);
  return l ? !l->communicator().any(!mine) : mine;
}

N_Vector_ID get_id(N_Vector) {
  return SUNDIALS_NVEC_CUSTOM;
}

void destroy(N_Vector v) {
  if (!v) return;
  delete content(v);
  v->content = nullptr;
  N_VFreeEmpty(v);
}

Content* make_content(const DistributedVector* like, DistributedVector* view) {
  auto* c = new (std::nothrow) Content;
  if (!c) return nullptr;
  if (view) {
    c->vector = view;
  } else {
    c->storage.layout = like->layout;
    c->storage.local = Eigen::VectorXd::Zero(like->local.size());
    c->vector = &c->storage;
  }
  if (c->vector->layout) c->comm = c->vector->layout->communicator().handle();
  return c;
}

// A clone owns values of the same layout. (Its "empty" form gets values too: this vector never
// borrows storage, see set_array.)
N_Vector clone(N_Vector w) {
  N_Vector v = N_VNewEmpty(w->sunctx);
  if (!v) return nullptr;
  if (N_VCopyOps(w, v) != 0) {
    N_VFreeEmpty(v);
    return nullptr;
  }
  Content* c = make_content(&vec(w), nullptr);
  if (!c) {
    N_VFreeEmpty(v);
    return nullptr;
  }
  v->content = c;
  return v;
}

void space(N_Vector v, sunindextype* real_words, sunindextype* integer_words) {
  *real_words = static_cast<sunindextype>(local_length(v));
  *integer_words = 2;
}
realtype* get_array(N_Vector v) {
  return values(v);
}
void set_array(realtype* data, N_Vector v) {
  if (data == values(v)) return;
  // Only SUNDIALS' dense and band difference-quotient Jacobians point a vector at foreign memory;
  // the stepper refuses those solvers on this vector before any work. Reaching here is a bug, and
  // returning would compute with the wrong values.
  std::fprintf(stderr,
               "rewind: N_VSetArrayPointer on a distributed N_Vector is not supported (only the "
               "matrix-free GMRES solver runs over distributed vectors)\n");
  std::abort();
}
sunindextype get_length(N_Vector v) {
  return static_cast<sunindextype>(DistributedBackend::size(vec(v)));
}
void* get_communicator(N_Vector v) {
  return layout(v) ? &content(v)->comm : nullptr;
}

void linear_sum(realtype a, N_Vector x, realtype b, N_Vector y, N_Vector z) {
  const double *xs = values(x), *ys = values(y);
  elementwise(z, [=](Index i) { return a * xs[i] + b * ys[i]; });
}
void constant(realtype c, N_Vector z) {
  elementwise(z, [=](Index) { return c; });
}
void prod(N_Vector x, N_Vector y, N_Vector z) {
  const double *xs = values(x), *ys = values(y);
  elementwise(z, [=](Index i) { return xs[i] * ys[i]; });
}
void div(N_Vector x, N_Vector y, N_Vector z) {
  const double *xs = values(x), *ys = values(y);
  elementwise(z, [=](Index i) { return xs[i] / ys[i]; });
}
void scale(realtype c, N_Vector x, N_Vector z) {
  const double* xs = values(x);
  elementwise(z, [=](Index i) { return c * xs[i]; });
}
void abs_value(N_Vector x, N_Vector z) {
  const double* xs = values(x);
  elementwise(z, [=](Index i) { return std::abs(xs[i]); });
}
void inv(N_Vector x, N_Vector z) {
  const double* xs = values(x);
  elementwise(z, [=](Index i) { return 1.0 / xs[i]; });
}
void add_const(N_Vector x, realtype b, N_Vector z) {
  const double* xs = values(x);
  elementwise(z, [=](Index i) { return xs[i] + b; });
}
void compare(realtype c, N_Vector x, N_Vector z) {
  const double* xs = values(x);
  elementwise(z, [=](Index i) { return std::abs(xs[i]) >= c ? 1.0 : 0.0; });
}

realtype dot(N_Vector x, N_Vector y) {
  const double *xs = values(x), *ys = values(y);
  return global_sum(x, [=](Index i) { return xs[i] * ys[i]; });
}
realtype max_norm(N_Vector x) {
  const double* xs = values(x);
  double m = 0.0;
  for (Index i = 0; i < local_length(x) && m == m; ++i) {
    const double a = std::abs(xs[i]);
    if (a != a || a > m) m = a;
  }
  return global_extreme(x, m, true);
}
realtype min_value(N_Vector x) {
  const double m =
      extreme(values(x), local_length(x), std::numeric_limits<double>::infinity(), false);
  return global_extreme(x, m, false);
}
realtype wrms_norm(N_Vector x, N_Vector w) {
  const double *xs = values(x), *ws = values(w);
  const double sum = global_sum(x, [=](Index i) {
    const double r = xs[i] * ws[i];
    return r * r;
  });
  return std::sqrt(sum / static_cast<double>(get_length(x)));
}
realtype wrms_norm_mask(N_Vector x, N_Vector w, N_Vector id) {
  const double *xs = values(x), *ws = values(w), *ids = values(id);
  const double sum = global_sum(x, [=](Index i) {
    const double r = ids[i] > 0.0 ? xs[i] * ws[i] : 0.0;
    return r * r;
  });
  return std::sqrt(sum / static_cast<double>(get_length(x)));
}
realtype wl2_norm(N_Vector x, N_Vector w) {
  const double *xs = values(x), *ws = values(w);
  return std::sqrt(global_sum(x, [=](Index i) {
    const double r = xs[i] * ws[i];
    return r * r;
  }));
}
realtype l1_norm(N_Vector x) {
  const double* xs = values(x);
  return global_sum(x, [=](Index i) { return std::abs(xs[i]); });
}
booleantype inv_test(N_Vector x, N_Vector z) {
  const double* xs = values(x);
  double* zs = values(z);
  bool ok = true;
  for (Index i = 0; i < local_length(x); ++i) {
    if (xs[i] == 0.0)
      ok = false;
    else
      zs[i] = 1.0 / xs[i];
  }
  return on_every_rank(x, ok) ? SUNTRUE : SUNFALSE;
}
// Constraint codes (SUNDIALS): 2: x > 0, 1: x ≥ 0, −1: x ≤ 0, −2: x < 0; m_i = 1 where violated.
booleantype constr_mask(N_Vector c, N_Vector x, N_Vector m) {
  const double *cs = values(c), *xs = values(x);
  double* ms = values(m);
  bool ok = true;
  for (Index i = 0; i < local_length(x); ++i) {
    const double ci = cs[i], xi = xs[i];
    bool violated = false;
    if (ci == 2.0)
      violated = !(xi > 0.0);
    else if (ci == 1.0)
      violated = !(xi >= 0.0);
    else if (ci == -1.0)
      violated = !(xi <= 0.0);
    else if (ci == -2.0)
      violated = !(xi < 0.0);
    ms[i] = violated ? 1.0 : 0.0;
    ok = ok && !violated;
  }
  return on_every_rank(x, ok) ? SUNTRUE : SUNFALSE;
}
realtype min_quotient(N_Vector num, N_Vector denom) {
  const double *ns = values(num), *ds = values(denom);
  double q = BIG_REAL;  // SUNDIALS' "no quotient"
  for (Index i = 0; i < local_length(num); ++i)
    if (ds[i] != 0.0) q = std::min(q, ns[i] / ds[i]);
  return global_extreme(num, q, false);
}

// z = Σ_j c_j x_j, element by element in term order (z may be one of the x_j).
int linear_combination(int count, realtype* c, N_Vector* x, N_Vector z) {
  thread_local std::vector<const double*> terms;
  terms.resize(static_cast<std::size_t>(count));
  for (int j = 0; j < count; ++j) terms[static_cast<std::size_t>(j)] = values(x[j]);
  const double* const* xs = terms.data();
  elementwise(z, [=](Index i) {
    double s = c[0] * xs[0][i];
    for (int j = 1; j < count; ++j) s += c[j] * xs[j][i];
    return s;
  });
  return 0;
}
int scale_add_multi(int count, realtype* a, N_Vector x, N_Vector* y, N_Vector* z) {
  for (int j = 0; j < count; ++j) {
    const double *xs = values(x), *ys = values(y[j]);
    const double aj = a[j];
    elementwise(z[j], [=](Index i) { return aj * xs[i] + ys[i]; });
  }
  return 0;
}

N_Vector new_vector(SUNContext context) {
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
  // Left to SUNDIALS' defaults, which loop over the operations above (so the same reductions in
  // the same order on every rank): N_VDotProdMulti (SPGMR's classical Gram–Schmidt only; the
  // default modified Gram–Schmidt calls N_VDotProd) and the vector-array operations (CVODES's
  // forward sensitivities, unused here). The "local" reduction kernels (for SUNDIALS' MPI
  // many-vector) are absent: no SUNDIALS module rewind uses calls them.
  return v;
}

}  // namespace

N_Vector make_distributed_nvector_view(DistributedVector& v, SUNContext context) {
  N_Vector n = new_vector(context);
  Content* c = make_content(nullptr, &v);
  if (!c) {
    N_VFreeEmpty(n);
    throw std::bad_alloc();
  }
  n->content = c;
  return n;
}

N_Vector make_distributed_nvector(const DistributedVector& like, SUNContext context) {
  N_Vector n = new_vector(context);
  Content* c = make_content(&like, nullptr);
  if (!c) {
    N_VFreeEmpty(n);
    throw std::bad_alloc();
  }
  n->content = c;
  return n;
}

DistributedVector* distributed_vector(N_Vector v) {
  return is_distributed_nvector(v) ? content(v)->vector : nullptr;
}

bool is_distributed_nvector(N_Vector v) {
  return v && v->ops && v->ops->nvclone == clone && v->content;
}

}  // namespace rwd::sundials
