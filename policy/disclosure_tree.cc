#include "policy/disclosure_tree.h"

#include <algorithm>
#include <deque>
#include <stdexcept>

namespace kanon::policy {
namespace {

struct Candidate {
  uint64_t count;  // rows with attribute = code (persons, with a person column)
  int attribute;
  uint32_t code;
};

// Scratch state of one build: rows are partitioned in place so every node
// owns a contiguous range [begin, end) of distinct rows.
class Builder {
 public:
  Builder(const EncodedTable& table, const TreeOptions& options)
      : table_(table),
        options_(options),
        width_(table.width()),
        attrs_(static_cast<int>(table.attribute_count())) {
    const size_t n = table.distinct_rows();
    order_.resize(n);
    for (size_t i = 0; i < n; ++i) order_[i] = static_cast<uint32_t>(i);
    tmp_.resize(n);
    counts_.resize(attrs_);
    for (int a = 0; a < attrs_; ++a) counts_[a].assign(table.attribute(a).dictionary.size(), 0);
    touched_.resize(attrs_);
    if (options.l > 0) {
      const uint32_t m = table.sensitive()->dictionary.size();
      left_seen_.assign(m, 0);
      right_seen_.assign(m, 0);
    }
    if (table.has_person()) {
      person_seen_.assign(table.person_count() + 1, 0);
      only_.resize(attrs_);
      seen_in_run_.resize(attrs_);
      for (int a = 0; a < attrs_; ++a) {
        only_[a].assign(counts_[a].size(), 0);
        seen_in_run_[a].assign(counts_[a].size(), 0);
      }
      // Rows by person (NULL last): partition() is stable, so every node's
      // rows stay grouped by person and choose_by_person reads each
      // person's rows as one run.
      const size_t pi = table.person_index();
      std::stable_sort(order_.begin(), order_.end(), [&](uint32_t x, uint32_t y) {
        return table.code(x, pi) < table.code(y, pi);
      });
    }
  }

  // The pair to release in rows order_[begin, end), or nullopt.
  std::optional<Candidate> choose(size_t begin, size_t end, uint64_t n) {
    if (table_.has_person()) return choose_by_person(begin, end);
    const uint64_t k = options_.k;
    if (n < 2 * k) return std::nullopt;
    const uint32_t* codes = table_.codes().data();
    const uint64_t* weights = table_.weights().data();
    for (size_t i = begin; i < end; ++i) {
      const uint32_t row = order_[i];
      const uint32_t* r = codes + size_t{row} * width_;
      const uint64_t w = weights[row];
      for (int a = 0; a < attrs_; ++a) {
        const uint32_t c = r[a];
        if (c == kNullCode) continue;
        if (counts_[a][c] == 0) touched_[a].push_back(c);
        counts_[a][c] += w;
      }
    }
    candidates_.clear();
    for (int a = 0; a < attrs_; ++a) {
      for (uint32_t c : touched_[a]) {
        const uint64_t cnt = counts_[a][c];
        counts_[a][c] = 0;
        if (cnt >= k && n - cnt >= k) candidates_.push_back({cnt, a, c});
      }
      touched_[a].clear();
    }
    return best(begin, end);
  }

  // choose() counting persons (policy `person:`): a pair qualifies when
  // both sides keep at least k distinct persons. A person whose rows carry
  // several values (or NULL) is on both sides of a split on them. Per
  // attribute, from the node's distinct (person, value) pairs: left(v) is
  // the persons with v, right(v) the node's persons but those with v alone.
  std::optional<Candidate> choose_by_person(size_t begin, size_t end) {
    const uint64_t k = options_.k;
    const size_t pi = table_.person_index();
    const uint32_t* codes = table_.codes().data();
    // Runs of one person (rows are grouped by person, constructor).
    runs_.clear();
    for (size_t i = begin; i < end;) {
      size_t j = i + 1;
      const uint32_t p = codes[size_t{order_[i]} * width_ + pi];
      while (j < end && codes[size_t{order_[j]} * width_ + pi] == p) ++j;
      runs_.push_back({i, j});
      i = j;
    }
    const uint64_t total = runs_.size();
    if (total < 2 * k) return std::nullopt;
    candidates_.clear();
    for (int a = 0; a < attrs_; ++a) {
      auto& counts = counts_[a];
      auto& only = only_[a];
      auto& seen = seen_in_run_[a];
      for (const auto& [rb, re] : runs_) {
        ++run_;
        uint32_t distinct = 0, value = kNullCode;
        bool null = false;
        for (size_t x = rb; x < re; ++x) {
          const uint32_t c = codes[size_t{order_[x]} * width_ + static_cast<size_t>(a)];
          if (c == kNullCode) {
            null = true;
            continue;
          }
          if (seen[c] == run_) continue;
          seen[c] = run_;
          if (counts[c] == 0 && only[c] == 0) touched_[a].push_back(c);
          ++counts[c];
          ++distinct;
          value = c;
        }
        // One value and no NULL: the person is wholly on the left of it.
        if (distinct == 1 && !null) ++only[value];
      }
      for (uint32_t c : touched_[a]) {
        const uint64_t left = counts[c], right = total - only[c];
        counts[c] = only[c] = 0;
        if (left >= k && right >= k) candidates_.push_back({left, a, c});
      }
      touched_[a].clear();
    }
    return best(begin, end);
  }

