// integrators/src/sparse_lu.cpp — see rewind/integrators/sparse_lu.hpp.
#include "rewind/integrators/sparse_lu.hpp"

#include <cstddef>
#include <utility>

#include "rewind/error.hpp"

#ifdef REWIND_HAVE_KLU
#include <klu.h>
#endif

namespace rwd {

void check_compressed_rows(Index n, std::span<const Index> row_starts,
                           std::span<const Index> columns, std::string_view what) {
  const auto fail = [what](auto... parts) { detail::fail<InvalidArgument>(what, " ", parts...); };
  if (n < 1) fail("is for ", n, " unknowns; it needs at least one");
  if (static_cast<Index>(row_starts.size()) != n + 1)
    fail("has ", row_starts.size(), " row starts; it needs n + 1 = ", n + 1);
  const Index nonzeros = static_cast<Index>(columns.size());
  if (row_starts.front() != 0 || row_starts.back() != nonzeros)
    fail("must start its rows at 0 and end them at its ", nonzeros, " columns");
  for (Index r = 0; r < n; ++r) {
    const Index begin = row_starts[static_cast<std::size_t>(r)];
    const Index end = row_starts[static_cast<std::size_t>(r + 1)];
    if (end < begin || end > nonzeros) fail("has row ", r, " ending before it starts");
    for (Index i = begin; i < end; ++i) {
      const Index column = columns[static_cast<std::size_t>(i)];
      if (column < 0 || column >= n)
        fail("has column ", column, " in row ", r, "; columns are 0 … ", n - 1);
      if (i > begin && column <= columns[static_cast<std::size_t>(i - 1)])
        fail("has row ", r, "'s columns out of order; they must be ascending and distinct");
    }
  }
}

#ifdef REWIND_HAVE_KLU

// KLU reads compressed columns; it is given the compressed rows of A, which are A's transpose's
// columns. So KLU factors Aᵀ: A x = b is its transposed solve, Aᵀ x = b its plain one.
struct SparseLu::Klu {
  Index n = 0;
  std::vector<SuiteSparse_long> starts, indices;
  std::vector<double> values;
  klu_l_common common{};
  klu_l_symbolic* symbolic = nullptr;
  klu_l_numeric* numeric = nullptr;

  ~Klu() {
    if (numeric) klu_l_free_numeric(&numeric, &common);
    if (symbolic) klu_l_free_symbolic(&symbolic, &common);
  }
};

SparseLu::SparseLu(Index n, std::span<const Index> row_starts, std::span<const Index> columns)
    : klu_(std::make_unique<Klu>()) {
  check_compressed_rows(n, row_starts, columns, "SparseLu: the pattern");
  Klu& k = *klu_;
  k.n = n;
  k.starts.assign(row_starts.begin(), row_starts.end());
  k.indices.assign(columns.begin(), columns.end());
  k.values.assign(columns.size(), 0.0);
  klu_l_defaults(&k.common);
  k.common.ordering = 0;  // AMD
  k.common.halt_if_singular = 1;
  k.symbolic = klu_l_analyze(n, k.starts.data(), k.indices.data(), &k.common);
  if (!k.symbolic)
    detail::fail<Error>("SparseLu: KLU could not analyse the ", n, " x ", n, " pattern (status ",
                        k.common.status, ")");
}

bool SparseLu::factor(double singular) {
  Klu& k = *klu_;
  if (k.numeric) klu_l_free_numeric(&k.numeric, &k.common);
  k.numeric =
      klu_l_factor(k.starts.data(), k.indices.data(), k.values.data(), k.symbolic, &k.common);
  if (!k.numeric) {
    if (k.common.status == KLU_SINGULAR) return false;
    detail::fail<Error>("SparseLu: KLU's factorisation failed (status ", k.common.status, ")");
  }
  if (!klu_l_rcond(k.symbolic, k.numeric, &k.common))
    detail::fail<Error>("SparseLu: KLU's condition estimate failed (status ", k.common.status, ")");
  return k.common.rcond > singular;
}

void SparseLu::solve(double* x, bool transposed) {
  Klu& k = *klu_;
  if (!k.numeric) detail::fail<Error>("SparseLu: solve before a successful factor()");
  const bool ok = transposed ? klu_l_solve(k.symbolic, k.numeric, k.n, 1, x, &k.common)
                             : klu_l_tsolve(k.symbolic, k.numeric, k.n, 1, x, &k.common);
  if (!ok) detail::fail<Error>("SparseLu: KLU's solve failed (status ", k.common.status, ")");
}

Index SparseLu::size() const {
  return klu_->n;
}
Index SparseLu::nonzeros() const {
  return static_cast<Index>(klu_->values.size());
}
std::span<double> SparseLu::values() {
  return klu_->values;
}

#else

struct SparseLu::Klu {};

SparseLu::SparseLu(Index n, std::span<const Index> row_starts, std::span<const Index> columns) {
  check_compressed_rows(n, row_starts, columns, "SparseLu: the pattern");
  detail::fail<InvalidArgument>(
      "SparseLu: rewind was built without KLU (SuiteSparse's sparse LU): install "
      "libsuitesparse-dev (scripts/install_dependencies.sh) and configure again with "
      "REWIND_WITH_KLU=ON, or use the band or dense solver");
}
bool SparseLu::factor(double) {
  return false;
}
void SparseLu::solve(double*, bool) {}
Index SparseLu::size() const {
  return 0;
}
Index SparseLu::nonzeros() const {
  return 0;
}
std::span<double> SparseLu::values() {
  return {};
}

#endif

SparseLu::~SparseLu() = default;
SparseLu::SparseLu(SparseLu&&) noexcept = default;
SparseLu& SparseLu::operator=(SparseLu&&) noexcept = default;

}  // namespace rwd
