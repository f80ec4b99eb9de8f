// ReleaseHistory: what every release of one protected table since the last
// baseline told an analyst about each row key — the knowledge a history-aware
// refresh (history_refresh.h) must not let grow below k.
//
// A release is one disclosure tree applied to the rows present at that
// moment. Within one tree a row's released tuple (each quasi-identifier's
// value or NULL) names exactly one leaf, and the leaf's path says more than
// the released values: an attribute masked below a split "a <> v" tells that
// the row's value is not v. So the knowledge kept per key and release is the
// leaf (kAbsent when the key was not in that release), and the trees
// themselves. Keys are interned to dense indexes; versions are kept oldest
// first, the first one a baseline.
//
// A "key" may stand for a class of row keys that behave alike (the
// history-aware build loads, per current quasi-identifier tuple and stored
// release history, one class with its number of keys): its weight. Keys
// interned one by one weigh 1.
//
// Not thread-safe; a value type (copy it to branch off a tentative release).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "policy/disclosure_tree.h"

namespace kanon::policy {

inline constexpr int32_t kAbsent = -1;

// A held key (mode: materialized): present in the release with every
// quasi-identifier masked, so its row matches any target; its true leaf (the
// one its values fall in, which an analyst knowing them can compute) is kept
// encoded as -leaf - 2. Entries are a leaf (>= 0), kAbsent, or held.
inline constexpr int32_t held_leaf(int32_t leaf) {
  return -leaf - 2;
}
inline constexpr bool is_held(int32_t entry) {
  return entry <= -2;
}
// The leaf the key's values fall in (kAbsent stays kAbsent).
inline constexpr int32_t true_leaf(int32_t entry) {
  return entry <= -2 ? -entry - 2 : entry;
}
// Whether the entry shows a leaf (not absent, not held).
inline constexpr bool shown(int32_t entry) {
  return entry >= 0;
}

struct ReleasedVersion {
  uint64_t version = 0;  // numbered per table, increasing; kanon.releases.version
  bool baseline = false;
  std::chrono::system_clock::time_point built_at;
  DisclosureTree tree;
  // Per key index: the leaf of `tree` the key was released in, kAbsent, or
  // held_leaf(leaf).
  // May be shorter than the key count (the missing keys are absent).
  std::vector<int32_t> leaves;
};

class ReleaseHistory {
 public:
  // The index of `key`, added (absent from every version) when new.
  uint32_t intern(std::string_view key);
  std::optional<uint32_t> find(std::string_view key) const;
  size_t key_count() const { return keys_.size(); }
  const std::string& key(uint32_t index) const { return keys_[index]; }
  // How many row keys `index` stands for (1 unless set).
  uint64_t weight(uint32_t index) const { return weights_[index]; }
  void set_weight(uint32_t index, uint64_t weight) { weights_[index] = weight; }
  const std::vector<uint64_t>& weights() const { return weights_; }
  // Sets the entry of `key` in versions()[index] (for loaders).
  void set_leaf(size_t index, uint32_t key, int32_t entry);

  bool empty() const { return versions_.empty(); }
  const std::vector<ReleasedVersion>& versions() const { return versions_; }
  const ReleasedVersion& last() const { return versions_.back(); }
  // Appends a release; a baseline first forgets every earlier one and every
  // key. REQUIRES: v.version greater than the last version's.
  void append(ReleasedVersion v);
  // The leaf of `key` in versions()[index], kAbsent when not released there.
  int32_t leaf(size_t index, uint32_t key) const {
    const auto& l = versions_[index].leaves;
    return key < l.size() ? l[key] : kAbsent;
  }
  // Leaf columns of versions()[from..] (for check_history), each padded to
  // key_count().
  std::vector<std::vector<int32_t>> columns(size_t from = 0) const;
  // The index of the first version numbered >= `version` (versions().size()
  // when none).
  size_t index_of(uint64_t version) const;
  // Per key, 1 when an update of its quasi-identifiers showed since
  // versions()[from]: two consecutive releases with the same tree (a live
  // mode's catch-up, or a refresh that changed no split) place it in
  // different leaves.
  std::vector<uint8_t> moved_keys(size_t from = 0) const;

 private:
  std::vector<std::string> keys_;
  std::vector<uint64_t> weights_;
  std::unordered_map<std::string, uint32_t> index_;
  std::vector<ReleasedVersion> versions_;
};

// The released tuple of `leaf` for a row with these values: each attribute
// released in the leaf keeps its value, the others are nullopt.
std::vector<std::optional<std::string>> released_tuple(
    const DisclosureTree& tree, int leaf, std::span<const std::optional<std::string_view>> values);

// The leaf a released tuple names (masked attributes as nullopt). A tuple
// of a leaf of `tree` always names that leaf: a split "a = v" releases a
// with value v on its left, and a row on its right has a masked or different.
int leaf_of_released(const DisclosureTree& tree,
                     std::span<const std::optional<std::string>> released);

}  // namespace kanon::policy
