#include "store/policy_store.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <pqxx/pqxx>

#include "catalog/kanon_schema.h"
#include "store/materializer.h"
#include "store/snapshot_codec.h"

namespace kanon::store {

struct PolicyStore::CatalogConnection {
  explicit CatalogConnection(const std::string& conninfo) : conn(conninfo) {}
  pqxx::connection conn;
};

namespace {

std::vector<std::string> names(const std::vector<policy::TablePolicy>& policies) {
  std::vector<std::string> out;
  for (const auto& p : policies) out.push_back(p.name());
  return out;
}

}  // namespace

PolicyStore::PolicyStore(std::string conninfo, std::vector<policy::TablePolicy> policies,
                         BuildOptions options, std::string database,
                         settings::SharingOptions sharing)
    : conninfo_(conninfo),
      database_(std::move(database)),
      policies_(std::move(policies)),
      builder_([this, conninfo, options](const policy::TablePolicy& p) {
        pqxx::connection conn(conninfo);
        BuildOptions o = options;
        o.baseline = take_baseline(p.name());
        auto built = build_table_snapshot(conn, p, o);
        if (p.mode == policy::EnforcementMode::kInline) return built;
        auto snap = std::make_shared<policy::TableSnapshot>(*built);
        if (p.mode == policy::EnforcementMode::kMaterialized) {
          snap->materialized_name = materialize(conn, *snap);
        } else {
          auto view = build_masked_view(conn, *snap);
          snap->materialized_name = std::move(view.name);
          snap->grant_warnings = std::move(view.warnings);
        }
        return std::shared_ptr<const policy::TableSnapshot>(std::move(snap));
      }),
      board_(names(policies_)),
      scheduler_(scheduler_hooks()),
      sharing_(std::move(sharing)),
      watcher_(conninfo_, this->sharing(), watcher_hooks()) {}

PolicyStore::PolicyStore(std::vector<policy::TablePolicy> policies, Builder builder)
    : policies_(std::move(policies)),
      builder_(std::move(builder)),
      board_(names(policies_)),
      scheduler_(scheduler_hooks()),
      watcher_(conninfo_, this->sharing(), watcher_hooks()) {}

CatalogWatcher::Hooks PolicyStore::watcher_hooks() {
  CatalogWatcher::Hooks h;
  h.read_catalog = [this] { refresh_catalog(); };
  h.read_catalog_covering = [this](uint64_t notifications) {
    return refresh_catalog_covering(notifications);
  };
  h.catalog_error = [this] { return current()->catalog_error; };
  h.listening = [this] { adopt(names(policies())); };
  h.stored = [this](std::vector<std::string> payloads) { on_stored(payloads); };
  h.asked = [this] { on_asked(); };
  return h;
}

RefreshScheduler::Hooks PolicyStore::scheduler_hooks() {
  RefreshScheduler::Hooks h;
  h.policies = [this] { return policies(); };
  h.built_at = [this](const std::string& table) {
    std::optional<std::chrono::system_clock::time_point> at;
    if (const auto* t = current()->find(table)) at = t->built_at;
    return at;
  };
  h.requested = [this](const std::string& table, bool baseline) {
    if (baseline)
      reanonymize(table);
    else
      refresh(table);
  };
  // With shared snapshots the builder builds; the others load what it
  // stored (in case a notification was missed) and take over when no
  // builder is connected.
  h.due = [this](const std::string& table) {
    if (sharing() && !lead())
      adopt(table);
    else
      refresh(table);
  };
  return h;
}

PolicyStore::~PolicyStore() {
  stop();
}

std::shared_ptr<const PolicySnapshot> PolicyStore::current() const {
  return board_.current();
}

std::string PolicyStore::database_name() const {
  const auto snapshot = current();
  return snapshot->catalog ? snapshot->catalog->database : database_;
}

void PolicyStore::set_publish_listener(PublishListener listener) {
  board_.set_publish_listener(std::move(listener));
}

std::shared_ptr<const catalog::CatalogFacts> PolicyStore::read_catalog_locked(std::string& error) {
  const auto previous = current()->catalog;
  // Once more on a new connection when the kept one broke (server restart).
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      if (!catalog_conn_ || !catalog_conn_->conn.is_open())
        catalog_conn_ = std::make_unique<CatalogConnection>(conninfo_);
      return std::make_shared<const catalog::CatalogFacts>(
          catalog::read_catalog_facts(catalog_conn_->conn, previous.get()));
    } catch (const pqxx::broken_connection& e) {
      catalog_conn_.reset();
      error = e.what();
    } catch (const std::exception& e) {
      catalog_conn_.reset();
      error = e.what();
      break;
    }
  }
  return nullptr;
}

