// The release history of protected tables in the database, schema `kanon`:
//
//   kanon.releases(table_name, version, built_at, baseline, k, tree, ...,
//                  row_format, histories)
//     one row per release: the disclosure tree (JSON: attributes and nodes),
//     what it left (released fraction, linked rows, min candidates), and the
//     release histories it started (below);
//   kanon.release_rows(table_name, key, since_version, released, held,
//                      history, until_version)
//     per key, delta encoded: a row only when the key's released tuple
//     changes; `released` is the tuple (text[], NULL elements for masked
//     attributes) from since_version on, or SQL NULL when the key left the
//     table; `held`: the tuple is the key's true one but the release masked
//     every quasi-identifier of it (release_history.h); `until_version` the
//     version of the key's next row (NULL: its current row); `history` the
//     id of the key's whole sequence of rows up to this one;
//   kanon.held_keys(table_name, key)
//     the keys the table's last release holds: the materializer's SQL masks
//     their quasi-identifiers (materializer.h).
//
// Release histories: keys whose rows are the same sequence of (since_version,
// released, held) share one history id. A history is a node (parent id,
// since_version, released, held) stored in the `histories` JSON of the
// release numbered since_version ([[id, parent, released, held], ...],
// released as the text of the text[] or null), so the ids a build meets are
// few — one per distinct sequence, not per key — and a build loads the
// current keys grouped by (history id, current quasi-identifiers) rather
// than one per key (history_build.h). Releases stored before row_format 2
// have no histories: load_stored_history reports them (the next build is a
// baseline).
//
// A baseline (the first build, REANONYMIZE) deletes the table's earlier
// release_rows and lists every key; its earlier releases rows stay, marked
// superseded by the baseline. Read back by load_stored_history, so the
// history survives restarts and is shared by every kanon on the database.
// Functions take the caller's transaction; pqxx errors pass through.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "policy/history_check.h"
#include "policy/release_history.h"
#include "policy/tree_json.h"

namespace pqxx {
class transaction_base;
}

namespace kanon::store {

inline constexpr const char* kReleasesTable = "releases";
inline constexpr const char* kReleaseRowsTable = "release_rows";
inline constexpr const char* kHeldKeysTable = "held_keys";
// kanon.releases.row_format of what this kanon writes.
inline constexpr int kReleaseRowFormat = 2;

// ensure_kanon_schema(tx) (kanon_schema.h), which owns the tables' DDL:
// creates them, or adds the columns of row_format 2 to tables an earlier
// kanon made; reads only when they are current.
void ensure_release_tables(pqxx::transaction_base& tx);

// The releases of one table since its last baseline (trees, no keys) and
// the release histories stored with them.
class StoredHistory {
 public:
  // Empty when there is none, the stored trees are over other attributes
  // than `attributes` (the policy changed: the next release is a baseline),
  // or they were stored in an earlier format (old_format()).
  static StoredHistory load(pqxx::transaction_base& tx, const std::string& table_name,
                            const std::vector<std::string>& attributes);

  policy::ReleaseHistory& history() { return history_; }
  const policy::ReleaseHistory& history() const { return history_; }
  // Releases since the baseline stored before row_format 2 (no histories).
  bool old_format() const { return old_format_; }

  // The entry of history `id` in each version loaded (0: no history, every
  // entry kAbsent). Throws naming the table when `id` is unknown or its tuple
  // names no leaf of a tree.
  const std::vector<int32_t>& entries(int64_t id);

  // The history that continues `parent` (0: none) with (since_version,
  // released, held); new ones are numbered on and stored by store_releases.
  int64_t extend(int64_t parent, uint64_t since_version, const std::optional<std::string>& released,
                 bool held);

 private:
  struct Node {
    int64_t parent = 0;
    uint64_t since = 0;
    std::optional<std::string> released;  // text of the text[]; nullopt: left the table
    bool held = false;
  };
  std::string table_name_;
  policy::ReleaseHistory history_;
  bool old_format_ = false;
  std::unordered_map<int64_t, Node> nodes_;
  std::unordered_map<int64_t, std::vector<int32_t>> entries_;
  std::map<std::tuple<int64_t, uint64_t, std::optional<std::string>, bool>, int64_t> made_;
  std::vector<int64_t> new_ids_;
  int64_t next_id_ = 1;
  // Per version index, the text of a leaf's tuple -> leaf.
  std::vector<std::unordered_map<std::string, int32_t>> leaf_of_;

  friend void store_releases(pqxx::transaction_base& tx, const std::string& table_name,
                             StoredHistory& stored, const struct ReleaseWrite& write);
};

// Figures stored beside a release (kanon.releases columns).
struct ReleaseFigures {
  uint64_t k = 0;
  uint64_t rows = 0;
  double released_fraction = 0;
  policy::HistoryCheck check;
  uint64_t held = 0;  // keys held (mode: materialized)
};

// Deletes the table's release_rows and held_keys (a new baseline follows).
void forget_release_rows(pqxx::transaction_base& tx, const std::string& table_name);

// What store_releases writes: versions()[first..] of `stored.history()`,
// whose keys are classes of row keys (ReleaseHistory::weight).
struct ReleaseWrite {
  size_t first = 0;
  std::vector<ReleaseFigures> figures;  // one per version stored
  // Per key index, the stored history id its row keys had (0: none).
  std::span<const int64_t> history_ids;
  // Per key index, of the last version: how many of its row keys are held
  // (history_refresh.h; empty: as the entries say).
  std::span<const uint64_t> held_keys;
  // SQL with columns `key` (text) and `cls` (text, a key index's label
  // ReleaseHistory::key) for every row key of the loaded classes (used for
  // a baseline); the same for the row keys in the table whose stored
  // history id is in the bigint[] that replaces "{ids}" (the others); and
  // per key index,
  // its row keys when the load listed them (keys new since the last release
  // or that left the table since).
  std::string keys_sql;
  std::string stored_keys_sql;
  std::span<const std::vector<std::string>> new_keys;
};

// Appends the releases (kanon.releases rows) and, set-based, a
// release_rows row for every row key whose tuple or hold changes (the rows
// of a class with part of its keys held: the first keys in key order), the
// previous rows' until_version, and the last release's held keys.
void store_releases(pqxx::transaction_base& tx, const std::string& table_name,
                    StoredHistory& stored, const ReleaseWrite& write);

// The next free version number of `table_name` (1 when none).
// One stored release as SHOW RELEASES lists it.
struct ReleaseSummary {
  uint64_t version = 0;
  std::string built_at;  // UTC, "YYYY-MM-DD HH:MM:SSZ"
  bool baseline = false;
  uint64_t k = 0, rows = 0;
  double released_fraction = 0;
  // The history check when the release was made: rows linked to earlier
  // releases, the smallest candidate set (the real k over time), rows
  // below k, keys held back.
  uint64_t linked_rows = 0, min_candidates = 0, rows_below_k = 0, held_rows = 0;
};

// The latest `limit` releases of `table_name`, oldest first; none when
// kanon.releases does not exist.
std::vector<ReleaseSummary> list_releases(pqxx::transaction_base& tx, const std::string& table_name,
                                          size_t limit = 200);

uint64_t next_release_version(pqxx::transaction_base& tx, const std::string& table_name);

}  // namespace kanon::store
