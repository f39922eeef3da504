// The two-level planner (rewind/schedule/multilevel_plan.hpp): the dynamic program over the
// recursive family (exact, or on a grid of super-steps), the super-step plans for long horizons,
// and revolve's store count.
#include "rewind/schedule/multilevel_plan.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>
#include <unordered_map>

#include "rewind/error.hpp"
#include "rewind/schedule/checked_arithmetic.hpp"
#include "rewind/schedule/revolve_cost.hpp"

namespace rwd {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// β(c, r) = C(c + r, c) if it is ≤ cap, else nothing (also when it exceeds Index).
std::optional<Index> beta_at_most(Index c, Index r, Index cap) {
  return revolve_beta_at_most(c, r, cap);
}

// β(c, r) for values known to fit (β(c, −1) = 0 included).
Index beta(Index c, Index r) {
  return r < 0 ? 0 : revolve_beta(c, r);
}

// u(n, c): the split points of RevolveSchedule's tree for n steps with c snapshots whose right part
// is a single step. RevolveSchedule splits [s, e) (length n, c snapshots, r minimal with
// β(c, r) ≥ n, b1 = β(c, r − 1), b2 = β(c − 1, r − 1)) as
//   A: n − b1 ≥ b2 → left b1 (the full range of (c, r − 1)), right n − b1 with c − 1 snapshots;
//   B: otherwise   → left n − b2 with c snapshots, right b2 (the full range of (c − 1, r − 1)).
// A full range of (c, r) has u = β(c, r − 1) (u(c, r) = u(c, r − 1) + u(c − 1, r), u(1, r) = r: the
// Pascal recurrence of C(c + r − 1, c)). So only the partial part needs following: its r drops by
// one per case B, and consecutive strict A stages (right part > b2, same r) keep
// δ = β(c, r) − n fixed while c drops — they continue while β(c − 2, r) > δ, which a binary search
// finds, and their full left parts sum to β(c, r − 1) − β(c', r − 1) (hockey stick).
Index revolve_unit_rights(Index n, Index c) {
  Index total = 0;
  Index r = n >= 2 ? revolve_repetitions(n, c) : 0;
  while (n >= 2) {
    if (c == 1) return total + (n - 1);                        // every right part is one step
    if (beta_at_most(c, r, n)) return total + beta(c, r - 1);  // n = β(c, r): a full range
    const Index b1 = beta(c, r - 1);
    const Index b2 = beta(c - 1, r - 1);
    if (n - b1 >= b2) {  // case A
      if (n - b1 > b2 && c >= 3) {
        if (const std::optional<Index> full = beta_at_most(c, r, detail::kIndexMax)) {
          const Index delta = *full - n;  // ≥ 1
          // Smallest c' in [1, c − 2] with β(c', r) > δ (true at c − 2: this stage is strict).
          Index lo = 1, hi = c - 2;
          while (lo < hi) {
            const Index mid = lo + (hi - lo) / 2;
            if (beta_at_most(mid, r, delta))  // β(mid, r) ≤ δ
              lo = mid + 1;
            else
              hi = mid;
          }
          const Index landing = lo + 1;  // strict stages at c, c − 1, …, lo + 2
          total += beta(c, r - 1) - beta(landing, r - 1);
          n = beta(landing, r) - delta;
          c = landing;
          continue;
        }
      }
      total += beta(c, r - 2);  // the full left part's one-step right parts
      const Index right = n - b1;
      if (right == 1) return total + 1;
      r = right > b2 ? r : r - 1;
      n = right;
      c -= 1;
    } else {  // case B
      total += b2 == 1 ? 1 : beta(c - 1, r - 2);
      n -= b2;
      r -= 1;
    }
  }
  return total;
}

double time_of(const ScheduleCost& cost, const CostModel& costs) {
  return predicted_time(cost, costs);
}

// The operation counts of a plan, accumulated.
struct Tally {
  Index advances = 0;
  Index memory_stores = 0;
  Index disk_stores = 0;
  Index memory_restores = 0;
  Index disk_restores = 0;
  Index reverses = 0;

