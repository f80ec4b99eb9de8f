#include "engine/mondrian_split.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>

namespace kanon::engine {

const base::NameTable<SplitMode>& split_modes() {
  static const base::NameTable<SplitMode> kNames{{SplitMode::kTree, "tree"},
                                                 {SplitMode::kQuantiles, "quantiles"}};
  return kNames;
}

double order_key(const MondrianAttribute& a, int32_t code) {
  return a.kind == MondrianKind::kNumeric ? a.numbers[code] : code;
}

int SplitTree::route(const double* keys) const {
  int n = 0;
  while (nodes[n].attribute >= 0) {
    n = keys[nodes[n].attribute] <= nodes[n].threshold ? nodes[n].left : nodes[n].right;
  }
  return nodes[n].rank;
}

bool SplitTree::merge(int rank) {
  for (size_t p = 0; p < nodes.size(); ++p) {
    SplitNode& parent = nodes[p];
    if (parent.attribute < 0) continue;
    for (const int child : {parent.left, parent.right}) {
      if (nodes[child].attribute < 0 && nodes[child].rank == rank) {
        // The lowest rank in the parent's subtree keeps the merged rows.
        int lowest = rank;
        std::vector<int> stack{static_cast<int>(p)};
        while (!stack.empty()) {
          const SplitNode& n = nodes[stack.back()];
          stack.pop_back();
          if (n.attribute < 0) {
            lowest = std::min(lowest, n.rank);
          } else {
            stack.push_back(n.left);
            stack.push_back(n.right);
          }
        }
        parent = SplitNode{};
        parent.rank = lowest;
        return true;  // the detached subtree stays in `nodes`, unreachable
      }
    }
  }
  return false;
}

std::vector<std::string> SplitTree::describe(const MondrianInput& in) const {
  std::vector<std::string> out;
  std::function<void(int)> walk = [&](int i) {
    const SplitNode& n = nodes[i];
    if (n.attribute < 0) return;
    const MondrianAttribute& a = in.qis[n.attribute];
    out.push_back(fmt::format("{} <= {}", a.name,
                              a.kind == MondrianKind::kNumeric
                                  ? fmt::format("{}", n.threshold)
                                  : a.labels[static_cast<size_t>(n.threshold)]));
    walk(n.left);
    walk(n.right);
  };
  if (!nodes.empty()) walk(0);
  return out;
}

namespace {

class Builder {
 public:
  Builder(const std::vector<double>& sample, const MondrianInput& in, MondrianChoice choice,
          SplitMode mode)
      : sample_(sample), in_(in), d_(in.qis.size()), choice_(choice), mode_(mode) {}

  SplitTree build(int ranks) {
    std::vector<uint32_t> rows(d_ ? sample_.size() / d_ : 0);
    for (uint32_t i = 0; i < rows.size(); ++i) rows[i] = i;
    if (mode_ == SplitMode::kQuantiles) {
      const auto order = ranking(rows);
      fixed_ = order.empty() ? -1 : static_cast<int>(order.front());
    }
    node(rows, 0, ranks);
    return std::move(tree_);
  }

 private:
  double key(uint32_t row, size_t a) const { return sample_[row * d_ + a]; }

  // Attributes with more than one value among `rows`, best first (ties keep
  // the attribute order, as in mondrian.cc).
  std::vector<size_t> ranking(const std::vector<uint32_t>& rows) const {
    std::vector<size_t> out;
    std::vector<double> score(d_);
    for (size_t a = 0; a < d_ && !rows.empty(); ++a) {
      std::vector<double> keys;
      for (uint32_t r : rows) keys.push_back(key(r, a));
      const auto [lo, hi] = std::minmax_element(keys.begin(), keys.end());
      if (*lo == *hi) continue;
      const MondrianAttribute& attr = in_.qis[a];
      if (choice_ == MondrianChoice::kSpan) {
        score[a] = attr.kind == MondrianKind::kNumeric
                       ? (attr.high > attr.low ? (*hi - *lo) / (attr.high - attr.low) : 0)
                       : (*hi - *lo) / std::max(1.0, attr.domain - 1.0);
      } else {
        std::sort(keys.begin(), keys.end());
        double sum = 0;
        for (size_t i = 0; i < keys.size();) {
          size_t j = i;
          while (j < keys.size() && keys[j] == keys[i]) ++j;
          sum += (j - i) * std::log(static_cast<double>(j - i));
          i = j;
        }
        const double n = static_cast<double>(keys.size());
        score[a] = std::log(n) - sum / n;
        if (choice_ == MondrianChoice::kMinEntropy) score[a] = -score[a];
      }
      out.push_back(a);
    }
    std::stable_sort(out.begin(), out.end(),
                     [&](size_t x, size_t y) { return score[x] > score[y]; });
    return out;
  }

  // Threshold on attribute `a` giving the left side about `target` rows; false
  // when every candidate leaves a side empty.
  bool threshold(const std::vector<uint32_t>& rows, size_t a, double target, double* out) const {
    std::vector<double> keys;
    for (uint32_t r : rows) keys.push_back(key(r, a));
    std::sort(keys.begin(), keys.end());
    const size_t n = keys.size();
    const size_t idx = std::min(n, std::max<size_t>(1, static_cast<size_t>(std::ceil(target))));
    const double q = keys[idx - 1];
    const size_t below = std::lower_bound(keys.begin(), keys.end(), q) - keys.begin();
    const size_t upto = std::upper_bound(keys.begin(), keys.end(), q) - keys.begin();
    const bool below_ok = below > 0;
    const bool upto_ok = upto < n;
    if (!below_ok && !upto_ok) return false;
    const bool use_below =
        below_ok && (!upto_ok || std::abs(below - target) < std::abs(upto - target));
    *out = use_below ? keys[below - 1] : q;
    return true;
  }

  int node(const std::vector<uint32_t>& rows, int first_rank, int ranks) {
    const int id = static_cast<int>(tree_.nodes.size());
    tree_.nodes.push_back(SplitNode{});
    tree_.nodes[id].rank = first_rank;
    if (ranks <= 1 || rows.size() < 2) return id;
    const int left_ranks = ranks / 2;
    const double target = static_cast<double>(rows.size()) * left_ranks / ranks;
    std::vector<size_t> candidates;
    if (mode_ == SplitMode::kQuantiles) {
      if (fixed_ >= 0) candidates.push_back(static_cast<size_t>(fixed_));
    } else {
      candidates = ranking(rows);
    }
    for (size_t a : candidates) {
      double t;
      if (!threshold(rows, a, target, &t)) continue;
      std::vector<uint32_t> left, right;
      for (uint32_t r : rows) (key(r, a) <= t ? left : right).push_back(r);
      tree_.nodes[id].attribute = static_cast<int>(a);
      tree_.nodes[id].threshold = t;
      const int l = node(left, first_rank, left_ranks);
      const int r = node(right, first_rank + left_ranks, ranks - left_ranks);
      tree_.nodes[id].left = l;
      tree_.nodes[id].right = r;
      return id;
    }
    return id;  // no cut: this leaf's rank takes every row of the subtree
  }

  const std::vector<double>& sample_;
  const MondrianInput& in_;
  size_t d_;
  MondrianChoice choice_;
  SplitMode mode_;
  int fixed_ = -1;
  SplitTree tree_;
};

}  // namespace

SplitTree build_split_tree(const std::vector<double>& sample, const MondrianInput& in,
                           MondrianChoice choice, SplitMode mode, int ranks) {
  return Builder(sample, in, choice, mode).build(ranks);
}

}  // namespace kanon::engine
