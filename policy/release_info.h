// What a history-aware release is about: the key that links a table's rows
// across releases, and what a release released (kept in the TableSnapshot).
// store/history_build.h finds the key and builds releases in the database.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "policy/history_check.h"

namespace kanon::policy {

// The columns that link a table's rows across releases.
struct RowKey {
  enum class Source { kPolicy, kPrimaryKey, kOtherColumns, kNone };
  Source source = Source::kNone;
  std::vector<std::string> columns;
  // Set when the key columns do not tell rows apart (two rows share a value,
  // or a row's is NULL): the quasi-identifiers. Rows are then told apart by
  // the key columns, these, and a number among rows equal in both (which
  // are interchangeable): an analyst linking rows through the shared values
  // can do no better than one who tells every row apart (docs/security.md).
  std::vector<std::string> told_apart_by;

  bool linkable() const { return source != Source::kNone; }
  // "key: id", "primary key (id)", "non-quasi-identifier columns (a, b)",
  // "not linkable (every column is a quasi-identifier or direct identifier)".
  std::string describe() const;
};

// The key of a row as text, as SQL over the table's columns: "col"::text,
// or ROW("a", "b")::text for a key of several columns; with told_apart_by,
// ROW(key columns, those, its number among the rows equal in all of
// them)::text (a window function: only in a SELECT list over the table).
std::string key_expression(const RowKey& key);

// Where a history-aware build spent its time: wall and kanon CPU
// milliseconds (the database's share is roughly wall minus CPU) of reading the
// release history, reading the current rows with their history, computing
// the release (catch-up, history_refresh) and storing it.
struct HistoryTimings {
  double history_ms = 0, history_cpu_ms = 0;
  double rows_ms = 0, rows_cpu_ms = 0;
  double compute_ms = 0, compute_cpu_ms = 0;
  double write_ms = 0, write_cpu_ms = 0;
};

// What a history-aware build released (kept in the TableSnapshot).
struct ReleaseInfo {
  RowKey key;
  uint64_t version = 0;  // kanon.releases.version; 0 when not linkable
  bool baseline = false;
  uint32_t catch_up = 0;  // 1 when the rows shown live since the last release were recorded
  uint32_t fixup_rounds = 0;
  uint32_t collapsed = 0;
  uint64_t held = 0;  // keys whose quasi-identifiers the copy masks (materialized)
  double released_fraction = 0;
  HistoryCheck check;
  HistoryTimings timings;
  // Set when the stored history could not be continued and this release
  // started a new baseline for that reason (a sentence for the log).
  std::string note;
};

}  // namespace kanon::policy
