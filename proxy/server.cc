#include "proxy/server.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <functional>
#include <pqxx/pqxx>
#include <thread>

#include "catalog/kanon_schema.h"
#include "policy/policy_file.h"
#include "proxy/listener.h"
#include "proxy/log.h"
#include "proxy/session.h"
#include "proxy/wire/error_fields.h"

namespace kanon::proxy {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

constexpr auto kShutdownGrace = std::chrono::seconds(5);

}  // namespace

Server::Server(settings::ServerConfig config)
    : context_(config),
      contexts_([&] {
        std::vector<std::unique_ptr<asio::io_context>> v;
        for (size_t i = 0; i < context_.io_threads.threads(); ++i)
          v.push_back(std::make_unique<asio::io_context>(1));
        return v;
      }()),
      acceptor_(*contexts_[0]),
      accept_retry_(contexts_[0]->get_executor(), "listen") {
  open_listener(acceptor_, config.listen, "listen");
  if (config.metrics.port != 0)
    metrics_ = std::make_unique<MetricsEndpoint>(*contexts_[0], config.metrics, context_);
  // Clients that connect from now on wait in the backlog until run().
  const std::string conninfo = settings::service_conninfo(config);
  context_.roles = std::make_unique<RoleDirectory>(conninfo);
  if (config.audit.enabled()) context_.audit = std::make_unique<AuditTrail>(config.audit, conninfo);
  context_.policies = std::make_unique<store::PolicyStores>(config, store::load_policies(config));
  // Restricted statements are decided from the catalog: without one, deny.
  context_.rewriter.set_require_catalog(true);
  // The audit trail's table is kanon's: out of every restricted session's reach.
  if (!config.audit.table.empty()) context_.rewriter.set_internal_tables({config.audit.table});
  build_policies();
  context_.reload = [this] { return reload(); };
  context_.shutdown = [this] { stop(); };
  context_.pause = [this](const std::function<bool()>& cancelled, size_t* sessions) {
    return pause(cancelled, sessions);
  };
}

namespace {

// The start-up check of schema kanon in every database kanon keeps
// releases, snapshots or exports in: its version, what the first write
// will migrate, or an error when it is newer than this kanon (whose writes
// then fail: tables that need them are not served). Reads only.
void check_kanon_schemas(const settings::ServerConfig& config,
                         const std::vector<policy::TablePolicy>& tables) {
  for (const auto& database : policy::databases_of(tables, settings::default_database(config))) {
    const std::string where = database.empty() ? "(default)" : database;
    try {
      pqxx::connection conn(settings::service_conninfo(config, database));
      pqxx::read_transaction tx(conn);
      const auto state = catalog::read_kanon_schema(tx);
      const auto report = catalog::describe_kanon_schema(state, catalog::plan_kanon_schema(state));
      log(report.too_new ? LogLevel::kError : LogLevel::kInfo, "database {}: {}", where,
          report.sentence);
    } catch (const std::exception& e) {
      log(LogLevel::kWarning, "database {}: schema kanon not checked at start: {}", where,
          e.what());
    }
  }
}

// evaluator: auto built with the SQL masks: why not the function.
void log_evaluator_fallback(const std::string& name, const policy::TableSnapshot& t) {
  if (!t.evaluator_fallback.empty())
    log(LogLevel::kInfo, "policy {}: evaluator: auto: SQL masks, not kanon_mask.released ({})",
        name, t.evaluator_fallback);
}

}  // namespace

