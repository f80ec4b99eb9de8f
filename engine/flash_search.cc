#include "engine/flash_search.h"

#include <algorithm>
#include <unordered_set>

#include "base/stopwatch.h"
#include "engine/algorithm.h"
#include "engine/antichain_trie.h"

namespace kanon::engine {

namespace {

class Flash {
 public:
  Flash(Checker& checker, const Lattice& lattice, const TraversalOrder& order,
        const QualityMetric& metric, const PrivacyModel& privacy, const SearchOptions& options)
      : checker_(checker),
        lattice_(lattice),
        order_(order),
        metric_(metric),
        options_(options),
        anonymous_(lattice.dims(), AntichainTrie::Direction::kUp),
        not_anonymous_(lattice.dims(), AntichainTrie::Direction::kDown),
        low_quality_(lattice.dims(), AntichainTrie::Direction::kUp),
        monotone_privacy_(privacy.monotone()),
        monotone_metric_(metric.monotone_with_suppression() || privacy.suppression == 0) {}

  SearchResult run() {
    const uint64_t checks_before = checker_.checks();
    checker_.set_store_anonymous_classes(false);
    // Only anonymous nodes' values and all nodes' bounds are used below.
    checker_.set_bound_only_if_not_anonymous(true);
    checker_.history().set_obsolete_predicate([this](const Levels& l) {
      std::vector<Levels> succ;
      lattice_.successors(l, succ);
      return std::all_of(succ.begin(), succ.end(), [&](const Levels& s) { return tagged(s); });
    });
    if (monotone_privacy_) outer_loop();
    if (!timed_out_ && (!monotone_metric_ || !monotone_privacy_)) evaluate_remaining();
    checker_.history().set_obsolete_predicate(nullptr);
    checker_.set_bound_only_if_not_anonymous(false);

    SearchResult r;
    r.found = best_.found;
    r.levels = best_.levels;
    r.value = best_.value;
    r.checked = checker_.checks() - checks_before;
    r.lattice_size = lattice_.size();
    r.search_ms = clock_.ms();
    r.search_cpu_ms = clock_.cpu_ms();
    r.algorithm = algorithm_name(Algorithm::kFlash);
    r.timed_out = timed_out_;
    return r;
  }

 private:
  bool tagged(const Levels& l) const { return anonymous_.covers(l) || not_anonymous_.covers(l); }

  bool out_of_time() {
    if (!timed_out_ && options_.time_limit_s > 0 && clock_.ms() > options_.time_limit_s * 1000) {
      timed_out_ = true;
    }
    return timed_out_;
  }

  CheckResult check(const Levels& l) {
    CheckResult r = checker_.check(l);
    if (r.anonymous) best_.offer(l, r.quality.value);
    if (options_.progress) {
      SearchProgress p;
      p.checked = checker_.checks();
      p.lattice_size = lattice_.size();
      if (best_.found) p.best = best_.value;
      p.elapsed_ms = clock_.ms();
      options_.progress(p);
    }
    return r;
  }

  // CHECKANDTAG: predictive tagging in the direction opposite to the path.
  bool check_and_tag(const Levels& l) {
    const CheckResult r = check(l);
    if (r.anonymous) {
      anonymous_.insert(l);
      evaluated_.insert(lattice_.id(l));
    } else {
      not_anonymous_.insert(l);
    }
    return r.anonymous;
  }

  std::vector<Levels> find_path(Levels node) {
    std::vector<Levels> path;
    std::vector<Levels> succ;
    for (;;) {
      path.push_back(node);
      lattice_.successors(node, succ);
      order_.sort(succ);  // lazily, only for nodes on a path
      auto it = std::find_if(succ.begin(), succ.end(), [&](const Levels& s) { return !tagged(s); });
      if (it == succ.end()) break;
      node = *it;
    }
    return path;
  }

  void check_path(const std::vector<Levels>& path) {
    int low = 0, high = static_cast<int>(path.size()) - 1;
    while (low <= high) {
      const int mid = (low + high) / 2;
      if (check_and_tag(path[mid])) {
        high = mid - 1;  // the local optimum was offered to best_ in check()
      } else {
        heap_push(path[mid]);
        low = mid + 1;
      }
    }
  }