bool PolicyStore::refresh_catalog() {
  if (conninfo_.empty()) return false;
  std::lock_guard lock(catalog_mu_);
  const uint64_t notifications = watcher_.notifications();
  std::string error;
  auto facts = read_catalog_locked(error);
  const bool ok = facts != nullptr;
  board_.publish_catalog(std::move(facts), error);
  if (ok && covered_.load() < notifications) covered_.store(notifications);
  return ok;
}

bool PolicyStore::refresh_catalog_covering(uint64_t notifications) {
  {
    std::lock_guard lock(catalog_mu_);
    if (covered_.load() >= notifications) return true;
  }
  return refresh_catalog();
}

bool PolicyStore::any_persistent_object_named(const std::vector<std::string>& names) {
  if (conninfo_.empty()) return true;  // nobody can tell: not absent
  std::lock_guard lock(catalog_mu_);
  for (int attempt = 0;; ++attempt) {
    try {
      if (!catalog_conn_ || !catalog_conn_->conn.is_open())
        catalog_conn_ = std::make_unique<CatalogConnection>(conninfo_);
      return catalog::any_persistent_object_named(catalog_conn_->conn, names);
    } catch (const pqxx::broken_connection&) {
      catalog_conn_.reset();
      if (attempt > 0) throw;
    }
  }
}

std::vector<policy::TablePolicy> PolicyStore::policies() const {
  std::lock_guard lock(policies_mu_);
  return policies_;
}

bool PolicyStore::reload(std::vector<policy::TablePolicy> policies) {
  {
    std::lock_guard lock(policies_mu_);
    policies_ = std::move(policies);
  }
  board_.relist(names(this->policies()));
  const bool ok = refresh_all(false);
  scheduler_.reschedule();
  return ok;
}

bool PolicyStore::refresh(const std::string& table) {
  if (sharing() && !lead()) return ask_builder(table, "refresh");
  return build_table(table, true);
}

bool PolicyStore::reanonymize(const std::string& table) {
  if (sharing() && !lead()) return ask_builder(table, "reanonymize");
  {
    std::lock_guard lock(baseline_mu_);
    baseline_pending_.insert(table);
  }
  const bool ok = build_table(table, true);
  std::lock_guard lock(baseline_mu_);
  baseline_pending_.erase(table);  // a failed build does not leave it pending
  return ok;
}

bool PolicyStore::take_baseline(const std::string& table) {
  std::lock_guard lock(baseline_mu_);
  return baseline_pending_.erase(table) > 0;
}

bool PolicyStore::build_table(const std::string& table, bool with_catalog) {
  std::shared_ptr<const policy::TableSnapshot> built;
  std::string error = "no policy for table " + table;
  const auto served = current();
  const policy::TableSnapshot* before = served->find(table);
  if (const std::string refused =
          before && served->catalog ? refused_rename(*before, *served->catalog) : std::string();
      !refused.empty()) {
    board_.publish(table, nullptr, refused);
    return false;
  }
  for (const auto& p : policies()) {
    if (p.name() != table) continue;
    try {
      built = builder_(p);
    } catch (const std::exception& e) {
      error = e.what();
    }
    break;
  }
  if (built && sharing()) {
    // Stored before it is served, so no replica serves a version that
    // others cannot load. A store that fails serves it here only.
    try {
      auto stored = std::make_shared<policy::TableSnapshot>(*built);
      stored->built_by = sharing_.replica;
      pqxx::connection conn(conninfo_);
      pqxx::work tx(conn);
      stored->shared_version = store_snapshot(tx, *stored, sharing_.replica, sharing_.keep);
      note_served(tx, sharing_.replica, table, stored->shared_version);
      tx.commit();
      built = std::move(stored);
    } catch (const std::exception& e) {
      note_sharing_error(
          fmt::format("the snapshot of {} was built but not stored (other replicas keep their "
                      "version): {}",
                      table, e.what()));
    }
  } else if (!built && sharing()) {
    // Whoever asked for it stops waiting.
    try {
      pqxx::connection conn(conninfo_);
      pqxx::work tx(conn);
      fail_refresh_requests(tx, replica_group(policies()), table, error);
      tx.commit();
    } catch (const std::exception&) {
    }
  }
  if (!with_catalog || conninfo_.empty()) {
    board_.publish(table, built, error);
    return built != nullptr;
  }
  // The catalog as it is after the build, published in the same version.
  std::lock_guard lock(catalog_mu_);
  std::string catalog_error;
  auto facts = read_catalog_locked(catalog_error);
  board_.publish(table, built, error, std::move(facts), &catalog_error);
  return built != nullptr;
}

