#include "policy/history_check.h"

#include <algorithm>
#include <string>
#include <unordered_map>

namespace kanon::policy {
namespace {

struct Group {
  size_t first;    // offset of its signature in `sigs`
  uint64_t count;  // keys
  bool linked;     // present in the last release and an earlier one
};

}  // namespace

namespace {

// Per key: linked with fewer than k candidates (candidates in `count`).
std::vector<uint8_t> below_k(std::span<const std::vector<int32_t>> columns, uint64_t k,
                             std::span<const uint64_t> weights, HistoryCheck& out,
                             std::vector<uint64_t>& count) {
  std::vector<uint8_t> below;
  const size_t v = columns.size();
  const size_t keys = columns.front().size();
  std::vector<int32_t> sigs;
  std::vector<Group> groups;
  std::vector<uint32_t> group_of(keys, UINT32_MAX);
  std::unordered_map<std::string, uint32_t> index;
  std::string sig(v * sizeof(int32_t), '\0');
  for (size_t key = 0; key < keys; ++key) {
    bool any = false;
    for (size_t i = 0; i < v; ++i) {
      const int32_t leaf = columns[i][key];
      any = any || leaf != kAbsent;
      std::copy_n(reinterpret_cast<const char*>(&leaf), sizeof leaf, sig.data() + i * sizeof leaf);
    }
    if (!any) continue;  // never released since the baseline
    const auto [it, inserted] = index.try_emplace(sig, static_cast<uint32_t>(groups.size()));
    if (inserted) {
      bool earlier = false;
      for (size_t i = 0; i + 1 < v; ++i) earlier = earlier || columns[i][key] != kAbsent;
      groups.push_back({sigs.size(), 0, earlier && columns[v - 1][key] != kAbsent});
      for (size_t i = 0; i < v; ++i) sigs.push_back(columns[i][key]);
    }
    groups[it->second].count += key < weights.size() ? weights[key] : 1;
    group_of[key] = it->second;
  }

  // Groups by the leaf they show last; groups absent from or held in the
  // last release match any target there.
  std::unordered_map<int32_t, std::vector<uint32_t>> by_last;
  std::vector<uint32_t> wildcards;
  for (uint32_t g = 0; g < groups.size(); ++g) {
    const int32_t last = sigs[groups[g].first + v - 1];
    (shown(last) ? by_last[last] : wildcards).push_back(g);
  }
  // Whether the keys of `b` can be the target of group `a`: wherever both
  // are in a release, b shows a's true leaf or is held.
  auto candidate = [&](const Group& a, const Group& b) {
    for (size_t i = 0; i < v; ++i) {
      const int32_t x = sigs[a.first + i], y = sigs[b.first + i];
      if (x != kAbsent && shown(y) && true_leaf(x) != y) return false;
    }
    return true;
  };
  std::vector<uint64_t> candidates(groups.size(), 0);
  uint64_t min = UINT64_MAX;
  for (uint32_t g = 0; g < groups.size(); ++g) {
    const Group& a = groups[g];
    if (!a.linked) continue;
    uint64_t c = 0;
    const auto same = by_last.find(true_leaf(sigs[a.first + v - 1]));
    if (same != by_last.end())
      for (uint32_t h : same->second)
        if (candidate(a, groups[h])) c += groups[h].count;
    for (uint32_t h : wildcards)
      if (candidate(a, groups[h])) c += groups[h].count;
    candidates[g] = c;
    min = std::min(min, c);
    out.linked_rows += a.count;
  }
  out.min_candidates = out.linked_rows ? min : 0;

  below.assign(keys, 0);
  count.assign(keys, 0);
  for (size_t key = 0; key < keys; ++key) {
    const uint32_t g = group_of[key];
    if (g == UINT32_MAX || !groups[g].linked) continue;
    count[key] = candidates[g];
    below[key] = candidates[g] < k;
  }
  return below;
}

}  // namespace

HistoryCheck check_history(std::span<const std::vector<int32_t>> columns, uint64_t k,
                           bool list_below, std::span<const uint8_t> updated,
                           std::span<const uint64_t> weights) {
  HistoryCheck out;
  std::vector<uint64_t> count;
  const auto below = below_k(columns, k, weights, out, count);
  auto weight = [&](size_t key) -> uint64_t { return key < weights.size() ? weights[key] : 1; };
  // Below k only through updates: the updated keys themselves, and keys that
  // reach k when the updated keys match any target in every release (as if
  // they had been held, so their moves told nothing).
  std::vector<uint8_t> through_updates(below.size(), 0);
  bool any_updated = false;
  for (size_t key = 0; key < below.size() && key < updated.size(); ++key)
    if (below[key] && updated[key]) through_updates[key] = any_updated = 1;
  if (any_updated) {
    std::vector<std::vector<int32_t>> held(columns.begin(), columns.end());
    for (auto& c : held)
      for (size_t key = 0; key < c.size() && key < updated.size(); ++key)
        if (updated[key] && shown(c[key])) c[key] = held_leaf(c[key]);
    HistoryCheck ignored;
    std::vector<uint64_t> ignored_count;
    const auto still = below_k(held, k, weights, ignored, ignored_count);
    for (size_t key = 0; key < below.size(); ++key)
      if (below[key] && !still[key]) through_updates[key] = 1;
  }
  std::unordered_map<std::string, uint8_t> classes;  // histories among rows_below_k
  for (size_t key = 0; key < below.size(); ++key) {
    if (!below[key]) continue;
    if (through_updates[key]) {
      out.updated_rows_below_k += weight(key);
    } else {
      out.rows_below_k += weight(key);
      std::string sig;
      for (const auto& c : columns)
        sig.append(reinterpret_cast<const char*>(&c[key]), sizeof(int32_t));
      classes.emplace(std::move(sig), 1);
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
