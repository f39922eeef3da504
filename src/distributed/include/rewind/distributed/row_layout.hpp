// rewind/distributed/row_layout.hpp — how a state is split across ranks, and the sums over it
// that give the same bits for any number of ranks.
//
// A state is `fields` blocks of `rows` rows of `row_length` values (Gray–Scott: 2 fields u, v of
// n rows of n cells; global index f·rows·row_length + r·row_length + c, the serial layout). Rank
// k owns rows [first_row(k), first_row(k + 1)) of every field, split as evenly as possible, and
// stores them field by field: its local vector is [field 0's rows; field 1's rows; …].
//
// Sums over the whole state are folded in a fixed decomposition that no rank count changes: one
// partial sum per global row (each row summed on its own, from zero), the row partials gathered
// on every rank and added in global row order (field 0's rows 0 … rows−1, then field 1's, …) by
// every rank alike. So 1, 2, 3 or 4 ranks give the same bits, every rank the same value — and the
// same bits as a one-process fold of the same rows in the same order.
//
//   rwd::RowLayout layout(world, /*fields=*/2, /*rows=*/n, /*row_length=*/n);
//   Index local_rows = layout.local_rows();    // this rank's rows of each field
//
// fold_rows keeps its gather buffers between calls (no allocation in step loops), so one layout
// serves one run at a time, like the problem that owns it.
#pragma once

#include <algorithm>
#include <span>
#include <vector>

#include "rewind/distributed/communicator.hpp"
#include "rewind/error.hpp"
#include "rewind/parallel.hpp"
#include "rewind/types.hpp"

namespace rwd {

class RowLayout {
 public:
  // Fails (InvalidArgument) when there are more ranks than rows: every rank owns one row or more.
  RowLayout(Communicator comm, Index fields, Index rows, Index row_length)
      : comm_(comm), fields_(fields), rows_(rows), row_length_(row_length) {
    if (fields < 1 || rows < 1 || row_length < 1)
      detail::fail<InvalidArgument>("RowLayout: ", fields, " fields of ", rows, " rows of ",
                                    row_length, " values: each must be >= 1");
    if (comm.size() > rows)
      detail::fail<InvalidArgument>("the state has ", rows, " rows to split and ", comm.size(),
                                    " ranks: every rank needs one row or more (use at most ", rows,
                                    " ranks)");
    const int ranks = comm.size();
    first_rows_.resize(static_cast<std::size_t>(ranks) + 1);
    for (int k = 0; k <= ranks; ++k) first_rows_[static_cast<std::size_t>(k)] = rows * k / ranks;
  }

  const Communicator& communicator() const { return comm_; }
  Index fields() const { return fields_; }
  Index rows() const { return rows_; }
  Index row_length() const { return row_length_; }
  Index global_size() const { return fields_ * rows_ * row_length_; }

  // Rank k's rows [first_row(k), first_row(k) + rows_of(k)).
  Index first_row(int k) const { return first_rows_[static_cast<std::size_t>(k)]; }
  Index rows_of(int k) const { return first_row(k + 1) - first_row(k); }
  // This rank's.
  Index first_row() const { return first_row(comm_.rank()); }
  Index local_rows() const { return rows_of(comm_.rank()); }
  Index local_size() const { return fields_ * local_rows() * row_length_; }
  // The global index of this rank's local value `local` (0 <= local < local_size()).
  Index global_index(Index local) const {
    const Index per_field = local_rows() * row_length_;
    const Index field = local / per_field;
    return field * rows_ * row_length_ + first_row() * row_length_ + (local - field * per_field);
  }
  // Calls op(r) for each of this rank's rows r (0 <= r < local_rows()), on this rank's threads:
  // the row kernels of the distributed problems. Rows run concurrently; op must only write its own.
  template <class RowOp>
  void for_each_local_row(RowOp&& op) const {
    const Index rows = local_rows();
    detail::parallel_indices(rows, detail::threads_for_rows(rows, fields_ * row_length_), op);
  }
  // The number of row blocks this rank holds (fields × local rows), field by field.
  Index local_blocks() const { return fields_ * local_rows(); }

  bool same_shape(const RowLayout& other) const {
    return fields_ == other.fields_ && rows_ == other.rows_ && row_length_ == other.row_length_ &&
           comm_.size() == other.comm_.size();
  }