  Tally& operator+=(const Tally& o) {
    advances = detail::checked_add(advances, o.advances, "two-level advances");
    memory_stores += o.memory_stores;
    disk_stores += o.disk_stores;
    memory_restores += o.memory_restores;
    disk_restores += o.disk_restores;
    reverses += o.reverses;
    return *this;
  }
  void store(TwoLevelPlace level) {
    ++(level == TwoLevelPlace::memory ? memory_stores : disk_stores);
  }
  void restore(TwoLevelPlace level) {
    ++(level == TwoLevelPlace::memory ? memory_restores : disk_restores);
  }
};

ScheduleCost to_cost(const Tally& t, Index steps, int memory, int disk) {
  ScheduleCost cost;
  cost.steps = steps;
  cost.slots = memory + disk;
  cost.disk_slots = disk;
  cost.advances = t.advances;
  cost.first_sweep_advances = steps - 1;
  cost.recomputed_steps = t.advances - (steps - 1);
  cost.stores = t.memory_stores + t.disk_stores;
  cost.restores = t.memory_restores + t.disk_restores;
  cost.reverses = t.reverses;
  cost.frees = cost.stores;
  cost.disk_stores = t.disk_stores;
  cost.disk_restores = t.disk_restores;
  return cost;
}

TwoLevelPlace other(TwoLevelPlace level) {
  return level == TwoLevelPlace::memory ? TwoLevelPlace::disk : TwoLevelPlace::memory;
}

}  // namespace

Index revolve_stores(Index steps, Index snapshots) {
  if (steps < 1)
    detail::fail<InvalidArgument>("revolve_stores: steps l = ", steps, " must be >= 1");
  if (snapshots < 1)
    detail::fail<InvalidArgument>("revolve_stores: snapshots c = ", snapshots, " must be >= 1");
  if (steps == 1) return 1;  // y_0 is stored even for one step
  return steps - revolve_unit_rights(steps, snapshots);
}

