// Releases over time counted in persons (policy `person:`): check_history
// with a person per key against a naive counter, and history-aware refreshes
// of a transactions table, whose releases are checked by counting the
// distinct persons behind every linked key's released tuples (text, no leaf
// ids, no code of the check).
#include <doctest/doctest.h>

#include <map>
#include <random>
#include <set>

#include "policy/history_check.h"
#include "policy/history_refresh.h"

using namespace kanon::policy;

namespace {

// Whether key `b` can be the target `a` in every release (history_check.h):
// the same presence, and wherever present b shows a's true leaf or is held.
bool matches(const std::vector<std::vector<int32_t>>& columns, size_t a, size_t b) {
  for (const auto& c : columns) {
    if ((c[a] == kAbsent) != (c[b] == kAbsent)) return false;
    if (c[b] != kAbsent && shown(c[b]) && true_leaf(c[a]) != c[b]) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("check_history with persons: candidates are the distinct persons of matching keys") {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    CAPTURE(seed);
    std::mt19937_64 rng(seed);
    const size_t releases = 2 + rng() % 3, keys = 5 + rng() % 60, people = 1 + rng() % 25;
    const uint64_t k = 2 + rng() % 5;
    std::vector<std::vector<int32_t>> columns(releases, std::vector<int32_t>(keys));
    for (auto& c : columns)
      for (auto& e : c) {
        const auto roll = rng() % 10;
        const int32_t leaf = static_cast<int32_t>(rng() % 3);
        e = roll == 0 ? kAbsent : roll == 1 ? held_leaf(leaf) : leaf;
      }
    std::vector<uint32_t> persons(keys);
    std::vector<uint64_t> weights(keys);
    for (size_t key = 0; key < keys; ++key) {
      persons[key] = static_cast<uint32_t>(rng() % people);
      weights[key] = 1 + rng() % 3;
    }
    const HistoryCheck check = check_history(columns, k, true, {}, weights, persons);
    // Naive: per key present in the last release, the persons that can be it.
    std::map<uint32_t, uint64_t> below;
    uint64_t min = UINT64_MAX, below_rows = 0;
    for (size_t a = 0; a < keys; ++a) {
      if (columns.back()[a] == kAbsent) continue;
      std::set<uint32_t> who;
      for (size_t b = 0; b < keys; ++b)
        if (matches(columns, a, b)) who.insert(persons[b]);
      min = std::min<uint64_t>(min, who.size());
      if (who.size() < k) {
        below[static_cast<uint32_t>(a)] = who.size();
        below_rows += weights[a];
      }
    }
    CHECK(check.min_candidates == (min == UINT64_MAX ? 0 : min));
    std::map<uint32_t, uint64_t> listed;
    for (size_t i = 0; i < check.below.size(); ++i)
      listed[check.below[i]] = check.below_candidates[i];
    CHECK(listed == below);
    CHECK(check.rows_below_k + check.late_rows_below_k + check.deleted_rows_below_k == below_rows);
    // Every key a person of its own: the row count (weights all 1).
    std::vector<uint32_t> own(keys);
    for (size_t key = 0; key < keys; ++key) own[key] = static_cast<uint32_t>(key);
    const auto by_rows = check_history(columns, k, true);
    const auto by_own = check_history(columns, k, true, {}, {}, own);
    CHECK(by_own.below == by_rows.below);
    CHECK(by_own.below_candidates == by_rows.below_candidates);
  }
}

namespace {

// A transactions table: per row key its person and (age, sex, zip).
struct Purchase {
  std::string person, age, sex, zip;
};
using Purchases = std::map<std::string, Purchase>;

// The table with its person column, every key interned in `history`.
EncodedTable encode(const Purchases& rows, ReleaseHistory& history, std::vector<uint32_t>& at) {
  EncodedTable t({{"age", "text", {}}, {"sex", "text", {}}, {"zip", "text", {}}}, std::nullopt,
                 EncodedColumn{"person", "text", {}});
  std::vector<std::pair<uint32_t, uint32_t>> placed;
  for (const auto& [key, r] : rows) {
    const std::vector<std::optional<std::string_view>> v = {r.age, r.sex, r.zip, r.person};
    placed.push_back({history.intern(key), t.add_row(v)});
  }
  at.assign(history.key_count(), kNoRow);
  for (auto [k, r] : placed) at[k] = r;
  return t;
}

// A key's released tuple as text; a held key's is "held".
std::string tuple_of(const DisclosureTree& tree, const Purchase& r, bool held) {
  if (held) return "held";
  const std::vector<std::optional<std::string_view>> v = {r.age, r.sex, r.zip};
  std::string s;
  for (const auto& x : tree.release(v)) s += (x ? "=" + *x : std::string("*")) + "|";
  return s;
}

std::string true_tuple(const DisclosureTree& tree, const Purchase& r) {
  return tuple_of(tree, r, false);
}

Purchase random_purchase(std::mt19937_64& rng, const std::string& person) {
  return {person, std::to_string(20 + rng() % 8), rng() % 2 ? "F" : "M",
          std::to_string(1000 + rng() % 5)};
}

}  // namespace

TEST_CASE("history_refresh with persons: every linked purchase keeps k persons") {
  for (const bool hold : {true, false}) {
    for (uint64_t seed = 1; seed <= 6; ++seed) {
      CAPTURE(hold);
      CAPTURE(seed);
      std::mt19937_64 rng(seed);
      Purchases rows;
      size_t next = 0;
      const auto add = [&](const Purchase& p) { rows["t" + std::to_string(next++)] = p; };
      for (size_t p = 0; p < 150; ++p) {
        const std::string person = "c" + std::to_string(p);
        const Purchase base = random_purchase(rng, person);
        for (size_t n = 1 + rng() % 5; n > 0; --n)
          add(rng() % 4 ? base : random_purchase(rng, person));
      }
      // A customer with many purchases and values no one else has.
      for (int n = 0; n < 40; ++n) add({"whale", "99", "M", "9999"});
      const TreeOptions options{.k = 4, .l = 0, .max_nodes = 4096};
      ReleaseHistory history;
      // Per release, key -> (person, tuple, true tuple).
      struct Shown {
        std::string person, tuple, truth;
      };
      std::vector<std::map<std::string, Shown>> shown_in;
      uint64_t version = 0;
      const auto refresh = [&] {
        std::vector<uint32_t> at;
        const EncodedTable t = encode(rows, history, at);
        const bool baseline = history.empty();
        const HistoryRefresh r = history_refresh(history, t, at, options, hold);
        std::map<std::string, Shown> shown;
        for (const auto& [key, p] : rows) {
          const auto index = history.find(key);
          const bool held = *index < r.leaves.size() && is_held(r.leaves[*index]);
          shown[key] = {p.person, tuple_of(r.tree, p, held), true_tuple(r.tree, p)};
        }
        history.append({++version, baseline, {}, r.tree, r.leaves});
        shown_in.push_back(std::move(shown));
        return r;
      };
      refresh();
      for (int round = 0; round < 3; ++round) {
        // 5% new purchases: old customers' and new ones'.
        for (int n = 0; n < 30; ++n) {
          const std::string person =
              rng() % 2 ? "c" + std::to_string(rng() % 150) : "n" + std::to_string(round * 100 + n);
          add(random_purchase(rng, person));
        }
        const HistoryRefresh r = refresh();
        CHECK(r.check.rows_below_k == 0);
        // Naive: a key in every release so far; its candidates are the keys
        // in every release showing its true tuple or held there.
        std::map<std::string, std::set<std::string>> persons;
        std::vector<std::string> linked;
        for (const auto& [key, s] : shown_in.back()) {
          bool everywhere = true;
          for (const auto& release : shown_in) everywhere = everywhere && release.count(key);
          if (everywhere) linked.push_back(key);
        }
        for (const auto& a : linked) {
          std::set<std::string> who;
          for (const auto& b : linked) {
            bool can = true;
            for (const auto& release : shown_in) {
              const Shown& x = release.at(a);
              const Shown& y = release.at(b);
              can = can && (y.tuple == "held" || y.tuple == x.truth);
            }
            if (can) who.insert(shown_in.back().at(b).person);
          }
          CAPTURE(a);
          CHECK(who.size() >= options.k);
        }
      }
    }
  }
}
