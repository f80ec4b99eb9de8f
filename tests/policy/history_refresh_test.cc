// History-aware refresh (policy/history_refresh.h) on the seed's 11 rows and
// on ADULT changed in memory. Every release is checked by naive_candidates
// below, which works on the released tuples as text (never on leaf ids or
// the fast counter's groups).
#include "policy/history_refresh.h"

#include <doctest/doctest.h>

#include <map>
#include <random>
#include <set>

#include "tests/policy/history_harness.h"
#include "tests/policy/seed_rows.h"
#include "tests/support/demo_data.h"

using namespace kanon::policy;
using kanon::policy::testing::KeyedTable;
using kanon::policy::testing::Values;

namespace {

// Per release, key -> released tuple as text; a held key's tuple (its
// values' true one) starts with kHeld.
using Releases = std::vector<std::map<std::string, std::string>>;
const std::string kHeld = "\x01held:";

bool held(const std::string& t) {
  return t.starts_with(kHeld);
}
std::string truth(const std::string& t) {
  return held(t) ? t.substr(kHeld.size()) : t;
}

struct Naive {
  uint64_t linked = 0;         // in the last release and an earlier one
  uint64_t fresh = 0;          // in the last release only
  uint64_t below = 0;          // for no reason below
  uint64_t below_updated = 0;  // through updates (see naive_candidates)
  uint64_t below_late = 0;     // arrived after the first release
  uint64_t below_deleted = 0;  // through deletions
  uint64_t min = UINT64_MAX;
};

using History = std::vector<std::optional<std::string>>;

// Whether `g` can be the target `h`: present in the same releases, and
// wherever present g shows h's true tuple or is held.
bool matches(const History& h, const History& g) {
  for (size_t i = 0; i < h.size(); ++i) {
    if (h[i].has_value() != g[i].has_value()) return false;
    if (h[i] && !held(*g[i]) && truth(*h[i]) != *g[i]) return false;
  }
  return true;
}

// Per key in the last release (once there is an earlier one): its
// candidates, the keys (ever released) that can be it in every release.
// Keys with the same history are counted once (quadratic in the number of
// distinct histories).
std::map<std::string, uint64_t> candidates(const std::map<std::string, History>& history) {
  std::map<History, uint64_t> count;
  for (const auto& [key, h] : history) ++count[h];
  std::map<History, uint64_t> memo;
  std::map<std::string, uint64_t> out;
  for (const auto& [key, h] : history) {
    const size_t last = h.size() - 1;
    if (!h[last] || last == 0) continue;
    auto it = memo.find(h);
    if (it == memo.end()) {
      uint64_t c = 0;
      for (const auto& [g, m] : count)
        if (matches(h, g)) c += m;
      it = memo.emplace(h, c).first;
    }
    out[key] = it->second;
  }
  return out;
}

// Rows below k, by why (policy/history_check.h): through deletions when it
// reaches k once every key stays (held) from its first release on; late
// when it was not in the first release; through updates when the key is in
// `updated`, or it reaches k once besides every updated key is held in
// every release.
Naive naive_candidates(const Releases& releases, uint64_t k,
                       const std::set<std::string>& updated = {}) {
  std::map<std::string, History> history;
  for (size_t i = 0; i < releases.size(); ++i)
    for (const auto& [key, tuple] : releases[i]) {
      auto& h = history[key];
      h.resize(releases.size());
      h[i] = tuple;
    }
  for (auto& [key, h] : history) h.resize(releases.size());
  const auto c = candidates(history);
  std::map<std::string, uint64_t> without_updates, without_deletes;
  const auto keep_deleted = [](std::map<std::string, History> h) {
    for (auto& [key, tuples] : h) {
      bool seen = false;
      for (auto& t : tuples) {
        if (t)
          seen = true;
        else if (seen)
          t = kHeld;
      }
    }
    return h;
  };
  without_deletes = candidates(keep_deleted(history));
  if (!updated.empty()) {
    auto held_history = keep_deleted(history);
    for (auto& [key, h] : held_history)
      if (updated.count(key))
        for (auto& t : h)
          if (t && !held(*t)) t = kHeld + *t;
    without_updates = candidates(held_history);
  }
  const auto reaches = [&](const std::map<std::string, uint64_t>& m, const std::string& key) {
    return m.count(key) && m.at(key) >= k;
  };
  Naive out;
  for (const auto& [key, n] : c) {
    const History& h = history.at(key);
    bool earlier = false;
    for (size_t i = 0; i + 1 < h.size(); ++i) earlier = earlier || h[i].has_value();
    ++(earlier ? out.linked : out.fresh);
    out.min = std::min(out.min, n);
    if (n >= k) continue;
    if (reaches(without_deletes, key))
      ++out.below_deleted;
    else if (!h.front())
      ++out.below_late;
    else if (updated.count(key) || reaches(without_updates, key))
      ++out.below_updated;
    else
      ++out.below;
  }
  return out;
}

// A table, its release history and the naive view of the same releases.
struct Run {
  KeyedTable table;
  TreeOptions options;
  // inline/view: catch up on rows shown under the last tree, no holds;
  // materialized: holds.
  bool live = false;
  ReleaseHistory history;
  Releases releases;
  uint64_t version = 0;
  HistoryRefresh last;
  std::set<std::string> updated;  // keys whose values an update changed

