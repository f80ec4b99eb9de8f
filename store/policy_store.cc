#include "store/policy_store.h"

#include <algorithm>
#include <optional>
#include <pqxx/pqxx>

#include "store/builder_request.h"
#include "store/materializer.h"
#include "store/row_order.h"

namespace kanon::store {

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
        o.baseline = baselines_.take(p.name());
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
      catalog_(conninfo_, catalog_hooks()),
      sync_(conninfo_, std::move(sharing)),
      watcher_(conninfo_, this->sharing(), watcher_hooks()) {}

PolicyStore::PolicyStore(std::vector<policy::TablePolicy> policies, Builder builder)
    : policies_(std::move(policies)),
      builder_(std::move(builder)),
      board_(names(policies_)),
      scheduler_(scheduler_hooks()),
      catalog_(conninfo_, catalog_hooks()),
      sync_(conninfo_, {}),
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

CatalogReader::Hooks PolicyStore::catalog_hooks() {
  CatalogReader::Hooks h;
  h.served = [this] { return current()->catalog; };
  h.notifications = [this] { return watcher_.notifications(); };
  h.publish = [this](CatalogReader::Facts facts, const std::string& error) {
    board_.publish_catalog(std::move(facts), error);
  };
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

bool PolicyStore::refresh_catalog() {
  return catalog_.refresh();
}

bool PolicyStore::refresh_catalog_covering(uint64_t notifications) {
  return catalog_.refresh_covering(notifications);
}

bool PolicyStore::refresh_catalog_if_moved(int64_t decided) {
  return catalog_.refresh_if_moved(decided);
}

bool PolicyStore::event_triggers_as_read(const catalog::CatalogFacts& facts) {
  return catalog_.read_event_triggers() == facts.event_triggers;
}

bool PolicyStore::any_persistent_object_named(const std::vector<std::string>& names) {
  return catalog_.any_persistent_object_named(names);
}

std::optional<std::string> PolicyStore::unsafe_temporary_object(
    const std::vector<std::string>& names) {
  return catalog_.unsafe_temporary_object(names);
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
  baselines_.insert(table);
  const bool ok = build_table(table, true);
  baselines_.erase(table);  // a failed build does not leave it pending
  return ok;
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
  bool withdraw = false;
  for (const auto& p : policies()) {
    if (p.name() != table) continue;
    try {
      built = builder_(p);
    } catch (const RowOrderLeak& e) {
      error = e.what();
      withdraw = true;
    } catch (const std::exception& e) {
      error = e.what();
    }
    break;
  }
  if (built && sharing())
    built = sync_.store(table, std::move(built));  // before it is served
  else if (!built && sharing())
    sync_.fail_requests(replica_group(policies()), table, error);  // whoever asked stops waiting
  if (!with_catalog || !catalog_.enabled()) {
    board_.publish(table, built, error, nullptr, nullptr, withdraw);
    return built != nullptr;
  }
  // The catalog as it is after the build, published in the same version.
  catalog_.read([&](CatalogReader::Facts facts, const std::string& catalog_error) {
    board_.publish(table, built, error, std::move(facts), &catalog_error, withdraw);
  });
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
  return sync_.lead(replica_group(policies()));
}

uint64_t PolicyStore::served_version(const std::string& table) const {
  const auto* t = current()->find(table);
  return t ? t->shared_version : 0;
}

SharingState PolicyStore::sharing_state() const {
  return sync_.state();
}

std::vector<SnapshotListing> PolicyStore::stored_snapshots(std::string& builder) {
  return sync_.stored_snapshots(replica_group(policies()), builder);
}

bool PolicyStore::adopt(const std::string& table) {
  return adopt(std::vector<std::string>{table}).count(table) > 0;
}

std::set<std::string> PolicyStore::adopt(const std::vector<std::string>& tables) {
  std::map<std::string, policy::TablePolicy> wanted;
  for (const auto& p : policies())
    if (std::find(tables.begin(), tables.end(), p.name()) != tables.end()) wanted[p.name()] = p;
  ReplicaSync::Adoption how;
  how.served_version = [this](const std::string& table) { return served_version(table); };
  how.on_connection = [this](const std::function<void(pqxx::connection_base&)>& read) {
    catalog_.on_connection(read);
  };
  how.drop_connection = [this] { catalog_.drop_connection(); };
  how.serve = [this](const std::string& table, std::shared_ptr<const policy::TableSnapshot> snap) {
    board_.publish(table, std::move(snap), "");
  };
  return sync_.adopt(wanted, how);
}

bool PolicyStore::ask_builder(const std::string& table, const char* verb) {
  std::optional<SentRefreshRequest> sent;
  BuilderRequest request;
  request.served_version = [&] { return served_version(table); };
  request.send = [&] {
    sent.emplace(conninfo_, replica_group(policies()), verb, table, sync_.replica());
  };
  request.builder_error = [&] { return sent->builder_error(); };
  request.wait_newer = [&](uint64_t before, BuilderRequest::Clock::duration timeout) {
    return board_.wait_for(timeout, [&](const PolicySnapshot& s) {
      const auto* t = s.find(table);
      return t && t->shared_version > before;
    });
  };
  request.fail = [&](const std::string& error) { board_.publish(table, nullptr, error); };
  request.lead = [this] { return lead(); };
  request.take_over = [&] {
    return std::string(verb) == "reanonymize" ? reanonymize(table) : refresh(table);
  };
  return kanon::store::ask_builder(request);
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
  const auto taken = sync_.take_requests(replica_group(policies()));
  if (taken.empty()) return;
  std::vector<RefreshScheduler::Request> requests;
  for (const auto& r : taken) requests.push_back({r.table, r.verb == "reanonymize"});
  scheduler_.request(requests);
}

}  // namespace kanon::store
