#include "store/replica_sync.h"

#include <fmt/format.h>

#include <pqxx/pqxx>

#include "catalog/kanon_schema.h"
#include "catalog/table_catalog.h"
#include "policy/fingerprint.h"
#include "store/snapshot_codec.h"

namespace kanon::store {

ReplicaSync::ReplicaSync(std::string conninfo, settings::SharingOptions options)
    : conninfo_(std::move(conninfo)), options_(std::move(options)) {}

ReplicaSync::~ReplicaSync() = default;

bool ReplicaSync::lead(int32_t group) {
  std::lock_guard lock(leader_mu_);
  if (!leader_ || group != leader_group_) {
    leader_ = std::make_unique<LeaderLock>(conninfo_, options_.replica, group);  // after RELOAD
    leader_group_ = group;
  }
  try {
    return leader_->try_lead();
  } catch (const std::exception& e) {
    note_error(std::string("cannot reach the database for the builder's lock: ") + e.what());
    return false;
  }
}

void ReplicaSync::note_error(const std::string& error) {
  std::lock_guard lock(error_mu_);
  error_ = error;
}

SharingState ReplicaSync::state() const {
  SharingState s;
  s.enabled = options_.enabled;
  s.replica = options_.replica;
  {
    std::lock_guard lock(error_mu_);
    s.error = error_;
  }
  std::unique_lock lock(leader_mu_, std::try_to_lock);  // not while lead() asks the database
  s.leading = lock.owns_lock() && leader_ && leader_->leading();
  return s;
}

std::shared_ptr<const policy::TableSnapshot> ReplicaSync::store(
    const std::string& table, std::shared_ptr<const policy::TableSnapshot> built) {
  try {
    auto stored = std::make_shared<policy::TableSnapshot>(*built);
    stored->built_by = options_.replica;
    pqxx::connection conn(conninfo_);
    pqxx::work tx(conn);
    stored->shared_version = store_snapshot(tx, *stored, options_.replica, options_.keep);
    note_served(tx, options_.replica, table, stored->shared_version);
    tx.commit();
    return stored;
  } catch (const std::exception& e) {
    note_error(
        fmt::format("the snapshot of {} was built but not stored (other replicas keep their "
                    "version): {}",
                    table, e.what()));
    return built;
  }
}

void ReplicaSync::fail_requests(int32_t group, const std::string& table, const std::string& error) {
  try {
    pqxx::connection conn(conninfo_);
    pqxx::work tx(conn);
    fail_refresh_requests(tx, group, table, error);
    tx.commit();
  } catch (const std::exception&) {
  }
}

std::vector<RefreshRequest> ReplicaSync::take_requests(int32_t group) {
  try {
    pqxx::connection conn(conninfo_);
    pqxx::work tx(conn);
    auto taken = take_refresh_requests(tx, group);
    tx.commit();
    return taken;
  } catch (const std::exception& e) {
    note_error(std::string("cannot read the refresh requests: ") + e.what());
    return {};
  }
}

std::vector<SnapshotListing> ReplicaSync::stored_snapshots(int32_t group, std::string& builder) {
  if (conninfo_.empty()) return {};
  pqxx::connection conn(conninfo_);
  pqxx::work tx(conn);
  catalog::ensure_kanon_schema(tx);
  builder = current_builder(tx, group);
  auto out = list_snapshots(tx);
  tx.commit();
  return out;
}

std::set<std::string> ReplicaSync::adopt(const std::map<std::string, policy::TablePolicy>& wanted,
                                         const Adoption& how) {
  std::lock_guard lock(adopt_mu_);
  std::set<std::string> serving;
  for (const auto& [name, p] : wanted)
    if (how.served_version(name) > 0) serving.insert(name);
  std::string table;  // the one being loaded, for the error
  try {
    // The kept catalog connection and two transactions for every table:
    // this is what a replica's start costs (bench/policy/snapshot_bench).
    how.on_connection([&](pqxx::connection_base& conn) {
      std::vector<StoredSnapshot> fresh;
      {
        pqxx::work tx(conn);
        if (tx.exec("SELECT to_regclass('kanon.snapshots') IS NOT NULL")[0][0].as<bool>())
          for (const auto& [name, p] : wanted) {
            auto stored = latest_snapshot(tx, name, policy::policy_hash(p));
            if (!stored || stored->version <= how.served_version(name)) continue;
            fresh.push_back(std::move(*stored));
          }
        tx.commit();
      }
      if (fresh.empty()) return;
      for (auto& stored : fresh) {
        table = stored.table;
        const auto& p = wanted.at(table);
        auto snap = decode_snapshot(stored.body, p, catalog::read_table_info(conn, p));
        snap->shared_version = stored.version;
        snap->built_by = stored.built_by;
        how.serve(table, std::move(snap));
        serving.insert(table);
      }
      table.clear();
      // Bookkeeping for SHOW SNAPSHOTS: no need to wait for the disk.
      pqxx::work tx(conn);
      tx.exec("SET LOCAL synchronous_commit = off");
      for (const auto& stored : fresh)
        note_served(tx, options_.replica, stored.table, stored.version);
      tx.commit();
    });
  } catch (const std::exception& e) {
    if (dynamic_cast<const pqxx::broken_connection*>(&e)) how.drop_connection();
    note_error(table.empty()
                   ? fmt::format("cannot load stored snapshots: {}", e.what())
                   : fmt::format("cannot load the stored snapshot of {}: {}", table, e.what()));
  }
  return serving;
}

}  // namespace kanon::store
