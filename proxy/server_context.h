// ServerContext: what every session shares with the server. Owned by Server,
// outlives every session.
//
// What RELOAD may change (configuration, TLS contexts) lives in a Runtime
// that is swapped as a whole; a session takes one at its start and keeps it.
#pragma once

#include <atomic>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "proxy/audit_trail.h"
#include "proxy/cancel_registry.h"
#include "proxy/client_registry.h"
#include "proxy/io_placement.h"
#include "proxy/role_directory.h"
#include "proxy/sharded_count.h"
#include "proxy/stats.h"
#include "rewriter/privilege_paths.h"
#include "rewriter/rewriter.h"
#include "settings/server_config.h"
#include "store/policy_stores.h"

namespace kanon::proxy {

enum class ShutdownPhase : uint8_t { kServing, kLameDuck, kDraining };

struct Runtime {
  std::shared_ptr<const settings::ServerConfig> config;
  std::shared_ptr<boost::asio::ssl::context> client_tls;   // null: refuse SSLRequest
  std::shared_ptr<boost::asio::ssl::context> backend_tls;  // null: sslmode disable
};

class ServerContext {
 public:
  // Throws std::runtime_error for unusable TLS files.
  explicit ServerContext(settings::ServerConfig config);
  ~ServerContext();

  std::shared_ptr<const Runtime> runtime() const {
    const std::lock_guard lock(mu_);
    return runtime_;
  }
  // Builds a new Runtime (TLS contexts included) and swaps it in; throws
  // without changing anything when the TLS files are unusable.
  void set_config(settings::ServerConfig config);

  CancelRegistry cancels;
  std::atomic<uint32_t> active_clients{0};
  // Sessions with a statement in flight (sent, its ReadyForQuery not yet
  // read back): how busy the server is, for serial_masks_at. A shard per
  // I/O thread: every session changes it twice per statement.
  ShardedCount running_statements;
  // Which I/O thread a new session runs on (io_placement:); fixed until
  // restart, as `threads` is.
  IoPlacement io_threads;
  Stats stats;
  // The audit trail of restricted statements; null without audit: in the
  // configuration (set by Server before accepting; fixed until restart).
  std::unique_ptr<AuditTrail> audit;
  ClientRegistry clients;
  rewriter::Rewriter rewriter;
  // The paths a restricted login's privileges are checked against
  // (Session::resolve_access), once per catalog.
  rewriter::PrivilegePathsCache privilege_paths;
  // A store per database; set by Server before accepting.
  std::unique_ptr<store::PolicyStores> policies;
  std::unique_ptr<RoleDirectory> roles;
  // Blocking work (catalog queries, refreshes, verification) runs here,
  // never on an I/O thread.
  boost::asio::thread_pool blocking{2};
  // RELOAD (also SIGHUP): re-reads the configuration and the policies.
  // Returns a one-line summary; throws with the reason when it fails.
  std::function<std::string()> reload;

  // Shutdown (SIGTERM, SIGINT, console SHUTDOWN), advanced by Server only:
  // kLameDuck while new connections are still accepted and served
  // (shutdown_lame_duck, until lame_duck_ends), then kDraining once the
  // listener is closed. /readyz answers 503 in both.
  std::atomic<ShutdownPhase> shutdown_phase{ShutdownPhase::kServing};
  std::atomic<std::chrono::steady_clock::time_point> lame_duck_ends{};
  bool shutting_down() const { return shutdown_phase.load() != ShutdownPhase::kServing; }
  // "serving", "lame duck: ..." (with the time left) or "draining: ...";
  // what /readyz and SHOW STATS say.
  std::string shutdown_state() const;
  // Console SHUTDOWN: what SIGTERM does (the lame duck, then the drain).
  // Set by Server.
  std::function<void()> shutdown;
  // Console PAUSE/RESUME: while set, sessions idle between transactions do
  // not forward what their clients send, and new sessions wait before they
  // connect to the backend. Console sessions are never held.
  std::atomic<bool> paused{false};
  // Console PAUSE: blocks until every session is idle between transactions
  // (or `cancelled` turns true: then the pause is undone and false
  // returned); the number of sessions in *sessions. Set by Server.
  std::function<bool(const std::function<bool()>& cancelled, size_t* sessions)> pause;

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const Runtime> runtime_;
};

}  // namespace kanon::proxy
