// Checks one transformation: transforms rows into the buffer, groups them
// into equivalence classes, applies the privacy model with suppression and
// evaluates the quality model. Implements the Flash paper's optimizations,
// each switchable (results are identical with any combination):
//   projection  only columns whose level differs from the buffer's are
//               transformed, with loops specialised per number of columns;
//   roll-up     when the target generalizes the previous check, the previous
//               classes' representatives are regrouped instead of all rows;
//   history     stored classes of earlier checks (class_history.h) serve the
//               same purpose for other transitions;
//   packed keys when the generalized codes of a row fit in 64 bits together,
//               the buffer holds one packed word per row (columns at fixed
//               bit offsets) instead of int32 cells: a transformed column is
//               one lookup of a pre-shifted code and one mask, and groupify
//               hashes and compares one word;
//   deduplication  a "full scan" visits each distinct input row (quasi-
//               identifiers and sensitive value) once, with its multiplicity:
//               every transformation's classes are unions of those rows.
// Person mode (data.counts_persons()): k is tested on each class's distinct
// persons. Row counts add up when classes merge, distinct persons do not, so
// every class carries its duplicate-free person list (GroupTable::persons()):
// a full scan adds each distinct (row, person) pair, a roll-up or stored
// classes merge the lists of the classes they regroup, and stored classes keep them. With that all
// optimizations stay exact in person mode; deduplication includes the person
// in a row's identity.
// The buffer state machine: `buffer_levels_` is the transformation the buffer
// holds for (a) every row when `buffer_all_rows_`, else (b) only the
// representatives of the current classes. Projection is used only where the
// rows to process are known to be consistent: a full scan in state (a), a
// roll-up in either state, stored classes in state (a); otherwise all columns of
// the processed rows are transformed. Any roll-up or stored classes leave state (b).
//
// Not thread-safe; one Checker per search.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/class_history.h"
#include "engine/dataset.h"
#include "engine/group_table.h"
#include "engine/lattice.h"
#include "engine/privacy_model.h"
#include "engine/quality_metric.h"

namespace kanon::engine {

struct CheckerOptions {
  bool projection = true;
  bool rollup = true;
  bool history = true;
  HistoryOptions history_options;
  // Flash stores only the classes of non-anonymous nodes (their generalizations
  // are otherwise tagged); searches that evaluate anonymous nodes' successors
  // set this.
  bool store_anonymous_classes = false;
  bool packed_keys = true;  // used only when the codes fit in 64 bits
  bool deduplicate = true;
};

struct CheckResult {
  bool anonymous = false;
  uint64_t suppressed = 0;    // rows in classes that fail the model
  uint64_t classes = 0;       // all classes, before suppression
  uint64_t kept_classes = 0;  // classes that pass
  uint64_t min_class_size =
      0;  // smallest kept class (0 when none): rows, or persons in person mode
  QualityValue quality;
  enum class Source { kFull, kRollup, kStored } source = Source::kFull;
  uint64_t rows_processed = 0;
};

class Checker {
 public:
  Checker(const Dataset& data, const PrivacyModel& privacy, const QualityMetric& metric,
          CheckerOptions options);

  CheckResult check(const Levels& target);

  uint64_t checks() const { return checks_; }
  uint64_t cells_transformed() const { return cells_; }
  ClassHistory& history() { return history_; }
  const CheckerOptions& options() const { return options_; }
  void set_store_anonymous_classes(bool on) { options_.store_anonymous_classes = on; }
  // When on, a non-anonymous check computes only the quality bound (value =
  // +inf): searches that never use such nodes' values skip the pass over the
  // suppressed classes.
  void set_bound_only_if_not_anonymous(bool on) { bound_only_if_not_anonymous_ = on; }
  // Classes of the last check; class_keys() reads their generalized codes.
  const GroupTable& classes() const { return tables_[cur_]; }
  ClassKeys class_keys() const;
  const std::vector<uint8_t>& suppressed_flags() const { return suppressed_; }
  bool packed() const { return packed_; }
  // Re-evaluates the last check's classes under another quality model.
  QualityValue evaluate_last(const QualityMetric& metric) const;

