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

#include "catalog/table_catalog.h"
#include "policy/disclosure_tree.h"
#include "policy/history_check.h"
#include "policy/release_info.h"
#include "policy/table_policy.h"

namespace pqxx {
class connection_base;
}

namespace kanon::store {

// `key:` from the policy, else the primary key, else every column that is
// neither a quasi-identifier nor a direct identifier; none: not linkable.
// Reads the table to find whether the key columns tell rows apart.
policy::RowKey row_key(pqxx::connection_base& conn, const policy::TablePolicy& policy,
                       const policy::TableInfo& info);

struct HistoryBuildResult {
  policy::DisclosureTree tree;
  policy::ReleaseInfo release;
};

// Builds the next release of a linkable table and stores it. `baseline`:
// forget the history (REANONYMIZE) and build afresh. `live`: the mode shows
// current rows under the last tree between refreshes (inline, view).
HistoryBuildResult build_history_release(pqxx::connection_base& conn,
                                         const policy::TablePolicy& policy,
                                         const policy::TableInfo& info, const policy::RowKey& key,
                                         const policy::TreeOptions& options, bool baseline,
                                         bool live);

struct HistoryVerification {
  policy::RowKey key;
  uint64_t since = 0;         // first release counted
  uint64_t last_version = 0;  // last stored release (0: none)
  size_t releases = 0;        // releases counted (the rows as served now included)
  policy::HistoryCheck check;
};

// VERIFY HISTORY: on the current rows, the candidates of every key over all
// releases since `since` (default: the baseline) taken together, in live
// modes with what the proxy serves now (the last tree on the current rows).
// Keys whose quasi-identifier updates a live mode showed are counted apart
// (check.updated_rows_below_k).
HistoryVerification verify_history(pqxx::connection_base& conn, const policy::TablePolicy& policy,
                                   std::optional<uint64_t> since);

}  // namespace kanon::store