  // The best of candidates_ (most rows or persons, then policy order, then
  // value) that keeps l-diversity, or nullopt.
  std::optional<Candidate> best(size_t begin, size_t end) {
    if (candidates_.empty()) return std::nullopt;
    auto better = [&](const Candidate& x, const Candidate& y) {
      if (x.count != y.count) return x.count > y.count;
      if (x.attribute != y.attribute) return x.attribute < y.attribute;
      const auto& d = table_.attribute(x.attribute).dictionary;
      return d.decode(x.code) < d.decode(y.code);  // std::string compares bytes as unsigned
    };
    if (options_.l == 0) return *std::min_element(candidates_.begin(), candidates_.end(), better);
    std::sort(candidates_.begin(), candidates_.end(), better);
    for (const auto& cand : candidates_)
      if (diverse(begin, end, cand)) return cand;
    return std::nullopt;
  }

  // The start tree's split (attribute = value) when it still holds in rows
  // order_[begin, end), or nullopt.
  std::optional<Candidate> keep(size_t begin, size_t end, uint64_t n, int attribute,
                                const std::string& value) {
    const auto code = table_.attribute(attribute).dictionary.find(value);
    if (!code) return std::nullopt;
    uint64_t count = 0, right = 0;
    if (table_.has_person()) {
      count = persons(begin, end, [&](uint32_t row) {
        return table_.code(row, static_cast<size_t>(attribute)) == *code;
      });
      right = persons(begin, end, [&](uint32_t row) {
        return table_.code(row, static_cast<size_t>(attribute)) != *code;
      });
    } else {
      for (size_t i = begin; i < end; ++i)
        if (table_.code(order_[i], attribute) == *code) count += table_.weights()[order_[i]];
      right = n - count;
    }
    const Candidate cand{count, attribute, *code};
    if (count < options_.k || right < options_.k) return std::nullopt;
    if (options_.l > 0 && !diverse(begin, end, cand)) return std::nullopt;
    return cand;
  }

  // Splits order_[begin, end) stably; returns the end of the left part.
  size_t partition(size_t begin, size_t end, const Candidate& cand) {
    size_t l = begin, r = 0;
    for (size_t i = begin; i < end; ++i) {
      const uint32_t row = order_[i];
      if (table_.code(row, cand.attribute) == cand.code) {
        order_[l++] = row;
      } else {
        tmp_[r++] = row;
      }
    }
    std::copy(tmp_.begin(), tmp_.begin() + static_cast<std::ptrdiff_t>(r), order_.begin() + l);
    return l;
  }

  uint64_t weight(size_t begin, size_t end) const {
    uint64_t w = 0;
    for (size_t i = begin; i < end; ++i) w += table_.weights()[order_[i]];
    return w;
  }

 private:
  // Distinct persons among rows order_[begin, end) that `take` (all by
  // default); a NULL person counts as one.
  template <typename Take = bool (*)(uint32_t)>
  uint64_t persons(
      size_t begin, size_t end, Take take = [](uint32_t) { return true; }) {
    const size_t pi = table_.person_index();
    const size_t null_slot = person_seen_.size() - 1;
    uint64_t n = 0;
    seen_list_.clear();
    for (size_t i = begin; i < end; ++i) {
      const uint32_t row = order_[i];
      if (!take(row)) continue;
      const uint32_t p = table_.code(row, pi);
      const size_t slot = p == kNullCode ? null_slot : p;
      if (person_seen_[slot]) continue;
      person_seen_[slot] = 1;
      seen_list_.push_back(static_cast<uint32_t>(slot));
      ++n;
    }
    for (uint32_t slot : seen_list_) person_seen_[slot] = 0;
    seen_list_.clear();
    return n;
  }