 private:
  struct RowRef {
    uint32_t row;
    uint32_t count;
    uint64_t key;  // packed keys: the key the source holds for the row
  };
  struct ColumnMap {
    size_t col;
    const int32_t* map;
    const uint64_t* packed_map;  // map's codes shifted to the column's bits
    uint64_t keep;               // packed: the other columns' bits
  };
  // The rows a check groups: all distinct rows, the previous classes or a
  // stored classes (`stored`), `rows` of them.
  struct RowSource {
    CheckResult::Source kind;
    size_t rows;
    const StoredClasses* stored;
  };
  // on_add for checks without a sensitive attribute.
  static constexpr auto kNoSensitive = [](size_t, uint32_t, uint32_t) {};

  void init_packing();
  void init_base_rows();

  // The phases of check(), in order.
  RowSource choose_source(const Levels& target);
  const Levels* levels_held_by(const RowSource& source) const;
  void choose_columns(const Levels& target, const Levels* held);
  void group_full_scan(GroupTable& next);
  void group_previous_classes(const GroupTable& prev, GroupTable& next);
  void group_stored(const StoredClasses& snap, GroupTable& next);
  void advance_state(const Levels& target, CheckResult::Source source);
  CheckResult apply_privacy_model(const GroupTable& table);
  void store_classes(const Levels& target, const GroupTable& table);

  // Transforms the columns `cm[0..k)` of n rows and groups them into `out`;
  // K is k at compile time, or -1 (see dispatch()).
  template <int K, typename RowAt, typename OnAdd>
  void run(size_t n, RowAt row_at, OnAdd on_add, const ColumnMap* cm, size_t k, GroupTable& out);
  // key_out (packed keys, may be null) receives the i-th transformed key.
  template <int K, typename RowAt, typename OnAdd>
  void run_packed(size_t n, RowAt row_at, OnAdd on_add, const ColumnMap* cm, size_t k,
                  GroupTable& out, uint64_t* key_out);
  template <typename RowAt, typename OnAdd>
  void dispatch(size_t n, RowAt row_at, OnAdd on_add, const ColumnMap* cm, size_t k,
                GroupTable& out, uint64_t* key_out);

  const Dataset& data_;
  PrivacyModel privacy_;
  const QualityMetric& metric_;
  CheckerOptions options_;
  size_t width_;
  uint64_t limit_;
  bool sensitive_;
  bool person_;

  std::vector<int32_t> buffer_;  // int32 keys: row-major, width_ cells per row
  bool packed_ = false;
  std::vector<uint64_t> keys_;  // packed keys: one per base row, at full_levels_
  Levels full_levels_;
  bool full_valid_ = false;
  std::vector<uint8_t> shifts_;
  std::vector<uint64_t> masks_;
  std::vector<std::vector<std::vector<uint64_t>>> packed_maps_;  // [column][level][code]
  std::vector<uint32_t> base_rows_;                              // the rows a full scan visits ...
  std::vector<uint32_t> base_counts_;                            // ... and their multiplicities
  Levels buffer_levels_;
  bool buffer_valid_ = false;
  bool buffer_all_rows_ = false;
  GroupTable tables_[2];
  int cur_ = 0;
  bool has_current_ = false;
  Levels current_levels_;
  ClassHistory history_;
  std::vector<uint8_t> suppressed_;
  std::vector<uint32_t> suppressed_list_;  // indices of the suppressed classes
  std::vector<ColumnMap> columns_;
  bool bound_only_if_not_anonymous_ = false;
  uint64_t checks_ = 0;
  uint64_t cells_ = 0;
  Levels last_levels_;
};

}  // namespace kanon::engine
