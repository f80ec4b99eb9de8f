// PolicyStore: the compiled policies of every protected table, published as
// immutable versioned snapshots. A façade over parts that each own their
// locks and threads:
//
//   SnapshotBoard (snapshot_board.h)       the published snapshots;
//   RefreshScheduler (refresh_scheduler.h) the background refresh thread;
//   CatalogReader (catalog_reader.h)       the catalog reads on the kept
//                                          connection, published in order,
//                                          and what they cover;
//   CatalogWatcher (catalog_watcher.h)     the catalog watcher thread;
//   ReplicaSync (replica_sync.h)           shared snapshots: the builder's
//                                          lock, storing, adopting, requests;
//   ask_builder (builder_request.h)        a refresh asked of the builder and
//                                          the wait for its answer;
//   BaselineRequests (baseline_requests.h) the tables REANONYMIZE rebuilds.
//
// The store itself keeps the policies, builds tables and decides when to
// build, adopt or ask the builder.
//
// Readers (proxy sessions, one lookup per statement) call current() and keep
// the returned shared_ptr for as long as they need a consistent view; it
// never changes under them. Refreshes build a table's new TableSnapshot off
// to the side, then publish a new PolicySnapshot with version + 1 under a
// short lock.
// A refresh that fails keeps the table's previous TableSnapshot and records
// the error in the new snapshot's `errors`; a table that has never been built
// is absent from `tables` (the rewriter must then deny access: fail closed).
//
// The store built with a conninfo also keeps the database's CatalogFacts
// (catalog_facts.h) in every snapshot: read at each build or refresh, by
// refresh_catalog(), and by the catalog watcher start() runs, which LISTENs
// on `kanon_catalog` (an event trigger it installs notifies it after DDL;
// catalog_watch.h) and re-reads the facts after each burst of notifications.
// It holds two service connections for this: one for the reads (kept, so
// its statements stay prepared) and the watcher's LISTEN connection.
//
// Thread-safety: every public member may be called from any thread.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "catalog/catalog_facts.h"
#include "policy/table_policy.h"
#include "policy/table_snapshot.h"
#include "store/baseline_requests.h"
#include "store/catalog_reader.h"
#include "store/catalog_watcher.h"
#include "store/refresh_scheduler.h"
#include "store/replica_sync.h"
#include "store/shared_snapshots.h"
#include "store/snapshot_board.h"
#include "store/snapshot_build.h"

namespace kanon::store {

class PolicyStore {
 public:
  // Builds one table; the default opens a service connection to `conninfo`,
  // calls build_table_snapshot and, for mode: materialized, materialize().
  using Builder =
      std::function<std::shared_ptr<const policy::TableSnapshot>(const policy::TablePolicy&)>;

  // `database` is the database every policy names (see database()).
  // `sharing`: snapshots shared with other kanon processes on the database
  // (shared_snapshots.h).
  PolicyStore(std::string conninfo, std::vector<policy::TablePolicy> policies,
              BuildOptions options = {}, std::string database = "",
              settings::SharingOptions sharing = {});
  PolicyStore(std::vector<policy::TablePolicy> policies, Builder builder);
  ~PolicyStore();
  PolicyStore(const PolicyStore&) = delete;
  PolicyStore& operator=(const PolicyStore&) = delete;

  std::shared_ptr<const PolicySnapshot> current() const;

  // The database the store's policies name (TablePolicy::database; "" for
  // the service account's default).
  const std::string& database() const { return database_; }
  // The database's name as the catalog read it (current_database()), else
  // database(); "" while neither is known.
  std::string database_name() const;

  // Rebuilds one table (by "schema.table") or all, synchronously; returns
  // false when a build failed (the error is in current()->errors). Both
  // re-read the catalog facts too, published with the (last) table in the
  // same version, so a refresh publishes as many versions as before (with no
  // policies, refresh_all only reads the catalog); a failed catalog read sets
  // current()->catalog_error but does not change the result.
  //
  // With shared snapshots, only the builder (the replica holding the lock)
  // builds; refresh() and reanonymize() elsewhere ask it to (kanon_refresh)
  // and wait for the stored version, or become the builder when none is
  // connected. refresh_all() serves the stored snapshot of each table whose
  // policy hash is this replica's when `adopt_stored` (start-up) or when this
  // replica is not the builder; it builds the others when it is.
  bool refresh(const std::string& table);
  bool refresh_all(bool adopt_stored = false);
  // REANONYMIZE: rebuilds the table as a new baseline of its release history
  // (a fresh tree; earlier releases are no longer taken into account, so an
  // analyst can intersect them with this one). Same result as refresh().
  bool reanonymize(const std::string& table);

  // Re-reads the catalog facts and publishes them in a new snapshot version
  // with the same table snapshots. False when the read failed (the error is in
  // current()->catalog_error) or the store has no conninfo.
  bool refresh_catalog();

