#include "engine/antichain_trie.h"

#include <algorithm>

namespace kanon::engine {

AntichainTrie::AntichainTrie(size_t dims, Direction direction) : dims_(dims), dir_(direction) {
  nodes_.emplace_back();  // root
  nodes_[0].min_rank = 1 << 30;
  nodes_[0].max_rank = -1;
}

uint32_t AntichainTrie::new_node(uint8_t level, int rank) {
  uint32_t idx;
  if (!free_.empty()) {
    idx = free_.back();
    free_.pop_back();
    nodes_[idx] = Node{};
  } else {
    idx = static_cast<uint32_t>(nodes_.size());
    nodes_.emplace_back();
  }
  nodes_[idx].level = level;
  nodes_[idx].min_rank = rank;
  nodes_[idx].max_rank = rank;
  return idx;
}

bool AntichainTrie::covers(const Levels& x) const {
  if (size_ == 0) return false;
  return covers_from(0, 0, x, Lattice::rank(x));
}

bool AntichainTrie::covers_from(uint32_t node, size_t depth, const Levels& x, int rank) const {
  if (depth == dims_) return true;
  for (uint32_t c : nodes_[node].children) {
    const Node& n = nodes_[c];
    if (dir_ == Direction::kUp) {
      // Only specializations of x: level <= x and rank <= rank(x).
      if (n.level > x[depth] || n.min_rank > rank) continue;
    } else {
      if (n.level < x[depth] || n.max_rank < rank) continue;
    }
    if (covers_from(c, depth + 1, x, rank)) return true;
  }
  return false;
}

bool AntichainTrie::remove_subsumed(uint32_t node, size_t depth, const Levels& x, int rank) {
  if (depth == dims_) {
    --size_;
    return true;
  }
  auto& children = nodes_[node].children;
  for (size_t i = 0; i < children.size();) {
    const uint32_t c = children[i];
    const Node& n = nodes_[c];
    bool candidate;
    if (dir_ == Direction::kUp) {
      // Stored generalizations of x are subsumed by x.
      candidate = n.level >= x[depth] && n.max_rank >= rank;
    } else {
      candidate = n.level <= x[depth] && n.min_rank <= rank;
    }
    if (candidate && remove_subsumed(c, depth + 1, x, rank)) {
      free_.push_back(c);
      nodes_[node].children[i] = nodes_[node].children.back();
      nodes_[node].children.pop_back();
    } else {
      ++i;
    }
  }
  // Stale min/max ranks stay valid bounds; they only prune less.
  return nodes_[node].children.empty() && node != 0;
}

bool AntichainTrie::insert(const Levels& x) {
  if (covers(x)) return false;
  const int rank = Lattice::rank(x);
  if (size_ > 0) remove_subsumed(0, 0, x, rank);
  uint32_t node = 0;
  nodes_[0].min_rank = std::min(nodes_[0].min_rank, rank);
  nodes_[0].max_rank = std::max(nodes_[0].max_rank, rank);
  for (size_t d = 0; d < dims_; ++d) {
    uint32_t next = UINT32_MAX;
    for (uint32_t c : nodes_[node].children) {
      if (nodes_[c].level == x[d]) {
        next = c;
        break;
      }
    }
    if (next == UINT32_MAX) {
      next = new_node(x[d], rank);
      nodes_[node].children.push_back(next);  // may reallocate nodes_: index, not reference
    } else {
      nodes_[next].min_rank = std::min(nodes_[next].min_rank, rank);
      nodes_[next].max_rank = std::max(nodes_[next].max_rank, rank);
    }
    node = next;
  }
  ++size_;
  return true;
}

void AntichainTrie::collect(uint32_t node, size_t depth, Levels& cur,
                            std::vector<Levels>& out) const {
  if (depth == dims_) {
    out.push_back(cur);
    return;
  }
  for (uint32_t c : nodes_[node].children) {
    cur[depth] = nodes_[c].level;
    collect(c, depth + 1, cur, out);
  }
}

std::vector<Levels> AntichainTrie::elements() const {
  std::vector<Levels> out;
  Levels cur(dims_, 0);
  if (size_ > 0) collect(0, 0, cur, out);
  return out;
}

}  // namespace kanon::engine
