#include "store/catalog_watcher.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <pqxx/pqxx>

#include "catalog/catalog_watch.h"
#include "store/catalog_debounce.h"
#include "store/shared_snapshots.h"

namespace kanon::store {

namespace {

class CatalogReceiver : public pqxx::notification_receiver {
 public:
  CatalogReceiver(pqxx::connection_base& conn, uint64_t& received, std::atomic<uint64_t>& notified)
      : pqxx::notification_receiver(conn, catalog::kCatalogChannel),
        received_(received),
        notified_(notified) {}
  void operator()(const std::string&, int) override {
    ++received_;
    ++notified_;  // sessions see at once that the catalog is behind
  }

 private:
  uint64_t& received_;
  std::atomic<uint64_t>& notified_;
};

// Payloads of one channel, in arrival order.
class PayloadReceiver : public pqxx::notification_receiver {
 public:
  PayloadReceiver(pqxx::connection_base& conn, const char* channel)
      : pqxx::notification_receiver(conn, channel) {}
  void operator()(const std::string& payload, int) override { payloads.push_back(payload); }
  std::vector<std::string> payloads;
};

}  // namespace

CatalogWatcher::CatalogWatcher(std::string conninfo, bool sharing, Hooks hooks)
    : conninfo_(std::move(conninfo)), sharing_(sharing), hooks_(std::move(hooks)) {}

CatalogWatcher::~CatalogWatcher() {
  stop();
}

void CatalogWatcher::start() {
  {
    std::lock_guard lock(mu_);
    state_ = CatalogWatchState{};
    state_.running = true;
    ready_ = false;
  }
  if (::pipe2(wake_pipe_, O_NONBLOCK | O_CLOEXEC) != 0) {
    std::lock_guard lock(mu_);
    state_.running = false;
    state_.error = std::string("cannot start the catalog watcher: ") + std::strerror(errno);
    return;
  }
  stop_ = false;
  thread_ = std::thread([this] { run(); });
  std::unique_lock lock(mu_);
  // Long enough for a busy machine; an error makes it ready at once.
  ready_cv_.wait_for(lock, std::chrono::seconds(60), [&] { return ready_; });
}

void CatalogWatcher::begin_stop() {
  stop_ = true;
  if (wake_pipe_[1] >= 0) {
    const char c = 1;
    [[maybe_unused]] const auto n = ::write(wake_pipe_[1], &c, 1);
  }
}

void CatalogWatcher::stop() {
  begin_stop();
  if (thread_.joinable()) thread_.join();
  for (int& fd : wake_pipe_) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  std::lock_guard lock(mu_);
  state_.running = false;
  state_.listening = false;
}

CatalogWatchState CatalogWatcher::state() const {
  std::lock_guard lock(mu_);
  return state_;
}

bool CatalogWatcher::wait_for_wake(int timeout_ms) {
  pollfd fd{wake_pipe_[0], POLLIN, 0};
  ::poll(&fd, 1, timeout_ms);
  char buf[64];
  while (::read(wake_pipe_[0], buf, sizeof buf) > 0) {
  }
  return stop_;
}

void CatalogWatcher::run() {
  using Clock = CatalogDebounce::Clock;
  bool install_tried = false;
  while (!stop_) {
    try {
      pqxx::connection conn(conninfo_);
      if (!install_tried) {
        install_tried = true;
        std::string why;
        const bool ok = catalog::install_catalog_event_trigger(conn, &why);
        std::lock_guard lock(mu_);
        state_.trigger_installed = ok;
        state_.trigger_error = why;
      }
      // A burst of DDL (a migration) gives one refresh (catalog_debounce.h).
      CatalogDebounce debounce;
      CatalogReceiver receiver(conn, debounce.received, notified_);
      std::optional<PayloadReceiver> stored, asked;
      if (sharing_) {
        stored.emplace(conn, kSnapshotChannel);
        asked.emplace(conn, kRefreshChannel);
        // Whatever was stored while nobody listened.
        hooks_.listening();
      }
      {
        std::lock_guard lock(mu_);
        state_.listening = true;
        state_.error.clear();
      }
      // Whatever changed between the last read and the LISTEN: DDL before
      // the event trigger was installed moved no generation, so until this
      // read is published a statement could be decided on a catalog that
      // misses it with no guard to notice. start() returns after it.
      hooks_.read_catalog();
      {
        std::lock_guard lock(mu_);
        ready_ = true;
      }
      ready_cv_.notify_all();
      while (!stop_) {
        // Notifications libpq read during a refresh wait in its queue.
        const uint64_t before = debounce.received;
        conn.get_notifs();
        if (!conn.is_open())
          throw pqxx::broken_connection("the catalog watcher lost its connection");
        if (stored && !stored->payloads.empty()) hooks_.stored(std::exchange(stored->payloads, {}));
        if (asked && !asked->payloads.empty()) {
          asked->payloads.clear();
          hooks_.asked();
        }
        if (debounce.received > before) {
          debounce.note(before, Clock::now());
          std::lock_guard lock(mu_);
          state_.notifications += debounce.received - before;
        }
        if (debounce.due(Clock::now())) {
          debounce.handle();
          // Sessions may have read it already (Session::catch_up_catalog).
          const bool ok = hooks_.read_catalog_covering(notified_.load());
          const std::string error = ok ? std::string() : hooks_.catalog_error();
          std::lock_guard lock(mu_);
          ++state_.refreshes;
          if (!ok) state_.error = error;
          continue;
        }
        const int timeout = debounce.wait_ms(Clock::now());
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
        std::lock_guard lock(mu_);
        state_.listening = false;
        state_.error = e.what();
        ready_ = true;
      }
      ready_cv_.notify_all();
      if (wait_for_wake(1000)) break;
    }
  }
  std::lock_guard lock(mu_);
  state_.listening = false;
}

}  // namespace kanon::store
