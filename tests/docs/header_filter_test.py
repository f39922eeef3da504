#!/usr/bin/env python3
"""Checks docs/api/header_filter.py on a small header: the file block becomes @file with its
brief, a comment above a declaration becomes ///, a comment after a member ///<, comments inside a
function body and blocks apart from any declaration stay //, examples become @code blocks, and
characters Doxygen would read as commands or HTML are escaped outside `code` and "quotes"; and the
header keeps its line count, so that Doxygen's warnings name the header's own lines. Run by ctest
as docs_header_filter (label docs)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs",
                                "api"))
import header_filter  # noqa: E402

HEADER = """// rewind/example.hpp — a small header for the filter's test.
//
//   rwd::Example e(3);   // an example
//
// Sizes are in bytes; a std::vector<double> holds them @ 8 bytes & "a <quoted> name".
#pragma once

namespace rwd {

// A section comment, apart from any declaration.

// What an example is: a count.
struct Example {
  int count = 0;  // how many, ≥ 0
                  // (and never negative)
  // Doubles the count.
  void twice() {
    // inside a body: not documentation
    count *= 2;
  }
};

}  // namespace rwd
"""

EXPECTED = [
    "/// @brief a small header for the filter's test.",
    "/// @code{.unparsed}",
    "///   rwd::Example e(3);   // an example",
    "/// @endcode",
    '/// Sizes are in bytes; a std::vector\\<double\\> holds them \\@ 8 bytes \\& "a <quoted> name". @file',
    "// A section comment, apart from any declaration.",
    "/// What an example is: a count.",
    "  int count = 0;  ///< how many, ≥ 0",
    "                  ///< (and never negative)",
    "  /// Doubles the count.",
    "    // inside a body: not documentation",
]


def main():
    out = header_filter.filter_header(HEADER.split("\n"))
    missing = [line for line in EXPECTED if line not in out]
    if missing or len(out) != len(HEADER.split("\n")):
        print("filtered header:", *out, sep="\n")
        print("missing lines:", *missing, sep="\n  ")
        return 1
    print(f"the filter gives the {len(EXPECTED)} expected lines, one line out per line in")
    return 0


if __name__ == "__main__":
    sys.exit(main())
