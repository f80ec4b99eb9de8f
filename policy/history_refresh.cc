#include "policy/history_refresh.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>
#include <unordered_map>

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

double released_fraction(const DisclosureTree& tree, const EncodedTable& table,
                         std::span<const uint32_t> rows, std::span<const int32_t> leaves,
                         std::span<const uint64_t> held_keys) {
  const size_t attrs = table.attribute_count();
  if (attrs == 0 || table.total_rows() == 0) return 0;
  double fraction = released_fraction(tree, table);
  uint64_t held_cells = 0;
  for (size_t key = 0; key < leaves.size() && key < rows.size(); ++key) {
    const uint64_t held = held_keys.empty() ? (is_held(leaves[key]) ? 1 : 0)
                                            : (key < held_keys.size() ? held_keys[key] : 0);
    if (held == 0 || rows[key] == kNoRow) continue;
    const uint64_t released = tree.nodes()[static_cast<size_t>(true_leaf(leaves[key]))].released;
    for (size_t a = 0; a < attrs; ++a)
      if ((released >> a & 1) && table.code(rows[key], a) != kNullCode) held_cells += held;
  }
  return fraction -
         static_cast<double>(held_cells) / static_cast<double>(table.total_rows() * attrs);
}

std::vector<uint32_t> persons_of(const EncodedTable& table, std::span<const uint32_t> rows) {
  std::vector<uint32_t> out;
  if (!table.has_person()) return out;
  const auto null_person = static_cast<uint32_t>(table.person_count());
  out.assign(rows.size(), null_person + 1);  // not in the table: one unknown person
  for (size_t key = 0; key < rows.size(); ++key) {
    if (rows[key] == kNoRow) continue;
    const uint32_t code = table.code(rows[key], table.person_index());
    out[key] = code == kNullCode ? null_person : code;
  }
  return out;
}

