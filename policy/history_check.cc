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

HistoryCheck check_history(std::span<const std::vector<int32_t>> columns, uint64_t k,
                           bool list_below) {
  HistoryCheck out;
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
    ++groups[it->second].count;
    group_of[key] = it->second;
  }

  // Groups by last leaf; groups absent from the last release apart.
  std::unordered_map<int32_t, std::vector<uint32_t>> by_last;
  std::vector<uint32_t> gone;
  for (uint32_t g = 0; g < groups.size(); ++g) {
    const int32_t last = sigs[groups[g].first + v - 1];
    (last == kAbsent ? gone : by_last[last]).push_back(g);
  }
  auto consistent = [&](const Group& a, const Group& b) {
    for (size_t i = 0; i < v; ++i) {
      const int32_t x = sigs[a.first + i], y = sigs[b.first + i];
      if (x != kAbsent && y != kAbsent && x != y) return false;
    }
    return true;
  };
  std::vector<uint64_t> candidates(groups.size(), 0);
  uint64_t min = UINT64_MAX;
  for (uint32_t g = 0; g < groups.size(); ++g) {
    const Group& a = groups[g];
    if (!a.linked) continue;
    uint64_t c = 0;
    for (uint32_t h : by_last[sigs[a.first + v - 1]])
      if (consistent(a, groups[h])) c += groups[h].count;
    for (uint32_t h : gone)
      if (consistent(a, groups[h])) c += groups[h].count;
    candidates[g] = c;
    min = std::min(min, c);
    out.linked_rows += a.count;
    if (c < k) {
      out.rows_below_k += a.count;
      ++out.classes_below_k;
    }
  }
  out.min_candidates = out.linked_rows ? min : 0;
  if (list_below && out.rows_below_k) {
    for (size_t key = 0; key < keys; ++key) {
      const uint32_t g = group_of[key];
      if (g != UINT32_MAX && groups[g].linked && candidates[g] < k)
        out.below.push_back(static_cast<uint32_t>(key));
    }
  }
  return out;
}

}  // namespace kanon::policy
