#include "policy/policy_store.h"

#include <algorithm>
#include <pqxx/pqxx>

#include "policy/materializer.h"

namespace kanon::policy {

const TableSnapshot* PolicySnapshot::find(const std::string& qualified) const {
  const auto it = tables.find(qualified);
  return it == tables.end() ? nullptr : it->second.get();
}

PolicyStore::PolicyStore(std::string conninfo, std::vector<TablePolicy> policies,
                         BuildOptions options)
    : PolicyStore(std::move(policies),
                  [conninfo = std::move(conninfo), options](const TablePolicy& p) {
                    pqxx::connection conn(conninfo);
                    auto built = build_table_snapshot(conn, p, options);
                    if (p.mode != EnforcementMode::kMaterialized) return built;
                    auto snap = std::make_shared<TableSnapshot>(*built);
                    snap->materialized_name = materialize(conn, *snap);
                    return std::shared_ptr<const TableSnapshot>(std::move(snap));
                  }) {}

PolicyStore::PolicyStore(std::vector<TablePolicy> policies, Builder builder)
    : policies_(std::move(policies)),
      builder_(std::move(builder)),
      current_(std::make_shared<PolicySnapshot>()) {}

PolicyStore::~PolicyStore() {
  stop();
}

std::shared_ptr<const PolicySnapshot> PolicyStore::current() const {
  std::lock_guard lock(mu_);
  return current_;
}

void PolicyStore::publish(const std::string& table, std::shared_ptr<const TableSnapshot> built,
                          const std::string& error) {
  std::lock_guard lock(mu_);
  auto next = std::make_shared<PolicySnapshot>(*current_);
  next->version = current_->version + 1;
  if (built) {
    next->tables[table] = std::move(built);
    next->errors.erase(table);
  } else {
    next->errors[table] = error;
  }
  current_ = std::move(next);
}

std::vector<TablePolicy> PolicyStore::policies() const {
  std::lock_guard lock(policies_mu_);
  return policies_;
}

bool PolicyStore::reload(std::vector<TablePolicy> policies) {
  {
    std::lock_guard lock(policies_mu_);
    policies_ = std::move(policies);
  }
  {
    std::lock_guard lock(mu_);
    auto next = std::make_shared<PolicySnapshot>(*current_);
    next->version = current_->version + 1;
    const auto listed = this->policies();
    auto keep = [&](const std::string& name) {
      return std::any_of(listed.begin(), listed.end(),
                         [&](const TablePolicy& p) { return p.name() == name; });
    };
    std::erase_if(next->tables, [&](const auto& kv) { return !keep(kv.first); });
    std::erase_if(next->errors, [&](const auto& kv) { return !keep(kv.first); });
    current_ = std::move(next);
  }
  const bool ok = refresh_all();
  {
    std::lock_guard lock(run_mu_);
    ++generation_;
  }
  wake_.notify_all();
  return ok;
}

bool PolicyStore::refresh(const std::string& table) {
  for (const auto& p : policies()) {
    if (p.name() != table) continue;
    try {
      publish(table, builder_(p), "");
      return true;
    } catch (const std::exception& e) {
      publish(table, nullptr, e.what());
      return false;
    }
  }
  publish(table, nullptr, "no policy for table " + table);
  return false;
}

bool PolicyStore::refresh_all() {
  bool ok = true;
  for (const auto& p : policies()) ok = refresh(p.name()) && ok;
  return ok;
}

void PolicyStore::start() {
  std::lock_guard lock(run_mu_);
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this] { run(); });
}

void PolicyStore::stop() {
  {
    std::lock_guard lock(run_mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void PolicyStore::run() {
  using Clock = std::chrono::steady_clock;
  std::map<std::string, Clock::time_point> due;  // by table; re-read after a reload
  std::unique_lock lock(run_mu_);
  while (!stopping_) {
    const auto listed = policies();
    std::map<std::string, Clock::time_point> next_due;
    for (const auto& p : listed) {
      const auto it = due.find(p.name());
      next_due[p.name()] = it != due.end() ? it->second : Clock::now() + p.refresh;
    }
    due = std::move(next_due);
    auto wake_at = Clock::now() + std::chrono::hours(1);
    for (const auto& [name, t] : due) wake_at = std::min(wake_at, t);
    const uint64_t generation = generation_;
    wake_.wait_until(lock, wake_at, [&] { return stopping_ || generation_ != generation; });
    if (stopping_) break;
    if (generation_ != generation) continue;
    for (const auto& p : listed) {
      if (due[p.name()] > Clock::now()) continue;
      lock.unlock();
      refresh(p.name());
      lock.lock();
      due[p.name()] = Clock::now() + p.refresh;
      if (stopping_) break;
    }
  }
}

}  // namespace kanon::policy
