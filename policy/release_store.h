// The release history of protected tables in the database, schema `kanon`:
//
//   kanon.releases(table_name, version, built_at, baseline, k, tree, ...)
//     one row per release: the disclosure tree (JSON: attributes and nodes)
//     and what it left (released fraction, linked rows, min candidates);
//   kanon.release_rows(table_name, key, since_version, released, held)
//     per key, delta encoded: a row only when the key's released tuple
//     changes; `released` is the tuple (text[], NULL elements for masked
//     attributes) from since_version on, or SQL NULL when the key left the
//     table; `held`: the tuple is the key's true one but the release masked
//     every quasi-identifier of it (release_history.h). Written with COPY.
//   kanon.held_keys(table_name, key)
//     the keys the table's last release holds: the materializer's SQL masks
//     their quasi-identifiers (materializer.h).
//
// A baseline (the first build, REANONYMIZE) deletes the table's earlier
// release_rows and lists every key; its earlier releases rows stay, marked
// superseded by the baseline. Read back by load_release_history, so the
// history survives restarts and is shared by every kanon on the database.
// Functions take the caller's transaction; pqxx errors pass through.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "policy/history_check.h"
#include "policy/release_history.h"

namespace pqxx {
class transaction_base;
}

namespace kanon::policy {

inline constexpr const char* kReleasesTable = "releases";
inline constexpr const char* kReleaseRowsTable = "release_rows";
inline constexpr const char* kHeldKeysTable = "held_keys";

// CREATE SCHEMA / TABLE IF NOT EXISTS.
void ensure_release_tables(pqxx::transaction_base& tx);

// The releases of `table_name` ("schema.table") since its last baseline,
// with every key they listed; empty when there is none or the stored trees
// are over other attributes than `attributes` (the policy changed: the next
// release is a baseline).
ReleaseHistory load_release_history(pqxx::transaction_base& tx, const std::string& table_name,
                                    const std::vector<std::string>& attributes);

// Figures stored beside a release (kanon.releases columns).
struct ReleaseFigures {
  uint64_t k = 0;
  uint64_t rows = 0;
  double released_fraction = 0;
  HistoryCheck check;
  uint64_t held = 0;  // keys held (mode: materialized)
};

// Appends `history.versions()[index]` (whose predecessor, if any, is
// versions()[index - 1]) to the tables: its releases row and the keys whose
// tuple differs from the predecessor's.
void store_release(pqxx::transaction_base& tx, const std::string& table_name,
                   const ReleaseHistory& history, size_t index, const ReleaseFigures& figures);

// The next free version number of `table_name` (1 when none).
uint64_t next_release_version(pqxx::transaction_base& tx, const std::string& table_name);

// The tree as stored in kanon.releases.tree, and back.
std::string tree_json(const DisclosureTree& tree);
DisclosureTree tree_from_json(const std::string& json, const TreeOptions& options);

// The released tuple a leaf names: the values of its path's "a = v" splits.
std::vector<std::optional<std::string>> leaf_tuple(const DisclosureTree& tree, int leaf);

}  // namespace kanon::policy
