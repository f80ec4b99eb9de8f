// The history of the Flash paper: the equivalence classes of previously
// checked transformations (the paper's "snapshots"; called stored classes
// here, since kanon's snapshots are the tables the proxy serves), kept
// compactly as (representative row, count) pairs (plus the packed keys when
// the checker packs them, sensitive-value counts under l-diversity, and each
// class's distinct persons in person mode). A later check of a
// generalization of a stored transformation merges its stored classes
// instead of scanning all rows.
//
// The three parameters of ARX:
//   max_relative_size    classes are stored only if there are at most this
//                        many relative to the number of rows;
//   max_relative_to_source  classes computed from stored ones (or by
//                        roll-up) are stored only if there are at most this
//                        many relative to that source -- otherwise the
//                        source serves nearly as well;
//   max_stored           capacity (key history_max_snapshots). When full,
//                        stored classes that no remaining check can use (the
//                        `obsolete` callback: e.g. all direct
//                        generalizations already tagged) are pruned first,
//                        then the least recently used are evicted.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "engine/group_table.h"
#include "engine/lattice.h"

namespace kanon::engine {

struct HistoryOptions {
  double max_relative_size = 0.2;
  double max_relative_to_source = 0.8;
  size_t max_stored = 200;
};

struct StoredClasses {
  Levels levels;
  std::vector<uint32_t> reps;
  std::vector<uint32_t> counts;
  std::vector<uint64_t> keys;          // packed keys only: the classes' keys
  std::vector<uint32_t> dist_offsets;  // l-diversity only: per class into dist
  std::vector<SensitiveCount> dist;
  std::vector<uint32_t> person_offsets;  // person mode only: per class into persons
  std::vector<int32_t> persons;          // each class's distinct persons
  uint64_t last_used = 0;
  size_t classes() const { return reps.size(); }
};

class ClassHistory {
 public:
  explicit ClassHistory(HistoryOptions options) : options_(options) {}

  void set_obsolete_predicate(std::function<bool(const Levels&)> obsolete) {
    obsolete_ = std::move(obsolete);
  }
  const HistoryOptions& options() const { return options_; }

  // The stored classes of a specialization of `target` (or target itself)
  // with the fewest classes, or nullptr. Marks it used.
  const StoredClasses* find(const Levels& target);
  // Whether a result with `classes` classes over `rows` rows, computed from a
  // source of `source_classes` classes (0 = full scan), is worth storing.
  bool worth_storing(size_t classes, size_t rows, size_t source_classes) const;
  void store(StoredClasses classes);

  size_t size() const { return stored_.size(); }
  size_t bytes() const;
  void clear() { stored_.clear(); }

 private:
  HistoryOptions options_;
  std::vector<StoredClasses> stored_;
  std::function<bool(const Levels&)> obsolete_;
  uint64_t clock_ = 0;
};

}  // namespace kanon::engine
