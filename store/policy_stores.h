// PolicyStores: a PolicyStore per database.
//
// Trees, masks, the catalog and the release history belong to one database
// (TablePolicy::database), so each database that policies name gets a store
// of its own, connected to that database; the same schema.table in two
// databases are two policies with two trees. The default database (the one
// the service account lands in, default_database()) always has a store, also
// without policies: its catalog decides restricted statements there.
//
// A store, once made, lives until the process ends: RELOAD gives a database
// that policies no longer name an empty policy list (its sessions keep being
// decided from its catalog) and makes stores for databases named for the
// first time.
//
// Thread-safety: every public member may be called from any thread.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "settings/server_config.h"
#include "store/policy_store.h"

namespace kanon::store {

class PolicyStores {
 public:
  // Makes the store of one database with its policies.
  using Factory = std::function<std::shared_ptr<PolicyStore>(
      const std::string& database, std::vector<policy::TablePolicy> policies)>;

  // Stores connected with `config`'s service account (service_conninfo per
  // database).
  static Factory service_factory(const settings::ServerConfig& config);
  PolicyStores(const settings::ServerConfig& config, std::vector<policy::TablePolicy> policies);
  // For tests: stores made by `factory`; `default_database` always has one.
  PolicyStores(std::string default_database, std::vector<policy::TablePolicy> policies,
               Factory factory);
  ~PolicyStores();
  PolicyStores(const PolicyStores&) = delete;
  PolicyStores& operator=(const PolicyStores&) = delete;

  // The store that serves sessions of `database`; null when none does. A
  // store whose database is "" (the default, not configured) serves the
  // database its catalog was read from.
  std::shared_ptr<PolicyStore> find(const std::string& database) const;
  // The store of `policy`'s database (null when it has none).
  std::shared_ptr<PolicyStore> of(const policy::TablePolicy& policy) const;
  // The default database's store (kanon's own database).
  std::shared_ptr<PolicyStore> default_store() const;
  // No store but the default one has policies (every protected table is in
  // kanon's own database).
  bool only_default_protects() const;
  // Every store: the default database's first, then by database name.
  std::vector<std::shared_ptr<PolicyStore>> all() const;
  // Every store's policies, in the order of all().
  std::vector<policy::TablePolicy> policies() const;
  // How logs and messages name `policy`: database.schema.table when there
  // are several stores, else schema.table.
  std::string name_of(const policy::TablePolicy& policy) const;

  // Every store's refresh_all(adopt_stored); false when a build failed.
  bool refresh_all(bool adopt_stored = false);
  // RELOAD (see above). `factory` makes the stores of newly named databases
  // (the new configuration's); such a store serves at once, its tables denied
  // until built, and is started when start() was called. False when a build
  // failed.
  bool reload(std::vector<policy::TablePolicy> policies, Factory factory = nullptr);

  void start();
  void stop();

  // PolicyStore::set_publish_listener on every store, those RELOAD makes
  // included (set before their first build); the table is named as name_of
  // names its policy.
  using PublishListener = std::function<void(
      const std::string& name, const policy::TableSnapshot* in_force, const std::string& error)>;
  void set_publish_listener(PublishListener listener);

 private:
  void listen_to(const std::shared_ptr<PolicyStore>& store);  // mu_ held

  const std::string default_;
  mutable std::mutex mu_;
  Factory factory_;
  PublishListener listener_;
  // stores_.size() > 1, for listeners, which must not reach this object
  // (a store may outlive it).
  std::shared_ptr<std::atomic<bool>> several_ = std::make_shared<std::atomic<bool>>(false);
  std::map<std::string, std::shared_ptr<PolicyStore>> stores_;  // by database
  bool started_ = false;
};

// Every table of every policy file `config` lists (load_policies in
// policy_file.h), databases defaulting to `config`'s own.
std::vector<policy::TablePolicy> load_policies(const settings::ServerConfig& config);

}  // namespace kanon::store
