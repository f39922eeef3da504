// StageAwareSchedule::Tables::fill (stage_aware_tables.hpp): the dynamic program, row by row.
//
// Each split term of S(c, j) is a minimum over i = 1 .. j − 2 of A(i) + B(j − i), with
// A(i) = i + S(c, i) from the row being filled and B = S(c − 1, ·) (store y_{a+i}) or
// T(c − 1, ·) (store the stages of step a + i). Scanning every i makes the table O(c·l²). This
// scans only the i that a lower bound cannot rule out, and stays exact:
//
//   - HA, the lower convex hull of the points (i, A(i)) filled so far, and HB, that of the row
//     below, bound every candidate from below: A(i) + B(j − i) ≥ HA(i) + HB(j − i) =: f(i);
//   - f is convex in i (a sum of two convex functions), so the i with f(i) ≤ U, for any U the
//     entry is known to reach (an upper bound on S(c, j)), form one interval, found by binary
//     search;
//   - every candidate outside it is above U ≥ S(c, j), so no minimiser, not even a tied one, lies
//     outside: the first minimiser inside is the first of all, and the choices are those of a
//     full scan.
//
// The rows are convex up to a fraction of one evaluation (each row of S lies less than 1 above its
// hull in the cases measured), so the interval is a small part of the splits; the figures are in
// bench/results/gradient_cost.md. U starts as the best of the options that need no scan and of
// the splits that were best for j − 1. The candidates inside the interval are scanned as 32-bit
// sums and minima, eight per instruction where the CPU has AVX2 (REWIND_SIMD_CLONES: integers, so
// the same result either way).
#include "stage_aware_tables.hpp"

#include <algorithm>
#include <limits>
#include <utility>

#include "rewind/simd_clones.hpp"

namespace rwd {
namespace {

using stage_aware_tables::Cost;
using stage_aware_tables::kSaturated;

Cost saturate(std::int64_t value) {
  return value < kSaturated ? static_cast<Cost>(value) : kSaturated;
}

// min over i < n of a[i] + b[i]. Every a and b is at most kSaturated + l: the sums fit.
REWIND_SIMD_CLONES Cost min_of_sums(const Cost* a, const Cost* b, Index n) {
  Cost m = std::numeric_limits<Cost>::max();
  for (Index i = 0; i < n; ++i) m = std::min(m, static_cast<Cost>(a[i] + b[i]));
  return m;
}

// The least a[i] + b[i] over i < n and the first i that reaches it: block by block (each block's
// minimum vectorises), then one scalar pass over the first block that holds the least.
std::pair<Cost, Index> first_least_sum(const Cost* a, const Cost* b, Index n) {
  constexpr Index kBlock = 256;
  Cost least = std::numeric_limits<Cost>::max();
  Index at_block = 0;
  for (Index start = 0; start < n; start += kBlock) {
    const Cost m = min_of_sums(a + start, b + start, std::min(kBlock, n - start));
    if (m < least) {
      least = m;
      at_block = start;
    }
  }
  Index i = at_block;
  while (a[i] + b[i] != least) ++i;
  return {least, i};
}

// Whether vertex b of a lower hull lies above the line from a to c (so it is not a vertex).
// Collinear points stay: a new point on the line then rewrites one value, not the whole line.
bool above_chord(Index xa, Cost ya, Index xb, Cost yb, Index xc, Cost yc) {
  return static_cast<std::int64_t>(yb - ya) * (xc - xa) >
         static_cast<std::int64_t>(yc - ya) * (xb - xa);
}

// The lower convex hull of the points (i, v[i]), i = 0 .. n − 1, evaluated at every i into out.
void lower_hull(const Cost* v, Index n, std::vector<Index>& vertices, double* out) {
  vertices.clear();
  for (Index i = 0; i < n; ++i) {
    while (vertices.size() >= 2) {
      const Index a = vertices[vertices.size() - 2], b = vertices.back();
      if (!above_chord(a, v[a], b, v[b], i, v[i])) break;
      vertices.pop_back();
    }
    vertices.push_back(i);
  }
  out[vertices.front()] = v[vertices.front()];
  for (std::size_t k = 1; k < vertices.size(); ++k) {
    const Index a = vertices[k - 1], b = vertices[k];
    const double slope = static_cast<double>(v[b] - v[a]) / static_cast<double>(b - a);
    for (Index i = a + 1; i <= b; ++i) out[i] = v[a] + slope * static_cast<double>(i - a);
  }
}

// The lower convex hull of (i, A(i)), i = 1, 2, … as the row is filled, and its value at every
// i added so far (the window search reads it some fifty times per entry). Values up to the
// second-to-last vertex are kept in an array; those on the last segment are computed from its two
// ends. A new point can only remove vertices from the end, which leaves the kept values valid up to
// the new second-to-last vertex; the values of a segment are written when it stops being the last.
// (Rewriting the last segment at every point cost more than the scans: the rows' small dips keep
// removing the newest vertex, so the last segment is often long.)
class PrefixHull {
 public:
  explicit PrefixHull(Index capacity) : values_(static_cast<std::size_t>(capacity)) {}