  void release(const DisclosureTree& tree, std::vector<int32_t> leaves, bool baseline) {
    auto tuples = table.released(tree);
    for (auto& [key, t] : tuples) {
      const auto index = history.find(key);
      if (index && *index < leaves.size() && is_held(leaves[*index])) t = kHeld + t;
    }
    history.append({++version, baseline, {}, tree, std::move(leaves)});
    if (baseline) releases.clear();
    releases.push_back(std::move(tuples));
  }
  // A history-aware refresh (the first one a baseline).
  void refresh() {
    std::vector<uint32_t> rows;
    const EncodedTable t = table.encode(history, rows);
    if (live && !history.empty())
      if (auto c = catch_up(history, t, rows)) release(history.last().tree, std::move(*c), false);
    const bool baseline = history.empty();
    last = history_refresh(history, t, rows, options, !live);
    release(last.tree, last.leaves, baseline);
  }
  void change(std::mt19937_64& rng, size_t inserts, size_t deletes, size_t updates,
              const std::string& prefix) {
    table.change(rng, inserts, deletes, updates, prefix, &updated);
  }
  // What a fresh build would release now (not recorded).
  Naive fresh_check() const {
    ReleaseHistory h = history;
    std::vector<uint32_t> rows;
    const EncodedTable t = table.encode(h, rows);
    Releases r = releases;
    r.push_back(table.released(DisclosureTree::build(t, options)));
    return naive_candidates(r, options.k);
  }
  double fraction() const { return last.released_fraction; }
  double fresh_fraction() const {
    ReleaseHistory h = history;
    std::vector<uint32_t> rows;
    const EncodedTable t = table.encode(h, rows);
    return released_fraction(DisclosureTree::build(t, options), t);
  }
};

const char* const kAdultQis[] = {
    "sex",       "age",       "race", "marital-status", "education", "native-country",
    "workclass", "occupation"};

Run adult_run(bool live = false) {
  Run run{KeyedTable({std::begin(kAdultQis), std::end(kAdultQis)}),
          {.k = 5, .l = 0, .max_nodes = 4096}};
  run.live = live;
  const auto rows = kanon::policy::testing::read_adult(kanon::testing::adult_dir() + "/adult.csv",
                                                       std::size(kAdultQis));
  REQUIRE(rows.size() > 30000);
  for (size_t i = 0; i < rows.size(); ++i) run.table.insert("a" + std::to_string(i), rows[i]);
  run.refresh();
  return run;
}

// The release just made keeps every key at >= k candidates, by both
// counters, which agree, but for rows below k for a reason the counters
// tell apart: in live modes updates and new rows (shown before any
// refresh), and deletions (which no release can undo).
Naive check_release(const Run& run) {
  const Naive naive = naive_candidates(run.releases, run.options.k,
                                       run.live ? run.updated : std::set<std::string>{});
  const auto& check = run.last.check;
  CHECK(naive.linked > 0);
  CHECK(naive.below == 0);
  CHECK(check.rows_below_k == 0);
  CHECK(check.linked_rows == naive.linked);
  CHECK(check.new_rows == naive.fresh);
  CHECK(check.min_candidates == naive.min);
  CHECK(check.updated_rows_below_k == naive.below_updated);
  CHECK(check.late_rows_below_k == naive.below_late);
  CHECK(check.deleted_rows_below_k == naive.below_deleted);
  if (!run.live) {
    CHECK(naive.below_updated == 0);
    // Held until k arrived together, unless fewer than k did.
    if (naive.fresh >= run.options.k) CHECK(naive.below_late == 0);
    if (naive.below_deleted == 0 && naive.below_late == 0) CHECK(naive.min >= run.options.k);
  }
  return naive;
}

}  // namespace