void Server::build_policies() {
  const auto tables = context_.policies->policies();
  if (tables.empty()) {
    log(LogLevel::kInfo, "no policies: every session is relayed unchanged");
    return;
  }
  check_kanon_schemas(*context_.runtime()->config, tables);
  const auto t0 = std::chrono::steady_clock::now();
  // Shared snapshots: what is stored for this replica's policies is served
  // at once; the builder builds the rest.
  context_.policies->refresh_all(true);
  for (const auto& store : context_.policies->all()) {
    const auto snapshot = store->current();
    for (const auto& p : store->policies()) {
      const std::string name = context_.policies->name_of(p);
      if (const auto* t = snapshot->find(p.name())) {
        log(LogLevel::kInfo, "policy {}: k={}, {} rows, tree of {} nodes ({} mode){}", name, p.k,
            t->stats.rows, t->tree.size(), policy::to_string(p.mode),
            t->shared_version
                ? fmt::format(", snapshot version {} built by {}", t->shared_version, t->built_by)
                : "");
        for (const auto& w : t->grant_warnings) log(LogLevel::kWarning, "policy {}: {}", name, w);
        if (!t->release.note.empty())
          log(LogLevel::kWarning, "policy {}: {}", name, t->release.note);
        log_evaluator_fallback(name, *t);
      } else {
        log(LogLevel::kError, "policy {}: not built, restricted sessions are denied the table: {}",
            name, snapshot->errors.count(p.name()) ? snapshot->errors.at(p.name()) : "unknown");
      }
    }
    if (!snapshot->catalog) {
      log(LogLevel::kError,
          "catalog of database {} not read ({}): restricted statements that name relations "
          "there are denied until it is",
          store->database().empty() ? "(default)" : store->database(), snapshot->catalog_error);
      continue;
    }
    log(LogLevel::kInfo, "catalog of database {}: {} relations, {} functions, read in {:.1f} ms",
        snapshot->catalog->database, snapshot->catalog->relations.size(),
        snapshot->catalog->functions.size(), snapshot->catalog->read_ms);
    if (const auto watch = store->catalog_watch_state();
        !watch.trigger_installed && !watch.trigger_error.empty())
      log(LogLevel::kWarning,
          "catalog of database {}: no DDL event trigger ({}): the catalog is re-read at policy "
          "refreshes only, and restricted statements carry no catalog guard against DDL that "
          "commits while they run (docs/security.md)",
          snapshot->catalog->database, watch.trigger_error);
  }
  for (const auto& store : context_.policies->all()) {
    const auto sharing = store->sharing_state();
    if (sharing.enabled)
      log(sharing.error.empty() ? LogLevel::kInfo : LogLevel::kWarning,
          "snapshots of database {} shared as replica '{}', {}{}{}", store->database_name(),
          sharing.replica, sharing.leading ? "the builder" : "loading what the builder stores",
          sharing.error.empty() ? "" : ": ", sharing.error);
  }
  log(LogLevel::kInfo, "policies built in {} ms",
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0)
          .count());
  // From now on, every refresh, load of another replica's snapshot and
  // failure gets a line (the start-up ones are above).
  context_.policies->set_publish_listener(
      [](const std::string& name, const policy::TableSnapshot* in_force, const std::string& error) {
        if (!error.empty()) {
          if (in_force)
            log(LogLevel::kWarning,
                "policy {}: build failed, the previous snapshot stays in force: {}", name, error);
          else
            log(LogLevel::kError,
                "policy {}: not built, restricted sessions are denied the table: {}", name, error);
          return;
        }
        if (!in_force) return;
        log(LogLevel::kInfo, "policy {}: now serving a tree of {} nodes ({} rows){}", name,
            in_force->tree.size(), in_force->stats.rows,
            in_force->shared_version ? fmt::format(", snapshot version {} built by {}",
                                                   in_force->shared_version, in_force->built_by)
                                     : "");
        if (!in_force->release.note.empty())
          log(LogLevel::kWarning, "policy {}: {}", name, in_force->release.note);
        log_evaluator_fallback(name, *in_force);
      });
}

std::string Server::reload() {
  const auto old = context_.runtime()->config;
  settings::ServerConfig fresh = settings::load_server_config(old->path);
  // --listen, --backend and --log-level hold over the file, as at start.
  fresh.command_line = old->command_line;
  settings::apply_command_line(fresh);
  auto tables = store::load_policies(fresh);
  if (fresh.listen.host != old->listen.host || fresh.listen.port != old->listen.port ||
      fresh.threads != old->threads || fresh.pack_sessions != old->pack_sessions)
    log(LogLevel::kWarning, "RELOAD: listen, threads and io_placement change only at restart");
  fresh.listen = old->listen;
  fresh.threads = old->threads;
  fresh.pack_sessions = old->pack_sessions;
  const auto& a = fresh.audit;
  const auto& b = old->audit;
  if (a.file != b.file || a.table != b.table || a.text != b.text || a.on_failure != b.on_failure ||
      a.queue_size != b.queue_size || a.exempt != b.exempt)
    log(LogLevel::kWarning, "RELOAD: audit changes only at restart");
  fresh.audit = old->audit;
  const size_t n = tables.size();
  auto factory = store::PolicyStores::service_factory(fresh);
  context_.set_config(std::move(fresh));  // throws on unusable TLS files: nothing changed
  set_log_level(context_.runtime()->config->log_level);
  const bool built = context_.policies->reload(std::move(tables), std::move(factory));
  size_t built_tables = 0;
  std::string versions;
  for (const auto& store : context_.policies->all()) {
    const auto snapshot = store->current();
    built_tables += snapshot->tables.size();
    versions += fmt::format("{}{} {}", versions.empty() ? "" : ", ",
                            store->database_name().empty() ? "(default)" : store->database_name(),
                            snapshot->version);
    for (const auto& [name, t] : snapshot->tables)
      for (const auto& w : t->grant_warnings) log(LogLevel::kWarning, "policy {}: {}", name, w);
  }
  const std::string summary =
      fmt::format("{} reloaded: {} protected tables, {} built, policy versions {}{}", old->path, n,
                  built_tables, versions, built ? "" : " (some builds failed: SHOW POLICIES)");
  log(LogLevel::kInfo, "{}", summary);
  return summary;
}