  void clear() {
    vertices_.clear();
    kept_up_to_ = -1;
  }

  void add(Index x, Cost y) {
    while (vertices_.size() >= 2) {
      const auto [xa, ya] = vertices_[vertices_.size() - 2];
      const auto [xb, yb] = vertices_.back();
      if (!above_chord(xa, ya, xb, yb, x, y)) break;
      vertices_.pop_back();
    }
    if (vertices_.empty()) {
      values_[static_cast<std::size_t>(x)] = y;
      kept_up_to_ = x;
    } else if (vertices_.size() >= 2) {  // the last segment becomes an inner one: keep its values
      const auto [xa, ya] = vertices_[vertices_.size() - 2];
      const auto [xb, yb] = vertices_.back();
      const double slope = static_cast<double>(yb - ya) / static_cast<double>(xb - xa);
      for (Index i = std::max(kept_up_to_, xa) + 1; i <= xb; ++i)
        values_[static_cast<std::size_t>(i)] = ya + slope * static_cast<double>(i - xa);
      kept_up_to_ = xb;
    } else {
      kept_up_to_ = vertices_.back().first;
    }
    vertices_.emplace_back(x, y);
    const auto [xa, ya] = vertices_[vertices_.size() - (vertices_.size() >= 2 ? 2 : 1)];
    tail_x_ = xa;
    tail_y_ = ya;
    tail_slope_ = x > xa ? static_cast<double>(y - ya) / static_cast<double>(x - xa) : 0.0;
  }

  double operator[](Index i) const {
    return i <= kept_up_to_ ? values_[static_cast<std::size_t>(i)]
                            : tail_y_ + tail_slope_ * static_cast<double>(i - tail_x_);
  }

 private:
  std::vector<std::pair<Index, Cost>> vertices_;
  std::vector<double> values_;
  Index kept_up_to_ = -1;  // values_[i] is the hull's value for every i ≤ this
  Index tail_x_ = 0;       // the last segment: from (tail_x_, tail_y_) with this slope
  Cost tail_y_ = 0;
  double tail_slope_ = 0.0;
};

// The i in [lo, hi] with f(i) = ha[i] + hb[j − i] ≤ bound, as [first, last] (first > last when
// there is none). f is convex, so they are an interval around f's minimum. The bound carries half
// an evaluation of slack, far above the rounding of the hulls' values, so an i whose candidate
// can reach an integer U ≥ f(i) is never left out for rounding.
std::pair<Index, Index> window(const PrefixHull& ha, const double* hb, Index j, Index lo, Index hi,
                               double bound) {
  const auto f = [&](Index i) { return ha[i] + hb[j - i]; };
  Index a = lo, b = hi;
  while (a < b) {  // the minimum: the first i with f(i + 1) ≥ f(i)
    const Index m = a + (b - a) / 2;
    if (f(m + 1) >= f(m))
      b = m;
    else
      a = m + 1;
  }
  const Index lowest = a;
  if (f(lowest) > bound) return {1, 0};
  a = lo;
  b = lowest;
  while (a < b) {  // the first i ≤ lowest within the bound (f falls towards lowest)
    const Index m = a + (b - a) / 2;
    if (f(m) <= bound)
      b = m;
    else
      a = m + 1;
  }
  const Index first = a;
  a = lowest;
  b = hi;
  while (a < b) {  // the last i ≥ lowest within the bound
    const Index m = a + (b - a + 1) / 2;
    if (f(m) <= bound)
      a = m;
    else
      b = m - 1;
  }
  return {first, a};
}

// One split term of row c at every j: the row below (S or T of c − 1) backwards, so that
// B(j − i) for ascending i is read ascending, and its hull.
struct SplitTerm {
  std::vector<Cost> backwards;
  std::vector<double> hull;
  Index guess = 0;  // the split that was best for j − 1

  explicit SplitTerm(Index columns)
      : backwards(static_cast<std::size_t>(columns)), hull(static_cast<std::size_t>(columns)) {}