TEST_CASE("seed example: a row inserted, the refresh singles out no row seen before") {
  Run run{KeyedTable({"occupation", "city", "state"}), {.k = 2, .l = 0, .max_nodes = 4096}};
  std::vector<Values> seed;
  for (const auto& r : testing::kSeedRows) seed.push_back({r[0], r[1], r[2]});
  for (size_t i = 0; i < seed.size(); ++i) run.table.insert("r" + std::to_string(i + 1), seed[i]);
  run.refresh();
  CHECK(run.last.tree.leaves().size() == 5);  // the seed's five cohorts
  // A second lawyer in Columbus: a fresh build now splits D12 on
  // occupation = Lawyer, a region that crosses nothing, but moves the
  // accountant of Hamlet to another cohort than before.
  run.table.insert("r12", {"Lawyer", "Columbus", "OH"});
  const Naive fresh = run.fresh_check();
  run.refresh();
  check_release(run);
  // The new row is the only one that arrived: an analyst who knows its
  // target arrived late has it, whatever the release masks. Reported.
  CHECK(run.last.check.new_rows == 1);
  CHECK(run.last.check.late_rows_below_k == 1);
  INFO("fresh build: linked " << fresh.linked << ", below k " << fresh.below);
  // Every row seen in the first release keeps another row with the same
  // released tuples in both releases.
  std::map<std::string, int> both;
  for (const auto& [key, t] : run.releases[1])
    if (run.releases[0].count(key)) ++both[run.releases[0].at(key) + "|" + t];
  for (const auto& [sig, n] : both) CHECK_MESSAGE(n >= 2, sig);
}

