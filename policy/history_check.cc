#include "policy/history_check.h"

#include <algorithm>
#include <string>
#include <unordered_map>

namespace kanon::policy {
namespace {

struct Group {
  size_t first;                   // offset of its signature in `sigs`
  uint64_t count;                 // row keys
  bool linked;                    // present in an earlier release too (every group is in the last)
  std::vector<uint32_t> persons;  // with `persons`: its keys' persons, distinct
};

// Per key: a target with fewer than k candidates (candidates in `count`).
// Adds the targets' figures to `out` when given.
std::vector<uint8_t> below_k(std::span<const std::vector<int32_t>> columns, uint64_t k,
                             std::span<const uint64_t> weights, std::span<const uint32_t> persons,
                             HistoryCheck* out, std::vector<uint64_t>& count) {
  const size_t v = columns.size();
  const size_t keys = columns.front().size();
  std::vector<int32_t> sigs;
  std::vector<Group> groups;
  std::vector<uint32_t> group_of(keys, UINT32_MAX);
  std::unordered_map<std::string, uint32_t> index;
  std::string sig(v * sizeof(int32_t), '\0');
  for (size_t key = 0; key < keys; ++key) {
    if (columns[v - 1][key] == kAbsent) continue;  // neither target nor candidate
    for (size_t i = 0; i < v; ++i) {
      const int32_t leaf = columns[i][key];
      std::copy_n(reinterpret_cast<const char*>(&leaf), sizeof leaf, sig.data() + i * sizeof leaf);
    }
    const auto [it, inserted] = index.try_emplace(sig, static_cast<uint32_t>(groups.size()));
    if (inserted) {
      bool earlier = false;
      for (size_t i = 0; i + 1 < v; ++i) earlier = earlier || columns[i][key] != kAbsent;
      groups.push_back({sigs.size(), 0, earlier, {}});
      for (size_t i = 0; i < v; ++i) sigs.push_back(columns[i][key]);
    }
    groups[it->second].count += key < weights.size() ? weights[key] : 1;
    if (!persons.empty()) groups[it->second].persons.push_back(persons[key]);
    group_of[key] = it->second;
  }
  // Counting persons: a group's distinct persons, and a mark per person of
  // the target it was last counted for.
  uint32_t person_codes = 0;
  for (Group& g : groups) {
    std::sort(g.persons.begin(), g.persons.end());
    g.persons.erase(std::unique(g.persons.begin(), g.persons.end()), g.persons.end());
    if (!g.persons.empty()) person_codes = std::max(person_codes, g.persons.back() + 1);
  }
  std::vector<uint32_t> counted_for(person_codes, UINT32_MAX);

  // Groups by the leaf they show last; groups held in the last release
  // match any target there.
  std::unordered_map<int32_t, std::vector<uint32_t>> by_last;
  std::vector<uint32_t> wildcards;
  for (uint32_t g = 0; g < groups.size(); ++g) {
    const int32_t last = sigs[groups[g].first + v - 1];
    (shown(last) ? by_last[last] : wildcards).push_back(g);
  }
  // Whether the keys of `b` can be the target of group `a`: present in the
  // same releases, and wherever present b shows a's true leaf or is held.
  auto candidate = [&](const Group& a, const Group& b) {
    for (size_t i = 0; i < v; ++i) {
      const int32_t x = sigs[a.first + i], y = sigs[b.first + i];
      if ((x == kAbsent) != (y == kAbsent)) return false;
      if (shown(y) && true_leaf(x) != y) return false;
    }
    return true;
  };
  // Every group is a target once there is an earlier release.
  const bool targets_exist = v > 1;
  std::vector<uint64_t> candidates(groups.size(), 0);
  uint64_t min = UINT64_MAX, targets = 0;
  for (uint32_t g = 0; g < groups.size() && targets_exist; ++g) {
    const Group& a = groups[g];
    uint64_t c = 0;
    // Rows, or persons not counted yet for this target (a person with keys
    // in several matching groups is one candidate).
    const auto add = [&](const Group& b) {
      if (persons.empty()) {
        c += b.count;
        return;
      }
      for (uint32_t p : b.persons)
        if (counted_for[p] != g) {
          counted_for[p] = g;
          ++c;
        }
    };
    const auto same = by_last.find(true_leaf(sigs[a.first + v - 1]));
    if (same != by_last.end())
      for (uint32_t h : same->second)
        if (candidate(a, groups[h])) add(groups[h]);
    for (uint32_t h : wildcards)
      if (candidate(a, groups[h])) add(groups[h]);
    candidates[g] = c;
    min = std::min(min, c);
    targets += a.count;
    if (out) (a.linked ? out->linked_rows : out->new_rows) += a.count;
  }
  if (out) out->min_candidates = targets ? min : 0;

  std::vector<uint8_t> below(keys, 0);
  count.assign(keys, 0);
  for (size_t key = 0; key < keys; ++key) {
    const uint32_t g = group_of[key];
    if (g == UINT32_MAX || !targets_exist) continue;
    count[key] = candidates[g];
    below[key] = candidates[g] < k;
  }
  return below;
}

// below_k of `columns` changed by `change` (per column and key); `below`
// keys that reach k then get `why` (where still 0).
template <typename Change>
void explain(std::span<const std::vector<int32_t>> columns, uint64_t k,
             std::span<const uint64_t> weights, std::span<const uint32_t> persons,
             const std::vector<uint8_t>& below, std::vector<uint8_t>& why, uint8_t reason,
             Change change) {
  std::vector<std::vector<int32_t>> changed(columns.begin(), columns.end());
  change(changed);
  std::vector<uint64_t> ignored;
  const auto still = below_k(changed, k, weights, persons, nullptr, ignored);
  for (size_t key = 0; key < below.size(); ++key)
    if (below[key] && !why[key] && !still[key]) why[key] = reason;
}

enum Why : uint8_t { kUnexplained = 0, kUpdated, kLate, kDeleted };

}  // namespace

HistoryCheck check_history(std::span<const std::vector<int32_t>> columns, uint64_t k,
                           bool list_below, std::span<const uint8_t> updated,
                           std::span<const uint64_t> weights, std::span<const uint32_t> persons) {
  HistoryCheck out;
  std::vector<uint64_t> count;
  const auto below = below_k(columns, k, weights, persons, &out, count);
  const size_t keys = below.size();
  auto weight = [&](size_t key) -> uint64_t { return key < weights.size() ? weights[key] : 1; };
  std::vector<uint8_t> why(keys, kUnexplained);
  bool any_below = false;
  for (size_t key = 0; key < keys; ++key) any_below = any_below || below[key];
  // Every key present from its first release on (held, matching any
  // target, where it was gone).
  const auto keep_deleted = [&](std::vector<std::vector<int32_t>>& c) {
    for (size_t key = 0; key < keys; ++key) {
      bool seen = false;
      for (auto& column : c) {
        if (column[key] != kAbsent)
          seen = true;
        else if (seen)
          column[key] = held_leaf(0);
      }
    }
  };
  if (any_below) explain(columns, k, weights, persons, below, why, kDeleted, keep_deleted);
  for (size_t key = 0; key < keys; ++key) {
    if (!below[key] || why[key]) continue;
    if (columns.front()[key] == kAbsent)
      why[key] = kLate;
    else if (key < updated.size() && updated[key])
      why[key] = kUpdated;
  }
  // Below k only through updates (and deletions): reach k when besides the
  // updated keys match any target in every release (as if they had been
  // held, so their moves told nothing).
  if (any_below && !updated.empty())
    explain(columns, k, weights, persons, below, why, kUpdated, [&](auto& c) {
      keep_deleted(c);
      for (auto& column : c)
        for (size_t key = 0; key < column.size() && key < updated.size(); ++key)
          if (updated[key] && shown(column[key])) column[key] = held_leaf(column[key]);
    });
  std::unordered_map<std::string, uint8_t> classes;  // histories among rows_below_k
  for (size_t key = 0; key < keys; ++key) {
    if (!below[key]) continue;
    switch (why[key]) {
      case kUpdated:
        out.updated_rows_below_k += weight(key);
        break;
      case kLate:
        out.late_rows_below_k += weight(key);
        break;
      case kDeleted:
        out.deleted_rows_below_k += weight(key);
        break;
      default: {
        out.rows_below_k += weight(key);
        std::string sig;
        for (const auto& c : columns)
          sig.append(reinterpret_cast<const char*>(&c[key]), sizeof(int32_t));
        classes.emplace(std::move(sig), 1);
      }
    }
    if (list_below) {
      out.below.push_back(static_cast<uint32_t>(key));
      out.below_candidates.push_back(count[key]);
    }
  }
  out.classes_below_k = classes.size();
  return out;
}

}  // namespace kanon::policy
