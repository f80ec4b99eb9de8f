#include "store/policy_stores.h"

#include <algorithm>

#include "policy/policy_file.h"

namespace kanon::store {

PolicyStores::Factory PolicyStores::service_factory(const settings::ServerConfig& config) {
  return [config](const std::string& database, std::vector<policy::TablePolicy> tables) {
    return std::make_shared<PolicyStore>(settings::service_conninfo(config, database),
                                         std::move(tables), BuildOptions{}, database,
                                         config.snapshots);
  };
}

PolicyStores::PolicyStores(const settings::ServerConfig& config,
                           std::vector<policy::TablePolicy> policies)
    : PolicyStores(settings::default_database(config), std::move(policies),
                   service_factory(config)) {}

PolicyStores::PolicyStores(std::string default_database, std::vector<policy::TablePolicy> policies,
                           Factory factory)
    : default_(std::move(default_database)), factory_(std::move(factory)) {
  for (const auto& db : policy::databases_of(policies, default_))
    stores_[db] = factory_(db, policy::policies_of(policies, db));
  several_->store(stores_.size() > 1);
}

PolicyStores::~PolicyStores() {
  stop();
}

std::shared_ptr<PolicyStore> PolicyStores::find(const std::string& database) const {
  std::lock_guard lock(mu_);
  if (const auto it = stores_.find(database); it != stores_.end() && !database.empty())
    return it->second;
  // The default database without a configured name (then the only store):
  // known once its catalog is read.
  if (const auto it = stores_.find("");
      it != stores_.end() && !database.empty() && it->second->database_name() == database)
    return it->second;
  return nullptr;
}

std::shared_ptr<PolicyStore> PolicyStores::of(const policy::TablePolicy& policy) const {
  std::lock_guard lock(mu_);
  const auto it = stores_.find(policy.database);
  return it == stores_.end() ? nullptr : it->second;
}

std::shared_ptr<PolicyStore> PolicyStores::default_store() const {
  std::lock_guard lock(mu_);
  const auto it = stores_.find(default_);
  return it == stores_.end() ? nullptr : it->second;
}

bool PolicyStores::only_default_protects() const {
  std::lock_guard lock(mu_);
  for (const auto& [db, store] : stores_)
    if (db != default_ && !store->policies().empty()) return false;
  return true;
}

std::vector<std::shared_ptr<PolicyStore>> PolicyStores::all() const {
  std::lock_guard lock(mu_);
  std::vector<std::shared_ptr<PolicyStore>> out;
  if (const auto it = stores_.find(default_); it != stores_.end()) out.push_back(it->second);
  for (const auto& [db, store] : stores_)
    if (db != default_) out.push_back(store);
  return out;
}

std::vector<policy::TablePolicy> PolicyStores::policies() const {
  std::vector<policy::TablePolicy> out;
  for (const auto& store : all())
    for (auto& p : store->policies()) out.push_back(std::move(p));
  return out;
}

std::string PolicyStores::name_of(const policy::TablePolicy& policy) const {
  std::lock_guard lock(mu_);
  return stores_.size() > 1 ? policy::database_qualified_name(policy) : policy.name();
}

bool PolicyStores::refresh_all(bool adopt_stored) {
  bool ok = true;
  for (const auto& store : all()) ok = store->refresh_all(adopt_stored) && ok;
  return ok;
}

bool PolicyStores::reload(std::vector<policy::TablePolicy> policies, Factory factory) {
  std::vector<std::pair<std::shared_ptr<PolicyStore>, std::vector<policy::TablePolicy>>> existing;
  std::vector<std::shared_ptr<PolicyStore>> created;
  bool start = false;
  {
    std::lock_guard lock(mu_);
    if (factory) factory_ = std::move(factory);
    for (const auto& db : policy::databases_of(policies, default_))
      if (!stores_.count(db)) {
        // Serves at once: its tables are listed, so denied until built.
        auto store = factory_(db, policy::policies_of(policies, db));
        listen_to(store);
        stores_[db] = store;
        several_->store(stores_.size() > 1);
        created.push_back(std::move(store));
      }
    for (const auto& [db, store] : stores_)
      if (std::find(created.begin(), created.end(), store) == created.end())
        existing.emplace_back(store, policy::policies_of(policies, db));
    start = started_;
  }
  bool ok = true;
  for (auto& [store, tables] : existing) ok = store->reload(std::move(tables)) && ok;
  for (const auto& store : created) {
    ok = store->refresh_all() && ok;
    if (start) store->start();
  }
  return ok;
}

void PolicyStores::start() {
  {
    std::lock_guard lock(mu_);
    started_ = true;  // first: a store RELOAD makes meanwhile is started too
  }
  for (const auto& store : all()) store->start();  // again is harmless
}

void PolicyStores::set_publish_listener(PublishListener listener) {
  std::lock_guard lock(mu_);
  listener_ = std::move(listener);
  for (const auto& [db, store] : stores_) listen_to(store);
}

void PolicyStores::listen_to(const std::shared_ptr<PolicyStore>& store) {
  if (!listener_) return;
  // The store owns the callback, so it outlives every call.
  store->set_publish_listener([listener = listener_, several = several_, s = store.get()](
                                  const std::string& table, const policy::TableSnapshot* in_force,
                                  const std::string& error) {
    std::string name = table;
    if (several->load())
      for (const auto& p : s->policies())
        if (p.name() == table) name = policy::database_qualified_name(p);
    listener(name, in_force, error);
  });
}

void PolicyStores::stop() {
  for (const auto& store : all()) store->stop();
  std::lock_guard lock(mu_);
  started_ = false;
}

std::vector<policy::TablePolicy> load_policies(const settings::ServerConfig& config) {
  return policy::load_policies(config.policies, settings::default_database(config));
}

}  // namespace kanon::store
