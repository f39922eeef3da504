// tests/support/malloc_counter.hpp — counts every heap allocation of the test executable that
// includes it (exactly one translation unit per executable: it defines malloc).
//
//   #include "support/malloc_counter.hpp"
//   const long before = g_allocations.load();
//   … the code that must not allocate …
//   EXPECT_EQ(g_allocations.load(), before);
//
// Eigen allocates through malloc, not operator new, so the count is taken at malloc itself:
// glibc lets the executable interpose malloc and reach the real one as __libc_malloc.
#pragma once

#include <atomic>
#include <cstddef>

namespace {
std::atomic<long> g_allocations{0};
}

extern "C" {
void* __libc_malloc(std::size_t size);
void* __libc_calloc(std::size_t n, std::size_t size);
void* __libc_realloc(void* p, std::size_t size);
void* malloc(std::size_t size) {
  ++g_allocations;
  return __libc_malloc(size);
}
void* calloc(std::size_t n, std::size_t size) {
  ++g_allocations;
  return __libc_calloc(n, size);
}
void* realloc(void* p, std::size_t size) {
  ++g_allocations;
  return __libc_realloc(p, size);
}
}
