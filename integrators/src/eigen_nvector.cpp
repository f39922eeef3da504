// integrators/src/eigen_nvector.cpp — see rewind/integrators/eigen_nvector.hpp.
#include "rewind/integrators/eigen_nvector.hpp"

#include <algorithm>
#include <cmath>
#include <new>

namespace rwd::sundials {
namespace {

using Map = Eigen::Map<Eigen::VectorXd>;
using ConstMap = Eigen::Map<const Eigen::VectorXd>;

struct Content {
  Eigen::VectorXd storage;  // the vector's own values
  double* data =
      nullptr;  // where its values are: storage.data(), or elsewhere after SetArrayPointer
  Index length = 0;
};

Content* content(N_Vector v) {
  return static_cast<Content*>(v->content);
}
Map values(N_Vector v) {
  return Map(content(v)->data, content(v)->length);
}
ConstMap cvalues(N_Vector v) {
  return ConstMap(content(v)->data, content(v)->length);
}

N_Vector_ID get_id(N_Vector) {
  return SUNDIALS_NVEC_SERIAL;
}  // array-backed; see the header

void destroy(N_Vector v) {
  if (!v) return;
  delete content(v);
  v->content = nullptr;
  N_VFreeEmpty(v);
}

N_Vector clone_empty(N_Vector w) {
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
  c->length = content(w)->length;
  v->content = c;
  return v;
}

N_Vector clone(N_Vector w) {
  N_Vector v = clone_empty(w);
  if (!v) return nullptr;
  Content* c = content(v);
  c->storage.resize(c->length);
  c->data = c->storage.data();
  return v;
}

void space(N_Vector v, sunindextype* real_words, sunindextype* integer_words) {
  *real_words = static_cast<sunindextype>(content(v)->length);
  *integer_words = 1;
}
realtype* get_array(N_Vector v) {
  return content(v)->data;
}
void set_array(realtype* data, N_Vector v) {
  content(v)->data = data;
}
sunindextype get_length(N_Vector v) {
  return static_cast<sunindextype>(content(v)->length);
}
void* get_communicator(N_Vector) {
  return nullptr;
}

// z = a x + b y, in the forms CVODES uses most, without temporaries (z may alias x or y).
void linear_sum(realtype a, N_Vector x, realtype b, N_Vector y, N_Vector z) {
  values(z) = a * cvalues(x) + b * cvalues(y);
}
void constant(realtype c, N_Vector z) {
  values(z).setConstant(c);
}
void prod(N_Vector x, N_Vector y, N_Vector z) {
  values(z) = cvalues(x).cwiseProduct(cvalues(y));
}
void div(N_Vector x, N_Vector y, N_Vector z) {
  values(z) = cvalues(x).cwiseQuotient(cvalues(y));
}
void scale(realtype c, N_Vector x, N_Vector z) {
  values(z) = c * cvalues(x);
}
void abs_value(N_Vector x, N_Vector z) {
  values(z) = cvalues(x).cwiseAbs();
}
void inv(N_Vector x, N_Vector z) {
  values(z) = cvalues(x).cwiseInverse();
}
void add_const(N_Vector x, realtype b, N_Vector z) {
  values(z) = cvalues(x).array() + b;
}
realtype dot(N_Vector x, N_Vector y) {
  return cvalues(x).dot(cvalues(y));
}
realtype max_norm(N_Vector x) {
  return content(x)->length ? cvalues(x).cwiseAbs().maxCoeff() : 0.0;
}
realtype wrms_norm(N_Vector x, N_Vector w) {
  return std::sqrt(cvalues(x).cwiseProduct(cvalues(w)).squaredNorm() /
                   static_cast<double>(content(x)->length));
}
realtype wrms_norm_mask(N_Vector x, N_Vector w, N_Vector id) {
  const auto mask = (cvalues(id).array() > 0.0).cast<double>();
  const double sum = (cvalues(x).array() * cvalues(w).array() * mask).square().sum();
  return std::sqrt(sum / static_cast<double>(content(x)->length));
}
realtype min_value(N_Vector x) {
  return cvalues(x).minCoeff();
}
realtype wl2_norm(N_Vector x, N_Vector w) {
  return cvalues(x).cwiseProduct(cvalues(w)).norm();
}
realtype l1_norm(N_Vector x) {
  return cvalues(x).cwiseAbs().sum();
}
void compare(realtype c, N_Vector x, N_Vector z) {
  values(z) = (cvalues(x).array().abs() >= c).cast<double>().matrix();
}
booleantype inv_test(N_Vector x, N_Vector z) {
  const auto in = cvalues(x);
  auto out = values(z);
  bool ok = true;
  for (Index i = 0; i < content(x)->length; ++i) {
    if (in[i] == 0.0) {
      ok = false;
    } else {
      out[i] = 1.0 / in[i];
    }
  }
  return ok ? SUNTRUE : SUNFALSE;
}
// Constraint codes (SUNDIALS): 2: x > 0, 1: x ≥ 0, −1: x ≤ 0, −2: x < 0; m_i = 1 where violated.
booleantype constr_mask(N_Vector c, N_Vector x, N_Vector m) {
  const auto cv = cvalues(c), xv = cvalues(x);
  auto mv = values(m);
  bool ok = true;
  for (Index i = 0; i < content(x)->length; ++i) {
    const double ci = cv[i], xi = xv[i];
    bool violated = false;
    if (ci == 2.0)
      violated = !(xi > 0.0);
    else if (ci == 1.0)
      violated = !(xi >= 0.0);
    else if (ci == -1.0)
      violated = !(xi <= 0.0);
    else if (ci == -2.0)
      violated = !(xi < 0.0);
    mv[i] = violated ? 1.0 : 0.0;
    ok = ok && !violated;
  }
  return ok ? SUNTRUE : SUNFALSE;
}
realtype min_quotient(N_Vector num, N_Vector denom) {
  const auto n = cvalues(num), d = cvalues(denom);
  double q = 1.0e300;  // BIG_REAL of SUNDIALS: "no quotient"
  for (Index i = 0; i < content(num)->length; ++i)
    if (d[i] != 0.0) q = std::min(q, n[i] / d[i]);
  return q;
}

// Fused: z = Σ c_i x_i (CVODES's predictor and corrector combinations).
int linear_combination(int count, realtype* c, N_Vector* x, N_Vector z) {
  auto out = values(z);
  if (count == 1) {
    out = c[0] * cvalues(x[0]);
    return 0;
  }
  // z may be x[0]: start from it in place.
  if (x[0] == z) {
    out *= c[0];
  } else {
    out = c[0] * cvalues(x[0]);
  }
  for (int i = 1; i < count; ++i) out += c[i] * cvalues(x[i]);
  return 0;
}
int scale_add_multi(int count, realtype* a, N_Vector x, N_Vector* y, N_Vector* z) {
  for (int i = 0; i < count; ++i) values(z[i]) = a[i] * cvalues(x) + cvalues(y[i]);
  return 0;
}
int dot_prod_multi(int count, N_Vector x, N_Vector* y, realtype* d) {
  for (int i = 0; i < count; ++i) d[i] = cvalues(x).dot(cvalues(y[i]));
  return 0;
}

}  // namespace

N_Vector make_eigen_nvector(Index n, SUNContext context) {
  N_Vector v = N_VNewEmpty(context);
  if (!v) throw std::bad_alloc();
  N_Vector_Ops ops = v->ops;
  ops->nvgetvectorid = get_id;
  ops->nvclone = clone;
  ops->nvcloneempty = clone_empty;
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
  auto* c = new Content;
  c->length = n;
  c->storage = Eigen::VectorXd::Zero(n);
  c->data = c->storage.data();
  v->content = c;
  return v;
}

N_Vector make_eigen_nvector_view(double* data, Index n, SUNContext context) {
  N_Vector v = make_eigen_nvector(0, context);
  content(v)->length = n;
  content(v)->data = data;
  return v;
}

Eigen::Map<Eigen::VectorXd> map(N_Vector v) {
  return values(v);
}

const Eigen::VectorXd* owned(N_Vector v) {
  const Content* c = content(v);
  return c->data == c->storage.data() && c->storage.size() == c->length ? &c->storage : nullptr;
}
Eigen::VectorXd* owned_mutable(N_Vector v) {
  Content* c = content(v);
  return c->data == c->storage.data() && c->storage.size() == c->length ? &c->storage : nullptr;
}

bool is_eigen_nvector(N_Vector v) {
  return v && v->ops && v->ops->nvclone == clone;
}

}  // namespace rwd::sundials
