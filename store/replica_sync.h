// ReplicaSync: a PolicyStore's side of shared snapshots (shared_snapshots.h):
// the builder's advisory lock of the replica group, storing what this
// replica built before it serves it, loading (adopting) what another
// stored, in version order, refresh requests, and the last sharing error
// for SHOW SNAPSHOTS. When to lead, build, adopt or ask is the store's.
//
// Thread-safety: every member may be called from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "policy/table_policy.h"
#include "policy/table_snapshot.h"
#include "settings/sharing_options.h"
#include "store/shared_snapshots.h"

namespace pqxx {
class connection_base;
}

namespace kanon::store {

// Shared snapshots as this store sees them (SHOW SNAPSHOTS).
struct SharingState {
  bool enabled = false;
  std::string replica;
  bool leading = false;  // this process builds
  std::string error;     // the last failure to store, load or take the lock
};

class ReplicaSync {
 public:
  ReplicaSync(std::string conninfo, settings::SharingOptions options);
  ~ReplicaSync();
  ReplicaSync(const ReplicaSync&) = delete;
  ReplicaSync& operator=(const ReplicaSync&) = delete;

  // Sharing is on (and the store has a database to share through).
  bool enabled() const { return options_.enabled && !conninfo_.empty(); }
  const std::string& replica() const { return options_.replica; }

  // Takes or keeps the builder's lock of `group` (a new lock after RELOAD
  // changed the group); false on errors, which are noted.
  bool lead(int32_t group);
  void note_error(const std::string& error);
  SharingState state() const;

  // Stores `built` (this replica built it) before it is served, so no
  // replica serves a version that others cannot load; the stored copy, or
  // `built` itself when storing failed (noted: a store that fails serves it
  // here only).
  std::shared_ptr<const policy::TableSnapshot> store(
      const std::string& table, std::shared_ptr<const policy::TableSnapshot> built);
  // The build of `table` failed: whoever asked for it stops waiting.
  void fail_requests(int32_t group, const std::string& table, const std::string& error);
  // The refresh requests of `group`, now taken; none on errors (noted).
  std::vector<RefreshRequest> take_requests(int32_t group);
  // Every stored snapshot of the database and the builder's name. Throws
  // when the database cannot be asked; nothing without a conninfo.
  std::vector<SnapshotListing> stored_snapshots(int32_t group, std::string& builder);

  struct Adoption {
    // The stored version of a table served now (0: none).
    std::function<uint64_t(const std::string& table)> served_version;
    // Runs `read` on the store's kept catalog connection, under its lock.
    std::function<void(const std::function<void(pqxx::connection_base&)>& read)> on_connection;
    // Drops the kept catalog connection (it broke).
    std::function<void()> drop_connection;
    // Serves a loaded snapshot (called inside on_connection's `read`).
    std::function<void(const std::string& table, std::shared_ptr<const policy::TableSnapshot>)>
        serve;
  };
  // Serves the newest stored snapshot of each `wanted` table (by name, with
  // this replica's policy) that is newer than the one served and made for
  // this policy; one adoption at a time, so versions are served in order.
  // Returns the wanted tables served after it; errors are noted.
  std::set<std::string> adopt(const std::map<std::string, policy::TablePolicy>& wanted,
                              const Adoption& how);

 private:
  const std::string conninfo_;  // empty for a store built with a Builder
  const settings::SharingOptions options_;
  mutable std::mutex leader_mu_;
  std::unique_ptr<LeaderLock> leader_;
  int32_t leader_group_ = 0;
  mutable std::mutex error_mu_;
  std::string error_;
  std::mutex adopt_mu_;  // one adopt() at a time, in version order
};

}  // namespace kanon::store
