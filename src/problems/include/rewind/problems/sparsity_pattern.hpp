// rewind/problems/sparsity_pattern.hpp — the pattern of a sparse Jacobian ∂f/∂y, as a problem
// declares it with `sparsity()` beside `jacobian_values(t, y, θ, values)` (the entries in the
// pattern's order): what the sparse linear solvers (KLU behind CVODES and the implicit engines)
// factor. rwd::StencilProblem and rwd::Brusselator2D give one.
#pragma once

#include <vector>

#include "rewind/types.hpp"

namespace rwd {

// ∂f/∂y's sparsity in compressed rows: row r's columns are columns[row_starts[r] …
// row_starts[r + 1]), ascending and distinct; rows = columns = the state size (indices into the
// problem's state layout).
struct SparsityPattern {
  Index size = 0;
  std::vector<Index> row_starts;
  std::vector<Index> columns;
  Index nonzeros() const { return static_cast<Index>(columns.size()); }
};

}  // namespace rwd