namespace {

// Step 4 (history_refresh.h): holds keys of `columns.back()` until no key
// present in it is below its goal (k, or fewer when even the root alone
// gives it fewer candidates: `goal` per key), or nothing more can be held. `cost` per key: what
// holding it costs (held in the previous release first, a target keeps needing its helpers; then
// the fewest released cells). Works on groups of keys with the same entries in every release (few
// next to the keys). A key index standing for several row keys (`weights`) is held whole or split:
// the part held is appended as a new index (to every column, `weights`, `cost` and `origin`, which
// names the index it came from). Returns the row keys held.
// Counting persons (`person_of`, per original key index; empty: rows), a key
// index is held whole: a part of it would add no person but its own.
uint64_t hold_below_k(std::vector<std::vector<int32_t>>& columns, uint64_t k,
                      std::vector<uint32_t>& cost, std::vector<uint64_t>& weights,
                      std::vector<uint32_t>& origin, const std::vector<uint64_t>& goal,
                      const std::vector<uint32_t>& person_of) {
  const size_t v = columns.size();
  auto& now = columns.back();
  uint64_t held = 0;
  uint32_t person_codes = 0;
  for (uint32_t p : person_of)
    if (p != kNullCode) person_codes = std::max(person_codes, p + 1);
  std::vector<uint32_t> counted_for(person_codes, UINT32_MAX);
  uint32_t stamp = 0;             // one per target counted
  std::vector<uint32_t> persons;  // per key index now
  for (;;) {
    const size_t keys = now.size();
    persons.clear();
    if (!person_of.empty())
      for (size_t key = 0; key < keys; ++key) persons.push_back(person_of[origin[key]]);
    const HistoryCheck check = check_history(columns, k, true, {}, weights, persons);
    if (check.below.empty()) break;
    // Groups: signature -> keys (the last entry decides what holding does).
    std::unordered_map<std::string, uint32_t> index;
    std::vector<std::vector<uint32_t>> members;
    std::vector<uint32_t> group_of(keys, UINT32_MAX);
    std::string sig(v * sizeof(int32_t), '\0');
    for (uint32_t key = 0; key < keys; ++key) {
      // A key not in this release is nobody's candidate (history_check.h).
      if (now[key] == kAbsent) continue;
      for (size_t i = 0; i < v; ++i) {
        const int32_t e = columns[i][key];
        std::memcpy(sig.data() + i * sizeof e, &e, sizeof e);
      }
      const auto [it, inserted] = index.try_emplace(sig, static_cast<uint32_t>(members.size()));
      if (inserted) members.emplace_back();
      members[it->second].push_back(key);
      group_of[key] = it->second;
    }
    // A representative key per group reads its entries; counts (of row
    // keys) change as keys are held (a held key moves to no group: it
    // matches any target now and the earlier entries of its group).
    std::vector<uint32_t> rep(members.size());
    std::vector<uint64_t> shown_count(members.size(), 0), held_count(members.size(), 0);
    std::vector<size_t> next_shown(members.size());  // members still shown: [0, next_shown)
    for (size_t g = 0; g < members.size(); ++g) {
      rep[g] = members[g].front();
      for (uint32_t key : members[g])
        (shown(now[key]) ? shown_count : held_count)[g] += weights[key];
      next_shown[g] = shown(now[rep[g]]) ? members[g].size() : 0;
    }
    std::vector<uint8_t> done(members.size(), 0);
    bool progress = false;
    std::vector<uint32_t> options;
    for (uint32_t r : check.below) {
      const uint32_t tg = group_of[r];
      if (done[tg]) continue;
      const uint64_t want = goal[origin[r]];
      done[tg] = 1;
      const int32_t target = true_leaf(now[r]);
      uint64_t c = 0;
      ++stamp;
      // A candidate key: its row keys, or its person when not counted yet.
      const auto count = [&](uint32_t key, uint64_t n) {
        if (persons.empty()) {
          c += n;
        } else if (counted_for[persons[key]] != stamp) {
          counted_for[persons[key]] = stamp;
          ++c;
        }
      };
      options.clear();
      for (uint32_t g = 0; g < members.size(); ++g) {
        const uint32_t key = rep[g];
        bool earlier = true;
        for (size_t i = 0; i + 1 < v && earlier; ++i) {
          const int32_t x = columns[i][r], y = columns[i][key];
          earlier = (x == kAbsent) == (y == kAbsent) && (!shown(y) || true_leaf(x) == y);
        }
        if (!earlier) continue;
        if (!persons.empty()) {
          // Held members match; shown ones where they show the target's leaf.
          bool other = false;
          for (uint32_t m : members[g]) {
            if (!shown(now[m]) || now[m] == target)
              count(m, 0);
            else
              other = true;
          }
          if (other) options.push_back(g);
          continue;
        }
        c += held_count[g];
        if (shown_count[g] == 0) continue;
        if (now[key] == target)
          c += shown_count[g];
        else
          options.push_back(g);
      }
      if (c >= want) continue;
      std::sort(options.begin(), options.end(), [&](uint32_t a, uint32_t b) {
        return cost[rep[a]] != cost[rep[b]] ? cost[rep[a]] < cost[rep[b]] : a < b;
      });
      for (size_t o = 0; o < options.size() && c < want; ++o) {
        const uint32_t g = options[o];
        // Hold the group's keys still shown, last first.
        auto& m = members[g];
        while (c < want && next_shown[g] > 0) {
          const uint32_t key = m[next_shown[g] - 1];
          const uint64_t n =
              persons.empty() ? std::min<uint64_t>(weights[key], want - c) : weights[key];
          if (!persons.empty())
            count(key, 0);
          else
            c += n;
          if (n == weights[key]) {
            now[key] = held_leaf(now[key]);
            --next_shown[g];
          } else {
            // Hold n of the row keys `key` stands for: a new index.
            for (size_t i = 0; i + 1 < v; ++i) columns[i].push_back(columns[i][key]);
            now.push_back(held_leaf(now[key]));
            weights[key] -= n;
            weights.push_back(n);
            cost.push_back(cost[key]);
            origin.push_back(origin[key]);
          }
          shown_count[g] -= n;
          held_count[g] += n;
          held += n;
          progress = true;
        }
      }
    }
    if (!progress) break;
  }
  return held;
}

}  // namespace