bool PolicyStore::refresh_all(bool adopt_stored) {
  const auto listed = policies();
  if (listed.empty()) {
    if (!conninfo_.empty()) refresh_catalog();
    return true;
  }
  // One version per table, as always; the last one also carries the catalog
  // read after every build (materialized copies included).
  const bool leading = sharing() && lead();
  std::set<std::string> served;
  if (sharing() && (adopt_stored || !leading)) {
    std::vector<std::string> names;
    for (const auto& p : listed) names.push_back(p.name());
    served = adopt(names);
  }
  bool ok = true;
  bool catalog_read = false;
  for (size_t i = 0; i < listed.size(); ++i) {
    const std::string name = listed[i].name();
    const bool last = i + 1 == listed.size();
    if (sharing() && (adopt_stored || !leading)) {
      if (served.count(name)) continue;
      if (!leading) {
        if (!current()->find(name))
          board_.publish(
              name, nullptr,
              "no stored snapshot for this replica's policy yet: waiting for the builder "
              "(the replica holding the lock) to store one");
        ok = false;
        continue;
      }
    }
    ok = build_table(name, last) && ok;
    catalog_read = catalog_read || last;
  }
  if (!catalog_read && !conninfo_.empty()) refresh_catalog();
  return ok;
}

bool PolicyStore::lead() {
  std::lock_guard lock(leader_mu_);
  const int32_t group = replica_group(policies());
  if (!leader_ || group != leader_group_) {
    leader_ = std::make_unique<LeaderLock>(conninfo_, sharing_.replica, group);  // after RELOAD
    leader_group_ = group;
  }
  try {
    return leader_->try_lead();
  } catch (const std::exception& e) {
    note_sharing_error(std::string("cannot reach the database for the builder's lock: ") +
                       e.what());
    return false;
  }
}

uint64_t PolicyStore::served_version(const std::string& table) const {
  const auto* t = current()->find(table);
  return t ? t->shared_version : 0;
}

void PolicyStore::note_sharing_error(const std::string& error) {
  std::lock_guard lock(sharing_mu_);
  sharing_error_ = error;
}

SharingState PolicyStore::sharing_state() const {
  SharingState s;
  s.enabled = sharing_.enabled;
  s.replica = sharing_.replica;
  {
    std::lock_guard lock(sharing_mu_);
    s.error = sharing_error_;
  }
  std::unique_lock lock(leader_mu_, std::try_to_lock);  // not while lead() asks the database
  s.leading = lock.owns_lock() && leader_ && leader_->leading();
  return s;
}

std::vector<SnapshotListing> PolicyStore::stored_snapshots(std::string& builder) {
  if (conninfo_.empty()) return {};
  pqxx::connection conn(conninfo_);
  pqxx::work tx(conn);
  catalog::ensure_kanon_schema(tx);
  builder = current_builder(tx, replica_group(policies()));
  auto out = list_snapshots(tx);
  tx.commit();
  return out;
}

bool PolicyStore::adopt(const std::string& table) {
  return adopt(std::vector<std::string>{table}).count(table) > 0;
}

