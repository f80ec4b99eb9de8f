// DisclosureTree: the seed's frequent-value decision tree
// (../shared/seeds/immuta-sql-k-anonymization.txt).
//
// Start with every attribute suppressed. At a node holding n rows, among all
// (attribute, non-NULL value) pairs whose count c in the node has c >= k and
// n - c >= k (and, with l-diversity, at least l distinct non-NULL sensitive
// values on both sides), release the pair with the largest c; ties go to the
// attribute listed first in the policy, then to the value whose text is
// byte-wise smallest. The left child holds the rows with that value (the
// attribute is released there and below), the right child the rest. A node
// becomes a leaf (a cohort) when no pair qualifies or when splitting it would
// exceed `max_nodes` (nodes are expanded breadth-first, so the cap trims the
// deepest levels). NULL never equals a value, so NULL rows always go right.
//
// Cost: one pass over the node's distinct rows per attribute, i.e. linear in
// rows x attributes per tree level. Immutable after build; shareable.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "policy/encoded_table.h"

namespace kanon::policy {

struct TreeOptions {
  uint64_t k = 2;
  uint32_t l = 0;  // distinct l-diversity of the sensitive attribute; 0 = off
  uint32_t max_nodes = 4096;
};

struct TreeNode {
  int attribute = -1;  // split attribute, -1 for a leaf
  std::string value;   // split value (canonical text)
  int left = -1;       // child with attribute == value
  int right = -1;      // child with the rest (including NULL)
  int parent = -1;
  uint64_t rows = 0;
  uint64_t released = 0;  // bit i: attribute i is released in this node's rows
  std::string label;      // "D", "D1", "D12", ... as in the seed

  bool leaf() const { return attribute < 0; }
};

// One condition on a cohort's path: attribute = value, or attribute <> value
// (which includes NULL).
struct PathCondition {
  int attribute;
  std::string value;
  bool equal;
};

class DisclosureTree {
 public:
  // Builds the tree. REQUIRES: options.k >= 1; options.l > 0 only when the
  // table has a sensitive attribute.
  static DisclosureTree build(const EncodedTable& table, const TreeOptions& options);
  // The history-aware start of a refresh (policy/history_refresh.h): keeps
  // every split of `start` whose two sides still hold >= k rows (and l
  // distinct sensitive values) on `table`, top-down, so a node whose split no
  // longer holds becomes a leaf with its subtree dropped; then splits every
  // leaf further by the same rule as build(). With `refine` false, leaves are
  // not split further (the coarsened start only). A `start` over other
  // attributes (the policy changed) is ignored: the result is build().
  static DisclosureTree regrow(const EncodedTable& table, const TreeOptions& options,
                               const DisclosureTree& start, bool refine = true);
  // A tree from stored nodes (release history). Throws std::invalid_argument
  // when `nodes` is not a binary tree rooted at 0 whose children follow
  // their parents, or a split attribute is out of range.
  static DisclosureTree from_nodes(std::vector<std::string> attributes, std::vector<TreeNode> nodes,
                                   const TreeOptions& options);
  // This tree with each listed node made a leaf (its subtree dropped); node
  // indexes are renumbered breadth-first, labels recomputed, counts kept.
  DisclosureTree collapsed(std::span<const int> nodes) const;

  // The same attributes and the same splits at the same node indexes (row
  // counts aside): a row falls in the same leaf of both.
  bool same_splits(const DisclosureTree& other) const;

  const std::vector<std::string>& attributes() const { return attributes_; }
  const std::vector<TreeNode>& nodes() const { return nodes_; }
  const TreeNode& root() const { return nodes_[0]; }
  size_t size() const { return nodes_.size(); }
  int depth() const;
  // Leaf indexes, left before right (D1.. before D2..).
  std::vector<int> leaves() const;
  std::vector<PathCondition> path(int node) const;
  // The leaf a row falls into; `values` holds one entry per attribute
  // (nullopt = NULL), values never seen before included.
  int leaf_of(std::span<const std::optional<std::string_view>> values) const;
  // The row with unreleased attributes replaced by nullopt.
  std::vector<std::optional<std::string>> release(
      std::span<const std::optional<std::string_view>> values) const;
  const TreeOptions& options() const { return options_; }

 private:
  std::vector<std::string> attributes_;
  std::vector<TreeNode> nodes_;
  TreeOptions options_;
};

}  // namespace kanon::policy