  void heap_push(const Levels& l) {
    heap_.push_back(l);
    std::push_heap(heap_.begin(), heap_.end(), greater_);
  }
  Levels heap_pop() {
    std::pop_heap(heap_.begin(), heap_.end(), greater_);
    Levels l = std::move(heap_.back());
    heap_.pop_back();
    return l;
  }

  void outer_loop() {
    std::vector<Levels> level, succ;
    for (int rank = 0; rank <= lattice_.max_rank(); ++rank) {
      level.clear();
      lattice_.for_each_with_rank(rank, [&](const Levels& l) {
        if (!tagged(l)) level.push_back(l);
      });
      order_.sort(level);  // sorted right before iterating, tagged nodes excluded
      for (const Levels& node : level) {
        if (out_of_time()) return;
        if (tagged(node)) continue;
        check_path(find_path(node));
        while (!heap_.empty()) {
          if (out_of_time()) return;
          const Levels head = heap_pop();
          lattice_.successors(head, succ);
          order_.sort(succ);
          for (const Levels& up : succ) {
            if (!tagged(up)) check_path(find_path(up));
          }
        }
      }
    }
  }

  // Second phase (see header): candidates in order of their lower bound.
  void evaluate_remaining() {
    checker_.set_store_anonymous_classes(true);
    checker_.history().set_obsolete_predicate([this](const Levels& l) {
      std::vector<Levels> succ;
      lattice_.successors(l, succ);
      return std::all_of(succ.begin(), succ.end(), [&](const Levels& s) {
        return evaluated_.count(lattice_.id(s)) > 0 || low_quality_.covers(s);
      });
    });
    const bool sorted_by_bound = metric_.has_data_free_bound();
    struct Candidate {
      double bound;
      std::array<double, 3> key;
      Levels levels;
    };
    std::vector<Candidate> candidates;
    for (int rank = 0; rank <= lattice_.max_rank(); ++rank) {
      lattice_.for_each_with_rank(rank, [&](const Levels& l) {
        if (monotone_privacy_ && !anonymous_.covers(l)) return;
        if (evaluated_.count(lattice_.id(l))) return;
        const double b = sorted_by_bound ? metric_.bound(l) : 0;
        if (best_.beats(b) && sorted_by_bound) return;
        candidates.push_back({b, order_.key(l), l});
      });
    }
    std::sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) {
      if (a.bound != b.bound) return a.bound < b.bound;
      if (a.key != b.key) return a.key < b.key;
      return a.levels < b.levels;
    });
    for (const auto& c : candidates) {
      if (out_of_time()) return;
      if (sorted_by_bound && best_.beats(c.bound)) break;  // all later bounds are larger
      if (low_quality_.covers(c.levels)) continue;
      const CheckResult r = check(c.levels);
      evaluated_.insert(lattice_.id(c.levels));
      if (best_.beats(r.quality.bound)) low_quality_.insert(c.levels);
    }
  }

  struct Greater {
    const TraversalOrder* order;
    bool operator()(const Levels& a, const Levels& b) const { return order->less(b, a); }
  };

  Checker& checker_;
  const Lattice& lattice_;
  const TraversalOrder& order_;
  const QualityMetric& metric_;
  const SearchOptions& options_;
  AntichainTrie anonymous_;
  AntichainTrie not_anonymous_;
  AntichainTrie low_quality_;
  bool monotone_privacy_;
  bool monotone_metric_;
  Incumbent best_;
  std::unordered_set<uint64_t> evaluated_;
  std::vector<Levels> heap_;
  Greater greater_{&order_};
  base::Stopwatch clock_;
  bool timed_out_ = false;
};

}  // namespace

SearchResult flash_search(Checker& checker, const Lattice& lattice, const TraversalOrder& order,
                          const QualityMetric& metric, const PrivacyModel& privacy,
                          const SearchOptions& options) {
  Flash flash(checker, lattice, order, metric, privacy, options);
  return flash.run();
}

}  // namespace kanon::engine
