// Warm starts of the planner's LPs from a previous solve's bases (README.md, "Warm starts").
#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/planner/lp_model.h"

namespace swarmlab::core::planner::detail {
namespace {

// LpItem::key's fields, from the high bits down: kind, a + 1, b + 1, set + 1.
constexpr int kPeerBits = 18, kSetBits = 20;
constexpr std::uint64_t kPeerMask = (std::uint64_t{1} << kPeerBits) - 1;
constexpr std::uint64_t kSetMask = (std::uint64_t{1} << kSetBits) - 1;
constexpr int kSetShift = 0, kBShift = kSetBits, kAShift = kBShift + kPeerBits,
              kKindShift = kAShift + kPeerBits;

int set_of(std::uint64_t key) { return static_cast<int>((key >> kSetShift) & kSetMask) - 1; }
std::uint64_t with_set(std::uint64_t key, int set) {
  return (key & ~(kSetMask << kSetShift)) | (static_cast<std::uint64_t>(set + 1) << kSetShift);
}

bool key_before(const std::pair<std::uint64_t, int>& x, const std::pair<std::uint64_t, int>& y) {
  return x.first < y.first;
}

// Sorts a basis's statuses by key: counted into buckets by kind (the key's top byte), then each
// bucket sorted where the LP did not have it in order already. An LP's rows interleave kinds
// peer by peer, but within one kind they mostly come by peer: a full sort cost more than the rest
// of recording a basis.
void sort_by_key(std::vector<std::pair<std::uint64_t, int>>& status) {
  constexpr std::size_t kKinds = 256;
  std::array<std::size_t, kKinds + 1> begin{};
  for (const auto& entry : status) ++begin[(entry.first >> kKindShift) + 1];
  for (std::size_t k = 1; k <= kKinds; ++k) begin[k] += begin[k - 1];
  std::vector<std::pair<std::uint64_t, int>> sorted(status.size());
  std::array<std::size_t, kKinds + 1> next = begin;
  for (const auto& entry : status) sorted[next[entry.first >> kKindShift]++] = entry;
  for (std::size_t k = 0; k < kKinds; ++k) {
    const auto from = sorted.begin() + begin[k], to = sorted.begin() + begin[k + 1];
    if (!std::is_sorted(from, to, key_before)) std::sort(from, to, key_before);
  }
  status = std::move(sorted);
}

// `sets` in lexicographic order, and where each of them went.
std::vector<int> sort_sets(std::vector<std::vector<int>>& sets) {
  std::vector<int> order(sets.size());
  for (std::size_t s = 0; s < order.size(); ++s) order[s] = static_cast<int>(s);
  std::sort(order.begin(), order.end(), [&](int x, int y) { return sets[x] < sets[y]; });
  std::vector<std::vector<int>> sorted;
  std::vector<int> to(sets.size(), -1);
  for (int s : order) {
    if (sorted.empty() || sorted.back() != sets[s]) sorted.push_back(std::move(sets[s]));
    to[s] = static_cast<int>(sorted.size()) - 1;
  }
  sets = std::move(sorted);
  return to;
}

LpBasis renumbered(const LpBasis& basis, const std::vector<int>& to) {
  auto moved = [&](int i) { return i >= 0 && i < static_cast<int>(to.size()) ? to[i] : -1; };
  LpBasis out;
  out.exact_phase = basis.exact_phase;
  // The receiver sets without the peers that are gone (a set left empty is dropped), renumbered;
  // two sets may now be one.
  out.sets.reserve(basis.sets.size());
  for (const std::vector<int>& set : basis.sets) {
    std::vector<int> now;
    for (int i : set) {
      if (moved(i) >= 0) now.push_back(moved(i));
    }
    std::sort(now.begin(), now.end());
    out.sets.push_back(std::move(now));
  }
  std::vector<int> set_to = sort_sets(out.sets);
  const bool emptied = !out.sets.empty() && out.sets.front().empty();
  if (emptied) out.sets.erase(out.sets.begin());
  for (int& s : set_to) s -= emptied ? 1 : 0;  // -1: the set that emptied
  out.status.reserve(basis.status.size());
  for (const auto& [key, status] : basis.status) {
    const LpItem item = LpItem::of(key);
    LpItem now{item.kind, moved(item.a), moved(item.b), item.set >= 0 ? set_to[item.set] : -1};
    if ((item.a >= 0 && now.a < 0) || (item.b >= 0 && now.b < 0) || (item.set >= 0 && now.set < 0)) {
      continue;
    }
    if (const std::uint64_t k = now.key()) out.status.emplace_back(k, status);
  }
  // Where the peers keep their order (a departure, a join), the keys stay sorted: only the check
  // is paid.
  if (!std::is_sorted(out.status.begin(), out.status.end(), key_before)) {
    std::stable_sort(out.status.begin(), out.status.end(), key_before);
  }
  // Two cuts may now have the same receivers: keep the first.
  out.status.erase(std::unique(out.status.begin(), out.status.end(),
                               [](const auto& x, const auto& y) { return x.first == y.first; }),
                   out.status.end());
  return out;
}

// A basis's statuses, looked up for an LP's items in the order that LP has them. Both LPs were
// built family by family, peers in ascending order, so within one kind the keys asked for rise:
// each kind keeps a finger at its last match and gallops forward from it (usually a step or two),
// where a binary search over the whole basis for every item took a tenth of a warm re-solve.
class StatusLookup {
 public:
  explicit StatusLookup(const LpBasis& basis) : status_(basis.status) { finger_.fill(0); }

