// src/neural/src/dense_kernels.cpp — see dense_kernels.hpp.
//
// Register blocking. A plain loop over a column of outputs loads and stores every output once per
// term, so the products ran at the speed of the first-level cache rather than of the arithmetic
// (about a third of a 64-wide layer's peak). Here a block of outputs stays in registers while all
// its terms are added: 8 rows × 4 columns of dW or of column_products' output. Blocking changes
// which entries are worked on together, never the chain of one entry.
//
// Four-double vectors are GCC's generic vectors: one AVX2 register in the AVX2 clone, two SSE2
// registers in the baseline one, the same IEEE multiplications and additions either way.
// Multiplication and addition stay separate operations: neither target enables FMA.
#include "dense_kernels.hpp"

#include "rewind/simd_clones.hpp"

namespace rwd::nn::dense {
namespace {

using Vec4 = double __attribute__((vector_size(4 * sizeof(double))));

// Unaligned loads and stores (memcpy of 32 bytes compiles to one move).
#define REWIND_LOAD4(v, p) __builtin_memcpy(&(v), (p), sizeof(Vec4))
#define REWIND_STORE4(p, v) __builtin_memcpy((p), &(v), sizeof(Vec4))

// column_products' outputs for columns [j, j + C) and rows [i, i + 8): 2 vectors per column in
// registers, p ascending.
template <int C>
[[gnu::always_inline]] inline void product_block_8(const double* __restrict A, Index m, Index n,
                                                   const double* __restrict xj, Index ldx,
                                                   const double* __restrict init, Index i,
                                                   double* __restrict oj, Index ldo) {
  Vec4 start0 = {0.0, 0.0, 0.0, 0.0}, start1 = start0;
  if (init != nullptr) {
    REWIND_LOAD4(start0, init + i);
    REWIND_LOAD4(start1, init + i + 4);
  }
  Vec4 lo[C], hi[C];
  for (int c = 0; c < C; ++c) {
    lo[c] = start0;
    hi[c] = start1;
  }
  const double* a = A + i;
  for (Index p = 0; p < n; ++p, a += m) {
    Vec4 a0, a1;
    REWIND_LOAD4(a0, a);
    REWIND_LOAD4(a1, a + 4);
    for (int c = 0; c < C; ++c) {
      const double xc = xj[c * ldx + p];
      lo[c] += xc * a0;
      hi[c] += xc * a1;
    }
  }
  for (int c = 0; c < C; ++c) {
    REWIND_STORE4(oj + c * ldo + i, lo[c]);
    REWIND_STORE4(oj + c * ldo + i + 4, hi[c]);
  }
}

// The same for one row i (the rows past the last whole block of 8).
template <int C>
[[gnu::always_inline]] inline void product_row(const double* __restrict A, Index m, Index n,
                                               const double* __restrict xj, Index ldx,
                                               const double* __restrict init, Index i,
                                               double* __restrict oj, Index ldo) {
  double acc[C];
  for (int c = 0; c < C; ++c) acc[c] = init != nullptr ? init[i] : 0.0;
  const double* a = A + i;
  for (Index p = 0; p < n; ++p, a += m)
    for (int c = 0; c < C; ++c) acc[c] += xj[c * ldx + p] * *a;
  for (int c = 0; c < C; ++c) oj[c * ldo + i] = acc[c];
}

template <int C>
[[gnu::always_inline]] inline void product_columns(const double* A, Index m, Index n,
                                                   const double* xj, Index ldx, const double* init,
                                                   double* oj, Index ldo) {
  Index i = 0;
  for (; i + 8 <= m; i += 8) product_block_8<C>(A, m, n, xj, ldx, init, i, oj, ldo);
  for (; i < m; ++i) product_row<C>(A, m, n, xj, ldx, init, i, oj, ldo);
}

// Layers with fewer than 8 outputs (a network's output layer, or the cotangent's way down to a
// few inputs) have no whole 8-row block: product_row ran each entry as one chain of n dependent
// additions, one term at a time. For them the entries are dot products instead, over rows of A
// that column_products copies out contiguous (At: n × m, column i = row i of A), four terms per
// vector operation.
constexpr Index kMaxDotRows = 8;          // m below this (and n at least 8) takes the dot path
constexpr Index kDotBufferValues = 2048;  // m·n up to this: A's rows copied to the stack (16 KiB)

// out(i, j) for rows [i, i + R) of one column j, as a dot product of row i of A (contiguous in
// At) with x's column; the order of one entry is stated at column_products (dense_kernels.hpp).
template <int R>
[[gnu::always_inline]] inline void dot_rows(const double* __restrict At, Index n,
                                            const double* __restrict xj,
                                            const double* __restrict init, Index i,
                                            double* __restrict oj) {
  Vec4 lo[R], hi[R];
  for (int r = 0; r < R; ++r) lo[r] = hi[r] = Vec4{0.0, 0.0, 0.0, 0.0};
  const Index n8 = n - n % 8;
  for (Index p = 0; p < n8; p += 8) {
    Vec4 x0, x1;
    REWIND_LOAD4(x0, xj + p);
    REWIND_LOAD4(x1, xj + p + 4);
    for (int r = 0; r < R; ++r) {
      Vec4 a0, a1;
      REWIND_LOAD4(a0, At + (i + r) * n + p);
      REWIND_LOAD4(a1, At + (i + r) * n + p + 4);
      lo[r] += a0 * x0;
      hi[r] += a1 * x1;
    }
  }
  for (int r = 0; r < R; ++r) {
    const Vec4 v = lo[r] + hi[r];
    double dot = (v[0] + v[1]) + (v[2] + v[3]);
    const double* a = At + (i + r) * n;
    for (Index p = n8; p < n; ++p) dot += a[p] * xj[p];
    oj[i + r] = (init != nullptr ? init[i + r] : 0.0) + dot;
  }
}

// All m < 8 rows of columns [0, batch), from A copied row by row into At.
[[gnu::always_inline]] inline void dot_columns(const double* At, Index m, Index n, const double* x,
                                               Index ldx, Index batch, const double* init,
                                               double* out, Index ldo) {
  for (Index j = 0; j < batch; ++j) {
    const double* xj = x + j * ldx;
    double* oj = out + j * ldo;
    Index i = 0;
    for (; i + 4 <= m; i += 4) dot_rows<4>(At, n, xj, init, i, oj);
    switch (m - i) {
      case 3:
        dot_rows<3>(At, n, xj, init, i, oj);
        break;
      case 2:
        dot_rows<2>(At, n, xj, init, i, oj);
        break;
      case 1:
        dot_rows<1>(At, n, xj, init, i, oj);
        break;
      default:
        break;
    }
  }
}

// add_outer_products for columns [j, j + C) of dW and rows [i, i + 8): the 8 × C entries in
// registers while every call adds its product.
template <int C>
[[gnu::always_inline]] inline void outer_block_8(std::size_t calls, const double* __restrict g,
                                                 Index ldg, const double* __restrict a, Index lda,
                                                 Index m, Index i, Index j, double* __restrict dW) {
  Vec4 lo[C], hi[C];
  for (int c = 0; c < C; ++c) {
    REWIND_LOAD4(lo[c], dW + (j + c) * m + i);
    REWIND_LOAD4(hi[c], dW + (j + c) * m + i + 4);
  }
  const double* gk = g + i;
  const double* ak = a + j;
  for (std::size_t k = 0; k < calls; ++k, gk += ldg, ak += lda) {
    Vec4 g0, g1;
    REWIND_LOAD4(g0, gk);
    REWIND_LOAD4(g1, gk + 4);
    for (int c = 0; c < C; ++c) {
      const double acj = ak[c];
      lo[c] += g0 * acj;
      hi[c] += g1 * acj;
    }
  }
  for (int c = 0; c < C; ++c) {
    REWIND_STORE4(dW + (j + c) * m + i, lo[c]);
    REWIND_STORE4(dW + (j + c) * m + i + 4, hi[c]);
  }
}

// Row i of dW, columns [j, j + 8) along the row: dW's entries are m apart there, each call's a
// is contiguous.
[[gnu::always_inline]] inline void outer_row_8(std::size_t calls, const double* __restrict g,
                                               Index ldg, const double* __restrict a, Index lda,
                                               Index m, Index i, Index j, double* __restrict dW) {
  double* row = dW + j * m + i;
  Vec4 lo = {row[0], row[m], row[2 * m], row[3 * m]};
  Vec4 hi = {row[4 * m], row[5 * m], row[6 * m], row[7 * m]};
  const double* ak = a + j;
  for (std::size_t k = 0; k < calls; ++k, ak += lda) {
    Vec4 a0, a1;
    REWIND_LOAD4(a0, ak);
    REWIND_LOAD4(a1, ak + 4);
    const double gki = g[k * ldg + i];
    lo += gki * a0;
    hi += gki * a1;
  }
  for (int c = 0; c < 4; ++c) {
    row[c * m] = lo[c];
    row[(c + 4) * m] = hi[c];
  }
}

// One entry (i, j) of dW, every call's product in order.
[[gnu::always_inline]] inline void outer_entry(std::size_t calls, const double* __restrict g,
                                               Index ldg, const double* __restrict a, Index lda,
                                               Index m, Index i, Index j, double* __restrict dW) {
  double acc = dW[j * m + i];
  for (std::size_t k = 0; k < calls; ++k) acc += g[k * ldg + i] * a[k * lda + j];
  dW[j * m + i] = acc;
}

}  // namespace

REWIND_SIMD_CLONES
void column_products(const double* A, Index m, Index n, const double* x, Index ldx, Index batch,
                     const double* init, double* out, Index ldo) {
  if (m < kMaxDotRows && n >= 8 && m * n <= kDotBufferValues) {
    double At[kDotBufferValues];
    for (Index p = 0; p < n; ++p)
      for (Index i = 0; i < m; ++i) At[i * n + p] = A[p * m + i];
    dot_columns(At, m, n, x, ldx, batch, init, out, ldo);
    return;
  }
  Index j = 0;
  for (; j + 4 <= batch; j += 4)
    product_columns<4>(A, m, n, x + j * ldx, ldx, init, out + j * ldo, ldo);
  for (; j < batch; ++j) product_columns<1>(A, m, n, x + j * ldx, ldx, init, out + j * ldo, ldo);
}

REWIND_SIMD_CLONES
void add_outer_products(std::size_t calls, const double* g, Index ldg, const double* a, Index lda,
                        Index m, Index n, double* dW) {
  if (calls == 0) return;
  if (m >= 8) {  // down the columns of dW: whole vectors
    Index i = 0;
    for (; i + 8 <= m; i += 8) {
      Index j = 0;
      for (; j + 4 <= n; j += 4) outer_block_8<4>(calls, g, ldg, a, lda, m, i, j, dW);
      for (; j < n; ++j) outer_block_8<1>(calls, g, ldg, a, lda, m, i, j, dW);
    }
    for (; i < m; ++i)
      for (Index j = 0; j < n; ++j) outer_entry(calls, g, ldg, a, lda, m, i, j, dW);
  } else {  // few rows (a network's output layer): along the rows
    for (Index i = 0; i < m; ++i) {
      Index j = 0;
      for (; j + 8 <= n; j += 8) outer_row_8(calls, g, ldg, a, lda, m, i, j, dW);
      for (; j < n; ++j) outer_entry(calls, g, ldg, a, lda, m, i, j, dW);
    }
  }
  // db, right after dW: each entry plus every call's g, in call order.
  double* db = dW + m * n;
  for (Index i = 0; i < m; ++i) {
    double acc = db[i];
    for (std::size_t k = 0; k < calls; ++k) acc += g[k * ldg + i];
    db[i] = acc;
  }
}

#undef REWIND_LOAD4
#undef REWIND_STORE4

}  // namespace rwd::nn::dense
