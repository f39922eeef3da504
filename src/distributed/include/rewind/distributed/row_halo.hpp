// rewind/distributed/row_halo.hpp — the rows just above and below a rank's own rows, fetched
// from the neighbouring ranks, for stencils over a grid split by rows (rwd::RowLayout).
//
//   rwd::RowHalo halo(layout_ptr, rwd::RowBoundary::wall, /*sets=*/2);   // e.g. y and a cotangent
//   halo.exchange(y.local.data(), 0);       // collective: every rank, the same calls in order
//   const double* up = halo.above(0, f);    // field f's row above this rank's first row
//   const double* down = halo.below(0, f);  // field f's row below this rank's last row
//
// The grid's rows are split across ranks in order (rank k owns rows [first_row(k), …)), so a
// rank's missing neighbours are the last row of the rank above and the first row of the rank
// below. Two boundaries:
//   periodic — the grid wraps: rank 0's row above is the last rank's last row (one rank: its
//              own), as on Gray–Scott's torus;
//   wall     — beyond the grid's first and last rows the halo is a row of zeros (homogeneous
//              Dirichlet walls, as Heat2D's); only interior rank boundaries are exchanged.
// A halo row is a copy of the neighbour's values, so a stencil that reads it computes exactly
// what the serial problem computes on the whole grid.
//
// One exchange is two MPI_Sendrecv calls (first rows up, last rows down), each carrying every
// field's row in one message. A `set` names one vector's halos (a problem exchanges y and a
// cotangent before the vjp and needs both at once); the halos of a set stay valid until that set
// is exchanged again. Buffers are sized in the constructor: no allocation in step loops.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "rewind/distributed/communicator.hpp"
#include "rewind/distributed/row_layout.hpp"
#include "rewind/error.hpp"
#include "rewind/types.hpp"

namespace rwd {

enum class RowBoundary { periodic, wall };

class RowHalo {
 public:
  // Halos for `sets` vectors split by `layout` (shared with the problem that owns both).
  RowHalo(std::shared_ptr<const RowLayout> layout, RowBoundary boundary, int sets)
      : layout_(std::move(layout)), boundary_(boundary), sets_(sets) {
    if (!layout_ || sets < 1)
      detail::fail<InvalidArgument>("RowHalo: needs a layout and one halo set or more, got ", sets);
    const Index n = layout_->row_length(), fields = layout_->fields();
    halo_.assign(static_cast<std::size_t>(sets * fields * 2 * n), 0.0);
    send_.assign(static_cast<std::size_t>(2 * fields * n), 0.0);
    incoming_.assign(static_cast<std::size_t>(fields * n), 0.0);
  }

  // Fills set `set`'s halo rows from x's local rows (the layout's local order: field by field).
  // A collective over the layout's communicator.
  void exchange(const double* x, int set) const {
    check_set(set);
    const Communicator& comm = layout_->communicator();
    const Index n = layout_->row_length(), fields = layout_->fields();
    const Index rows = layout_->local_rows(), block = rows * n;
    const int rank = comm.rank(), ranks = comm.size();
    const bool periodic = boundary_ == RowBoundary::periodic;
    const int up = rank > 0 ? rank - 1 : (periodic ? ranks - 1 : MPI_PROC_NULL);
    const int down = rank + 1 < ranks ? rank + 1 : (periodic ? 0 : MPI_PROC_NULL);
    if (ranks == 1) {  // no messages: wrap onto itself, or the walls
      for (Index f = 0; f < fields; ++f) {
        const double* field = x + f * block;
        if (periodic) {
          std::copy(field + (rows - 1) * n, field + rows * n, above_mutable(set, f));
          std::copy(field, field + n, below_mutable(set, f));
        } else {
          std::fill_n(above_mutable(set, f), n, 0.0);
          std::fill_n(below_mutable(set, f), n, 0.0);
        }
      }
      return;
    }
    double* first = send_.data();              // every field's first row → the rank above
    double* last = send_.data() + fields * n;  // every field's last row → the rank below
    for (Index f = 0; f < fields; ++f) {
      const double* field = x + f * block;
      std::copy(field, field + n, first + f * n);
      std::copy(field + (rows - 1) * n, field + rows * n, last + f * n);
    }
    const std::size_t count = static_cast<std::size_t>(fields * n);
    // My first rows go up; the rank below's first rows arrive: my "below" halos (a wall when
    // there is no rank below: MPI_PROC_NULL receives nothing, so the zeros are written here).
    comm.exchange(up, std::span<const double>(first, count), down,
                  std::span<double>(incoming_.data(), count), 1);
    unpack(down, set, /*below=*/true);
    // My last rows go down; the rank above's last rows arrive: my "above" halos.
    comm.exchange(down, std::span<const double>(last, count), up,
                  std::span<double>(incoming_.data(), count), 2);
    unpack(up, set, /*below=*/false);
  }

  // Field f's row above this rank's first row / below its last row, from the last exchange of
  // `set` (n values).
  const double* above(int set, Index f) const { return slot(set, f, 0); }
  const double* below(int set, Index f) const { return slot(set, f, 1); }

  const RowLayout& layout() const { return *layout_; }
  RowBoundary boundary() const { return boundary_; }

 private:
  void check_set(int set) const {
    if (set < 0 || set >= sets_)
      detail::fail<InvalidArgument>("RowHalo: halo set ", set, " out of [0, ", sets_, ")");
  }
  double* slot(int set, Index f, int side) const {
    return halo_.data() + ((set * layout_->fields() + f) * 2 + side) * layout_->row_length();
  }
  double* above_mutable(int set, Index f) const { return slot(set, f, 0); }
  double* below_mutable(int set, Index f) const { return slot(set, f, 1); }

  // Copies the received rows (or, from nobody, zeros: the wall) into the set's halos.
  void unpack(int from, int set, bool below) const {
    const Index n = layout_->row_length();
    for (Index f = 0; f < layout_->fields(); ++f) {
      double* target = below ? below_mutable(set, f) : above_mutable(set, f);
      if (from == MPI_PROC_NULL)
        std::fill_n(target, n, 0.0);
      else
        std::copy(incoming_.data() + f * n, incoming_.data() + (f + 1) * n, target);
    }
  }

  std::shared_ptr<const RowLayout> layout_;
  RowBoundary boundary_;
  int sets_;
  mutable std::vector<double> halo_;  // per set, per field: (above, below), n values each
  mutable std::vector<double> send_;
  mutable std::vector<double> incoming_;
};

}  // namespace rwd
