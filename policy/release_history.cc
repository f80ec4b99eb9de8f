#include "policy/release_history.h"

#include <algorithm>

namespace kanon::policy {

uint32_t ReleaseHistory::intern(std::string_view key) {
  const auto [it, inserted] =
      index_.try_emplace(std::string(key), static_cast<uint32_t>(keys_.size()));
  if (inserted) {
    keys_.emplace_back(key);
    weights_.push_back(1);
  }
  return it->second;
}

void ReleaseHistory::set_leaf(size_t index, uint32_t key, int32_t entry) {
  auto& l = versions_[index].leaves;
  if (l.size() <= key) l.resize(key + 1, kAbsent);
  l[key] = entry;
}

std::optional<uint32_t> ReleaseHistory::find(std::string_view key) const {
  const auto it = index_.find(std::string(key));
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

void ReleaseHistory::append(ReleasedVersion v) {
  if (v.baseline) {
    // Keys stay interned (the caller's indexes remain valid); earlier
    // releases are forgotten.
    versions_.clear();
  }
  versions_.push_back(std::move(v));
}

std::vector<std::vector<int32_t>> ReleaseHistory::columns(size_t from) const {
  std::vector<std::vector<int32_t>> out;
  for (size_t i = from; i < versions_.size(); ++i) {
    auto c = versions_[i].leaves;
    c.resize(keys_.size(), kAbsent);
    out.push_back(std::move(c));
  }
  return out;
}

size_t ReleaseHistory::index_of(uint64_t version) const {
  size_t i = 0;
  while (i < versions_.size() && versions_[i].version < version) ++i;
  return i;
}

std::vector<uint8_t> ReleaseHistory::moved_keys(size_t from) const {
  std::vector<uint8_t> out(keys_.size(), 0);
  for (size_t i = from + 1; i < versions_.size(); ++i) {
    if (!versions_[i].tree.same_splits(versions_[i - 1].tree)) continue;
    for (uint32_t key = 0; key < keys_.size(); ++key) {
      const int32_t a = leaf(i - 1, key), b = leaf(i, key);
      if (a != kAbsent && b != kAbsent && true_leaf(a) != true_leaf(b)) out[key] = 1;
    }
  }
  return out;
}

std::vector<std::optional<std::string>> released_tuple(
    const DisclosureTree& tree, int leaf, std::span<const std::optional<std::string_view>> values) {
  const uint64_t released = tree.nodes()[static_cast<size_t>(leaf)].released;
  std::vector<std::optional<std::string>> out(tree.attributes().size());
  for (size_t i = 0; i < out.size(); ++i)
    if ((released >> i & 1) && values[i]) out[i] = std::string(*values[i]);
  return out;
}

int leaf_of_released(const DisclosureTree& tree,
                     std::span<const std::optional<std::string>> released) {
  std::vector<std::optional<std::string_view>> v(released.size());
  for (size_t i = 0; i < released.size(); ++i)
    if (released[i]) v[i] = *released[i];
  return tree.leaf_of(v);
}

}  // namespace kanon::policy