namespace detail {

// ---------------------------------------------------------------------------------------------
// The table.
//
// F_L(n, a, b): the least time from "y_s is the current state and held on level L" to "step s is
// reversed", for a range of n units (steps when k = 1, super-steps of k steps otherwise), with a
// free memory and b free disk slots besides y_s's:
//   F0_L(n, a, b) = min( min over 1 ≤ j < n of  j·k·u_f + R(n − j, a, b) + read_L + F_L(j, a, b),
//                        P_L(a, len(n)) )                         (P: in place; k > 1 only)
//   F0_L(1, a, b) = u_b if k = 1, else P_L(a, len(1))
//   R(n, a, b)    = u_b if len(n) = 1, else
//                   min(write_M + F_M(n, a − 1, b), write_D + F_D(n, a, b − 1))
//   F_M(n, a, b)  = min(F0_M(n, a, b), write_D + F0_D(n, a + 1, b − 1))   (move y_s to disk)
//   F_D(n, a, b)  = min(F0_D(n, a, b), write_M + F0_M(n, a − 1, b + 1))   (move y_s to memory)
// P_L(a, len): memory revolve over the range with a + 1 snapshots, y_s's being the first: p(len,
// a + 1) advances, revolve_stores − 1 memory stores, r(len, a + 1) reads of y_s on level L (the
// range's left chain: one per repetition) and len − 1 − r memory reads.
// A move is a store at the other level and a free of the old slot; two moves in a row never pay,
// so F0 on the right of the moves breaks the cycle. Ranges that end at l (layer 1) have a last
// super-step of l − (N − 1)·k steps; their right parts end at l too, their left parts do not.
// Free slots beyond what a range can hold are never used — k = 1: n − 1 per level (a range holds
// at most the n − 1 states y_s … y_{s+n−2}); k > 1: len memory, n disk — so entries past those
// caps are copies, and the work is Σ_n 2·(n − 1)·(min(m, cap) + 1)·(min(d, cap) + 1) per layer.
// ---------------------------------------------------------------------------------------------

namespace {

// Work units charged for one in-place cost (three revolve closed forms).
constexpr double kInPlaceWork = 200.0;

struct TableShape {
  Index units = 0, last = 0, max_memory = 0, max_disk = 0;
  int layers = 1;
  double entries = 0.0, work = 0.0;
};

Index memory_cap_of(Index n, Index k) {
  return k == 1 ? n - 1 : n * k;
}
Index disk_cap_of(Index n, Index k) {
  return k == 1 ? n - 1 : n;
}

TableShape shape_of(Index steps, int memory, int disk, Index k) {
  TableShape s;
  s.units = (steps - 1) / k + 1;
  s.last = steps - (s.units - 1) * k;
  s.layers = k > 1 && s.last != k ? 2 : 1;
  s.max_memory = std::min<Index>(memory, steps);
  s.max_disk = std::min<Index>(disk, s.units);
  s.entries = 2.0 * s.layers * static_cast<double>(s.max_memory + 1) *
              static_cast<double>(s.max_disk + 1) * static_cast<double>(s.units + 1);
  if (s.entries > TwoLevelTable::kMaxEntries) {
    s.work = kInf;
    return s;
  }
  for (Index n = 1; n <= s.units && s.work <= TwoLevelTable::kMaxWork; ++n) {
    const double am = static_cast<double>(std::min(s.max_memory, memory_cap_of(n, k)) + 1);
    const double bm = static_cast<double>(std::min(s.max_disk, disk_cap_of(n, k)) + 1);
    s.work +=
        2.0 * s.layers * am * (static_cast<double>(n - 1) * bm + (k > 1 ? kInPlaceWork : 0.0));
  }
  return s;
}

}  // namespace

bool TwoLevelTable::affordable(Index steps, int memory, int disk, Index unit) {
  if (steps < 1 || memory < 1 || disk < 0 || unit < 1 || unit > steps) return false;
  const TableShape s = shape_of(steps, memory, disk, unit);
  return s.entries <= kMaxEntries && s.work <= kMaxWork;
}

Index TwoLevelTable::memory_cap(Index n) const {
  return memory_cap_of(n, unit_);
}
Index TwoLevelTable::disk_cap(Index n) const {
  return disk_cap_of(n, unit_);
}

std::size_t TwoLevelTable::index(int layer, TwoLevelPlace level, Index n, Index a, Index b) const {
  const Index lv = layer * 2 + (level == TwoLevelPlace::memory ? 0 : 1);
  return static_cast<std::size_t>(
      ((lv * (max_memory_ + 1) + a) * (max_disk_ + 1) + b) * (units_ + 1) + n);
}

TwoLevelTable::Range TwoLevelTable::range(Index start, Index end) const {
  if (start < 0 || end > steps_ || start >= end || start % unit_ != 0)
    detail::fail<InvalidArgument>("two-level table (unit ", unit_, "): no range [", start, ", ",
                                  end, ") of l = ", steps_, " steps");
  return {layers_ == 2 && end == steps_ ? 1 : 0, (end - start + unit_ - 1) / unit_};
}

Index TwoLevelTable::length(Range r) const {
  return r.layer == 1 ? (r.n - 1) * unit_ + last_ : r.n * unit_;
}

TwoLevelTable::TwoLevelTable(Index steps, int memory, int disk, const CostModel& costs, Index unit)
    : steps_(steps), memory_(memory), disk_(disk), unit_(unit) {
  if (!affordable(steps, memory, disk, unit))
    detail::fail<InvalidArgument>(
        "two-level table: l = ", steps, ", memory = ", memory, ", disk = ", disk, ", unit = ", unit,
        " is invalid or beyond its budget (", static_cast<Index>(kMaxWork), " steps of work, ",
        static_cast<Index>(kMaxEntries), " entries)");
  costs.validate();
  const TableShape s = shape_of(steps, memory, disk, unit);
  units_ = s.units;
  last_ = s.last;
  layers_ = s.layers;
  max_memory_ = s.max_memory;
  max_disk_ = s.max_disk;
  const Index A = max_memory_, B = max_disk_, N = units_, k = unit_;
  const auto entries = static_cast<std::size_t>(s.entries);
  const double uf = costs.step_time;
  const double ub = costs.step_time * (1.0 + costs.adjoint_cost_factor);
  const double write[2] = {costs.write_time, costs.disk_write_time};
  const double read[2] = {costs.read_time, costs.disk_read_time};
  constexpr TwoLevelPlace M = TwoLevelPlace::memory, D = TwoLevelPlace::disk;
  const auto lv = [](TwoLevelPlace L) { return L == M ? 0 : 1; };

  std::vector<double> f(entries, kInf);  // F
  choice_.assign(entries, 0);
  // R(layer, n, a, b) and the level of its snapshot, laid out [layer][a][b][n].
  const auto ridx = [&](int layer, Index a, Index b, Index n) {
    return static_cast<std::size_t>(((layer * (A + 1) + a) * (B + 1) + b) * (N + 1) + n);
  };
  std::vector<double> right(entries / 2, kInf);
  std::vector<std::uint8_t> right_level(entries / 2, 0);
  std::vector<double> f0;
  std::vector<std::uint32_t> c0;
  // In place: memory revolve over `len` steps with a + 1 snapshots from y_s on level L.
  const auto in_place = [&](TwoLevelPlace L, Index a, Index len) {
    if (len == 1) return ub;
    const Index c = a + 1;
    const Index r = revolve_repetitions(len, c);
    return static_cast<double>(revolve_advances(len, c)) * uf + static_cast<double>(len) * ub +
           static_cast<double>(revolve_stores(len, c) - 1) * write[0] +
           static_cast<double>(r) * read[lv(L)] + static_cast<double>(len - 1 - r) * read[0];
  };

  for (Index n = 1; n <= N; ++n) {
    const Index am = std::min(A, memory_cap(n)), bm = std::min(B, disk_cap(n));
    const auto sidx = [&](TwoLevelPlace L, Index a, Index b) {
      return static_cast<std::size_t>((lv(L) * (am + 1) + a) * (bm + 1) + b);
    };
    for (int layer = 0; layer < layers_; ++layer) {
      const Index len = length({layer, n});
      f0.assign(static_cast<std::size_t>(2 * (am + 1) * (bm + 1)), kInf);
      c0.assign(f0.size(), 0);
      for (TwoLevelPlace L : {M, D}) {
        const double read_here = read[lv(L)];
        for (Index a = 0; a <= am; ++a) {
          // The whole range without split: reverse it (one step) or revolve in place.
          const double whole = k == 1 ? (n == 1 ? ub : kInf) : in_place(L, a, len);
          const std::uint32_t whole_choice = k == 1 ? 0u : 4u;
          for (Index b = 0; b <= bm; ++b) {
            const double* left = &f[index(0, L, 0, a, b)];
            const double* rt = &right[ridx(layer, a, b, 0)];
            double best = kInf;
            Index best_j = 0;
            const double step = static_cast<double>(k) * uf;
            for (Index j = 1; j < n; ++j) {
              const double v = static_cast<double>(j) * step + rt[n - j] + left[j];
              if (v < best) {
                best = v;
                best_j = j;
              }
            }
            best += read_here;
            if (whole <= best) {
              f0[sidx(L, a, b)] = whole;
              c0[sidx(L, a, b)] = whole_choice;
            } else {
              f0[sidx(L, a, b)] = best;
              c0[sidx(L, a, b)] =
                  static_cast<std::uint32_t>(best_j) << 3 |
                  static_cast<std::uint32_t>(right_level[ridx(layer, a, b, n - best_j)]) << 1;
            }
          }
        }
      }
      for (Index a = 0; a <= am; ++a)
        for (Index b = 0; b <= bm; ++b) {
          // y_s in memory: perhaps move it to disk first (a + 1 memory, b − 1 disk free).
          double vm = f0[sidx(M, a, b)];
          std::uint32_t cm = c0[sidx(M, a, b)];
          if (b >= 1) {
            const double moved = write[1] + f0[sidx(D, std::min(a + 1, am), b - 1)];
            if (moved < vm) {
              vm = moved;
              cm |= 1u;
            }
          }
          f[index(layer, M, n, a, b)] = vm;
          choice_[index(layer, M, n, a, b)] = cm;
          // y_s on disk: perhaps move it to memory first (a − 1 memory, b + 1 disk free).
          double vd = f0[sidx(D, a, b)];
          std::uint32_t cd = c0[sidx(D, a, b)];
          if (a >= 1) {
            const double moved = write[0] + f0[sidx(M, a - 1, std::min(b + 1, bm))];
            if (moved < vd) {
              vd = moved;
              cd |= 1u;
            }
          }
          f[index(layer, D, n, a, b)] = vd;
          choice_[index(layer, D, n, a, b)] = cd;
        }
      // Saturated entries: more free slots than the range can use change nothing.
      if (am < A || bm < B)
        for (TwoLevelPlace L : {M, D})
          for (Index a = 0; a <= A; ++a)
            for (Index b = 0; b <= B; ++b)
              if (a > am || b > bm) {
                const std::size_t from = index(layer, L, n, std::min(a, am), std::min(b, bm));
                f[index(layer, L, n, a, b)] = f[from];
                choice_[index(layer, L, n, a, b)] = choice_[from];
              }
      // R: the range as a right part, starting with a store (none for a single step).
      for (Index a = 0; a <= A; ++a)
        for (Index b = 0; b <= B; ++b) {
          if (len == 1) {
            right[ridx(layer, a, b, n)] = ub;
            continue;
          }
          const double vm = a >= 1 ? write[0] + f[index(layer, M, n, a - 1, b)] : kInf;
          const double vd = b >= 1 ? write[1] + f[index(layer, D, n, a, b - 1)] : kInf;
          right[ridx(layer, a, b, n)] = vd < vm ? vd : vm;
          right_level[ridx(layer, a, b, n)] = vd < vm ? 1 : 0;
        }
    }
  }

  // The whole run: y_0 is the current state, not yet stored.
  if (steps == 1) {
    optimum_ = ub;
  } else {
    const int top = layers_ - 1;
    const double vm =
        write[0] + f[index(top, M, N, std::min<Index>(memory - 1, A), std::min<Index>(disk, B))];
    const double vd =
        disk >= 1
            ? write[1] +
                  f[index(top, D, N, std::min<Index>(memory, A), std::min<Index>(disk - 1, B))]
            : kInf;
    first_level_ = vd < vm ? D : M;
    optimum_ = std::min(vm, vd);
  }
}

TwoLevelTable::Decision TwoLevelTable::decision(TwoLevelPlace level, Index start, Index end,
                                                Index free_memory, Index free_disk) const {
  const Range r = range(start, end);
  if (free_memory < 0 || free_disk < 0)
    detail::fail<InvalidArgument>("two-level table: free slots ", free_memory, ", ", free_disk);
  const std::uint32_t c = choice_[index(r.layer, level, r.n, std::min(free_memory, max_memory_),
                                        std::min(free_disk, max_disk_))];
  Decision d;
  d.move = (c & 1u) != 0;
  d.right = (c & 2u) != 0 ? TwoLevelPlace::disk : TwoLevelPlace::memory;
  d.in_place = (c & 4u) != 0;
  d.split = static_cast<Index>(c >> 3) * unit_;
  return d;
}

Index TwoLevelTable::in_place_snapshots(Index start, Index end, Index free_memory) const {
  const Range r = range(start, end);
  return std::min({free_memory, max_memory_, memory_cap(r.n)}) + 1;
}

ScheduleCost TwoLevelTable::counts() const {
  // Memoised walk of the decision tree, mirroring what MultiLevelSchedule does action by action
  // (free slot counts clamped to the table's bounds only, as decision() does).
  std::unordered_map<std::uint64_t, Tally> memo;
  const auto key = [](int layer, TwoLevelPlace L, Index n, Index a, Index b, bool fresh) {
    return static_cast<std::uint64_t>(fresh) | static_cast<std::uint64_t>(L) << 1 |
           static_cast<std::uint64_t>(layer) << 2 | static_cast<std::uint64_t>(n) << 3 |
           static_cast<std::uint64_t>(a) << 24 | static_cast<std::uint64_t>(b) << 44;
  };
  // [start, end) with y_start on L; fresh: at the start of a range (a move may come first).
  const auto walk = [&](const auto& self, TwoLevelPlace L, Index start, Index end, Index a, Index b,
                        bool fresh) -> Tally {
    a = std::min(a, max_memory_);
    b = std::min(b, max_disk_);
    Tally t;
    if (end - start == 1) {
      t.reverses = 1;
      return t;
    }
    const Range r = range(start, end);
    const std::uint64_t k = key(r.layer, L, r.n, a, b, fresh);
    if (const auto it = memo.find(k); it != memo.end()) return it->second;
    const Decision here = decision(L, start, end, a, b);
    if (fresh && here.move) {
      const TwoLevelPlace to = other(L);
      t.store(to);
      t += to == TwoLevelPlace::memory ? self(self, to, start, end, a - 1, b + 1, false)
                                       : self(self, to, start, end, a + 1, b - 1, false);
    } else if (here.in_place) {
      const Index len = end - start, c = in_place_snapshots(start, end, a);
      const Index reps = revolve_repetitions(len, c);
      t.advances = revolve_advances(len, c);
      t.memory_stores = revolve_stores(len, c) - 1;
      t.memory_restores = len - 1 - reps;  // of the memory snapshots above y_start
      if (L == TwoLevelPlace::memory)
        t.memory_restores += reps;  // y_start's, once per repetition
      else
        t.disk_restores = reps;
      t.reverses = len;
    } else {
      const Index mid = start + here.split;
      t.advances = here.split;
      if (end - mid == 1) {
        t.reverses += 1;
      } else {
        t.store(here.right);
        t += here.right == TwoLevelPlace::memory ? self(self, here.right, mid, end, a - 1, b, true)
                                                 : self(self, here.right, mid, end, a, b - 1, true);
      }
      t.restore(L);
      t += self(self, L, start, mid, a, b, true);
    }
    memo.emplace(k, t);
    return t;
  };
  Tally total;
  if (steps_ == 1) {
    total.reverses = 1;
  } else {
    total.store(first_level_);
    total += first_level_ == TwoLevelPlace::memory
                 ? walk(walk, first_level_, 0, steps_, memory_ - 1, disk_, true)
                 : walk(walk, first_level_, 0, steps_, memory_, disk_ - 1, true);
  }
  return to_cost(total, steps_, memory_, disk_);
}

// ---------------------------------------------------------------------------------------------
// Super-step plans.
// ---------------------------------------------------------------------------------------------

ScheduleCost super_step_counts(Index steps, int memory, int disk, Index k) {
  if (k < 1 || k > steps)
    detail::fail<InvalidArgument>("two-level super step k = ", k, " must lie in [1, l = ", steps,
                                  "]");
  const Index L = (steps - 1) / k + 1;
  Tally t;
  t.reverses = steps;
  if (L == 1) {  // memory revolve over the whole run
    t.advances = revolve_advances(steps, memory);
    t.memory_stores = revolve_stores(steps, memory);
    t.memory_restores = steps - 1;
    return to_cost(t, steps, memory, disk);
  }
  if (disk < 1)
    detail::fail<InvalidArgument>("two-level super steps of k = ", k, " for l = ", steps,
                                  " need disk snapshots");
  const Index last = steps - (L - 1) * k;  // in [1, k]
  // Revolve over L super-steps on disk never advances through the last one.
  const auto leaf_advances = [&](Index x) { return x >= 2 ? revolve_advances(x, memory) : 0; };
  const auto leaf_stores = [&](Index x) { return x >= 2 ? revolve_stores(x, memory) : 0; };
  const char* what = "two-level super-step counts";
  t.advances = checked_add(checked_add(checked_mul(k, revolve_advances(L, disk), what),
                                       checked_mul(L - 1, leaf_advances(k), what), what),
                           leaf_advances(last), what);
  t.disk_stores = revolve_stores(L, disk);
  t.disk_restores = L - 1;
  t.memory_stores = checked_add(checked_mul(L - 1, leaf_stores(k), what), leaf_stores(last), what);
  t.memory_restores = (L - 1) * (k - 1) + (last - 1);
  return to_cost(t, steps, memory, disk);
}

TwoLevelPlan plan_two_level(Index steps, int memory, int disk, const CostModel& costs) {
  if (steps < 1) detail::fail<InvalidArgument>("two-level: steps l = ", steps, " must be >= 1");
  if (memory < 1)
    detail::fail<InvalidArgument>("two-level: memory snapshots = ", memory,
                                  " must be >= 1 (the state being replayed is kept in memory)");
  if (disk < 0)
    detail::fail<InvalidArgument>("two-level: disk snapshots = ", disk, " must be >= 0");
  if (memory > kMaxLevelSnapshots)
    detail::fail<InvalidArgument>("two-level: memory snapshots = ", memory, " is more than the ",
                                  kMaxLevelSnapshots, " a level may have");
  if (disk > kMaxLevelSnapshots)
    detail::fail<InvalidArgument>("two-level: disk snapshots = ", disk, " is more than the ",
                                  kMaxLevelSnapshots, " a level may have");
  costs.validate();

  TwoLevelPlan plan;
  plan.steps = steps;
  plan.memory = memory;
  plan.disk = disk;
  if (TwoLevelTable::affordable(steps, memory, disk, 1)) {
    plan.method = TwoLevelPlan::Method::exact;
    auto table = std::make_shared<TwoLevelTable>(steps, memory, disk, costs, 1);
    plan.counts = table->counts();
    plan.optimum = table->optimum();
    plan.table = std::move(table);
    plan.super_step = 1;
    plan.super_steps = steps;
    return plan;
  }

  // Super-step plans. Candidates k: every k ≤ 256, then ~2 % apart; k = ⌈l/L⌉ for every
  // L ≤ min(d + 1, 2048) (the super-step counts whose disk level stores every super-step: uniform
  // disk snapshots), L = d and d + 1; and l (no disk). Then every k within 2 % (at most 128) of
  // the best.
  plan.method = TwoLevelPlan::Method::super_steps;
  double best = kInf;
  const auto consider = [&](Index k) {
    if (k < 1 || k > steps) return;
    if (disk == 0 && k != steps) return;
    const ScheduleCost c = super_step_counts(steps, memory, disk, k);
    const double t = time_of(c, costs);
    if (t < best || (t == best && k > plan.super_step)) {
      best = t;
      plan.super_step = k;
      plan.counts = c;
    }
  };
  consider(steps);
  if (disk >= 1) {
    const auto per = [&](Index L) { return (steps - 1) / L + 1; };  // ⌈l/L⌉
    for (Index k = 1; k <= std::min<Index>(steps, 256); ++k) consider(k);
    for (double k = 256.0; k < static_cast<double>(steps); k *= 1.02)
      consider(static_cast<Index>(k));
    for (Index L = 2; L <= std::min<Index>({static_cast<Index>(disk) + 1, 2048, steps}); ++L)
      consider(per(L));
    if (disk <= steps) consider(per(disk));
    if (disk + 1 <= steps) consider(per(disk + 1));
    const Index centre = plan.super_step;
    const Index reach = std::min<Index>(centre / 50 + 1, 128);
    for (Index k = std::max<Index>(1, centre - reach); k <= std::min(steps, centre + reach); ++k)
      consider(k);
  }
  plan.super_steps = (steps - 1) / plan.super_step + 1;
  plan.optimum = best;

  // The table on the finest affordable grid, when it is not much coarser than the best
  // super-step: it places disk and memory snapshots freely on the grid.
  if (disk >= 1) {
    Index lo = 2, hi = steps;  // affordable(k) holds for large k; find the smallest such k
    while (lo < hi) {
      const Index mid = lo + (hi - lo) / 2;
      if (TwoLevelTable::affordable(steps, memory, disk, mid))
        hi = mid;
      else
        lo = mid + 1;
    }
    const Index k = lo;
    if (TwoLevelTable::affordable(steps, memory, disk, k) && k <= 4 * plan.super_step) {
      auto table = std::make_shared<TwoLevelTable>(steps, memory, disk, costs, k);
      const ScheduleCost c = table->counts();
      const double t = time_of(c, costs);
      if (t < best) {
        plan.method = TwoLevelPlan::Method::grid;
        plan.super_step = k;
        plan.super_steps = (steps - 1) / k + 1;
        plan.counts = c;
        plan.optimum = t;
        plan.table = std::move(table);
      }
    }
  }
  return plan;
}

}  // namespace detail
}  // namespace rwd
