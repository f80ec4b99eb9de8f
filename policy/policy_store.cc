#include "policy/policy_store.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <pqxx/pqxx>

#include "policy/catalog_watch.h"
#include "policy/materializer.h"

namespace kanon::policy {

struct PolicyStore::CatalogConnection {
  explicit CatalogConnection(const std::string& conninfo) : conn(conninfo) {}
  pqxx::connection conn;
};

namespace {

std::atomic<uint64_t> next_store_id{1};

std::shared_ptr<PolicySnapshot> first_snapshot(const std::vector<TablePolicy>& policies) {
  auto s = std::make_shared<PolicySnapshot>();
  s->store = next_store_id++;
  for (const auto& p : policies) s->listed.push_back(p.name());
  return s;
}

}  // namespace

const TableSnapshot* PolicySnapshot::find(const std::string& qualified) const {
  const auto it = tables.find(qualified);
  return it == tables.end() ? nullptr : it->second.get();
}

PolicyStore::PolicyStore(std::string conninfo, std::vector<TablePolicy> policies,
                         BuildOptions options, std::string database)
    : conninfo_(conninfo),
      database_(std::move(database)),
      policies_(std::move(policies)),
      builder_([this, conninfo, options](const TablePolicy& p) {
        pqxx::connection conn(conninfo);
        BuildOptions o = options;
        o.baseline = take_baseline(p.name());
        auto built = build_table_snapshot(conn, p, o);
        if (p.mode == EnforcementMode::kInline) return built;
        auto snap = std::make_shared<TableSnapshot>(*built);
        if (p.mode == EnforcementMode::kMaterialized) {
          snap->materialized_name = materialize(conn, *snap);
        } else {
          auto view = build_masked_view(conn, *snap);
          snap->materialized_name = std::move(view.name);
          snap->grant_warnings = std::move(view.warnings);
        }
        return std::shared_ptr<const TableSnapshot>(std::move(snap));
      }),
      current_(first_snapshot(policies_)) {}

PolicyStore::PolicyStore(std::vector<TablePolicy> policies, Builder builder)
    : policies_(std::move(policies)),
      builder_(std::move(builder)),
      current_(first_snapshot(policies_)) {}

PolicyStore::~PolicyStore() {
  stop();
}

std::shared_ptr<const PolicySnapshot> PolicyStore::current() const {
  std::lock_guard lock(mu_);
  return current_;
}

std::string PolicyStore::database_name() const {
  const auto snapshot = current();
  return snapshot->catalog ? snapshot->catalog->database : database_;
}

void PolicyStore::publish(const std::string& table, std::shared_ptr<const TableSnapshot> built,
                          const std::string& error, std::shared_ptr<const CatalogFacts> catalog,
                          const std::string* catalog_error) {
  std::lock_guard lock(mu_);
  auto next = std::make_shared<PolicySnapshot>(*current_);
  next->version = current_->version + 1;
  if (built) {
    next->tables[table] = std::move(built);
    next->errors.erase(table);
  } else {
    next->errors[table] = error;
  }
  if (catalog) {
    next->catalog = std::move(catalog);
    next->catalog_error.clear();
  } else if (catalog_error) {
    next->catalog_error = *catalog_error;
  }
  current_ = std::move(next);
}

void PolicyStore::publish_catalog(std::shared_ptr<const CatalogFacts> catalog,
                                  const std::string& error) {
  std::lock_guard lock(mu_);
  auto next = std::make_shared<PolicySnapshot>(*current_);
  next->version = current_->version + 1;
  if (catalog) {
    next->catalog = std::move(catalog);
    next->catalog_error.clear();
  } else {
    next->catalog_error = error;
  }
  current_ = std::move(next);
}

std::shared_ptr<const CatalogFacts> PolicyStore::read_catalog_locked(std::string& error) {
  const auto previous = current()->catalog;
  // Once more on a new connection when the kept one broke (server restart).
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      if (!catalog_conn_ || !catalog_conn_->conn.is_open())
        catalog_conn_ = std::make_unique<CatalogConnection>(conninfo_);
      return std::make_shared<const CatalogFacts>(
          read_catalog_facts(catalog_conn_->conn, previous.get()));
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
  std::string error;
  auto facts = read_catalog_locked(error);
  const bool ok = facts != nullptr;
  publish_catalog(std::move(facts), error);
  return ok;
}

bool PolicyStore::any_persistent_object_named(const std::vector<std::string>& names) {
  if (conninfo_.empty()) return true;  // nobody can tell: not absent
  std::lock_guard lock(catalog_mu_);
  for (int attempt = 0;; ++attempt) {
    try {
      if (!catalog_conn_ || !catalog_conn_->conn.is_open())
        catalog_conn_ = std::make_unique<CatalogConnection>(conninfo_);
      return policy::any_persistent_object_named(catalog_conn_->conn, names);
    } catch (const pqxx::broken_connection&) {
      catalog_conn_.reset();
      if (attempt > 0) throw;
    }
  }
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
    next->listed.clear();
    for (const auto& p : this->policies()) next->listed.push_back(p.name());
    auto keep = [&](const std::string& name) {
      return std::find(next->listed.begin(), next->listed.end(), name) != next->listed.end();
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
  return refresh_table(table, true);
}

bool PolicyStore::reanonymize(const std::string& table) {
  {
    std::lock_guard lock(baseline_mu_);
    baseline_pending_.insert(table);
  }
  const bool ok = refresh_table(table, true);
  std::lock_guard lock(baseline_mu_);
  baseline_pending_.erase(table);  // a failed build does not leave it pending
  return ok;
}

bool PolicyStore::take_baseline(const std::string& table) {
  std::lock_guard lock(baseline_mu_);
  return baseline_pending_.erase(table) > 0;
}

bool PolicyStore::refresh_table(const std::string& table, bool with_catalog) {
  std::shared_ptr<const TableSnapshot> built;
  std::string error = "no policy for table " + table;
  for (const auto& p : policies()) {
    if (p.name() != table) continue;
    try {
      built = builder_(p);
    } catch (const std::exception& e) {
      error = e.what();
    }
    break;
  }
  if (!with_catalog || conninfo_.empty()) {
    publish(table, built, error);
    return built != nullptr;
  }
  // The catalog as it is after the build, published in the same version.
  std::lock_guard lock(catalog_mu_);
  std::string catalog_error;
  auto facts = read_catalog_locked(catalog_error);
  publish(table, built, error, std::move(facts), &catalog_error);
  return built != nullptr;
}

bool PolicyStore::refresh_all() {
  const auto listed = policies();
  if (listed.empty()) {
    if (!conninfo_.empty()) refresh_catalog();
    return true;
  }
  // One version per table, as always; the last one also carries the catalog
  // read after every build (materialized copies included).
  bool ok = true;
  for (size_t i = 0; i < listed.size(); ++i)
    ok = refresh_table(listed[i].name(), i + 1 == listed.size()) && ok;
  return ok;
}

void PolicyStore::start() {
  {
    std::lock_guard lock(run_mu_);
    if (thread_.joinable()) return;
    stopping_ = false;
    thread_ = std::thread([this] { run(); });
    if (conninfo_.empty()) return;
    {
      std::lock_guard wl(watch_mu_);
      watch_ = CatalogWatchState{};
      watch_.running = true;
      watch_ready_ = false;
    }
    if (::pipe2(wake_pipe_, O_NONBLOCK | O_CLOEXEC) != 0) {
      std::lock_guard wl(watch_mu_);
      watch_.running = false;
      watch_.error = std::string("cannot start the catalog watcher: ") + std::strerror(errno);
      return;
    }
    watch_stop_ = false;
    watcher_ = std::thread([this] { watch_catalog(); });
  }
  std::unique_lock wl(watch_mu_);
  watch_cv_.wait_for(wl, std::chrono::seconds(2), [&] { return watch_ready_; });
}

void PolicyStore::stop() {
  {
    std::lock_guard lock(run_mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  watch_stop_ = true;
  if (wake_pipe_[1] >= 0) {
    const char c = 1;
    [[maybe_unused]] const auto n = ::write(wake_pipe_[1], &c, 1);
  }
  if (thread_.joinable()) thread_.join();
  if (watcher_.joinable()) watcher_.join();
  for (int& fd : wake_pipe_) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  std::lock_guard wl(watch_mu_);
  watch_.running = false;
  watch_.listening = false;
}

CatalogWatchState PolicyStore::catalog_watch_state() const {
  std::lock_guard lock(watch_mu_);
  return watch_;
}

bool PolicyStore::wait_for_wake(int timeout_ms) {
  pollfd fd{wake_pipe_[0], POLLIN, 0};
  ::poll(&fd, 1, timeout_ms);
  char buf[64];
  while (::read(wake_pipe_[0], buf, sizeof buf) > 0) {
  }
  return watch_stop_;
}

namespace {

class CatalogReceiver : public pqxx::notification_receiver {
 public:
  CatalogReceiver(pqxx::connection_base& conn, uint64_t& received)
      : pqxx::notification_receiver(conn, kCatalogChannel), received_(received) {}
  void operator()(const std::string&, int) override { ++received_; }

 private:
  uint64_t& received_;
};

}  // namespace

void PolicyStore::watch_catalog() {
  using Clock = std::chrono::steady_clock;
  // A burst of DDL (a migration) gives one refresh: wait until notifications
  // have been quiet for kQuiet, but no longer than kMaxDelay after the first.
  constexpr auto kQuiet = std::chrono::milliseconds(25);
  constexpr auto kMaxDelay = std::chrono::milliseconds(250);
  auto ms_left = [](Clock::time_point deadline) {
    return std::max<long>(
        0, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count());
  };
  bool install_tried = false;
  while (!watch_stop_) {
    try {
      pqxx::connection conn(conninfo_);
      if (!install_tried) {
        install_tried = true;
        std::string why;
        const bool ok = install_catalog_event_trigger(conn, &why);
        std::lock_guard lock(watch_mu_);
        watch_.trigger_installed = ok;
        watch_.trigger_error = why;
      }
      uint64_t received = 0;
      uint64_t handled = 0;
      CatalogReceiver receiver(conn, received);
      {
        std::lock_guard lock(watch_mu_);
        watch_.listening = true;
        watch_.error.clear();
        watch_ready_ = true;
      }
      watch_cv_.notify_all();
      // Whatever changed between the last read and the LISTEN.
      refresh_catalog();
      Clock::time_point first{}, last{};
      while (!watch_stop_) {
        // Notifications libpq read during a refresh wait in its queue.
        const uint64_t before = received;
        conn.get_notifs();
        if (!conn.is_open())
          throw pqxx::broken_connection("the catalog watcher lost its connection");
        if (received > before) {
          const auto now = Clock::now();
          if (before == handled) first = now;
          last = now;
          std::lock_guard lock(watch_mu_);
          watch_.notifications += received - before;
        }
        if (received > handled) {
          if (Clock::now() >= last + kQuiet || Clock::now() >= first + kMaxDelay) {
            handled = received;
            const bool ok = refresh_catalog();
            std::lock_guard lock(watch_mu_);
            ++watch_.refreshes;
            if (!ok) watch_.error = current()->catalog_error;
            continue;
          }
        }
        const int timeout =
            received > handled
                ? static_cast<int>(std::min(ms_left(last + kQuiet), ms_left(first + kMaxDelay)))
                : -1;
        pollfd fds[2] = {{conn.sock(), POLLIN, 0}, {wake_pipe_[0], POLLIN, 0}};
        if (::poll(fds, 2, timeout) < 0 && errno != EINTR)
          throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
        if (fds[1].revents) {
          char buf[64];
          while (::read(wake_pipe_[0], buf, sizeof buf) > 0) {
          }
        }
      }
    } catch (const std::exception& e) {
      {
        std::lock_guard lock(watch_mu_);
        watch_.listening = false;
        watch_.error = e.what();
        watch_ready_ = true;
      }
      watch_cv_.notify_all();
      if (wait_for_wake(1000)) break;
    }
  }
  std::lock_guard lock(watch_mu_);
  watch_.listening = false;
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