  void prepare(const Cost* below, Index l, std::vector<Index>& vertices) {
    for (Index m = 0; m <= l; ++m) backwards[static_cast<std::size_t>(l - m)] = below[m];
    lower_hull(below, l + 1, vertices, hull.data());
    guess = 0;
  }

  // B(m) for the row below.
  Cost below(Index l, Index m) const { return backwards[static_cast<std::size_t>(l - m)]; }
};

}  // namespace

void StageAwareSchedule::Tables::fill(Index l, int units, int u) {
  rows = units + 1;
  columns = l + 1;
  const std::size_t size = static_cast<std::size_t>(rows) * static_cast<std::size_t>(columns);
  state.assign(size, kSaturated);
  stage.assign(size, kSaturated);
  state_choice.assign(size, 0);
  candidates_scanned = 0;

  std::vector<Cost> shifted(static_cast<std::size_t>(columns));  // A(i) = i + S(c, i)
  PrefixHull prefix(columns);
  SplitTerm state_split(columns), stage_split(columns);
  std::vector<Index> vertices;

  for (int c = 1; c <= units; ++c) {
    if (c >= u) {  // T(c, ·) reads rows c − u only
      Cost* t = &stage[at(c, 0)];
      t[0] = 0;
      t[1] = 0;
      if (l >= 2) t[2] = 0;
      const int free = c - u;
      for (Index j = 3; j <= l; ++j) {
        const Cost keep_state = free >= 1 ? S(free, j - 1) : kSaturated;
        const Cost keep_stages = free >= u ? T(free, j - 1) : kSaturated;
        t[j] = std::min(keep_stages, keep_state);
      }
    }
    const bool split_state = c >= 2;      // store y_{a+i}: one unit, c − 1 left
    const bool split_stage = c - 1 >= u;  // store the stages of step a + i
    if (split_state) state_split.prepare(&state[at(c - 1, 0)], l, vertices);
    if (split_stage) stage_split.prepare(&stage[at(c - 1, 0)], l, vertices);
    const Cost* drop = c >= u ? &stage[at(c, 0)] : nullptr;  // y_a's unit to its own stages
    Cost* row = &state[at(c, 0)];
    std::int32_t* choices = &state_choice[at(c, 0)];

    row[0] = 0;
    row[1] = 0;
    shifted[0] = 0;
    shifted[1] = 1;
    prefix.clear();
    prefix.add(1, 1);
    for (Index j = 2; j <= l; ++j) {
      Cost best = saturate((j - 1) + static_cast<std::int64_t>(row[j - 1]));  // advance to j − 1
      std::int32_t choice = static_cast<std::int32_t>(j - 1);
      if (j >= 3) {
        // U: an evaluation count S(c, j) is known to reach.
        Cost reach = drop ? std::min(best, drop[j]) : best;
        for (const SplitTerm* term :
             {split_state ? &state_split : nullptr, split_stage ? &stage_split : nullptr}) {
          if (term && term->guess >= 1 && term->guess <= j - 2)
            reach = std::min(reach,
                             saturate(shifted[static_cast<std::size_t>(term->guess)] +
                                      static_cast<std::int64_t>(term->below(l, j - term->guess))));
        }
        const auto scan = [&](SplitTerm& term, bool stages) {
          const auto [first, last] =
              window(prefix, term.hull.data(), j, 1, j - 2, static_cast<double>(reach) + 0.5);
          if (first > last) return;
          const Index n = last - first + 1;
          candidates_scanned += n;
          const Cost* a = &shifted[static_cast<std::size_t>(first)];
          const Cost* b = &term.backwards[static_cast<std::size_t>(l - j + first)];
          const auto [m, offset] = first_least_sum(a, b, n);
          const Index i = first + offset;
          term.guess = i;
          reach = std::min(reach, m);
          if (m < best) {
            best = m;
            choice = static_cast<std::int32_t>(stages ? -(i + 1) : i);
          }
        };
        if (split_state) scan(state_split, false);
        if (split_stage) scan(stage_split, true);
      }
      if (drop && drop[j] < best) {
        best = drop[j];
        choice = 0;
      }
      best = std::min(best, kSaturated);
      row[j] = best;
      choices[j] = choice;
      shifted[static_cast<std::size_t>(j)] = saturate(j + static_cast<std::int64_t>(best));
      prefix.add(j, shifted[static_cast<std::size_t>(j)]);
    }
  }
}

}  // namespace rwd
