// CatalogWatcher: PolicyStore's catalog watcher thread. It installs the
// event trigger (catalog_watch.h; a failure is only reported in state()),
// LISTENs on `kanon_catalog`, has the catalog read again once listening and
// after each burst of notifications (catalog_debounce.h), and reconnects a
// second after errors. With shared snapshots it also LISTENs on
// kanon_snapshot and kanon_refresh (shared_snapshots.h) and hands their
// notifications to the store.
//
// What reading the catalog and serving stored snapshots mean is the
// store's: the watcher calls its Hooks on its own thread, under none of its
// locks.
//
// Thread-safety: every member may be called from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace kanon::store {

// What the catalog watcher is doing (PolicyStore::catalog_watch_state).
struct CatalogWatchState {
  bool running = false;            // start() started the watcher
  bool trigger_installed = false;  // install_catalog_event_trigger succeeded at start
  std::string trigger_error;       // why not (e.g. the service account is no superuser)
  bool listening = false;          // connected, LISTEN kanon_catalog in force
  std::string error;               // the last connection or refresh error, if any
  uint64_t notifications = 0;      // received
  uint64_t refreshes = 0;          // catalog refreshes the watcher made
};

class CatalogWatcher {
 public:
  struct Hooks {
    // Reads the catalog and publishes it (once listening: whatever changed
    // between the last read and the LISTEN).
    std::function<void()> read_catalog;
    // Reads it unless a read that began after `notifications` were received
    // was published; false on failure, with the error in catalog_error().
    std::function<bool(uint64_t notifications)> read_catalog_covering;
    std::function<std::string()> catalog_error;
    // With sharing only: once listening, every table's stored snapshot
    // (whatever was stored while nobody listened) ...
    std::function<void()> listening;
    // ... kanon_snapshot payloads (table names), in arrival order ...
    std::function<void(std::vector<std::string> payloads)> stored;
    // ... and kanon_refresh notifications (refresh requests to take).
    std::function<void()> asked;
  };

  // `sharing`: also LISTEN on the shared snapshots' channels.
  CatalogWatcher(std::string conninfo, bool sharing, Hooks hooks);
  ~CatalogWatcher();  // stop()
  CatalogWatcher(const CatalogWatcher&) = delete;
  CatalogWatcher& operator=(const CatalogWatcher&) = delete;

  // Starts the thread and waits (up to 60 s) until it listens and has read
  // the catalog once after the LISTEN, or has failed its first attempt: a
  // server that accepts sessions after start() decides with a catalog that
  // covers every DDL before it, guarded from then on.
  void start();
  // Tells the thread to stop, without waiting (stop() then joins it).
  void begin_stop();
  void stop();

  CatalogWatchState state() const;
  // Catalog notifications received (counted as they arrive, before any
  // debounce: sessions see at once that the catalog is behind).
  uint64_t notifications() const { return notified_.load(); }

 private:
  void run();
  bool wait_for_wake(int timeout_ms);  // true when stop() woke the watcher

  const std::string conninfo_;
  const bool sharing_;
  const Hooks hooks_;
  std::atomic<uint64_t> notified_{0};
  mutable std::mutex mu_;
  std::condition_variable ready_cv_;
  CatalogWatchState state_;
  bool ready_ = false;  // the watcher listens, or its first attempt failed
  std::atomic<bool> stop_{false};
  int wake_pipe_[2] = {-1, -1};
  std::thread thread_;
};

}  // namespace kanon::store