  bool diverse(size_t begin, size_t end, const Candidate& cand) {
    const size_t s = table_.attribute_count();
    uint32_t left = 0, right = 0;
    seen_list_.clear();
    for (size_t i = begin; i < end; ++i) {
      const uint32_t row = order_[i];
      const uint32_t sv = table_.code(row, s);
      if (sv == kNullCode) continue;
      const bool is_left = table_.code(row, cand.attribute) == cand.code;
      auto& seen = is_left ? left_seen_ : right_seen_;
      if (!seen[sv]) {
        seen[sv] = 1;
        seen_list_.push_back(sv);
        ++(is_left ? left : right);
      }
    }
    for (uint32_t sv : seen_list_) left_seen_[sv] = right_seen_[sv] = 0;
    return left >= options_.l && right >= options_.l;
  }

  const EncodedTable& table_;
  const TreeOptions& options_;
  const size_t width_;
  const int attrs_;
  std::vector<uint32_t> order_, tmp_;
  std::vector<std::vector<uint64_t>> counts_;
  std::vector<std::vector<uint32_t>> touched_;
  std::vector<Candidate> candidates_;
  std::vector<uint8_t> left_seen_, right_seen_;
  std::vector<uint32_t> seen_list_;
  // With a person column: persons seen (one slot per person code, the last
  // for NULL), per attribute and value the persons with that value alone
  // and the run it was last seen in, and the node's runs of one person.
  std::vector<uint8_t> person_seen_;
  std::vector<std::vector<uint64_t>> only_;
  std::vector<std::vector<uint64_t>> seen_in_run_;
  uint64_t run_ = 0;
  std::vector<std::pair<size_t, size_t>> runs_;
};

}  // namespace

DisclosureTree DisclosureTree::build(const EncodedTable& table, const TreeOptions& options) {
  return regrow(table, options, DisclosureTree{}, true);
}

DisclosureTree DisclosureTree::regrow(const EncodedTable& table, const TreeOptions& options,
                                      const DisclosureTree& start, bool refine) {
  DisclosureTree tree;
  tree.options_ = options;
  for (const auto& a : table.attributes()) tree.attributes_.push_back(a.name);
  const bool use_start = !start.nodes_.empty() && start.attributes_ == tree.attributes_;
  Builder b(table, options);

  struct Pending {
    int node;
    size_t begin, end;
    int start;  // the node of `start` this one follows, or -1
  };
  TreeNode root;
  root.rows = table.total_rows();
  root.label.assign(1, 'D');
  tree.nodes_.push_back(std::move(root));
  std::deque<Pending> queue{{0, 0, table.distinct_rows(), use_start ? 0 : -1}};
  while (!queue.empty()) {
    const Pending p = queue.front();
    queue.pop_front();
    if (tree.nodes_.size() + 2 > options.max_nodes) break;
    std::optional<Candidate> cand;
    int start_left = -1, start_right = -1;
    if (p.start >= 0 && !start.nodes_[p.start].leaf()) {
      const TreeNode& s = start.nodes_[p.start];
      cand = b.keep(p.begin, p.end, tree.nodes_[p.node].rows, s.attribute, s.value);
      if (cand) {
        start_left = s.left;
        start_right = s.right;
      }
    }
    if (!cand && refine) cand = b.choose(p.begin, p.end, tree.nodes_[p.node].rows);
    if (!cand) continue;
    const size_t mid = b.partition(p.begin, p.end, *cand);
    const int left = static_cast<int>(tree.nodes_.size());
    TreeNode& parent = tree.nodes_[p.node];
    parent.attribute = cand->attribute;
    parent.value = table.attribute(cand->attribute).dictionary.decode(cand->code);
    parent.left = left;
    parent.right = left + 1;
    TreeNode l, r;
    l.parent = r.parent = p.node;
    l.rows = b.weight(p.begin, mid);  // rows (cand->count may count persons)
    r.rows = parent.rows - l.rows;
    l.released = parent.released | (uint64_t{1} << cand->attribute);
    r.released = parent.released;
    l.label = r.label = parent.label;
    l.label.push_back('1');
    r.label.push_back('2');
    tree.nodes_.push_back(std::move(l));
    tree.nodes_.push_back(std::move(r));
    // Below a split that is not the start's, the start no longer applies;
    // without `refine`, such splits are never made.
    queue.push_back({left, p.begin, mid, start_left});
    queue.push_back({left + 1, mid, p.end, start_right});
  }
  return tree;
}

DisclosureTree DisclosureTree::from_nodes(std::vector<std::string> attributes,
                                          std::vector<TreeNode> nodes, const TreeOptions& options) {
  auto bad = [](const std::string& why) { throw std::invalid_argument("stored tree: " + why); };
  if (nodes.empty()) bad("no nodes");
  if (attributes.size() > 64) bad("more than 64 attributes");
  std::vector<int> seen(nodes.size(), 0);
  seen[0] = 1;
  nodes[0].parent = -1;
  nodes[0].released = 0;
  nodes[0].label = "D";
  for (size_t i = 0; i < nodes.size(); ++i) {
    TreeNode& n = nodes[i];
    if (!seen[i]) bad("node " + std::to_string(i) + " has no parent");
    if (n.leaf()) {
      n.left = n.right = -1;
      continue;
    }
    if (n.attribute >= static_cast<int>(attributes.size())) bad("attribute out of range");
    for (int c : {n.left, n.right})
      if (c <= static_cast<int>(i) || c >= static_cast<int>(nodes.size()) || seen[c]++)
        bad("bad child of node " + std::to_string(i));
    TreeNode& l = nodes[n.left];
    TreeNode& r = nodes[n.right];
    l.parent = r.parent = static_cast<int>(i);
    l.released = n.released | (uint64_t{1} << n.attribute);
    r.released = n.released;
    l.label = n.label + "1";
    r.label = n.label + "2";
  }
  DisclosureTree tree;
  tree.attributes_ = std::move(attributes);
  tree.nodes_ = std::move(nodes);
  tree.options_ = options;
  return tree;
}

DisclosureTree DisclosureTree::collapsed(std::span<const int> nodes) const {
  std::vector<uint8_t> cut(nodes_.size(), 0);
  for (int n : nodes) cut[static_cast<size_t>(n)] = 1;
  DisclosureTree tree;
  tree.attributes_ = attributes_;
  tree.options_ = options_;
  std::deque<std::pair<int, int>> queue{{0, -1}};  // (old node, new parent)
  while (!queue.empty()) {
    const auto [old, parent] = queue.front();
    queue.pop_front();
    const int index = static_cast<int>(tree.nodes_.size());
    TreeNode n = nodes_[old];
    n.parent = parent;
    if (parent >= 0) {
      TreeNode& p = tree.nodes_[parent];
      const bool is_left = p.left < 0;
      (is_left ? p.left : p.right) = index;
      n.label = p.label + (is_left ? "1" : "2");
    }
    const bool keep = !n.leaf() && !cut[old];
    const int l = n.left, r = n.right;
    n.left = n.right = -1;
    if (!keep) n.attribute = -1, n.value.clear();
    tree.nodes_.push_back(std::move(n));
    if (keep) {
      queue.push_back({l, index});
      queue.push_back({r, index});
    }
  }
  return tree;
}

int DisclosureTree::depth() const {
  std::vector<int> d(nodes_.size(), 0);
  int best = 0;
  for (size_t i = 1; i < nodes_.size(); ++i) {
    d[i] = d[static_cast<size_t>(nodes_[i].parent)] + 1;
    best = std::max(best, d[i]);
  }
  return best;
}

std::vector<int> DisclosureTree::leaves() const {
  std::vector<int> out, stack{0};
  while (!stack.empty()) {
    const int n = stack.back();
    stack.pop_back();
    if (nodes_[n].leaf()) {
      out.push_back(n);
    } else {
      stack.push_back(nodes_[n].right);
      stack.push_back(nodes_[n].left);
    }
  }
  return out;
}

std::vector<PathCondition> DisclosureTree::path(int node) const {
  std::vector<PathCondition> out;
  for (int n = node; nodes_[n].parent >= 0; n = nodes_[n].parent) {
    const TreeNode& p = nodes_[nodes_[n].parent];
    out.push_back({p.attribute, p.value, p.left == n});
  }
  std::reverse(out.begin(), out.end());
  return out;
}

int DisclosureTree::leaf_of(std::span<const std::optional<std::string_view>> values) const {
  int n = 0;
  while (!nodes_[n].leaf()) {
    const auto& v = values[static_cast<size_t>(nodes_[n].attribute)];
    n = (v && *v == nodes_[n].value) ? nodes_[n].left : nodes_[n].right;
  }
  return n;
}

std::vector<std::optional<std::string>> DisclosureTree::release(
    std::span<const std::optional<std::string_view>> values) const {
  const uint64_t released = nodes_[leaf_of(values)].released;
  std::vector<std::optional<std::string>> out(attributes_.size());
  for (size_t i = 0; i < attributes_.size(); ++i)
    if ((released >> i & 1) && values[i]) out[i] = std::string(*values[i]);
  return out;
}

bool DisclosureTree::same_splits(const DisclosureTree& other) const {
  if (attributes_ != other.attributes_ || nodes_.size() != other.nodes_.size()) return false;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const TreeNode &a = nodes_[i], &b = other.nodes_[i];
    if (a.attribute != b.attribute || a.left != b.left || a.right != b.right) return false;
    if (!a.leaf() && a.value != b.value) return false;
  }
  return true;
}

}  // namespace kanon::policy