HistoryRefresh history_refresh(const ReleaseHistory& history, const EncodedTable& table,
                               std::span<const uint32_t> rows, const TreeOptions& options,
                               bool hold) {
  HistoryRefresh out;
  if (history.empty()) {
    out.tree = DisclosureTree::build(table, options);
    out.leaves = leaves_of(out.tree, table, rows);
    out.released_fraction = released_fraction(out.tree, table);
    return out;
  }
  auto columns = history.columns();
  for (auto& c : columns) c.resize(rows.size(), kAbsent);
  std::vector<uint64_t> weights(history.weights().begin(), history.weights().end());
  weights.resize(rows.size(), 1);
  const std::vector<uint32_t> persons = persons_of(table, rows);
  // Updated keys: moved in an earlier release with an unchanged tree (a
  // live mode's catch-up), or placed elsewhere by the last tree now.
  std::vector<uint8_t> updated = history.moved_keys();
  updated.resize(rows.size(), 0);
  {
    const auto now = leaves_of(history.last().tree, table, rows);
    const auto& last = columns.back();
    for (size_t key = 0; key < rows.size(); ++key)
      if (now[key] != kAbsent && last[key] != kAbsent && true_leaf(last[key]) != now[key])
        updated[key] = 1;
  }
  // Each key's goal: k, or what the root alone gives it when that is less
  // (an earlier release or deletions left it below k, or fewer than k keys
  // arrived with it): no tree and no hold does better, so the collapses and
  // holds only keep it from losing more (the check still counts it). New
  // keys do not drive the collapses: with holds, step 4 answers them (mode:
  // materialized); a live mode has shown them already (catch_up).
  const std::vector<int32_t> last_release = columns.back();
  std::vector<uint64_t> goal(rows.size(), options.k);
  {
    std::vector<int32_t> root(rows.size(), kAbsent);
    for (size_t key = 0; key < rows.size(); ++key)
      if (rows[key] != kNoRow) root[key] = 0;
    columns.push_back(std::move(root));
    const auto at_root = check_history(columns, options.k, true, {}, weights, persons);
    for (size_t i = 0; i < at_root.below.size(); ++i)
      goal[at_root.below[i]] = at_root.below_candidates[i];
    columns.pop_back();
  }
  std::vector<uint8_t> skip = updated;
  for (size_t key = 0; key < rows.size(); ++key) {
    bool earlier = false;
    for (const auto& c : columns) earlier = earlier || c[key] != kAbsent;
    if (!earlier) skip[key] = 1;
  }
  out.tree = DisclosureTree::regrow(table, options, history.last().tree);
  for (;;) {
    out.leaves = leaves_of(out.tree, table, rows);
    // With holds, the updated keys' moves are step 4's to answer: the
    // collapses look at this release as if they were held.
    columns.push_back(out.leaves);
    if (hold)
      for (size_t key = 0; key < rows.size(); ++key)
        if ((updated[key] || is_held(last_release[key])) && shown(columns.back()[key]))
          columns.back()[key] = held_leaf(columns.back()[key]);
    out.check = check_history(columns, options.k, true, {}, weights, persons);
    columns.pop_back();
    if (out.check.below.empty() || out.tree.size() == 1) break;
    // The parent of each offending key's leaf; a parent whose ancestor is
    // also listed goes with it.
    std::vector<int> parents;
    for (size_t i = 0; i < out.check.below.size(); ++i) {
      const uint32_t key = out.check.below[i];
      if (skip[key] || out.check.below_candidates[i] >= goal[key]) continue;
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
  columns.push_back(std::move(out.leaves));
  if (hold) {
    std::vector<uint32_t> cost(rows.size(), 0);
    const size_t attrs = table.attribute_count();
    for (size_t key = 0; key < rows.size(); ++key) {
      const int32_t leaf = columns.back()[key];
      if (!shown(leaf)) continue;
      const uint64_t released = out.tree.nodes()[static_cast<size_t>(leaf)].released;
      uint32_t cells = 0;
      for (size_t a = 0; a < attrs; ++a) cells += released >> a & 1;
      cost[key] = is_held(last_release[key]) ? 0 : 1 + cells;
    }
    std::vector<uint32_t> origin(rows.size());
    for (uint32_t key = 0; key < rows.size(); ++key) origin[key] = key;
    auto split_weights = weights;
    out.held = hold_below_k(columns, options.k, cost, split_weights, origin, goal, persons);
    std::vector<uint32_t> split_persons;
    if (!persons.empty())
      for (uint32_t from : origin) split_persons.push_back(persons[from]);
    out.check = check_history(columns, options.k, true, {}, split_weights, split_persons);
    // Fold the parts held back into the keys they came from.
    auto& now = columns.back();
    out.held_keys.assign(rows.size(), 0);
    for (size_t key = 0; key < now.size(); ++key)
      if (is_held(now[key])) out.held_keys[origin[key]] += split_weights[key];
    now.resize(rows.size());
    for (size_t key = 0; key < rows.size(); ++key)
      if (out.held_keys[key] == weights[key] && shown(now[key])) now[key] = held_leaf(now[key]);
  } else {
    out.check = check_history(columns, options.k, true, updated, weights, persons);
  }
  out.leaves = std::move(columns.back());
  out.released_fraction = released_fraction(out.tree, table, rows, out.leaves, out.held_keys);
  return out;
}

}  // namespace kanon::policy
