// The history-aware build loads keys as classes (history_build.h): keys with
// the same leaf in every release and the same current row, one key index
// weighing their number. On ADULT changed in memory, history_refresh on the
// classes gives the tree and figures it gives on the keys one by one; in
// mode: materialized its holds (a class may be held in part), spread over
// the classes' keys, leave no key below k by the count over single keys.
// (The same rows are the unit test's; at ADULT x 32 the build's figures are
// in bench/README.md, policy_bench.)
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <unordered_map>

#include "policy/history_refresh.h"
#include "store/release_store.h"
#include "tests/policy/history_harness.h"
#include "tests/support/demo_data.h"

using namespace kanon::policy;
using kanon::policy::testing::KeyedTable;

namespace {

const char* const kQis[] = {
    "sex",       "age",       "race", "marital-status", "education", "native-country",
    "workclass", "occupation"};

// `keys` grouped into classes; `members` per class its keys, in key order.
struct Classes {
  ReleaseHistory history;
  std::vector<uint32_t> rows;
  std::vector<std::vector<uint32_t>> members;
};

Classes group(const ReleaseHistory& keys, std::span<const uint32_t> rows) {
  Classes out;
  for (const auto& v : keys.versions())
    out.history.append({v.version, v.baseline, v.built_at, v.tree, {}});
  for (uint32_t key = 0; key < rows.size(); ++key) {
    std::string sig = std::to_string(rows[key]);
    for (size_t i = 0; i < keys.versions().size(); ++i) {
      sig.push_back(',');
      sig.append(std::to_string(keys.leaf(i, key)));
    }
    const uint32_t c = out.history.intern(sig);
    if (c == out.rows.size()) {
      out.rows.push_back(rows[key]);
      out.members.emplace_back();
      for (size_t i = 0; i < keys.versions().size(); ++i)
        out.history.set_leaf(i, c, keys.leaf(i, key));
    }
    out.members[c].push_back(key);
    out.history.set_weight(c, out.members[c].size());
  }
  return out;
}

}  // namespace

TEST_CASE("classes of keys refresh like the keys one by one, holds included") {
  const auto adult = kanon::policy::testing::read_adult(kanon::testing::adult_dir() + "/adult.csv",
                                                        std::size(kQis));
  REQUIRE(adult.size() > 30000);
  // ADULT three times over (k 5): rows alike in everything but the key, as
  // in ADULT x N, so classes stand for several keys and holds split some.
  const TreeOptions options{.k = 5, .l = 0, .max_nodes = 4096};
  for (const bool live : {false, true}) {
    CAPTURE(live);
    KeyedTable table({std::begin(kQis), std::end(kQis)});
    for (size_t copy = 0; copy < 3; ++copy)
      for (size_t i = 0; i < adult.size(); ++i)
        table.insert(std::string("a").append(std::to_string(copy * adult.size() + i)), adult[i]);
    ReleaseHistory keys;
    std::vector<uint32_t> rows;
    {
      const EncodedTable t = table.encode(keys, rows);
      auto first = history_refresh(keys, t, rows, options, !live);
      keys.append({1, true, {}, first.tree, std::move(first.leaves)});
    }
    std::mt19937_64 rng(11);
    const size_t n = table.rows().size();
    table.change(rng, n * 4 / 1000, n * 3 / 1000, n * 10 / 1000, "n");
    const EncodedTable t = table.encode(keys, rows);
    if (live)
      if (auto c = catch_up(keys, t, rows))
        keys.append({2, false, {}, keys.last().tree, std::move(*c)});
    const HistoryRefresh by_key = history_refresh(keys, t, rows, options, !live);
    Classes classes = group(keys, rows);
    // Far fewer classes than keys: what the build gains.
    CHECK(classes.rows.size() * 2 < rows.size());
    const HistoryRefresh by_class =
        history_refresh(classes.history, t, classes.rows, options, !live);

    CHECK(tree_json(by_class.tree) == tree_json(by_key.tree));
    CHECK(by_class.rounds == by_key.rounds);
    CHECK(by_class.check.linked_rows == by_key.check.linked_rows);
    CHECK(by_key.check.rows_below_k == 0);
    CHECK(by_class.check.rows_below_k == 0);
    if (live) {
      CHECK(by_class.check.min_candidates == by_key.check.min_candidates);
      CHECK(by_class.check.updated_rows_below_k == by_key.check.updated_rows_below_k);
      CHECK(by_class.check.updated_rows_below_k > 0);
      CHECK(by_class.released_fraction == doctest::Approx(by_key.released_fraction));
      continue;
    }
    // Materialized: spread the holds over the keys (the first keys of a
    // class held in part) and count candidates key by key.
    REQUIRE(by_class.held_keys.size() == classes.rows.size());
    CHECK(by_class.held > 0);
    MESSAGE("held: " << by_class.held << " by classes, " << by_key.held << " by keys; "
                     << classes.rows.size() << " classes for " << rows.size() << " keys");
    auto columns = keys.columns();
    std::vector<int32_t> now(rows.size(), kAbsent);
    uint64_t held = 0, split = 0;
    for (uint32_t c = 0; c < classes.rows.size(); ++c) {
      const auto& m = classes.members[c];
      REQUIRE(by_class.held_keys[c] <= m.size());
      split += by_class.held_keys[c] > 0 && by_class.held_keys[c] < m.size();
      for (size_t i = 0; i < m.size(); ++i) {
        const int32_t e = by_class.leaves[c];
        now[m[i]] =
            e == kAbsent ? kAbsent : (i < by_class.held_keys[c] ? held_leaf(true_leaf(e)) : e);
        held += is_held(now[m[i]]);
      }
    }
    CHECK(held == by_class.held);
    MESSAGE(split << " classes held in part");
    columns.push_back(std::move(now));
    const HistoryCheck single = check_history(columns, options.k);
    CHECK(single.linked_rows == by_class.check.linked_rows);
    CHECK(single.rows_below_k == 0);
    CHECK(single.min_candidates >= options.k);
    CHECK(single.min_candidates == by_class.check.min_candidates);
  }
}

