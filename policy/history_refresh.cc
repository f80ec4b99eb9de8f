#include "policy/history_refresh.h"

#include <algorithm>
#include <bit>

namespace kanon::policy {
namespace {

// The leaf of every distinct row of `table` under `tree`, walking codes.
std::vector<int32_t> leaves_by_row(const DisclosureTree& tree, const EncodedTable& table) {
  const auto& nodes = tree.nodes();
  std::vector<uint32_t> split_code(nodes.size(), kNullCode);
  for (size_t n = 0; n < nodes.size(); ++n) {
    if (nodes[n].leaf()) continue;
    const auto code =
        table.attribute(static_cast<size_t>(nodes[n].attribute)).dictionary.find(nodes[n].value);
    // A value absent from the table matches no row; kNullCode never equals a
    // row's code at a split either (NULL goes right).
    split_code[n] = code ? *code : kNullCode;
  }
  std::vector<int32_t> out(table.distinct_rows());
  for (size_t row = 0; row < out.size(); ++row) {
    size_t n = 0;
    while (!nodes[n].leaf()) {
      const uint32_t c = table.code(row, static_cast<size_t>(nodes[n].attribute));
      n = static_cast<size_t>(c != kNullCode && c == split_code[n] ? nodes[n].left
                                                                   : nodes[n].right);
    }
    out[row] = static_cast<int32_t>(n);
  }
  return out;
}

}  // namespace

std::vector<int32_t> leaves_of(const DisclosureTree& tree, const EncodedTable& table,
                               std::span<const uint32_t> rows) {
  const auto by_row = leaves_by_row(tree, table);
  std::vector<int32_t> out(rows.size(), kAbsent);
  for (size_t key = 0; key < rows.size(); ++key)
    if (rows[key] != kNoRow) out[key] = by_row[rows[key]];
  return out;
}

double released_fraction(const DisclosureTree& tree, const EncodedTable& table) {
  const size_t attrs = table.attribute_count();
  if (attrs == 0 || table.total_rows() == 0) return 0;
  const auto by_row = leaves_by_row(tree, table);
  uint64_t cells = 0;
  for (size_t row = 0; row < by_row.size(); ++row) {
    const uint64_t released = tree.nodes()[static_cast<size_t>(by_row[row])].released;
    uint64_t n = 0;
    for (size_t a = 0; a < attrs; ++a)
      if ((released >> a & 1) && table.code(row, a) != kNullCode) ++n;
    cells += n * table.weights()[row];
  }
  return static_cast<double>(cells) / static_cast<double>(table.total_rows() * attrs);
}

std::optional<std::vector<int32_t>> catch_up(const ReleaseHistory& history,
                                             const EncodedTable& table,
                                             std::span<const uint32_t> rows) {
  if (history.empty()) return std::nullopt;
  const size_t last = history.versions().size() - 1;
  auto leaves = leaves_of(history.last().tree, table, rows);
  bool changed = false;
  for (size_t key = 0; key < leaves.size() && !changed; ++key)
    changed =
        leaves[key] != kAbsent && leaves[key] != history.leaf(last, static_cast<uint32_t>(key));
  if (!changed) return std::nullopt;
  return leaves;
}

HistoryRefresh history_refresh(const ReleaseHistory& history, const EncodedTable& table,
                               std::span<const uint32_t> rows, const TreeOptions& options) {
  HistoryRefresh out;
  if (history.empty()) {
    out.tree = DisclosureTree::build(table, options);
    out.leaves = leaves_of(out.tree, table, rows);
    return out;
  }
  auto columns = history.columns();
  for (auto& c : columns) c.resize(rows.size(), kAbsent);
  // Keys below k even when this release adds nothing (the root alone): an
  // earlier release left them there (e.g. a live mode showed new rows under
  // a leaf that had fallen below k); no tree fixes them, so they do not
  // drive the collapses (check still counts them).
  std::vector<uint8_t> unfixable(rows.size(), 0);
  {
    std::vector<int32_t> root(rows.size(), kAbsent);
    for (size_t key = 0; key < rows.size(); ++key)
      if (rows[key] != kNoRow) root[key] = 0;
    columns.push_back(std::move(root));
    for (uint32_t key : check_history(columns, options.k, true).below) unfixable[key] = 1;
    columns.pop_back();
  }
  out.tree = DisclosureTree::regrow(table, options, history.last().tree);
  for (;;) {
    out.leaves = leaves_of(out.tree, table, rows);
    columns.push_back(out.leaves);
    out.check = check_history(columns, options.k, true);
    columns.pop_back();
    if (out.check.rows_below_k == 0 || out.tree.size() == 1) break;
    // The parent of each offending key's leaf; a parent whose ancestor is
    // also listed goes with it.
    std::vector<int> parents;
    for (uint32_t key : out.check.below) {
      if (unfixable[key]) continue;
      const int leaf = out.leaves[key];
      const int parent = out.tree.nodes()[static_cast<size_t>(leaf)].parent;
      if (parent >= 0) parents.push_back(parent);
    }
    std::sort(parents.begin(), parents.end());
    parents.erase(std::unique(parents.begin(), parents.end()), parents.end());
    if (parents.empty()) break;
    out.tree = out.tree.collapsed(parents);
    ++out.rounds;
    out.collapsed += static_cast<uint32_t>(parents.size());
  }
  return out;
}

}  // namespace kanon::policy
