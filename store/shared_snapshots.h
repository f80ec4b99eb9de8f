// Shared snapshots: every kanon on one database serves the same snapshot of
// each protected table (docs/operations.md, "Replicas").
//
// In schema `kanon` of each protected database, owned by the service account:
//
//   kanon.snapshots(table_name, version, policy_hash, fingerprint, built_at,
//                   built_by, stored_at, body)
//     every stored snapshot (snapshot_codec.h), the last `keep` per table;
//   kanon.snapshot_servers(replica, table_name, version, since)
//     which replica serves which version.
//
// Replicas whose policies for the database are the same (replica_group) form
// a group; one replica per group builds: the one holding the session
// advisory lock (kLeaderLockClass, group), taken on a connection it keeps
// open (LeaderLock, named "kanon replica <name>" in pg_stat_activity). A
// replica serves only snapshots stored for its own policy (policy_hash), so
// a replica with other policies (a rolling change of the policy files,
// another deployment) forms a group of its own and builds for it; the
// release history (release_store.h) stays one per table, so the history-aware
// guarantee covers both groups' releases. A stored
// snapshot is announced with NOTIFY kanon_snapshot (payload: the table);
// the others load it. A replica that is not the builder asks for a refresh
// with a row in kanon.refresh_requests and NOTIFY kanon_refresh; the builder
// takes the rows of its group and writes a failed build's error back. Any
// role may NOTIFY any channel, so no payload is trusted: a notification only
// makes the builder look at the table, which only the service account can
// write.
// Writes also take a transaction advisory lock per table, so two builders
// (a lost leader connection) never store the same version twice.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "policy/table_snapshot.h"
#include "settings/sharing_options.h"

namespace pqxx {
class transaction_base;
}

namespace kanon::store {

inline constexpr const char* kSnapshotChannel = "kanon_snapshot";
inline constexpr const char* kRefreshChannel = "kanon_refresh";
inline constexpr int kLeaderLockClass = 0x6b616e6f;  // "kano"

// Stores `snapshot` as the table's next version, keeps the last `keep` of
// its policy,
// notifies kanon_snapshot (at commit) and returns the version.
uint64_t store_snapshot(pqxx::transaction_base& tx, const policy::TableSnapshot& snapshot,
                        const std::string& replica, uint32_t keep);

struct StoredSnapshot {
  std::string table;
  uint64_t version = 0;
  std::string policy_hash;
  std::string fingerprint;
  std::string built_by;
  std::string built_at;  // as PostgreSQL prints it
  std::string body;      // empty in list_snapshots()
};

// The newest stored snapshot of `table` ("schema.table") made for a policy
// of hash `hash`; nullopt when none.
std::optional<StoredSnapshot> latest_snapshot(pqxx::transaction_base& tx, const std::string& table,
                                              const std::string& hash);

// The group of replicas serving `policies` (one database's): equal for
// equal policies (policy_hash), in any order.
int32_t replica_group(const std::vector<policy::TablePolicy>& policies);

// A refresh asked of `group`'s builder ("refresh" or "reanonymize"): the
// request's id. NOTIFY kanon_refresh at commit.
uint64_t ask_refresh(pqxx::transaction_base& tx, int32_t group, const std::string& verb,
                     const std::string& table, const std::string& replica);

struct RefreshRequest {
  uint64_t id = 0;
  std::string verb;
  std::string table;
};
// The requests of `group` not taken yet, now taken.
std::vector<RefreshRequest> take_refresh_requests(pqxx::transaction_base& tx, int32_t group);
// The builder's failure of `table`, written into the requests it took.
void fail_refresh_requests(pqxx::transaction_base& tx, int32_t group, const std::string& table,
                           const std::string& error);
// The error written into request `id`; nullopt while there is none.
std::optional<std::string> refresh_error(pqxx::transaction_base& tx, uint64_t id);

// Records that `replica` serves `version` of `table`.
void note_served(pqxx::transaction_base& tx, const std::string& replica, const std::string& table,
                 uint64_t version);

// What SHOW SNAPSHOTS lists: each stored version, the replicas serving it and
// whether they are connected now.
struct SnapshotListing {
  StoredSnapshot snapshot;
  std::vector<std::string> served_by;  // "name" or "name (gone)"
};
std::vector<SnapshotListing> list_snapshots(pqxx::transaction_base& tx);

// The replica holding the builder's lock of `group` ("" when none, or
// unknown).
std::string current_builder(pqxx::transaction_base& tx, int32_t group);

// The builder's lock on a connection of its own, kept open.
class LeaderLock {
 public:
  LeaderLock(std::string conninfo, std::string replica, int32_t group);
  ~LeaderLock();
  LeaderLock(const LeaderLock&) = delete;
  LeaderLock& operator=(const LeaderLock&) = delete;

  // True when this process holds the lock (taking it when free). A broken
  // connection loses the lock: the next call reconnects and tries again.
  // Throws when the database cannot be reached.
  bool try_lead();
  // Whether the last try_lead() held it (no database round trip).
  bool leading() const { return leading_; }

 private:
  const std::string conninfo_;
  const std::string replica_;
  const int32_t group_;
  struct Connection;
  std::unique_ptr<Connection> conn_;
  bool leading_ = false;
};

}  // namespace kanon::store
