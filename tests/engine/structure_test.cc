// The antichain trie against a brute-force list, and projection / roll-up /
// history equivalence of the checker on random check sequences.
#include <doctest/doctest.h>

#include <random>

#include "engine/antichain_trie.h"
#include "engine/checker.h"
#include "tests/engine/random_problem.h"

namespace kanon::engine {
namespace {

bool leq(const Levels& a, const Levels& b) {
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] > b[i]) return false;
  }
  return true;
}

TEST_CASE("antichain trie matches a brute-force list and stays an antichain") {
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    const size_t dims = 1 + rng() % 5;
    for (auto dir : {AntichainTrie::Direction::kUp, AntichainTrie::Direction::kDown}) {
      AntichainTrie trie(dims, dir);
      std::vector<Levels> all;  // every inserted element
      const auto covered = [&](const Levels& x) {
        for (const auto& y : all) {
          if (dir == AntichainTrie::Direction::kUp ? leq(y, x) : leq(x, y)) return true;
        }
        return false;
      };
      for (int op = 0; op < 40; ++op) {
        Levels x(dims);
        for (auto& v : x) v = static_cast<uint8_t>(rng() % 4);
        REQUIRE(trie.covers(x) == covered(x));
        const bool added = trie.insert(x);
        CHECK(added == !covered(x));
        if (added) all.push_back(x);
        const auto elems = trie.elements();
        CHECK(elems.size() == trie.size());
        for (size_t i = 0; i < elems.size(); ++i) {
          for (size_t j = 0; j < elems.size(); ++j) {
            if (i != j) CHECK_FALSE(leq(elems[i], elems[j]));
          }
        }
      }
    }
  }
}

TEST_CASE("projection, roll-up and history give identical checks") {
  std::mt19937 rng(99);
  for (int round = 0; round < 60; ++round) {
    auto prob = testing::random_problem(rng, 1 + rng() % 5, 20 + rng() % 200);
    PrivacyModel p;
    p.k = 2 + rng() % 3;
    p.suppression = 0.1;
    if (rng() % 2) {
      p.diversity = Diversity::kDistinct;
      p.l = 2;
    }
    const QualityMetric metric(MetricKind::kLoss, prob.data);
    std::vector<int> heights;
    for (const auto& q : prob.data.qis) heights.push_back(q.height);
    const Lattice lattice(heights);
    Checker plain(prob.data, p, metric,
                  CheckerOptions{false, false, false, {}, false, false, false});
    std::vector<std::unique_ptr<Checker>> optimized;
    for (int mask = 1; mask < 32; ++mask) {
      CheckerOptions o{bool(mask & 1), bool(mask & 2), bool(mask & 4), {},
                       true,           bool(mask & 8), bool(mask & 16)};
      o.history_options.max_relative_size = 1;
      o.history_options.max_stored = 4;
      optimized.push_back(std::make_unique<Checker>(prob.data, p, metric, o));
    }
    // Random walks that mostly go up (roll-up) and sometimes jump.
    Levels cur = lattice.bottom();
    for (int step = 0; step < 40; ++step) {
      if (rng() % 4 == 0) {
        for (size_t i = 0; i < cur.size(); ++i) cur[i] = rng() % lattice.height(i);
      } else {
        std::vector<Levels> succ;
        lattice.successors(cur, succ);
        if (!succ.empty()) cur = succ[rng() % succ.size()];
      }
      const CheckResult want = plain.check(cur);
      for (auto& c : optimized) {
        const CheckResult got = c->check(cur);
        CHECK(got.anonymous == want.anonymous);
        CHECK(got.suppressed == want.suppressed);
        CHECK(got.classes == want.classes);
        CHECK(got.min_class_size == want.min_class_size);
        CHECK(got.quality.value == doctest::Approx(want.quality.value));
      }
    }
  }
}

}  // namespace
}  // namespace kanon::engine
