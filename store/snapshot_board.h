// SnapshotBoard: where a PolicyStore publishes its versioned immutable
// PolicySnapshots, and where readers and waiters find them.
//
// A snapshot maps "schema.table" to its TableSnapshot. Readers (proxy
// sessions, one lookup per statement) call current() and keep the returned
// shared_ptr for as long as they need a consistent view; it never changes
// under them. Every publish makes a new PolicySnapshot with version + 1
// under the board's one lock (a short one: no database work under it), then
// wakes whoever waits for a publish and calls the publish listener outside
// the lock.
//
// Thread-safety: every member may be called from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "catalog/catalog_facts.h"
#include "policy/table_snapshot.h"

namespace kanon::store {

struct PolicySnapshot {
  uint64_t version = 0;
  // The store that published it (unique in the process; 0 for a snapshot
  // made by hand). A store's snapshots have increasing versions, so (store,
  // version) names one snapshot's content.
  uint64_t store = 0;
  // Every table the store's policies list ("schema.table"), built or not: a
  // listed table without a built snapshot is denied (fail closed).
  std::vector<std::string> listed;
  std::map<std::string, std::shared_ptr<const policy::TableSnapshot>> tables;  // by "schema.table"
  std::map<std::string, std::string> errors;  // last refresh error per table, if it failed
  // What the catalog says about every relation and function; null until read
  // (never by a store built with a Builder). A failed read keeps the previous
  // facts and sets catalog_error; a successful one clears it.
  std::shared_ptr<const catalog::CatalogFacts> catalog;
  std::string catalog_error;

  // nullptr when the table has no built policy.
  const policy::TableSnapshot* find(const std::string& qualified) const;
};

// What a session in a transaction decides with (Session keeps one version of
// every table for a whole transaction): `pinned`'s tables with `current`'s
// catalog and listed tables. `current` itself when the tables are the same or
// the snapshots are of different stores; otherwise a new snapshot whose
// version is unique in the process (so no cache entry of another snapshot
// is ever taken for it).
std::shared_ptr<const PolicySnapshot> pin_tables(std::shared_ptr<const PolicySnapshot> pinned,
                                                 std::shared_ptr<const PolicySnapshot> current);

// The name the catalog now gives the relation `served` was built from (its
// OID), when it is not the policy's: the table was renamed or moved. Empty
// otherwise, and when the relation is gone.
std::string renamed_to(const policy::TableSnapshot& served, const catalog::CatalogFacts& catalog);
// Why a refresh of a renamed table is not built (empty: it may be): the
// policy's name may now hold another relation, whose tree must not replace
// the one that protects the renamed table (rewriter/protected_index.h).
std::string refused_rename(const policy::TableSnapshot& served,
                           const catalog::CatalogFacts& catalog);

class SnapshotBoard {
 public:
  // Called after each table's build, load or failure is published, on the
  // thread that published it and outside the board's lock (so it may call
  // current()): the table, the snapshot now in force for it (after a
  // failure, the previous one, or null) and the error ("" on success).
  using PublishListener = std::function<void(
      const std::string& table, const policy::TableSnapshot* in_force, const std::string& error)>;

  // Version 0 lists `listed`, under a store id unique in the process.
  explicit SnapshotBoard(std::vector<std::string> listed);
  SnapshotBoard(const SnapshotBoard&) = delete;
  SnapshotBoard& operator=(const SnapshotBoard&) = delete;

  std::shared_ptr<const PolicySnapshot> current() const;

  // A table's build (`built`) or failure (`error`), with the catalog read
  // after it when `catalog` (or its failure, `catalog_error`) is given. A
  // stored version (shared_version) no newer than the one served is not
  // published; a build of whatever holds the name of a renamed table is
  // published as a failure (refused_rename). A failure keeps the snapshot
  // served before, unless `withdraw` (RowOrderLeak): then the table is
  // served by none, and its reads are denied.
  void publish(const std::string& table, std::shared_ptr<const policy::TableSnapshot> built,
               const std::string& error,
               std::shared_ptr<const catalog::CatalogFacts> catalog = nullptr,
               const std::string* catalog_error = nullptr, bool withdraw = false);
  // The catalog facts (or, when null, the read's error), same tables.
  void publish_catalog(std::shared_ptr<const catalog::CatalogFacts> catalog,
                       const std::string& error);
  // New listed tables (RELOAD): drops the snapshots and errors of tables no
  // longer listed.
  void relist(std::vector<std::string> listed);

  void set_publish_listener(PublishListener listener);

  // Waits up to `timeout` for a published snapshot for which `done` holds
  // (checked at once, then after each table publish); returns whether it does.
  bool wait_for(std::chrono::steady_clock::duration timeout,
                const std::function<bool(const PolicySnapshot&)>& done) const;

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const PolicySnapshot> current_;
  PublishListener listener_;
  mutable std::condition_variable published_;  // a table snapshot was published
};

}  // namespace kanon::store
