// tests/support/sanitizer.hpp — whether this translation unit is built with a sanitizer that
// replaces the allocator (AddressSanitizer, ThreadSanitizer, MemorySanitizer: REWIND_SANITIZE,
// REWIND_FUZZ). UndefinedBehaviorSanitizer alone leaves malloc alone and does not count.
//
//   #include "support/sanitizer.hpp"
//   if (rwd::test::kSanitizedAllocator) GTEST_SKIP() << "why";
#pragma once

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)  // g++
#define REWIND_TEST_SANITIZED_ALLOCATOR 1
#elif defined(__has_feature)  // clang
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define REWIND_TEST_SANITIZED_ALLOCATOR 1
#endif
#endif
#ifndef REWIND_TEST_SANITIZED_ALLOCATOR
#define REWIND_TEST_SANITIZED_ALLOCATOR 0
#endif

namespace rwd::test {
inline constexpr bool kSanitizedAllocator = REWIND_TEST_SANITIZED_ALLOCATOR != 0;
}  // namespace rwd::test
