// The oracle: for many small random problems, brute force over every
// transformation and compare with Flash under every combination of the
// optimizations and with best-first search; then verify that the output
// really satisfies the privacy model.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "engine/anonymizer.h"
#include "engine/checker.h"
#include "tests/engine/random_problem.h"

namespace kanon::engine {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr int kProblems = 60;
#else
constexpr int kProblems = 1500;
#endif

struct Truth {
  bool found = false;
  double value = 0;
};

Truth brute_force(const Dataset& d, const PrivacyModel& p, MetricKind kind) {
  std::vector<int> heights;
  for (const auto& q : d.qis) heights.push_back(q.height);
  const Lattice lattice(heights);
  const QualityMetric metric(kind, d);
  Checker plain(d, p, metric, CheckerOptions{false, false, false, {}, false, false, false});
  Truth t;
  for (int r = 0; r <= lattice.max_rank(); ++r) {
    lattice.for_each_with_rank(r, [&](const Levels& l) {
      const auto res = plain.check(l);
      if (res.anonymous && (!t.found || res.quality.value < t.value)) {
        t.found = true;
        t.value = res.quality.value;
      }
    });
  }
  return t;
}

bool same(double a, double b) {
  return std::abs(a - b) <= 1e-9 * std::max(1.0, std::abs(a));
}

// Independent check of the published result (suppressed_rows does not use the checker).
void verify_output(const Dataset& d, const PrivacyModel& p, const Levels& l) {
  const auto supp = suppressed_rows(d, p, l);
  uint64_t n = 0;
  for (auto s : supp) n += s;
  CHECK(n <= p.suppression_limit(d.rows));
}

TEST_CASE("oracle: Flash (all optimization combinations) and BFS find the true optimum") {
  std::mt19937 rng(12345);
  int checked_problems = 0, with_solution = 0;
  for (int i = 0; i < kProblems; ++i) {
    const int dims = 1 + static_cast<int>(rng() % 5);
    const int rows = 2 + static_cast<int>(rng() % 120);
    auto prob = testing::random_problem(rng, dims, rows);
    PrivacyModel p;
    p.k = 1 + static_cast<uint32_t>(rng() % 5);
    const double supps[] = {0, 0, 0.05, 0.1, 0.3};
    p.suppression = supps[rng() % 5];
    testing::random_diversity(rng, p);
    const MetricKind kind = all_metrics()[rng() % all_metrics().size()];
    const Truth truth = brute_force(prob.data, p, kind);
    CAPTURE(i);
    CAPTURE(metric_name(kind));
    CAPTURE(p.describe());
    for (int mask = 0; mask < 32; ++mask) {
      CheckerOptions o;
      o.projection = mask & 1;
      o.rollup = mask & 2;
      o.history = mask & 4;
      o.packed_keys = mask & 8;
      o.deduplicate = mask & 16;
      o.history_options.max_stored = 3;  // exercise eviction
      o.history_options.max_relative_size = 1.0;
      CAPTURE(mask);
      const Outcome out = anonymize(prob.data, p, kind, Algorithm::kFlash, o, {});
      REQUIRE(out.search.found == truth.found);
      if (truth.found) {
        CHECK(same(out.search.value, truth.value));
        verify_output(prob.data, p, out.search.levels);
      }
    }
    const Outcome bfs = anonymize(prob.data, p, kind, Algorithm::kBestFirst, {}, {});
    REQUIRE(bfs.search.found == truth.found);
    if (truth.found) {
      CHECK(same(bfs.search.value, truth.value));
      verify_output(prob.data, p, bfs.search.levels);
      ++with_solution;
    }
    ++checked_problems;
  }
  MESSAGE(checked_problems << " problems, " << with_solution << " with a solution");
}

}  // namespace
}  // namespace kanon::engine