  // Σ over global rows in order of partial(b), where partial(b) is local row block b's Sums<K>
  // (b = f·local_rows + r for field f, local row r), computed on this rank's threads. A
  // collective: every rank calls it with its own blocks.
  template <int K, class Partial>
  Sums<K> fold_rows(Partial&& partial) const {
    const Index blocks = local_blocks();
    std::vector<double>& mine = scratch(0, blocks * K);
    const int threads = detail::threads_for_rows(blocks, row_length_);
    detail::parallel_indices(blocks, threads, [&](Index b) {
      const Sums<K> s = partial(b);
      for (int j = 0; j < K; ++j) mine[static_cast<std::size_t>(b * K + j)] = s.v[j];
    });
    Sums<K> total;
    sum_in_row_order(gather(mine, K), K, total.v);
    return total;
  }

  // whole = the whole state in the serial layout (global_size() values) from every rank's local
  // values (local_size() each). A collective.
  void gather_whole(std::span<const double> mine, std::span<double> whole) const {
    if (static_cast<Index>(mine.size()) != local_size() ||
        static_cast<Index>(whole.size()) != global_size())
      detail::fail<InvalidArgument>("RowLayout::gather_whole: ", mine.size(), " local values and ",
                                    "room for ", whole.size(), "; this rank holds ", local_size(),
                                    " of ", global_size());
    std::vector<int>& counts = counts_;
    counts.resize(static_cast<std::size_t>(comm_.size()));
    for (int k = 0; k < comm_.size(); ++k)
      counts[static_cast<std::size_t>(k)] = static_cast<int>(fields_ * rows_of(k) * row_length_);
    std::vector<double>& ranked = scratch(1, global_size());  // rank by rank, field by field
    comm_.all_gather(mine, counts, std::span<double>(ranked.data(), whole.size()));
    const double* from = ranked.data();
    for (int k = 0; k < comm_.size(); ++k)
      for (Index f = 0; f < fields_; ++f) {
        const Index count = rows_of(k) * row_length_;
        std::copy_n(from, count, whole.data() + (f * rows_ + first_row(k)) * row_length_);
        from += count;
      }
  }

  // The same fold of partials a caller computed: `mine` holds `width` values per local row block
  // (block b's at b·width), `total` receives the width sums (the bits fold_rows<width> gives).
  // A collective.
  void fold_row_values(std::span<const double> mine, int width, std::span<double> total) const {
    if (static_cast<Index>(mine.size()) != local_blocks() * width ||
        static_cast<Index>(total.size()) != width)
      detail::fail<InvalidArgument>("RowLayout::fold_row_values: ", mine.size(),
                                    " partials and room for ", total.size(), " sums; ",
                                    local_blocks(), " blocks of ", width, " were expected");
    sum_in_row_order(gather(mine, width), width, total.data());
  }

 private:
  // total[j] = Σ over global rows in order (field by field, rank by rank) of the gathered
  // partials' value j, from zero.
  void sum_in_row_order(const double* all, int K, double* total) const {
    std::fill_n(total, K, 0.0);
    for (Index f = 0; f < fields_; ++f)
      for (int k = 0; k < comm_.size(); ++k) {
        // Rank k's values start at its displacement; its field f rows follow its earlier fields.
        const double* rank_rows = all + (displacement(k) + f * rows_of(k)) * K;
        for (Index r = 0; r < rows_of(k); ++r)
          for (int j = 0; j < K; ++j) total[j] = total[j] + rank_rows[r * K + j];
      }
  }

  // Values before rank k's in the gathered array, in units of blocks.
  Index displacement(int k) const { return fields_ * first_row(k); }

  // Gathers every rank's `mine` (K values per block) into one array in rank order.
  const double* gather(std::span<const double> mine, int K) const {
    std::vector<int>& counts = counts_;
    counts.resize(static_cast<std::size_t>(comm_.size()));
    for (int k = 0; k < comm_.size(); ++k)
      counts[static_cast<std::size_t>(k)] = static_cast<int>(fields_ * rows_of(k) * K);
    std::vector<double>& all = scratch(1, global_blocks() * K);
    comm_.all_gather(mine.first(static_cast<std::size_t>(local_blocks() * K)), counts,
                     std::span<double>(all.data(), static_cast<std::size_t>(global_blocks() * K)));
    return all.data();
  }
  Index global_blocks() const { return fields_ * rows_; }

  // Buffers kept between calls (allocated on the first fold of each size, not in step loops).
  std::vector<double>& scratch(int which, Index size) const {
    std::vector<double>& buffer = buffers_[which];
    if (static_cast<Index>(buffer.size()) < size) buffer.resize(static_cast<std::size_t>(size));
    return buffer;
  }

  Communicator comm_;
  Index fields_, rows_, row_length_;
  std::vector<Index> first_rows_;
  mutable std::vector<double> buffers_[2];
  mutable std::vector<int> counts_;
};

}  // namespace rwd
