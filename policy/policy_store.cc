#include "policy/policy_store.h"

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

bool PolicyStore::refresh(const std::string& table) {
  for (const auto& p : policies_) {
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
  for (const auto& p : policies_) ok = refresh(p.name()) && ok;
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
  std::vector<Clock::time_point> due;
  for (const auto& p : policies_) due.push_back(Clock::now() + p.refresh);
  std::unique_lock lock(run_mu_);
  while (!stopping_) {
    if (due.empty()) {
      wake_.wait(lock, [&] { return stopping_; });
      break;
    }
    const auto next = *std::min_element(due.begin(), due.end());
    if (wake_.wait_until(lock, next, [&] { return stopping_; })) break;
    for (size_t i = 0; i < policies_.size(); ++i) {
      if (due[i] > Clock::now()) continue;
      lock.unlock();
      refresh(policies_[i].name());
      lock.lock();
      due[i] = Clock::now() + policies_[i].refresh;
      if (stopping_) break;
    }
  }
}

}  // namespace kanon::policy
