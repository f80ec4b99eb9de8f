#include "engine/best_first_search.h"

#include <queue>
#include <unordered_set>

#include "base/stopwatch.h"
#include "engine/algorithm.h"
#include "engine/antichain_trie.h"

namespace kanon::engine {

SearchResult best_first_search(Checker& checker, const Lattice& lattice,
                               const TraversalOrder& order, const QualityMetric& metric,
                               const PrivacyModel& privacy, const SearchOptions& options) {
  base::Stopwatch clock;
  const uint64_t checks_before = checker.checks();
  const bool monotone_metric = metric.monotone_with_suppression() || privacy.suppression == 0;
  const bool monotone_privacy = privacy.monotone();
  const bool data_free = metric.has_data_free_bound();
  checker.set_store_anonymous_classes(!monotone_metric);

  AntichainTrie low_quality(lattice.dims(), AntichainTrie::Direction::kUp);
  AntichainTrie not_anonymous(lattice.dims(), AntichainTrie::Direction::kDown);
  std::unordered_set<uint64_t> visited;
  Incumbent best;
  bool timed_out = false;

  struct Item {
    double bound;
    std::array<double, 3> key;
    Levels levels;
    bool operator<(const Item& o) const {  // priority_queue is a max-heap: invert
      if (bound != o.bound) return bound > o.bound;
      if (key != o.key) return key > o.key;
      return levels > o.levels;
    }
  };
  std::priority_queue<Item> queue;

  // Evaluates `l` and queues it unless pruned.
  const auto visit = [&](const Levels& l) {
    if (data_free) {
      const double b = metric.bound(l);
      if (best.beats(b)) {
        low_quality.insert(l);
        return;
      }
      if (monotone_privacy && not_anonymous.covers(l)) {
        queue.push({b, order.key(l), l});  // known not anonymous: no check needed
        return;
      }
    }
    const CheckResult r = checker.check(l);
    if (r.anonymous) {
      best.offer(l, r.quality.value);
    } else if (monotone_privacy) {
      not_anonymous.insert(l);
    }
    if (options.progress) {
      SearchProgress p;
      p.checked = checker.checks();
      p.lattice_size = lattice.size();
      if (best.found) p.best = best.value;
      p.elapsed_ms = clock.ms();
      options.progress(p);
    }
    if (best.beats(r.quality.bound)) {
      low_quality.insert(l);
      return;
    }
    queue.push({r.quality.bound, order.key(l), l});
  };

  const Levels bottom = lattice.bottom();
  visited.insert(lattice.id(bottom));
  visit(bottom);
  std::vector<Levels> succ;
  while (!queue.empty()) {
    if (options.time_limit_s > 0 && clock.ms() > options.time_limit_s * 1000) {
      timed_out = true;
      break;
    }
    const Item head = queue.top();
    queue.pop();
    if (best.beats(head.bound)) {
      low_quality.insert(head.levels);
      continue;
    }
    lattice.successors(head.levels, succ);
    for (const Levels& s : succ) {
      if (!visited.insert(lattice.id(s)).second) continue;
      if (low_quality.covers(s)) continue;
      visit(s);
    }
  }

  SearchResult r;
  r.found = best.found;
  r.levels = best.levels;
  r.value = best.value;
  r.checked = checker.checks() - checks_before;
  r.lattice_size = lattice.size();
  r.search_ms = clock.ms();
  r.search_cpu_ms = clock.cpu_ms();
  r.algorithm = algorithm_name(Algorithm::kBestFirst);
  r.timed_out = timed_out;
  return r;
}

}  // namespace kanon::engine
