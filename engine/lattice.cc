#include "engine/lattice.h"

#include <algorithm>
#include <limits>

namespace kanon::engine {

Lattice::Lattice(std::vector<int> heights) : heights_(std::move(heights)) {
  radix_.resize(heights_.size());
  for (size_t i = heights_.size(); i-- > 0;) {
    radix_[i] = size_;
    const uint64_t h = static_cast<uint64_t>(heights_[i]);
    if (size_ > std::numeric_limits<uint64_t>::max() / h) {
      ids_fit_ = false;
      size_ = std::numeric_limits<uint64_t>::max();
    } else if (ids_fit_) {
      size_ *= h;
    }
    max_rank_ += heights_[i] - 1;
  }
}

uint64_t Lattice::id(const Levels& l) const {
  uint64_t v = 0;
  for (size_t i = 0; i < l.size(); ++i) v += radix_[i] * l[i];
  return v;
}

int Lattice::rank(const Levels& l) {
  int r = 0;
  for (uint8_t x : l) r += x;
  return r;
}

Levels Lattice::top() const {
  Levels t(dims());
  for (size_t i = 0; i < dims(); ++i) t[i] = static_cast<uint8_t>(heights_[i] - 1);
  return t;
}

bool Lattice::is_generalization_of(const Levels& general, const Levels& special) const {
  for (size_t i = 0; i < general.size(); ++i) {
    if (general[i] < special[i]) return false;
  }
  return true;
}

void Lattice::for_each_with_rank(int rank, const std::function<void(const Levels&)>& fn) const {
  const size_t d = dims();
  // suffix_max[i]: the largest rank attributes i.. can still contribute.
  std::vector<int> suffix_max(d + 1, 0);
  for (size_t i = d; i-- > 0;) suffix_max[i] = suffix_max[i + 1] + heights_[i] - 1;
  Levels cur(d, 0);
  std::function<void(size_t, int)> rec = [&](size_t i, int left) {
    if (i == d) {
      if (left == 0) fn(cur);
      return;
    }
    const int lo = std::max(0, left - suffix_max[i + 1]);
    const int hi = std::min(heights_[i] - 1, left);
    for (int v = lo; v <= hi; ++v) {
      cur[i] = static_cast<uint8_t>(v);
      rec(i + 1, left - v);
    }
    cur[i] = 0;
  };
  if (rank >= 0 && rank <= max_rank_) rec(0, rank);
}

void Lattice::successors(const Levels& l, std::vector<Levels>& out) const {
  out.clear();
  for (size_t i = 0; i < l.size(); ++i) {
    if (l[i] + 1 < heights_[i]) {
      out.push_back(l);
      ++out.back()[i];
    }
  }
}

TraversalOrder::TraversalOrder(std::vector<int> max_levels,
                               std::vector<std::vector<uint32_t>> distinct_per_level)
    : max_levels_(std::move(max_levels)), distinct_(std::move(distinct_per_level)) {}

std::array<double, 3> TraversalOrder::key(const Levels& l) const {
  double c1 = 0, c2 = 0, c3 = 0;
  const double j = static_cast<double>(l.size());
  for (size_t i = 0; i < l.size(); ++i) {
    c1 += l[i];
    if (max_levels_[i] > 0) c2 += static_cast<double>(l[i]) / max_levels_[i];
    c3 += static_cast<double>(distinct_[i][l[i]]) / distinct_[i][0];
  }
  return {c1, c2 / j, 1.0 - c3 / j};
}

bool TraversalOrder::less(const Levels& a, const Levels& b) const {
  const auto ka = key(a), kb = key(b);
  if (ka != kb) return ka < kb;
  return a < b;
}

void TraversalOrder::sort(std::vector<Levels>& nodes) const {
  std::vector<std::pair<std::array<double, 3>, size_t>> keyed(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) keyed[i] = {key(nodes[i]), i};
  std::sort(keyed.begin(), keyed.end(), [&](const auto& x, const auto& y) {
    if (x.first != y.first) return x.first < y.first;
    return nodes[x.second] < nodes[y.second];
  });
  std::vector<Levels> out;
  out.reserve(nodes.size());
  for (auto& k : keyed) out.push_back(std::move(nodes[k.second]));
  nodes = std::move(out);
}

}  // namespace kanon::engine