Server::~Server() = default;

tcp::endpoint Server::local_endpoint() const {
  return acceptor_.local_endpoint();
}

void Server::run() {
  asio::signal_set signals(*contexts_[0], SIGINT, SIGTERM);
  std::function<void()> wait_signal = [&] {
    signals.async_wait([&](const boost::system::error_code& ec, int signo) {
      if (ec) return;
      if (!shutting_down_) {
        log(LogLevel::kInfo, "received signal {}, shutting down", signo);
        begin_shutdown();
      } else {
        log(LogLevel::kInfo, "received signal {} again, {}ending every session now", signo,
            context_.shutdown_phase.load() == ShutdownPhase::kLameDuck
                ? "cutting the lame duck short: no new connections, "
                : "");
        end_sessions_now();
      }
      wait_signal();
    });
  };
  wait_signal();
  asio::signal_set hangup(*contexts_[0], SIGHUP);
  std::function<void()> wait_hangup = [&] {
    hangup.async_wait([&](const boost::system::error_code& ec, int) {
      if (ec) return;
      log(LogLevel::kInfo, "received SIGHUP, reloading");
      if (context_.audit) context_.audit->reopen();  // logrotate moved the file
      asio::post(context_.blocking, [this] {
        try {
          reload();
        } catch (const std::exception& e) {
          log(LogLevel::kError, "reload failed, nothing changed: {}", e.what());
        }
      });
      wait_hangup();
    });
  };
  wait_hangup();
  if (metrics_) {
    metrics_->start();
    const auto m = metrics_->local_endpoint();
    log(LogLevel::kInfo, "metrics on http://{}:{}/metrics", m.address().to_string(), m.port());
  }
  for (auto& service : attached_) service->start();
  if (context_.policies) context_.policies->start();
  using Guard = asio::executor_work_guard<asio::io_context::executor_type>;
  std::vector<Guard> guards;
  for (auto& io : contexts_) guards.emplace_back(io->get_executor());

  const auto ep = local_endpoint();
  log(LogLevel::kInfo, "listening on {}:{} ({} I/O threads), backend {}:{}",
      ep.address().to_string(), ep.port(), contexts_.size(),
      context_.runtime()->config->backend.host, context_.runtime()->config->backend.port);
  accept_next();

  std::vector<std::thread> threads;
  for (size_t i = 1; i < contexts_.size(); ++i)
    threads.emplace_back([this, i] {
      context_.io_threads.enter_thread(i);
      contexts_[i]->run();
    });
  context_.io_threads.enter_thread(0);
  // How busy each I/O thread is, for placing the next sessions.
  asio::steady_timer load_sampler(*contexts_[0]);
  std::function<void()> sample_load;
  sample_load = [&] {
    load_sampler.expires_after(IoPlacement::kSampleEvery);
    load_sampler.async_wait([&](const boost::system::error_code& ec) {
      if (ec) return;
      context_.io_threads.sample();
      sample_load();
    });
  };
  sample_load();

  // Shutdown releases the guards from the first context's thread.
  asio::steady_timer watch(*contexts_[0]);
  std::function<void()> poll_shutdown;
  poll_shutdown = [&] {
    watch.expires_after(std::chrono::milliseconds(50));
    watch.async_wait([&](const boost::system::error_code& ec) {
      if (ec) return;
      if (shutting_down_) {
        const auto now = std::chrono::steady_clock::now();
        if (context_.shutdown_phase.load() == ShutdownPhase::kLameDuck) {
          if (now < context_.lame_duck_ends.load()) return poll_shutdown();
          log(LogLevel::kInfo, "lame duck over: the drain begins");
          begin_drain();
        }
        if (!ending_now_ && now >= drain_deadline_) {
          log(LogLevel::kWarning, "shutdown_grace over: ending {} sessions still in a transaction",
              context_.active_clients.load());
          end_sessions_now();
        }
        const bool done = context_.active_clients.load() == 0;
        if (done || (ending_now_ && now > end_deadline_)) {
          if (!done) log(LogLevel::kWarning, "sessions did not end in time; closing anyway");
          signals.cancel();
          hangup.cancel();
          load_sampler.cancel();
          if (metrics_) metrics_->stop();
          for (auto& service : attached_) service->stop();
          guards.clear();
          for (auto& io : contexts_) io->stop();
          return;
        }
      }
      poll_shutdown();
    });
  };
  poll_shutdown();
  contexts_[0]->run();
  for (auto& t : threads) t.join();
  if (context_.audit) context_.audit->flush();
  log(LogLevel::kInfo, "stopped");
}