TEST_CASE("ADULT: one change then a history-aware refresh, 0 rows below k") {
  struct Case {
    const char* name;
    double insert, remove, update;
  };
  const Case cases[] = {{"insert 0.1%", 0.001, 0, 0}, {"insert 1%", 0.01, 0, 0},
                        {"insert 5%", 0.05, 0, 0},    {"delete 1%", 0, 0.01, 0},
                        {"update 1%", 0, 0, 0.01},    {"mixed 1%", 0.004, 0.003, 0.003}};
  for (const auto& c : cases) {
    for (bool live : {false, true}) {
      CAPTURE(c.name);
      CAPTURE(live);
      Run run = adult_run(live);
      const size_t n = run.table.rows().size();
      std::mt19937_64 rng(42);
      run.change(rng, static_cast<size_t>(n * c.insert), static_cast<size_t>(n * c.remove),
                 static_cast<size_t>(n * c.update), "n");
      const Naive fresh = run.fresh_check();
      run.refresh();
      const Naive naive = check_release(run);
      MESSAGE(std::string(c.name) << std::string(live ? " (live)" : " (materialized)")
                                  << ": fresh build " << fresh.below << " rows below k (min "
                                  << fresh.min << "); history-aware: released " << run.fraction()
                                  << " vs fresh " << run.fresh_fraction() << ", " << run.last.rounds
                                  << " fix-up rounds, " << run.last.held << " keys held, "
                                  << naive.below_updated << " rows below k through updates, "
                                  << naive.below_late << " late, " << naive.below_deleted
                                  << " through deletions");
      // The test can fail: a fresh build leaves rows below k here.
      if (c.insert >= 0.01 || c.remove > 0) CHECK(fresh.below > 0);
      // Utility: within 5 points of a fresh build.
      CHECK(run.fraction() > run.fresh_fraction() - 0.05);
      // Live modes show updates at once: some rows fall below k, reported.
      if (live && c.update > 0) CHECK(run.last.check.updated_rows_below_k > 0);
      if (!live && c.update > 0) CHECK(run.last.held > 0);
    }
  }
}

TEST_CASE("ADULT: ten successive 1% refreshes, 0 rows below k, utility near a fresh build") {
  for (bool live : {false, true}) {
    CAPTURE(live);
    Run run = adult_run(live);
    std::mt19937_64 rng(7);
    for (int step = 0; step < 10; ++step) {
      CAPTURE(step);
      const size_t n = run.table.rows().size();
      run.change(rng, n * 4 / 1000, n * 3 / 1000, n * 3 / 1000, "s" + std::to_string(step) + "_");
      run.refresh();
      check_release(run);
    }
    const double history = run.fraction(), fresh = run.fresh_fraction();
    MESSAGE("after ten 1% refreshes" << std::string(live ? " (live)" : " (materialized)")
                                     << ": released " << history << " vs fresh " << fresh);
    CHECK(history > fresh - 0.05);
  }
}

TEST_CASE("regrow keeps the splits that still hold and refines the rest") {
  Run run = adult_run();
  std::vector<uint32_t> rows;
  const EncodedTable t = run.table.encode(run.history, rows);
  const auto& start = run.history.last().tree;
  // Same rows: nothing to coarsen, nothing left to split: the same tree.
  const auto again = DisclosureTree::regrow(t, run.options, start);
  REQUIRE(again.size() == start.size());
  for (size_t i = 0; i < again.size(); ++i) {
    CHECK(again.nodes()[i].attribute == start.nodes()[i].attribute);
    CHECK(again.nodes()[i].value == start.nodes()[i].value);
    CHECK(again.nodes()[i].rows == start.nodes()[i].rows);
  }
  // A leaf collapsed and regrown: split again the same way.
  const int leaf = start.leaves().front();
  const auto cut = start.collapsed(std::vector<int>{start.nodes()[leaf].parent});
  CHECK(cut.size() < start.size());
  CHECK(DisclosureTree::regrow(t, run.options, cut).size() == start.size());
  CHECK(DisclosureTree::regrow(t, run.options, cut, false).size() == cut.size());
}

TEST_CASE("from_nodes rejects malformed stored trees") {
  std::vector<TreeNode> nodes(3);
  nodes[0].attribute = 0;
  nodes[0].value = "x";
  nodes[0].left = 1;
  nodes[0].right = 2;
  const auto t = DisclosureTree::from_nodes({"a"}, nodes, {});
  CHECK(t.nodes()[1].released == 1);
  CHECK(t.nodes()[2].label == "D2");
  nodes[0].right = 1;
  CHECK_THROWS_AS(DisclosureTree::from_nodes({"a"}, nodes, {}), std::invalid_argument);
  nodes[0].right = 2;
  nodes[0].attribute = 3;
  CHECK_THROWS_AS(DisclosureTree::from_nodes({"a"}, nodes, {}), std::invalid_argument);
}