TEST_CASE("a hold takes part of a class: the keys held are counted, the rest stay shown") {
  // One attribute, k = 2. Release 1 splits a = x: t and b0..b4 on the left,
  // c0..c2 on the right. Then t moves to y: alone in its move, it has one
  // candidate (itself); holding one of the five b keys (which shared its
  // earlier cohort) gives it two. As classes, b is one key index of weight 5.
  const TreeOptions options{.k = 2, .l = 0, .max_nodes = 64};
  KeyedTable table({"a"});
  table.insert("t", {"x"});
  for (int i = 0; i < 5; ++i) table.insert(std::string("b").append(std::to_string(i)), {"x"});
  for (int i = 0; i < 3; ++i) table.insert(std::string("c").append(std::to_string(i)), {"y"});
  ReleaseHistory keys;
  std::vector<uint32_t> rows;
  {
    const EncodedTable t = table.encode(keys, rows);
    auto first = history_refresh(keys, t, rows, options, true);
    REQUIRE(first.tree.leaves().size() == 2);
    keys.append({1, true, {}, first.tree, std::move(first.leaves)});
  }
  table.insert("t", {"y"});
  const EncodedTable t = table.encode(keys, rows);
  const HistoryRefresh by_key = history_refresh(keys, t, rows, options, true);
  CHECK(by_key.held == 1);
  Classes classes = group(keys, rows);
  REQUIRE(classes.rows.size() == 3);
  const HistoryRefresh by_class = history_refresh(classes.history, t, classes.rows, options, true);
  CHECK(tree_json(by_class.tree) == tree_json(by_key.tree));
  CHECK(by_class.held == 1);
  CHECK(by_class.check.rows_below_k == 0);
  CHECK(by_class.check.min_candidates == 2);
  REQUIRE(by_class.held_keys.size() == 3);
  for (uint32_t c = 0; c < 3; ++c) {
    const auto& m = classes.members[c];
    CAPTURE(keys.key(m.front()));
    if (keys.key(m.front()) == "b0") {
      CHECK(m.size() == 5);
      CHECK(by_class.held_keys[c] == 1);
      CHECK(shown(by_class.leaves[c]));  // the other four stay shown
    } else {
      CHECK(by_class.held_keys[c] == 0);
    }
  }
  // The released fraction counts one key's cell masked, as by keys.
  CHECK(by_class.released_fraction == doctest::Approx(by_key.released_fraction));
}
