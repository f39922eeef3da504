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
//
// Under AddressSanitizer or ThreadSanitizer (scripts/sanitize.sh) the sanitizer owns malloc and
// free: a malloc of our own that hands out glibc's blocks would have them freed by the sanitizer's
// free, which reports a bad free. There the counter is not defined and every test of the
// executable is skipped, saying why (a global GoogleTest environment skips them all, so a test
// added later cannot forget to). The ordinary build runs them.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>

#include "support/sanitizer.hpp"

namespace {
std::atomic<long> g_allocations{0};
}

#if REWIND_TEST_SANITIZED_ALLOCATOR
namespace {
class SkipUnderSanitizer : public ::testing::Environment {
 public:
  void SetUp() override {
    GTEST_SKIP() << "malloc is the sanitizer's in this build: the allocation counter "
                    "(support/malloc_counter.hpp) interposes malloc and cannot run here; "
                    "the ordinary build runs these tests";
  }
};
[[maybe_unused]] ::testing::Environment* const g_skip_under_sanitizer =
    ::testing::AddGlobalTestEnvironment(new SkipUnderSanitizer);
}  // namespace
#else
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
#endif
