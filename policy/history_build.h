// The history-aware build of one table over kanon's service connection:
// how its rows are keyed, the release history from the database
// (release_store.h), the current rows loaded as classes — one per (stored
// history, current quasi-identifiers and sensitive value), with its number
// of keys — history_refresh on them, and the new release stored set-based
// — all in one repeatable-read transaction under a per-table advisory lock
// (taken for the session before it), so two kanon instances refreshing the
// same table take turns. And VERIFY HISTORY.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "policy/disclosure_tree.h"
#include "policy/history_check.h"
#include "policy/table_catalog.h"
#include "policy/table_policy.h"

namespace pqxx {
class connection_base;
}

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

// `key:` from the policy, else the primary key, else every column that is
// neither a quasi-identifier nor a direct identifier; none: not linkable.
// Reads the table to find whether the key columns tell rows apart.
RowKey row_key(pqxx::connection_base& conn, const TablePolicy& policy, const TableInfo& info);

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

struct HistoryBuildResult {
  DisclosureTree tree;
  ReleaseInfo release;
};

// Builds the next release of a linkable table and stores it. `baseline`:
// forget the history (REANONYMIZE) and build afresh. `live`: the mode shows
// current rows under the last tree between refreshes (inline, view).
HistoryBuildResult build_history_release(pqxx::connection_base& conn, const TablePolicy& policy,
                                         const TableInfo& info, const RowKey& key,
                                         const TreeOptions& options, bool baseline, bool live);

struct HistoryVerification {
  RowKey key;
  uint64_t since = 0;         // first release counted
  uint64_t last_version = 0;  // last stored release (0: none)
  size_t releases = 0;        // releases counted (the rows as served now included)
  HistoryCheck check;
};

// VERIFY HISTORY: on the current rows, the candidates of every key over all
// releases since `since` (default: the baseline) taken together, in live
// modes with what the proxy serves now (the last tree on the current rows).
// Keys whose quasi-identifier updates a live mode showed are counted apart
// (check.updated_rows_below_k).
HistoryVerification verify_history(pqxx::connection_base& conn, const TablePolicy& policy,
                                   std::optional<uint64_t> since);

}  // namespace kanon::policy
