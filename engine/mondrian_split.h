// How a distributed Mondrian run divides the rows among N workers, decided
// from a sample (../shared/seeds/distributed-mondrian-spark.txt: sample,
// choose the attribute, cut into N quantile ranges). A SplitTree is a binary
// tree of cuts "key <= threshold goes left" whose leaves are worker ranks.
//
//  - kQuantiles (the seed's method): one attribute, chosen on the sample by
//    the job's choice (span / max / min entropy), cut at its N-quantiles.
//  - kTree (default): Mondrian's own first log2(N) levels on the sample:
//    every node picks its attribute with the same choice and cuts at the
//    quantile that gives each side its share of ranks (the median for 2).
//    This reproduces the single-process run's first cuts, so the loss
//    stays close to the centralized one.
// Keys are the attributes' order keys: the value for numbers, the code for
// hierarchy and set attributes (agreed on by every rank). A threshold that
// falls on a repeated value is moved below it when that balances better, as
// Mondrian's median cut does.
#pragma once

#include <string>
#include <vector>

#include "engine/mondrian.h"

namespace kanon::engine {

enum class SplitMode { kTree, kQuantiles };

// tree, quantiles.
const base::NameTable<SplitMode>& split_modes();
inline const char* split_mode_name(SplitMode m) {
  return split_modes().name(m);
}
inline std::optional<SplitMode> parse_split_mode(std::string_view name) {
  return split_modes().parse(name);
}

struct SplitNode {
  int attribute = -1;  // inner node: attribute cut; -1: leaf
  double threshold = 0;
  int left = -1, right = -1;
  int rank = 0;  // leaf: the worker
};

struct SplitTree {
  std::vector<SplitNode> nodes;  // nodes[0] is the root

  // The worker of a row with order keys `keys` (one per attribute).
  int route(const double* keys) const;
  // Merges the leaf of `rank` with its sibling subtree into one leaf (the
  // lowest rank of the two keeps the rows). False when `rank` is the root.
  bool merge(int rank);
  // "attribute <= value" for every inner node, depth first.
  std::vector<std::string> describe(const MondrianInput& in) const;
};

// The order key of attribute `a` for a row with code `code`.
double order_key(const MondrianAttribute& a, int32_t code);

// Builds the tree for `ranks` workers from `sample` (row-major, one key per
// attribute of `in` per row; `in` gives the domains only).
SplitTree build_split_tree(const std::vector<double>& sample, const MondrianInput& in,
                           MondrianChoice choice, SplitMode mode, int ranks);

}  // namespace kanon::engine