void Server::stop() {
  asio::post(*contexts_[0], [this] { begin_shutdown(); });
}

void Server::accept_next() {
  const size_t index = context_.io_threads.pick();
  auto& io = *contexts_[index];
  acceptor_.async_accept(
      io, [this, index](const boost::system::error_code& ec, tcp::socket socket) {
        const bool closed = context_.shutdown_phase.load() == ShutdownPhase::kDraining;
        if (ec) {
          if (ec == asio::error::operation_aborted || closed) return;
          // Out of descriptors or memory: try again later, not at once.
          accept_retry_.failed(ec).async_wait([this](const boost::system::error_code& e) {
            if (!e && context_.shutdown_phase.load() != ShutdownPhase::kDraining) accept_next();
          });
          return;
        }
        accept_retry_.accepted();
        const uint32_t max = context_.runtime()->config->limits.max_clients;
        const bool over = context_.active_clients.load() >= max;
        if (over) log(LogLevel::kWarning, "refusing a client: max_clients ({}) reached", max);
        on_accept(std::make_shared<Session>(std::move(socket), context_, over, index));
        if (!closed) accept_next();
      });
}

void Server::on_accept(std::shared_ptr<Session> session) {
  {
    const std::lock_guard lock(sessions_mutex_);
    std::erase_if(sessions_, [](const auto& kv) { return kv.second.expired(); });
    sessions_.emplace(session.get(), session);
  }
  session->start();
}

void Server::begin_shutdown() {
  if (shutting_down_) return;
  shutting_down_ = true;
  const auto lame_duck = context_.runtime()->config->shutdown_lame_duck;
  if (lame_duck.count() == 0) return begin_drain();
  context_.lame_duck_ends = std::chrono::steady_clock::now() + lame_duck;
  context_.shutdown_phase = ShutdownPhase::kLameDuck;
  log(LogLevel::kInfo,
      "lame duck: /readyz answers 503, new connections are still accepted and served for {} ms "
      "(shutdown_lame_duck), then the drain begins",
      lame_duck.count());
}

void Server::begin_drain() {
  if (context_.shutdown_phase.load() == ShutdownPhase::kDraining) return;
  context_.shutdown_phase = ShutdownPhase::kDraining;
  const auto grace = context_.runtime()->config->shutdown_grace;
  drain_deadline_ = std::chrono::steady_clock::now() + grace;
  boost::system::error_code ec;
  acceptor_.close(ec);
  accept_retry_.cancel();
  log(LogLevel::kInfo,
      "draining: no new connections; {} sessions end when idle between transactions "
      "(shutdown_grace {} ms)",
      context_.active_clients.load(), grace.count());
  const std::lock_guard lock(sessions_mutex_);
  for (auto& [ptr, weak] : sessions_)
    if (auto s = weak.lock()) s->drain();
}

void Server::end_sessions_now() {
  shutting_down_ = true;
  begin_drain();
  if (ending_now_) return;
  ending_now_ = true;
  end_deadline_ = std::chrono::steady_clock::now() + kShutdownGrace;
  const std::lock_guard lock(sessions_mutex_);
  for (auto& [ptr, weak] : sessions_)
    if (auto s = weak.lock()) s->stop();
}

bool Server::pause(const std::function<bool()>& cancelled, size_t* sessions) {
  context_.paused = true;
  for (;;) {
    size_t total = 0, busy = 0;
    {
      const std::lock_guard lock(sessions_mutex_);
      for (auto& [ptr, weak] : sessions_)
        if (auto s = weak.lock()) {
          ++total;
          if (!s->quiet()) ++busy;
        }
    }
    if (busy == 0) {
      *sessions = total;
      return true;
    }
    if (cancelled() || !context_.paused.load()) {
      context_.paused = false;
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace kanon::proxy
