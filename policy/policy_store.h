// PolicyStore: the compiled policies of every protected table, published as
// immutable versioned snapshots.
//
// A snapshot maps "schema.table" to its TableSnapshot. Readers (proxy
// sessions, one lookup per statement) call current() and keep the returned
// shared_ptr for as long as they need a consistent view; it never changes
// under them. Refreshes build a table's new TableSnapshot off to the side,
// then publish a new PolicySnapshot with version + 1 under a short lock.
// A refresh that fails keeps the table's previous TableSnapshot and records
// the error in the new snapshot's `errors`; a table that has never been built
// is absent from `tables` (the rewriter must then deny access: fail closed).
//
// Thread-safety: every public member may be called from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "policy/catalog_facts.h"
#include "policy/table_policy.h"
#include "policy/table_snapshot.h"

namespace kanon::policy {

struct PolicySnapshot {
  uint64_t version = 0;
  std::map<std::string, std::shared_ptr<const TableSnapshot>> tables;  // by "schema.table"
  std::map<std::string, std::string> errors;  // last refresh error per table, if it failed
  // The database's catalog as last read (null: not read yet).
  std::shared_ptr<const CatalogFacts> catalog;

  // nullptr when the table has no built policy.
  const TableSnapshot* find(const std::string& qualified) const;
};

class PolicyStore {
 public:
  // Builds one table; the default opens a service connection to `conninfo`,
  // calls build_table_snapshot and, for mode: materialized, materialize().
  using Builder = std::function<std::shared_ptr<const TableSnapshot>(const TablePolicy&)>;

  PolicyStore(std::string conninfo, std::vector<TablePolicy> policies, BuildOptions options = {});
  PolicyStore(std::vector<TablePolicy> policies, Builder builder);
  ~PolicyStore();
  PolicyStore(const PolicyStore&) = delete;
  PolicyStore& operator=(const PolicyStore&) = delete;

  std::shared_ptr<const PolicySnapshot> current() const;

  // Rebuilds one table (by "schema.table") or all, synchronously; returns
  // false when a build failed (the error is in current()->errors).
  bool refresh(const std::string& table);
  bool refresh_all();

  // RELOAD: replaces the policies (e.g. re-read from the files), drops the
  // snapshots of tables no longer listed and rebuilds every listed table.
  // Returns false when a build failed.
  bool reload(std::vector<TablePolicy> policies);

  // The policies as last loaded (built or not).
  std::vector<TablePolicy> policies() const;

  // Background refresh: each table again after its policy's `refresh`
  // interval. stop() (or the destructor) joins the thread.
  void start();
  void stop();

 private:
  void publish(const std::string& table, std::shared_ptr<const TableSnapshot> built,
               const std::string& error);
  void run();

  mutable std::mutex policies_mu_;
  std::vector<TablePolicy> policies_;
  Builder builder_;
  mutable std::mutex mu_;
  std::shared_ptr<const PolicySnapshot> current_;
  std::mutex run_mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  uint64_t generation_ = 0;  // bumped by reload() so run() re-reads the schedule
  std::thread thread_;
};

}  // namespace kanon::policy
