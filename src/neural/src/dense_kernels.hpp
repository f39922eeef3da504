// src/neural/src/dense_kernels.hpp — the two loop kernels under rwd::nn::Mlp: the column-by-column
// matrix product (forward pass and the cotangent's way down) and the per-sample outer products
// (the parameter gradient with a copy of θ per sample).
//
// Both fix the arithmetic of every output entry — one chain of products and additions in a
// stated order, no fused multiply-add — and block only the loops around it, so each entry has
// the same bits whatever the batch size, wherever its column sits in the batch and whichever
// instruction set runs them (the baseline and AVX2 versions of REWIND_SIMD_CLONES). That is what
// lets a minibatch split across processes give the bits of one process. Private to src/neural/src/.
#pragma once

#include <cstddef>

#include "rewind/types.hpp"

namespace rwd::nn::dense {

// out.col(j) = init + Σ_p x(p, j) · A.col(p) for the batch's columns j, with A m × n (column-
// major, leading dimension m), x n × batch and out m × batch (leading dimensions ldx, ldo); init
// has m values or is null (the chain then starts from +0.0). Each output entry is computed from
// its own column alone, in an order fixed by the shape (m, n) — Eigen's product promises no such
// thing: its kernels block and order the work by the batch too, and a one-column product takes
// another path:
// - m ≥ 8, or n < 8, or m·n > 2048: start + x(0, j)·A(i, 0) + x(1, j)·A(i, 1) + … added left to
//   right, p ascending;
// - otherwise (few rows: a dot product per entry): eight partial sums s_q of the terms with
//   p ≡ q (mod 8), p < n₈ = n − n mod 8, each p ascending; then
//   ((s_0 + s_4) + (s_1 + s_5)) + ((s_2 + s_6) + (s_3 + s_7)), the terms p ≥ n₈ added left to
//   right, and start + that sum.
void column_products(const double* A, Index m, Index n, const double* x, Index ldx, Index batch,
                     const double* init, double* out, Index ldo);

// dW (m × n, column-major, then the m values of db right after it) += Σ_k g_k a_kᵀ and
// db += Σ_k g_k, k = 0 … calls − 1, with call k's g_k (m values) at g + k·ldg and a_k (n values)
// at a + k·lda: every entry gets one product (or g value) added per call, in call order — the
// sequence a call-by-call accumulation performs, entry by entry.
void add_outer_products(std::size_t calls, const double* g, Index ldg, const double* a, Index lda,
                        Index m, Index n, double* dW);

}  // namespace rwd::nn::dense