std::set<std::string> PolicyStore::adopt(const std::vector<std::string>& tables) {
  std::map<std::string, policy::TablePolicy> wanted;
  for (const auto& p : policies())
    if (std::find(tables.begin(), tables.end(), p.name()) != tables.end()) wanted[p.name()] = p;
  std::lock_guard lock(adopt_mu_);
  std::set<std::string> serving;
  for (const auto& [name, p] : wanted)
    if (served_version(name) > 0) serving.insert(name);
  std::string table;  // the one being loaded, for the error
  try {
    // The kept catalog connection and two transactions for every table:
    // this is what a replica's start costs (bench/policy/snapshot_bench).
    std::lock_guard catalog_lock(catalog_mu_);
    if (!catalog_conn_ || !catalog_conn_->conn.is_open())
      catalog_conn_ = std::make_unique<CatalogConnection>(conninfo_);
    auto& conn = catalog_conn_->conn;
    std::vector<StoredSnapshot> fresh;
    {
      pqxx::work tx(conn);
      if (tx.exec("SELECT to_regclass('kanon.snapshots') IS NOT NULL")[0][0].as<bool>())
        for (const auto& [name, p] : wanted) {
          auto stored = latest_snapshot(tx, name, policy::policy_hash(p));
          if (!stored || stored->version <= served_version(name)) continue;
          fresh.push_back(std::move(*stored));
        }
      tx.commit();
    }
    if (fresh.empty()) return serving;
    for (auto& stored : fresh) {
      table = stored.table;
      const auto& p = wanted.at(table);
      auto snap = decode_snapshot(stored.body, p, catalog::read_table_info(conn, p));
      snap->shared_version = stored.version;
      snap->built_by = stored.built_by;
      board_.publish(table, std::move(snap), "");
      serving.insert(table);
    }
    table.clear();
    // Bookkeeping for SHOW SNAPSHOTS: no need to wait for the disk.
    pqxx::work tx(conn);
    tx.exec("SET LOCAL synchronous_commit = off");
    for (const auto& stored : fresh)
      note_served(tx, sharing_.replica, stored.table, stored.version);
    tx.commit();
  } catch (const std::exception& e) {
    if (dynamic_cast<const pqxx::broken_connection*>(&e)) {
      std::lock_guard catalog_lock(catalog_mu_);
      catalog_conn_.reset();
    }
    note_sharing_error(
        table.empty() ? fmt::format("cannot load stored snapshots: {}", e.what())
                      : fmt::format("cannot load the stored snapshot of {}: {}", table, e.what()));
  }
  return serving;
}

bool PolicyStore::ask_builder(const std::string& table, const char* verb) {
  const uint64_t before = served_version(table);
  uint64_t id = 0;
  std::unique_ptr<pqxx::connection> conn;
  try {
    conn = std::make_unique<pqxx::connection>(conninfo_);
    pqxx::work tx(*conn);
    id = ask_refresh(tx, replica_group(policies()), verb, table, sharing_.replica);
    tx.commit();
  } catch (const std::exception& e) {
    board_.publish(table, nullptr,
                   std::string("cannot ask the builder for a refresh: ") + e.what());
    return false;
  }
  // The builder answers with a stored version (or an error in the request);
  // when no builder holds the lock any more, this replica takes over.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(15);
  for (;;) {
    if (board_.wait_for(std::chrono::seconds(1), [&](const PolicySnapshot& s) {
          const auto* t = s.find(table);
          return t && t->shared_version > before;
        }))
      return true;
    try {
      pqxx::nontransaction tx(*conn);
      if (const auto error = refresh_error(tx, id)) {
        board_.publish(table, nullptr, "the builder's refresh failed: " + *error);
        return false;
      }
    } catch (const std::exception&) {
      // Asked again below if this replica becomes the builder.
    }
    if (lead()) return std::string(verb) == "reanonymize" ? reanonymize(table) : refresh(table);
    if (std::chrono::steady_clock::now() > deadline) {
      board_.publish(table, nullptr, "the builder did not store a new version within 15 minutes");
      return false;
    }
  }
}

void PolicyStore::start() {
  if (!scheduler_.start()) return;
  if (!conninfo_.empty()) watcher_.start();
}

void PolicyStore::stop() {
  scheduler_.begin_stop();
  watcher_.begin_stop();
  scheduler_.stop();
  watcher_.stop();
}

CatalogWatchState PolicyStore::catalog_watch_state() const {
  return watcher_.state();
}

void PolicyStore::on_stored(const std::vector<std::string>& payloads) {
  // The payload names a table; anyone may send one, and adopt() only loads
  // what the service account stored.
  std::vector<std::string> tables(payloads.begin(), payloads.end());
  adopt(tables);
}

void PolicyStore::on_asked() {
  if (!lead()) return;
  std::vector<RefreshRequest> taken;
  try {
    pqxx::connection conn(conninfo_);
    pqxx::work tx(conn);
    taken = take_refresh_requests(tx, replica_group(policies()));
    tx.commit();
  } catch (const std::exception& e) {
    note_sharing_error(std::string("cannot read the refresh requests: ") + e.what());
    return;
  }
  if (taken.empty()) return;
  std::vector<RefreshScheduler::Request> requests;
  for (const auto& r : taken) requests.push_back({r.table, r.verb == "reanonymize"});
  scheduler_.request(requests);
}

}  // namespace kanon::store
