// src/neural/simd_clones.hpp — REWIND_SIMD_CLONES: compile a loop kernel for AVX2 as well as for
// the build's baseline, the CPU picking one when the program starts (GCC's target_clones, x86-64
// with glibc's ifunc). The network's products and activations are element-wise products and sums
// (no fused multiply-add: "avx2" does not enable FMA, and the kernels are plain loops), so both
// versions give the same bits — four doubles per instruction instead of two. Elsewhere (other
// compilers and targets) it is empty.
#pragma once

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && \
    !defined(__AVX2__) && !defined(__SANITIZE_ADDRESS__)
#define REWIND_SIMD_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define REWIND_SIMD_CLONES
#endif