  // Catalog notifications (one per DDL event) the watcher has received, and
  // how many of them the served catalog covers: a session that finds
  // covered < received decides with a catalog older than the database's,
  // and reads it again first (refresh_catalog_covering) instead of waiting
  // for the watcher's debounced refresh.
  uint64_t catalog_notifications() const { return watcher_.notifications(); }
  uint64_t catalog_notifications_covered() const { return catalog_.coverage().covered(); }
  // refresh_catalog(), unless a read that began after `notifications` were
  // received has been published meanwhile (many sessions catching up at
  // once read the catalog once).
  bool refresh_catalog_covering(uint64_t notifications);
  // CatalogReader::refresh_if_moved: true when the facts are newer than
  // generation `decided` (read meanwhile, or read again now that the
  // generation moved past them), else false. Throws when the database
  // cannot be asked.
  bool refresh_catalog_if_moved(int64_t decided);

  // Whether a persistent relation or function has one of these names
  // (catalog_facts.h), on the kept catalog connection. Throws when the
  // database cannot be asked; true for a store without a conninfo.
  bool any_persistent_object_named(const std::vector<std::string>& names);
  // catalog::unsafe_temporary_object, on the same connection.
  std::optional<std::string> unsafe_temporary_object(const std::vector<std::string>& names);

  // Whether the event triggers that fire now are those `facts` hold
  // (catalog::read_event_triggers; creating or dropping one fires no event
  // trigger, so nothing else tells kanon). Throws when the database cannot
  // be asked.
  bool event_triggers_as_read(const catalog::CatalogFacts& facts);

  // RELOAD: replaces the policies (e.g. re-read from the files), drops the
  // snapshots of tables no longer listed and rebuilds every listed table.
  // Returns false when a build failed.
  bool reload(std::vector<policy::TablePolicy> policies);

  // The policies as last loaded (built or not).
  std::vector<policy::TablePolicy> policies() const;

  // Background refresh: each table again after its policy's `refresh`
  // interval. With a conninfo, also the catalog watcher: it installs the
  // event trigger (failure is only reported in catalog_watch_state()), LISTENs
  // on kanon_catalog, re-reads the facts once listening and after each burst
  // of notifications, and reconnects after errors; start() waits (up to
  // 60 s) for it to listen and read once. stop() (or the destructor) joins
  // the threads.
  void start();
  void stop();

  CatalogWatchState catalog_watch_state() const;

  // Called after each table's build, load or failure is published, on the
  // thread that published it and outside the store's locks (so it may call
  // current()): the table, the snapshot now in force for it (after a
  // failure, the previous one, or null) and the error ("" on success). The
  // proxy logs with it; not called for what is published before it is set.
  using PublishListener = SnapshotBoard::PublishListener;
  void set_publish_listener(PublishListener listener);

  SharingState sharing_state() const;
  // Every stored snapshot of the database, who serves it, and the builder's
  // name (""). Throws when the database cannot be asked.
  std::vector<SnapshotListing> stored_snapshots(std::string& builder);

 private:
  // Shared snapshots (shared_snapshots.h).
  bool sharing() const { return sync_.enabled(); }
  bool lead();  // takes or keeps the builder's lock; false on errors
  // Serves the newest stored snapshot of `table` when it is newer than the
  // one served and made for this replica's policy. True when one is served
  // after the call.
  bool adopt(const std::string& table);
  // The same for several tables at once; returns those served after it.
  std::set<std::string> adopt(const std::vector<std::string>& tables);
  // Builds, stores (when sharing) and publishes one table.
  bool build_table(const std::string& table, bool with_catalog);
  // Not the builder: a request in kanon.refresh_requests, then wait for a
  // newer version or the builder's error (builder_request.h).
  bool ask_builder(const std::string& table, const char* verb);
  uint64_t served_version(const std::string& table) const;
  // The watcher's kanon_snapshot and kanon_refresh notifications.
  void on_stored(const std::vector<std::string>& payloads);
  void on_asked();
  CatalogReader::Hooks catalog_hooks();       // the served facts, notifications, publish
  RefreshScheduler::Hooks scheduler_hooks();  // refresh(), reanonymize(), adopt()
  CatalogWatcher::Hooks watcher_hooks();      // catalog reads, adopt(), on_asked()

  const std::string conninfo_;  // empty for a store built with a Builder
  const std::string database_;

  mutable std::mutex policies_mu_;
  std::vector<policy::TablePolicy> policies_;
  Builder builder_;
  SnapshotBoard board_;         // the published snapshots (after policies_: lists them)
  RefreshScheduler scheduler_;  // the background refresh (after board_: reads it)
  BaselineRequests baselines_;  // what reanonymize() builds as a baseline
  CatalogReader catalog_;       // the kept catalog connection (publishes on board_)

  ReplicaSync sync_;        // shared snapshots
  CatalogWatcher watcher_;  // after sync_ (sharing())
};

}  // namespace kanon::store
