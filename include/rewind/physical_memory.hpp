// rewind/physical_memory.hpp — the machine's physical memory in bytes, for refusing before
// allocation what could never fit (a file's declared sizes, say). Refusing there, rather than
// catching std::bad_alloc afterwards, gives the same answer on every allocator: some (an
// AddressSanitizer build's, an overcommitting kernel's) abort or succeed lazily instead of
// throwing.
#pragma once

#include <unistd.h>

#include <cstdint>

namespace rwd::detail {

// sysconf's page count times the page size; 2^62 when the system does not say.
inline std::int64_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return std::int64_t{1} << 62;
  return static_cast<std::int64_t>(pages) * page;
}

// Half of it: what a store-all run may hold by default (StoreAllOptions::memory_limit_bytes = 0).
// 8 GiB when the system does not say, a cap most machines can hold, rather than none.
inline std::int64_t half_physical_memory() {
  const std::int64_t bytes = physical_memory_bytes();
  if (bytes == std::int64_t{1} << 62) return std::int64_t{8} << 30;
  return bytes / 2;
}

}  // namespace rwd::detail
