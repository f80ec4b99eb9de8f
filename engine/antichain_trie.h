// A set of transformations kept as an antichain in a prefix tree (Prasser et
// al., "antichain prefix trees"): the implicit representation of a predictive
// property, so the lattice itself is never materialized.
//
// Direction kUp stores a property inherited by generalizations: covers(x) is
// true when some stored y <= x. Direction kDown is the mirror image
// (specializations): covers(x) when some stored y >= x. Each trie node keeps
// the min and max rank of the transformations below it; queries skip subtrees
// whose ranks cannot contain a match. Inserting x removes the stored elements
// it subsumes, so the stored set stays an antichain.
//
// Not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/lattice.h"

namespace kanon::engine {

class AntichainTrie {
 public:
  enum class Direction { kUp, kDown };

  AntichainTrie(size_t dims, Direction direction);

  bool covers(const Levels& x) const;
  // Adds x unless it is already covered; returns whether it was added.
  bool insert(const Levels& x);
  size_t size() const { return size_; }
  // The stored elements (tests, diagnostics).
  std::vector<Levels> elements() const;

 private:
  struct Node {
    uint8_t level = 0;
    int min_rank = 0;
    int max_rank = 0;
    std::vector<uint32_t> children;
  };
  bool covers_from(uint32_t node, size_t depth, const Levels& x, int rank) const;
  // Removes stored elements subsumed by x below `node`; returns true when
  // `node` became empty.
  bool remove_subsumed(uint32_t node, size_t depth, const Levels& x, int rank);
  uint32_t new_node(uint8_t level, int rank);
  void collect(uint32_t node, size_t depth, Levels& cur, std::vector<Levels>& out) const;

  size_t dims_;
  Direction dir_;
  std::vector<Node> nodes_;
  std::vector<uint32_t> free_;
  size_t size_ = 0;
};

}  // namespace kanon::engine