  // The status recorded for `key` (its set index into the basis's sets), or `fresh`.
  int operator()(std::uint64_t key, int fresh) {
    const std::size_t size = status_.size();
    std::size_t& finger = finger_[key >> kKindShift];
    std::size_t lo = finger < size && status_[finger].first <= key ? finger : 0, hi = lo;
    for (std::size_t step = 1; hi < size && status_[hi].first < key; step *= 2) {
      lo = hi + 1;
      hi += step;
    }
    const auto it = std::lower_bound(status_.begin() + lo, status_.begin() + std::min(hi + 1, size),
                                     std::pair<std::uint64_t, int>{key, 0}, key_before);
    finger = it - status_.begin();
    return it != status_.end() && it->first == key ? it->second : fresh;
  }

 private:
  const std::vector<std::pair<std::uint64_t, int>>& status_;
  std::array<std::size_t, 256> finger_;  // per kind (a key's top 8 bits)
};

// Sets `lp`'s statuses from `start`, repaired to a basis; true when it is valid and nonsingular.
bool start_from_basis(glp_prob* lp, const LpItems& items, const LpBasis& start) {
  // This LP's receiver sets as indices into the start's table (-1: none there).
  std::vector<int> set_to(items.sets().size(), -1);
  for (std::size_t s = 0; s < set_to.size(); ++s) {
    const auto it = std::lower_bound(start.sets.begin(), start.sets.end(), items.sets()[s]);
    if (it != start.sets.end() && *it == items.sets()[s]) {
      set_to[s] = static_cast<int>(it - start.sets.begin());
    }
  }
  StatusLookup lookup(start);
  auto status_of = [&](std::uint64_t key, int fresh) {
    if (key == 0) return fresh;
    const int set = set_of(key);
    if (set < 0) return lookup(key, fresh);
    return set_to[set] < 0 ? fresh : lookup(with_set(key, set_to[set]), fresh);
  };
  const int rows = glp_get_num_rows(lp), cols = glp_get_num_cols(lp);
  int basic = 0;
  for (int r = 1; r <= rows; ++r) {
    const int status = status_of(items.row(r), GLP_BS);
    glp_set_row_stat(lp, r, status);
    basic += status == GLP_BS ? 1 : 0;
  }
  for (int col = 1; col <= cols; ++col) {
    const int status = status_of(items.col(col), GLP_NL);
    glp_set_col_stat(lp, col, status);  // GLPK moves a nonbasic status to a bound that exists
    basic += status == GLP_BS ? 1 : 0;
  }
  // A basis has exactly one basic variable per row. Where the items do not match one for one (a
  // peer's rows and columns went unevenly, a rounding row is gone), the latest rows' slacks
  // enter or the latest basic columns leave; glp_factorize then rejects a singular result (and
  // basis_is_optimal, or the simplex, takes that factorisation over).
  for (int r = rows; r >= 1 && basic < rows; --r) {
    if (glp_get_row_stat(lp, r) == GLP_BS) continue;
    glp_set_row_stat(lp, r, GLP_BS);
    ++basic;
  }
  for (int col = cols; col >= 1 && basic > rows; --col) {
    if (glp_get_col_stat(lp, col) != GLP_BS) continue;
    glp_set_col_stat(lp, col, GLP_NL);
    --basic;
  }
  return basic == rows && glp_factorize(lp) == 0;
}

}  // namespace

std::uint64_t LpItem::key() const {
  const std::uint64_t a1 = static_cast<std::uint64_t>(a + 1), b1 = static_cast<std::uint64_t>(b + 1),
                      s1 = static_cast<std::uint64_t>(set + 1);
  if (kind == LpItemKind::None || a < -1 || b < -1 || set < -1 || a1 > kPeerMask ||
      b1 > kPeerMask || s1 > kSetMask) {
    return 0;
  }
  return static_cast<std::uint64_t>(kind) << kKindShift | a1 << kAShift | b1 << kBShift |
         s1 << kSetShift;
}

LpItem LpItem::of(std::uint64_t key) {
  return {static_cast<LpItemKind>(key >> kKindShift),
          static_cast<int>((key >> kAShift) & kPeerMask) - 1,
          static_cast<int>((key >> kBShift) & kPeerMask) - 1, set_of(key)};
}

int LpItems::set(const std::vector<int>& receivers) {
  const auto it = std::find(sets_.begin(), sets_.end(), receivers);
  if (it != sets_.end()) return static_cast<int>(it - sets_.begin());
  sets_.push_back(receivers);
  return static_cast<int>(sets_.size()) - 1;
}

bool start_basis(glp_prob* lp, const LpItems& items, const LpBasis* start) {
  if (start && start_from_basis(lp, items, *start)) return true;
  glp_scale_prob(lp, GLP_SF_AUTO);
  glp_adv_basis(lp, 0);
  return false;
}

void record_basis(glp_prob* lp, const LpItems& items, LpBasis* out) {
  out->sets = items.sets();
  const std::vector<int> set_to = sort_sets(out->sets);
  auto keep = [&](std::uint64_t key, int status) {
    if (key == 0) return;
    const int set = set_of(key);
    out->status.emplace_back(set < 0 ? key : with_set(key, set_to[set]), status);
  };
  out->status.clear();
  for (int col = 1; col <= glp_get_num_cols(lp); ++col) keep(items.col(col), glp_get_col_stat(lp, col));
  for (int r = 1; r <= glp_get_num_rows(lp); ++r) keep(items.row(r), glp_get_row_stat(lp, r));
  sort_by_key(out->status);
}

PlanBases reindexed(const PlanBases& bases, const std::vector<int>& to) {
  return {renumbered(bases.averaging, to), renumbered(bases.split, to)};
}

}  // namespace swarmlab::core::planner::detail
