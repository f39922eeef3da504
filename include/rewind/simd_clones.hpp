// rewind/simd_clones.hpp — REWIND_SIMD_CLONES: compile a loop kernel for AVX2 as well as for the
// build's baseline, the CPU picking one when the program starts (GCC's target_clones, x86-64 with
// glibc's ifunc). Elsewhere (other compilers and targets, and under AddressSanitizer or
// ThreadSanitizer) it is empty: the sanitizers instrument the clones' resolver, which the dynamic
// loader runs before their runtime is set up (under TSan every program linking such a kernel
// crashed in column_products' resolver before main).
// Under nvcc (whose front end parses the host code too) it is empty as well.
// A kernel marked with it must give the same bits in both versions: the neural network's products
// and activations, the problems' stencils, the backend's linear combinations and its lane sums are
// element-wise products and sums in a fixed order ("avx2" does not enable fused multiply-add, so
// nothing is contracted), four doubles per instruction instead of two; the stage-aware planner's
// scans are integer additions and minima, eight 32-bit integers per instruction instead of four.
// Tests: tests/problems/simd_clone_bits_test.cpp runs each marked ODE kernel against scalar code.
#pragma once

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && \
    !defined(__AVX2__) && !defined(__CUDACC__) && !defined(__SANITIZE_ADDRESS__) &&          \
    !defined(__SANITIZE_THREAD__)
#define REWIND_SIMD_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define REWIND_SIMD_CLONES
#endif

// REWIND_SIMD_CLONES_AVX512: the same, plus an x86-64-v4 (AVX-512) version, for loops of 64-bit
// integer multiplications, which AVX-512DQ has and AVX2 must emulate (the drift fingerprint's
// hash), and for loops that run out of AVX2's 16 vector registers: Gray–Scott's vjp keeps 16
// partial sums and 6 constants live and spilled to the stack in AVX2, not with AVX-512's 32
// registers (its rhs and Lorenz-96's loops were slower in AVX-512 and stay AVX2; the timings are
// in bench/results/code_comments.md). x86-64-v4 includes FMA, so contraction is switched off for
// these functions: the same bits again. GCC 12 is the first to dispatch on x86-64-v4.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12 && defined(__x86_64__) && \
    defined(__linux__) && !defined(__AVX2__) && !defined(__CUDACC__) &&                  \
    !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define REWIND_SIMD_CLONES_AVX512 \
  __attribute__((target_clones("arch=x86-64-v4", "avx2", "default"), optimize("fp-contract=off")))
#else
#define REWIND_SIMD_CLONES_AVX512 REWIND_SIMD_CLONES
#endif

// REWIND_IVDEP, before a loop: its iterations do not depend on each other through memory (a
// pointer may equal another, never point a few elements into it), so GCC vectorises it without
// a run-time overlap check. Empty for other compilers (and nvcc's front end), which then check.
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)
#define REWIND_IVDEP _Pragma("GCC ivdep")
#else
#define REWIND_IVDEP
#endif
