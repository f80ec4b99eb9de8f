#include "store/shared_snapshots.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <pqxx/pqxx>

#include "catalog/kanon_schema.h"
#include "store/snapshot_codec.h"

namespace kanon::store {
namespace {

// The lock's two-key form shows in pg_locks as classid, objid, objsubid 2.
constexpr const char* kHeldBy =
    "SELECT l.pid FROM pg_catalog.pg_locks l WHERE l.locktype = 'advisory' AND l.granted "
    "AND l.classid = {0}::oid AND l.objid = {1}::oid AND l.objsubid = 2 AND l.database = "
    "(SELECT oid FROM pg_catalog.pg_database WHERE datname = current_database())";

std::string application_name(const std::string& replica) {
  return "kanon replica " + replica;
}

}  // namespace

uint64_t ask_refresh(pqxx::transaction_base& tx, int32_t group, const std::string& verb,
                     const std::string& table, const std::string& replica) {
  catalog::ensure_kanon_schema(tx);
  tx.exec("DELETE FROM kanon.refresh_requests WHERE asked_at < now() - interval '1 day'");
  const auto id = tx.exec_params(
                        "INSERT INTO kanon.refresh_requests (grp, verb, table_name, asked_by) "
                        "VALUES ($1, $2, $3, $4) RETURNING id",
                        group, verb, table, replica)[0][0]
                      .as<uint64_t>();
  tx.exec_params("SELECT pg_notify($1, '')", kRefreshChannel);
  return id;
}

std::vector<RefreshRequest> take_refresh_requests(pqxx::transaction_base& tx, int32_t group) {
  std::vector<RefreshRequest> out;
  if (tx.exec("SELECT to_regclass('kanon.refresh_requests') IS NULL")[0][0].as<bool>()) return out;
  catalog::check_kanon_schema_version(tx);
  for (const auto& r :
       tx.exec_params("UPDATE kanon.refresh_requests SET taken = true WHERE grp = $1 AND NOT taken "
                      "RETURNING id, verb, table_name",
                      group))
    out.push_back({r[0].as<uint64_t>(), r[1].as<std::string>(), r[2].as<std::string>()});
  return out;
}

void fail_refresh_requests(pqxx::transaction_base& tx, int32_t group, const std::string& table,
                           const std::string& error) {
  if (tx.exec("SELECT to_regclass('kanon.refresh_requests') IS NULL")[0][0].as<bool>()) return;
  catalog::check_kanon_schema_version(tx);
  tx.exec_params(
      "UPDATE kanon.refresh_requests SET error = $3 WHERE grp = $1 AND table_name = $2 AND taken "
      "AND error IS NULL",
      group, table, error);
}

std::optional<std::string> refresh_error(pqxx::transaction_base& tx, uint64_t id) {
  const auto r = tx.exec_params("SELECT error FROM kanon.refresh_requests WHERE id = $1",
                                static_cast<int64_t>(id));
  if (r.empty() || r[0][0].is_null()) return std::nullopt;
  return r[0][0].as<std::string>();
}

uint64_t store_snapshot(pqxx::transaction_base& tx, const policy::TableSnapshot& snapshot,
                        const std::string& replica, uint32_t keep) {
  const std::string table = snapshot.policy.name();
  catalog::ensure_kanon_schema(tx);
  tx.exec_params("SELECT pg_advisory_xact_lock($1, hashtext($2))", kLeaderLockClass, table);
  const auto version =
      tx.exec_params(
            "SELECT coalesce(max(version), 0) + 1 FROM kanon.snapshots WHERE table_name = $1",
            table)[0][0]
          .as<uint64_t>();
  const double built_at =
      std::chrono::duration<double>(snapshot.built_at.time_since_epoch()).count();
  tx.exec_params(
      "INSERT INTO kanon.snapshots (table_name, version, policy_hash, fingerprint, built_at, "
      "built_by, body) VALUES ($1, $2, $3, $4, to_timestamp($5), $6, $7)",
      table, static_cast<int64_t>(version), policy::policy_hash(snapshot.policy),
      snapshot.stats.fingerprint, built_at, replica, encode_snapshot(snapshot));
  // The last `keep` of this policy (other replica groups keep theirs).
  tx.exec_params(
      "DELETE FROM kanon.snapshots WHERE table_name = $1 AND policy_hash = $2 AND version NOT IN "
      "(SELECT version FROM kanon.snapshots WHERE table_name = $1 AND policy_hash = $2 "
      "ORDER BY version DESC LIMIT $3)",
      table, policy::policy_hash(snapshot.policy),
      static_cast<int64_t>(std::max<uint32_t>(keep, 1)));
  tx.exec_params("SELECT pg_notify($1, $2)", kSnapshotChannel, table);
  return version;
}

std::optional<StoredSnapshot> latest_snapshot(pqxx::transaction_base& tx, const std::string& table,
                                              const std::string& hash) {
  const auto r = tx.exec_params(
      "SELECT version, policy_hash, fingerprint, built_by, built_at::text, body "
      "FROM kanon.snapshots WHERE table_name = $1 AND policy_hash = $2 "
      "ORDER BY version DESC LIMIT 1",
      table, hash);
  if (r.empty()) return std::nullopt;
  StoredSnapshot s;
  s.table = table;
  s.version = r[0][0].as<uint64_t>();
  s.policy_hash = r[0][1].as<std::string>();
  s.fingerprint = r[0][2].as<std::string>();
  s.built_by = r[0][3].as<std::string>();
  s.built_at = r[0][4].as<std::string>();
  s.body = r[0][5].as<std::string>();
  return s;
}

void note_served(pqxx::transaction_base& tx, const std::string& replica, const std::string& table,
                 uint64_t version) {
  tx.exec_params(
      "INSERT INTO kanon.snapshot_servers AS s (replica, table_name, version) VALUES ($1, $2, $3) "
      "ON CONFLICT (replica, table_name) DO UPDATE SET version = excluded.version, since = now() "
      "WHERE s.version IS DISTINCT FROM excluded.version",
      replica, table, static_cast<int64_t>(version));
}

std::vector<SnapshotListing> list_snapshots(pqxx::transaction_base& tx) {
  std::vector<SnapshotListing> out;
  std::map<std::pair<std::string, uint64_t>, size_t> index;
  for (const auto& r :
       tx.exec("SELECT table_name, version, policy_hash, fingerprint, built_by, built_at::text "
               "FROM kanon.snapshots ORDER BY table_name, version DESC")) {
    SnapshotListing l;
    l.snapshot.table = r[0].as<std::string>();
    l.snapshot.version = r[1].as<uint64_t>();
    l.snapshot.policy_hash = r[2].as<std::string>();
    l.snapshot.fingerprint = r[3].as<std::string>();
    l.snapshot.built_by = r[4].as<std::string>();
    l.snapshot.built_at = r[5].as<std::string>();
    index[{l.snapshot.table, l.snapshot.version}] = out.size();
    out.push_back(std::move(l));
  }
  // A replica is connected while its lock connection is (LeaderLock).
  for (const auto& r :
       tx.exec("SELECT s.replica, s.table_name, s.version, EXISTS (SELECT 1 FROM "
               "pg_catalog.pg_stat_activity a WHERE a.datname = current_database() AND "
               "a.application_name = 'kanon replica ' || s.replica) "
               "FROM kanon.snapshot_servers s ORDER BY s.replica")) {
    const auto it = index.find({r[1].as<std::string>(), r[2].as<uint64_t>()});
    if (it == index.end()) continue;
    out[it->second].served_by.push_back(r[0].as<std::string>() +
                                        (r[3].as<bool>() ? "" : " (gone)"));
  }
  return out;
}

int32_t replica_group(const std::vector<policy::TablePolicy>& policies) {
  std::vector<std::string> hashes;
  for (const auto& p : policies) hashes.push_back(p.name() + "=" + policy::policy_hash(p));
  std::sort(hashes.begin(), hashes.end());
  uint32_t h = 2166136261u;
  for (const auto& s : hashes)
    for (unsigned char c : s + "\n") h = (h ^ c) * 16777619u;
  return static_cast<int32_t>(h & 0x7fffffff);
}

std::string current_builder(pqxx::transaction_base& tx, int32_t group) {
  const auto r = tx.exec(
      fmt::format("SELECT a.application_name FROM pg_catalog.pg_stat_activity a WHERE a.pid = ({})",
                  fmt::format(kHeldBy, kLeaderLockClass, group)));
  if (r.empty() || r[0][0].is_null()) return "";
  auto name = r[0][0].as<std::string>();
  const std::string prefix = application_name("");
  return name.starts_with(prefix) ? name.substr(prefix.size()) : name;
}

struct LeaderLock::Connection {
  explicit Connection(const std::string& conninfo) : conn(conninfo) {}
  pqxx::connection conn;
};

LeaderLock::LeaderLock(std::string conninfo, std::string replica, int32_t group)
    : conninfo_(std::move(conninfo)), replica_(std::move(replica)), group_(group) {}

LeaderLock::~LeaderLock() = default;

bool LeaderLock::try_lead() {
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      if (!conn_ || !conn_->conn.is_open()) {
        leading_ = false;
        conn_ = std::make_unique<Connection>(conninfo_);
        pqxx::nontransaction tx(conn_->conn);
        tx.exec("SET application_name = " + tx.quote(application_name(replica_)));
      }
      pqxx::nontransaction tx(conn_->conn);
      // Held already (the lock stacks: take it only once), else try.
      leading_ = tx.exec(fmt::format(
          "SELECT CASE WHEN pg_backend_pid() IN ({0}) THEN true "
          "ELSE pg_try_advisory_lock({1}, {2}) END",
          fmt::format(kHeldBy, kLeaderLockClass, group_), kLeaderLockClass, group_))[0][0]
                     .as<bool>();
      return leading_;
    } catch (const pqxx::broken_connection&) {
      conn_.reset();
      leading_ = false;
      if (attempt > 0) throw;
    }
  }
  return false;
}

}  // namespace kanon::store
