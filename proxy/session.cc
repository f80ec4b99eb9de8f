#include "proxy/session.h"

#include <algorithm>
#include <array>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <cctype>
#include <chrono>
#include <random>

#include "base/sqlstate.h"
#include "base/text.h"
#include "proxy/backend_tls_negotiator.h"
#include "proxy/blocking.h"
#include "proxy/client_text.h"
#include "proxy/log.h"
#include "proxy/wire/backend_messages.h"
#include "proxy/wire/error_fields.h"
#include "proxy/wire/message_types.h"
#include "rewriter/string_literals.h"

namespace kanon::proxy {

namespace asio = boost::asio;
using asio::awaitable;
using asio::use_awaitable;

namespace {

// Like PostgreSQL's authentication_timeout: a client that has not sent its
// StartupMessage by then is dropped. Authentication itself is then timed by
// the server.
constexpr auto kStartupTimeout = std::chrono::seconds(60);

std::string describe_peer(const Session::tcp::socket& s) {
  boost::system::error_code ec;
  const auto ep = s.remote_endpoint(ec);
  return ec ? std::string("unknown") : ep.address().to_string() + ":" + std::to_string(ep.port());
}

void set_no_delay(Session::tcp::socket& s) {
  boost::system::error_code ec;
  s.set_option(Session::tcp::no_delay(true), ec);
}

// The server's addresses: a numeric host as it is (no thread switch to the
// resolver's thread for every session), a name through getaddrinfo.
awaitable<std::vector<Session::tcp::endpoint>> backend_endpoints(const std::string& host,
                                                                 uint16_t port,
                                                                 boost::system::error_code& ec) {
  ec = {};
  boost::system::error_code not_numeric;
  const auto address = asio::ip::make_address(host, not_numeric);
  if (!not_numeric) co_return std::vector<Session::tcp::endpoint>{{address, port}};
  Session::tcp::resolver resolver(co_await asio::this_coro::executor);
  const auto found = co_await resolver.async_resolve(host, std::to_string(port),
                                                     asio::redirect_error(use_awaitable, ec));
  std::vector<Session::tcp::endpoint> endpoints;
  if (!ec)
    for (const auto& entry : found) endpoints.push_back(entry.endpoint());
  co_return endpoints;
}

std::string param(const wire::StartupMessage& m, std::string_view name) {
  const std::string* v = m.find(name);
  return v ? *v : std::string();
}

// A value inside the `options` start-up parameter: spaces and backslashes
// are escaped with a backslash, as PostgreSQL reads them.
std::string escape_option(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == ' ' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// The restricted settings appended to the client's own `options`, so they
// win over the client's `-c` options; a start-up parameter of the same name
// (which PostgreSQL applies after `options`) is dropped.
void add_restricted_settings(wire::StartupMessage& m,
                             const std::vector<std::pair<std::string, std::string>>& settings) {
  if (settings.empty()) return;
  std::string extra;
  for (const auto& [name, value] : settings) {
    extra += fmt::format(" -c {}={}", name, escape_option(value));
    std::erase_if(m.parameters, [&](const auto& p) {
      return p.first != "user" && p.first != "database" && p.first != "options" &&
             base::lower(p.first) == base::lower(name);
    });
  }
  for (auto& [name, value] : m.parameters)
    if (name == "options") {
      value += extra;
      return;
    }
  m.parameters.emplace_back("options", extra.substr(1));
}

}  // namespace

Session::Session(tcp::socket client, ServerContext& context, bool over_capacity, size_t io_index)
    : context_(context),
      runtime_(context.runtime()),
      client_(std::move(client)),
      backend_(client_.socket().get_executor()),
      backend_stream_(context.cancels),
      backend_done_(client_.socket().get_executor(), asio::steady_timer::time_point::max()),
      retry_done_(client_.socket().get_executor(), asio::steady_timer::time_point::max()),
      over_capacity_(over_capacity),
      io_index_(io_index),
      peer_(describe_peer(client_.socket())) {
  if (!over_capacity_) ++context_.active_clients;
  context_.io_threads.session_started(io_index_);
  set_no_delay(client_.socket());
}

Session::~Session() {
  if (in_flight_ > 0) context_.running_statements.add(io_index_, -1);
  if (client_id_) context_.clients.remove(client_id_);
  if (!over_capacity_) --context_.active_clients;
  context_.io_threads.session_ended(io_index_);
}

void Session::start() {
  asio::co_spawn(
      client_.socket().get_executor(), [self = shared_from_this()] { return self->run_client(); },
      asio::detached);
}

void Session::stop() {
  asio::post(client_.socket().get_executor(), [weak = weak_from_this()] {
    if (auto self = weak.lock()) {
      self->stopping_ = true;
      self->client_.cancel();
    }
  });
}

void Session::drain() {
  asio::post(client_.socket().get_executor(), [weak = weak_from_this()] {
    if (auto self = weak.lock()) {
      self->draining_ = true;
      if (self->quiet_.load()) self->request_stop();
    }
  });
}

void Session::request_stop() {
  if (stopping_) return;
  stopping_ = true;
  client_.cancel();
}

void Session::note_client_frame(char type, bool dropped) {
  quiet_ = false;
  // A dropped Query or FunctionCall gets no answer (the gate discards up to
  // the next Sync, as PostgreSQL would).
  if (dropped && type != wire::frontend::kSync) return;
  switch (type) {
    case wire::frontend::kQuery:
    case wire::frontend::kSync:
      unsynced_ = false;
      ++pending_syncs_;
      count_in_flight(1);
      break;
    case wire::frontend::kFunctionCall:
      ++pending_syncs_;
      count_in_flight(1);
      break;
    case wire::frontend::kParse:
    case wire::frontend::kBind:
    case wire::frontend::kDescribe:
    case wire::frontend::kExecute:
    case wire::frontend::kClose:
    case wire::frontend::kFlush:
      unsynced_ = true;
      break;
    default:  // COPY data and authentication answers belong to what came before
      break;
  }
}

void Session::count_in_flight(int change) {
  const bool was = in_flight_ > 0;
  if (change > 0)
    ++in_flight_;
  else if (in_flight_ > 0)
    --in_flight_;
  const bool is = in_flight_ > 0;
  if (is && !was) context_.running_statements.add(io_index_, 1);
  if (was && !is) context_.running_statements.add(io_index_, -1);
}

bool Session::server_busy() const {
  return context_.running_statements.total() + (in_flight_ > 0 ? 0 : 1) >=
         settings::or_one_per_core(runtime_->config->serial_masks_at);
}

void Session::note_ready_for_query(char status) {
  if (pending_syncs_ > 0) --pending_syncs_;
  // A restricted session asks the registry, which follows what the backend
  // skips (a Sync read by a COPY, a Query after a failed extended message):
  // the sent messages alone would leave its snapshot pinned for good.
  if (gate_ && !registry_.ready_owed()) pending_syncs_ = 0;
  const bool quiet = pending_syncs_ == 0 && !unsynced_ && status == wire::kTxIdle;
  quiet_ = quiet;
  if (quiet) pinned_.reset();  // the next transaction takes the newest snapshot
  if (quiet && draining_) request_stop();
}

awaitable<void> Session::wait_while_paused(bool new_session) {
  if (!context_.paused.load()) co_return;
  asio::steady_timer tick(client_.socket().get_executor());
  bool logged = false;
  while (context_.paused.load() && !stopping_ && (new_session || quiet_.load())) {
    if (!logged) log(LogLevel::kDebug, "client {}: held by PAUSE", peer_);
    logged = true;
    tick.expires_after(std::chrono::milliseconds(20));
    boost::system::error_code ec;
    co_await tick.async_wait(asio::redirect_error(use_awaitable, ec));
  }
}

void Session::register_client(const wire::StartupMessage& startup, const char* access) {
  ClientInfo info;
  info.user = user_;
  info.database = param(startup, "database");
  if (info.database.empty()) info.database = user_;
  info.peer = peer_;
  info.application = param(startup, "application_name");
  info.access = access;
  info.tls = client_.tls();
  info.since = std::chrono::system_clock::now();
  client_id_ = context_.clients.add(std::move(info));
  ++context_.stats.connections;
}

awaitable<void> Session::run_client() {
  wire::StartupMessage startup;
  asio::steady_timer startup_timer(client_.socket().get_executor(), kStartupTimeout);
  startup_timer.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
    if (auto self = weak.lock(); self && !ec) {
      log(LogLevel::kInfo, "client {}: no start-up packet within {} s; closing", self->peer_,
          kStartupTimeout.count());
      self->close_client();
    }
  });
  const auto& config = *runtime_->config;
  try {
    auto started = co_await read_startup();
    startup_timer.cancel();
    if (!started) co_return close_client();
    user_ = std::move(started->user);
    if (started->step == StartupHandshake::Step::kConsole)
      co_return co_await run_console(started->startup);
    startup = std::move(started->startup);
    co_await wait_while_paused(true);
    if (stopping_) {
      co_await send_fatal(sqlstate::kAdminShutdown,
                          "terminating connection because kanon is shutting down");
      co_return close_client();
    }
    co_await resolve_access(user_, started->database);
    if (!access_.exempt) {
      const Admission admission =
          admit_restricted(startup, access_.database, store() != nullptr, config.databases);
      if (admission.refusal) {
        log(LogLevel::kWarning, "denied: user={} client={} rule={} object={}", user_, peer_,
            admission.rule, admission.object);
        co_await send_fatal(admission.refusal->sqlstate, admission.refusal->message);
        co_return close_client();
      }
      access_.protected_database = admission.protected_database;
      add_restricted_settings(startup, config.restricted_settings);
      thread_local std::random_device random;  // set up once per thread, not per session
      const uint64_t nonce = (uint64_t{random()} << 32) ^ random();
      encoding_.emplace(backend_stream_);
      gate_.emplace(
          [this](std::string_view sql, const char* protocol) { return rewrite(sql, protocol); },
          [this](uint32_t oid) { return function_call(oid); }, denials_, guarded_, nonce,
          [this](const wire::Frame& frame) { return use_prepared(frame); });
      filter_.emplace(
          denials_, guarded_,
          [this](const Denial& probe, ResponseFilter::ProbeOutcome outcome,
                 std::string_view sqlstate) { probe_answered(probe, outcome, sqlstate); },
          [this](const GuardedQuery& q) {
            return !stopping_ && gate_->frames_seen() == q.frames_seen;
          },
          [this](int64_t generation) { catalog_behind(generation); },
          [this](int64_t generation) { return catalog_behind_why(generation); });
      filter_->on_invalidations_read([this](int64_t generation) {
        block_generation_ = std::max(block_generation_, generation);
      });
    }
    if (context_.audit && (gate_ || context_.audit->audit_exempt()))
      audit_.emplace(
          *context_.audit,
          AuditSession{user_, access_.database, peer_, param(startup, "application_name"), 0},
          !gate_);
    if (!co_await connect_backend()) co_return close_client();
    wire::Buffer packet;
    wire::encode(startup, packet);
    co_await backend_.write(asio::buffer(packet));
  } catch (const boost::system::system_error& e) {
    log(LogLevel::kDebug, "client {}: start-up ended: {}", peer_, e.code().message());
    close_backend();
    co_return close_client();
  }
  register_client(startup, access_.exempt                  ? "exempt"
                           : access_.exempt_tables.empty() ? "restricted"
                                                           : "partly exempt");
  log(LogLevel::kDebug, "client {}: session for user '{}' started ({})", peer_, user_,
      access_.exempt ? "exempt" : "restricted");
  backend_running_ = true;
  asio::co_spawn(
      client_.socket().get_executor(), [self = shared_from_this()] { return self->run_backend(); },
      asio::detached);
  co_await relay_client_to_backend();
}

std::shared_ptr<store::PolicyStore> Session::store() const {
  return context_.policies ? context_.policies->find(access_.database) : nullptr;
}

std::shared_ptr<const store::PolicySnapshot> Session::snapshot() {
  // Looked up for every statement: a database that RELOAD gives policies
  // is protected from the next statement on, also in sessions already open.
  const auto s = store();
  access_.protected_database = s != nullptr;
  static const auto kNothing = std::make_shared<const store::PolicySnapshot>();
  if (!s) return kNothing;
  // One version of every table for a whole transaction (the catalog stays
  // the newest): pinned at its first statement, released at the
  // ReadyForQuery that finds the session idle (note_ready_for_query).
  auto current = s->current();
  if (!pinned_) {
    pinned_ = current;
    pinned_seen_ = current;
    pinned_view_ = current;
  } else if (current != pinned_seen_) {
    pinned_seen_ = current;
    pinned_view_ = store::pin_tables(pinned_, current);
  }
  return pinned_view_;
}

awaitable<void> Session::resolve_access(const std::string& user, const std::string& database) {
  access_ = {};
  access_.database = database;
  std::vector<policy::TablePolicy> tables;
  if (context_.policies) tables = context_.policies->policies();
  const auto exempt_by = [&](const policy::TablePolicy& p, const std::set<std::string>& roles) {
    return std::any_of(p.exempt.begin(), p.exempt.end(),
                       [&](const std::string& r) { return roles.count(r) > 0; });
  };
  std::set<std::string> roles{user};
  const bool all_direct =
      std::all_of(tables.begin(), tables.end(), [&](const auto& p) { return exempt_by(p, roles); });
  // Cached answers are taken on this thread; the blocking pool is asked
  // (two thread switches each way) only when the directory must read.
  if (!all_direct && context_.roles) {
    auto found = context_.roles->cached_memberships(user);
    if (!found)
      found = co_await run_blocking(context_.blocking,
                                    [&] { return context_.roles->memberships(user); });
    if (found) roles = std::move(*found);  // else: only the login's own name counts
  }
  // Exempt from every table everywhere: relayed untouched. Otherwise the
  // tables of this database's store the login is exempt from.
  const auto own = store();
  for (const auto& p : tables)
    if (own && p.database == own->database() && exempt_by(p, roles))
      access_.exempt_tables.push_back(p.name());
  std::sort(access_.exempt_tables.begin(), access_.exempt_tables.end());
  access_.exempt =
      std::all_of(tables.begin(), tables.end(), [&](const auto& p) { return exempt_by(p, roles); });
  access_.search_path.clear();
  access_.role = user;
  // Whether PostgreSQL itself keeps the login from protected data (then DO,
  // CALL and code it creates are allowed; rewriter/rewriter.h). Without the
  // protected database's catalog nothing is proven. The role directory asks
  // kanon's own database, so the proof covers every protected table only
  // while no other database has policies (code could connect to it, e.g.
  // with dblink); then it holds for sessions there and in listed databases.
  // Otherwise DO and CALL stay denied.
  const auto home = context_.policies ? context_.policies->default_store() : nullptr;
  const bool provable = !access_.exempt && context_.roles && home &&
                        (own == home || own == nullptr) &&
                        context_.policies->only_default_protects();
  const auto snapshot = provable ? home->current() : nullptr;
  const auto catalog = snapshot ? context_.rewriter.catalog_for(*snapshot) : nullptr;
  if (catalog) {
    const auto paths = context_.privilege_paths.paths(catalog, home->policies());
    auto proven = context_.roles->cached_reads_nothing_protected(user, *paths, snapshot->version);
    if (!proven)
      proven = co_await run_blocking(context_.blocking, [&] {
        return context_.roles->reads_nothing_protected(user, *paths, snapshot->version);
      });
    access_.reads_nothing_protected = proven.value_or(false);
  }
}

rewriter::RewriteResult Session::decide(std::string_view text, uint64_t& version,
                                        std::optional<DecidedAt>& at) {
  rewriter::RewriteResult result;
  at.reset();
  if (text.find('\\') != std::string_view::npos) {
    // A backslash: decide, and send, the text with plain constants that hold
    // one spelled E'...', which the server reads alike whatever
    // standard_conforming_strings is by then (rewriter/string_literals.h).
    const auto respelled =
        rewriter::standard_text(text, backend_stream_.standard_conforming_strings());
    if (!respelled)
      return rewriter::make_denial(
          rewriter::rules::kStandardConformingStrings,
          "a string constant kanon cannot respell (N'...' with a backslash)");
    if (prepared_ && prepared_sql_ == *respelled) {
      result = std::move(*prepared_);
    } else {
      const auto current = snapshot();
      result = context_.rewriter.rewrite(*respelled, *current, access_);
      version = current->version;
    }
    if (result.verdict == rewriter::Verdict::kPass && *respelled != text) {
      result.verdict = rewriter::Verdict::kRewritten;
      result.sql = *respelled;
    }
    return result;
  }
  if (prepared_ && prepared_sql_ == text) {
    at = prepared_at_;
    return std::move(*prepared_);
  }
  const auto current = snapshot();
  result = context_.rewriter.rewrite(text, *current, access_);
  version = current->version;
  at = DecidedAt{current->store, current->version};
  return result;
}

int64_t Session::read_before(bool runs) {
  const auto facts = snapshot()->catalog;
  const int64_t generation = facts ? facts->generation : 0;
  // Nothing sent before it is still unanswered: the backend's transaction
  // status is the last ReadyForQuery's.
  const bool settled =
      backend_stream_.ready_count() + 1 == gate_->cycle() && !gate_->cycle_started();
  // Outside any transaction: the transaction it runs in begins after this
  // decision, and PostgreSQL reads the invalidations of every DDL
  // committed before then when it begins.
  if (settled && backend_stream_.transaction_status() == wire::kTxIdle) {
    block_generation_ = std::max(block_generation_, generation);
    return 0;
  }
  // In a transaction (a block, or an extended cycle pipelined behind
  // others) PostgreSQL reads them only when it takes a lock anew: a
  // function's body can still be the one it cached before a DDL that
  // kanon's catalog already holds, and the catalog guard passes. Found with
  // ddl_timing_test: a function that read the protected table, replaced by
  // one that does not, ran its old body in a block. So can an operator or
  // cast dropped meanwhile, which no catalog of kanon's holds.
  if (!runs || generation <= block_generation_) return 0;
  if (cycle_read_.cycle == gate_->cycle() && generation <= cycle_read_.generation) return 0;
  // Sent after kReadInvalidations: PostgreSQL parses (or binds) it with
  // caches at least as new as this catalog, and its guard fails if a DDL
  // moved the generation since. (In a block an error aborted, it fails
  // with 25P02, and so does the statement; in a Query it goes after the
  // transaction control the text begins with, so that ROLLBACK TO
  // SAVEPOINT leaves the block first: StatementGate::decide_query.)
  return generation;
}

rewriter::RewriteResult Session::rewrite(std::string_view sql, const char* protocol) {
  rewriter::RewriteResult result;
  uint64_t version = 0;
  std::optional<DecidedAt> decided_at;  // decide()'s snapshot
  const auto t0 = std::chrono::steady_clock::now();
  // The text as PostgreSQL will read it (encoding_guard.h): the client's
  // bytes, or their UTF-8 conversion in another client encoding, or nothing
  // kanon may rely on.
  const EncodingGuard::Text read = encoding_->read(sql);
  std::optional<std::string> read_text;  // for the audit trail, when it is not `sql`
  if (read.read == EncodingGuard::Read::kRefused) {
    result = rewriter::make_denial(rewriter::rules::kClientEncoding, read.refusal);
    if (!is_valid_utf8(sql)) read_text = printable_utf8(sql);
  } else if (read.read == EncodingGuard::Read::kAsIs) {
    result = decide(sql, version, decided_at);
  } else {
    read_text = read.utf8;
    result = decide(read.utf8, version, decided_at);
    if (result.verdict == rewriter::Verdict::kRewritten) {
      // Sent in the client's encoding; kPass sends the client's own bytes.
      if (auto back = encoding_->write(result.sql)) {
        result.sql = std::move(*back);
      } else {
        const uint64_t fingerprint = result.fingerprint;
        result = rewriter::make_denial(
            rewriter::rules::kClientEncoding,
            fmt::format("a rewritten text that does not convert back to {} (client_encoding)",
                        backend_stream_.client_encoding()));
        result.fingerprint = fingerprint;
      }
    }
  }
  if (read.read != EncodingGuard::Read::kRefused) {  // session_prepared.cc
    const bool fresh =
        read.read == EncodingGuard::Read::kAsIs && decided_at && *decided_at == decided_now();
    track_decided(read.read == EncodingGuard::Read::kAsIs ? sql : std::string_view(read.utf8),
                  protocol, result, fresh);
  }
  prepared_.reset();
  access_.absent_names.clear();
  access_.event_triggers_confirmed = false;
  if (result.verdict == rewriter::Verdict::kLookup) {
    // Still unknown after the look-up (or it failed): fail closed.
    result = lookup_denial(result);
  }
  if (result.verdict != rewriter::Verdict::kDenied)
    result.read_invalidations_first = read_before(!result.transaction_control);
  if (result.defines && result.verdict != rewriter::Verdict::kDenied) {
    ++defines_;
    defined_at_ready_ = backend_stream_.ready_count();
  }
  if (audit_) {
    refuse_unless_audited(result);
    if (version == 0) version = snapshot()->version;
    audit_->decided(result, version, std::move(read_text));
  }
  if (result.verdict == rewriter::Verdict::kDenied)
    result.read_invalidations_first = 0;
  else if (result.read_invalidations_first)  // sent after kReadInvalidations
    cycle_read_ = {gate_->cycle(), result.read_invalidations_first};
  if (result.verdict == rewriter::Verdict::kDenied) staged_.clear();  // nothing is prepared
  if (result.verdict == rewriter::Verdict::kDenied)
    result.message = encoding_->message(result.message);  // the client reads it in its encoding
  else
    forwarded_effect_ = result.encoding_effect;
  const double micros =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  if (result.verdict == rewriter::Verdict::kDenied && result.rule == rewriter::rules::kSyntax.id) {
    // PostgreSQL answers it (the gate's syntax probe); counted and logged
    // when its answer arrives (probe_answered).
    context_.stats.rewrite_latency.add(micros);
    return result;
  }
  context_.stats.record(result, micros);
  log_denial(result, protocol);
  return result;
}

rewriter::RewriteResult Session::function_call(uint32_t oid) {
  rewriter::RewriteResult result;
  const char* name = rewriter::allowed_fast_path_function(oid);
  if (name == nullptr)
    result = rewriter::make_denial(rewriter::rules::kFunctionCall, fmt::format("function {}", oid));
  if (audit_) {
    refuse_unless_audited(result);
    audit_->decided(result, snapshot()->version);
  }
  context_.stats.count(result);
  if (name != nullptr && result.verdict == rewriter::Verdict::kPass)
    log(LogLevel::kDebug, "function call allowed: user={} client={} function={} oid={}", user_,
        peer_, name, oid);
  log_denial(result, "function-call");
  return result;
}

void Session::catalog_behind(int64_t generation) {
  needed_generation_ = std::max<int64_t>(needed_generation_, generation > 0 ? generation : 1);
}

std::string Session::catalog_behind_why(int64_t generation) const {
  const auto own = store();
  if (!own) return {};
  const auto current = own->current();
  if (current->catalog_error.empty()) return {};
  if (current->catalog && generation > 0 && current->catalog->generation >= generation) return {};
  return current->catalog_error;
}

awaitable<void> Session::catch_up_catalog() {
  const auto own = store();
  // The watcher has received a DDL notification its catalog does not cover
  // yet: read the catalog now rather than decide on the old one (whose
  // guard would fail).
  const uint64_t notified = own ? own->catalog_notifications() : 0;
  const bool notified_behind =
      own && own->catalog_notifications_covered() < notified && catch_up_tried_ < notified;
  if (needed_generation_ == 0 && !notified_behind) co_return;
  const auto current = own ? own->current() : nullptr;
  if (!own || (!notified_behind && current->catalog &&
               current->catalog->generation >= needed_generation_)) {
    needed_generation_ = 0;  // the watcher was there first
    co_return;
  }
  // Not inside a transaction block: a DDL of its own holds the generation
  // lock until it ends, and the read would wait for it.
  if (backend_stream_.transaction_status() != wire::kTxIdle) co_return;
  catch_up_tried_ = notified;
  // A guard that failed names a generation the catalog must reach: read it
  // (waiting for a DDL still open). Notifications alone: once for all
  // sessions.
  const bool guard_behind =
      needed_generation_ > 0 &&
      (!current->catalog || current->catalog->generation < needed_generation_);
  bool ok = false;
  try {
    ok = co_await run_blocking(context_.blocking, [&] {
      return guard_behind ? own->refresh_catalog() : own->refresh_catalog_covering(notified);
    });
  } catch (const std::exception&) {
    ok = false;
  }
  if (!ok) {
    log(LogLevel::kWarning, "client {}: re-reading the catalog failed: {}", peer_,
        own->current()->catalog_error);
    co_return;  // still behind: statements keep failing their guard (40001)
  }
  needed_generation_ = 0;
}

awaitable<void> Session::retry_guarded(GuardedQuery query) {
  retrying_ = true;
  retry_done_.expires_at(asio::steady_timer::time_point::max());
  co_await catch_up_catalog();
  // Statements the failed attempt prepared exist now: closed first.
  uint64_t closes = 0;
  wire::Buffer out = close_prepared_by(query, closes);
  gate_->begin_replay(query, closes);
  // The client's messages once more, decided with the catalog re-read.
  wire::Bytes rest(query.frames);
  for (;;) {
    const wire::Frame frame = wire::frame_typed(rest, UINT32_MAX);
    if (frame.status != wire::FrameStatus::kFrame) break;
    rest = rest.subspan(frame.size);
    if (defines_ > 0 && !gate_->discarding() && frame.type != wire::frontend::kParse)
      co_await look_up_prepared_names();
    if (!gate_->discarding() &&
        (frame.type == wire::frontend::kQuery || frame.type == wire::frontend::kParse))
      co_await look_up_unknown_names(frame);
    forwarded_effect_.reset();
    const auto action = gate_->on_frame(frame);
    note_sent(frame, action);
    if (encoding_ && action != StatementGate::Action::kDrop)
      encoding_->on_client_frame(frame, forwarded_effect_, gate_->cycle());
    const wire::Bytes sent = action == StatementGate::Action::kForward ? wire::whole(frame)
                             : action == StatementGate::Action::kReplace
                                 ? wire::Bytes(gate_->replacement())
                                 : wire::Bytes();
    out.insert(out.end(), sent.begin(), sent.end());
  }
  gate_->end_replay();
  ++context_.stats.guard_retries;
  log(LogLevel::kDebug, "client {}: the catalog changed under a statement; sent again ({})", peer_,
      query.extended ? "extended" : "simple");
  boost::system::error_code ec;
  co_await backend_.write(asio::buffer(out), ec);
  retrying_ = false;
  retry_done_.cancel();
}

void Session::refuse_unless_audited(rewriter::RewriteResult& result) {
  const auto& trail = *context_.audit;
  if (result.verdict == rewriter::Verdict::kDenied || !trail.deny_on_failure() || trail.available())
    return;
  const uint64_t fingerprint = result.fingerprint;
  result = rewriter::make_denial(rewriter::rules::kAuditUnavailable, trail.unavailable_reason());
  result.fingerprint = fingerprint;
}

void Session::probe_answered(const Denial& probe, ResponseFilter::ProbeOutcome outcome,
                             std::string_view sqlstate) {
  using Outcome = ResponseFilter::ProbeOutcome;
  if (outcome == Outcome::kNotLookedAt) return;  // an earlier error: never parsed
  if (outcome == Outcome::kParserMismatch) {
    if (audit_) audit_->probe_was_mismatch();
    const auto result = rewriter::make_denial(rewriter::rules::kParserMismatch, "");
    context_.stats.count(result);
    log_denial(result, probe.protocol);
    return;
  }
  context_.stats.count(rewriter::make_denial(rewriter::rules::kSyntax, ""));
  log(LogLevel::kInfo, "syntax error (PostgreSQL's own): user={} client={} protocol={} sqlstate={}",
      user_, peer_, probe.protocol, sqlstate);
}

void Session::log_denial(const rewriter::RewriteResult& result, const char* protocol) {
  if (result.verdict != rewriter::Verdict::kDenied) return;
  log(LogLevel::kWarning,
      "denied: user={} client={} protocol={} rule={} object={} sqlstate={} "
      "fingerprint={:016x}",
      user_, peer_, protocol, result.rule, result.object, result.sqlstate, result.fingerprint);
}

void Session::audit_frame(const wire::Frame& frame, bool replaced) {
  const auto audit_one = [&](const wire::Frame& f) {
    std::string sqlstate;
    if (f.type == wire::backend::kErrorResponse)
      if (const auto error = wire::decode_error_response(f.body); error.ok())
        sqlstate = error.value().field(wire::error_field::kSqlState);
    audit_->on_backend_frame(f.type, f.body, sqlstate);
  };
  if (!replaced) return audit_one(frame);
  // What the client gets: the frames the filter held, then the frame or
  // what replaced it.
  for (wire::Bytes rest(filter_->replacement());;) {
    const wire::Frame f = wire::frame_typed(rest, UINT32_MAX);
    if (f.status != wire::FrameStatus::kFrame) return;
    audit_one(f);
    rest = rest.subspan(f.size);
  }
}

awaitable<std::optional<StartupHandshake::Action>> Session::read_startup() {
  const auto& config = *runtime_->config;
  StartupHandshake handshake({.tls_available = runtime_->client_tls != nullptr,
                              .over_capacity = over_capacity_,
                              .max_message_size = config.limits.max_message_size,
                              .admin_database = config.admin.database,
                              .admin_users = config.admin.users});
  for (;;) {
    auto action = handshake.next(from_client_.pending());
    from_client_.consume(action.consumed);
    switch (action.step) {
      case StartupHandshake::Step::kNeedMore: {
        if (stopping_) co_return std::nullopt;
        const size_t n = co_await client_.read_some(from_client_.prepare());
        from_client_.commit(n);
        break;
      }
      case StartupHandshake::Step::kAnswer:
        co_await client_.write(asio::buffer(&action.answer, 1));
        if (action.start_tls) {
          try {
            co_await client_.accept_tls(*runtime_->client_tls);
          } catch (const boost::system::system_error& e) {
            log(LogLevel::kInfo, "client {}: TLS handshake failed: {}", peer_, e.code().message());
            co_return std::nullopt;
          }
          handshake.tls_established();
        }
        break;
      case StartupHandshake::Step::kCancel:
        co_await forward_cancel(action.cancel);
        co_return std::nullopt;
      case StartupHandshake::Step::kRefuse:
        log(LogLevel::kInfo, "client {}: start-up refused: {}", peer_, action.refusal.message);
        co_await send_fatal(action.refusal.sqlstate, action.refusal.message);
        co_return std::nullopt;
      case StartupHandshake::Step::kSession:
      case StartupHandshake::Step::kConsole:
        co_return std::move(action);
    }
  }
}

awaitable<void> Session::forward_cancel(const wire::CancelRequest& request) {
  if (context_.cancels.cancel_local(wire::BackendKeyData{request.process_id, request.secret_key})) {
    log(LogLevel::kInfo, "client {}: cancel request for an admin console command", peer_);
    co_return;
  }
  const auto backend_key =
      context_.cancels.find(wire::BackendKeyData{request.process_id, request.secret_key});
  if (!backend_key) {
    log(LogLevel::kDebug, "client {}: cancel request for an unknown key ignored", peer_);
    co_return;
  }
  try {
    const auto& b = runtime_->config->backend;
    boost::system::error_code ec;
    const auto endpoints = co_await backend_endpoints(b.host, b.port, ec);
    if (ec) throw boost::system::system_error(ec);
    tcp::socket socket(client_.socket().get_executor());
    co_await asio::async_connect(socket, endpoints, use_awaitable);
    wire::Buffer out;
    wire::encode(wire::CancelRequest{backend_key->process_id, backend_key->secret_key}, out);
    co_await asio::async_write(socket, asio::buffer(out), use_awaitable);
    log(LogLevel::kInfo, "client {}: forwarded a cancel request", peer_);
  } catch (const boost::system::system_error& e) {
    log(LogLevel::kWarning, "client {}: could not forward a cancel request: {}", peer_,
        e.code().message());
  }
}

awaitable<bool> Session::connect_backend() {
  const auto& config = *runtime_->config;
  const auto& b = config.backend;
  boost::system::error_code ec;
  const auto endpoints = co_await backend_endpoints(b.host, b.port, ec);
  if (!ec)
    co_await asio::async_connect(backend_.socket(), endpoints,
                                 asio::redirect_error(use_awaitable, ec));
  if (ec) {
    log(LogLevel::kWarning, "client {}: cannot connect to the backend {}:{}: {}", peer_, b.host,
        b.port, ec.message());
    co_await send_fatal(sqlstate::kConnectionFailure,
                        fmt::format("kanon cannot connect to the PostgreSQL server at "
                                    "{}:{}: {}",
                                    b.host, b.port, ec.message()));
    co_return false;
  }
  set_no_delay(backend_.socket());
  if (!runtime_->backend_tls) co_return true;
  const std::string failure = co_await negotiate_backend_tls();
  if (failure.empty()) co_return true;
  log(LogLevel::kWarning, "client {}: backend {}:{}: {}", peer_, b.host, b.port, failure);
  close_backend();
  co_await send_fatal(sqlstate::kConnectionFailure,
                      fmt::format("kanon cannot connect to the PostgreSQL server at "
                                  "{}:{}: {}",
                                  b.host, b.port, failure));
  co_return false;
}

awaitable<std::string> Session::negotiate_backend_tls() {
  const auto& config = *runtime_->config;
  BackendTlsNegotiator negotiator(config.backend_tls.mode);
  try {
    co_await backend_.write(asio::buffer(negotiator.request()));
    for (;;) {
      from_backend_.commit(co_await backend_.read_some(from_backend_.prepare()));
      switch (negotiator.on_bytes(from_backend_.pending())) {
        case BackendTlsNegotiator::Step::kNeedMore:
          continue;
        case BackendTlsNegotiator::Step::kStartTls: {
          from_backend_.consume(1);
          const std::string host = negotiator.verify_host() ? config.backend.host : std::string();
          co_await backend_.connect_tls(*runtime_->backend_tls, host, negotiator.verify_peer());
          co_return std::string();
        }
        case BackendTlsNegotiator::Step::kPlain:
          from_backend_.consume(1);
          co_return std::string();
        case BackendTlsNegotiator::Step::kFail:
          co_return negotiator.failure();
      }
    }
  } catch (const boost::system::system_error& e) {
    co_return fmt::format("TLS with the server failed: {}", e.code().message());
  }
}

awaitable<void> Session::run_console(const wire::StartupMessage& startup) {
  console_ = std::make_unique<ConsoleSession>(context_, client_, from_client_);
  bool ok = false;
  try {
    if (co_await connect_backend()) ok = co_await console_->authenticate(startup, backend_);
  } catch (const boost::system::system_error& e) {
    log(LogLevel::kInfo, "client {}: admin authentication ended: {}", peer_, e.code().message());
  }
  close_backend();
  if (!ok) co_return close_client();
  register_client(startup, "admin");
  log(LogLevel::kInfo, "client {}: admin console opened by '{}'", peer_, user_);
  try {
    co_await console_->serve(stopping_);
  } catch (const boost::system::system_error& e) {
    log(LogLevel::kDebug, "client {}: admin console ended: {}", peer_, e.code().message());
  }
  close_client();
}

awaitable<void> Session::relay_client_to_backend() {
  const uint32_t max = runtime_->config->limits.max_message_size;
  for (;;) {
    if (stopping_)
      co_return co_await finish(sqlstate::kAdminShutdown,
                                "terminating connection because kanon is "
                                "shutting down",
                                true);
    boost::system::error_code ec;
    const size_t n = co_await client_.read_some(from_client_.prepare(), ec);
    if (ec) {
      if (stopping_) continue;                  // the loop top finishes the session
      co_return co_await finish("", "", true);  // the client went away
    }
    from_client_.commit(n);
    co_await wait_while_paused(false);
    if (stopping_) continue;
    // The batch's frames, forwarded or replaced, go in one write; the
    // client's bytes are consumed after it.
    size_t pos = 0;
    bool terminate = false;
    to_backend_.clear();
    for (;;) {
      const wire::Frame frame = wire::frame_typed(from_client_.pending().subspan(pos), max);
      if (frame.status == wire::FrameStatus::kNeedMore) break;
      if (frame.status == wire::FrameStatus::kMalformed) {
        log(LogLevel::kWarning, "client {}: malformed message: {}", peer_, frame.error);
        co_return co_await finish(sqlstate::kProtocolViolation,
                                  fmt::format("invalid message from the client: {}", frame.error),
                                  true);
      }
      if (frame.type == wire::frontend::kTerminate) {
        to_backend_.forward(pos, frame.size);
        pos += frame.size;
        terminate = true;
        break;
      }
      quiet_ = false;  // before any co_await: a drain must not end the session now
      if (audit_) audit_->received();
      // A guarded cycle being sent again goes first (retry_guarded); it
      // looks names up too, so this frame's look-up is done after it.
      for (bool looked_up = false; !looked_up || retrying_;) {
        while (retrying_) {
          boost::system::error_code wait;
          co_await retry_done_.async_wait(asio::redirect_error(use_awaitable, wait));
        }
        looked_up = true;
        if (gate_ && !gate_->discarding() &&
            (frame.type == wire::frontend::kQuery || frame.type == wire::frontend::kParse)) {
          // Decided once for the frame: its look-up and the gate plan alike.
          access_.serial_masks = server_busy();
          co_await catch_up_catalog();
          if (defines_ > 0 && frame.type == wire::frontend::kQuery)
            co_await look_up_prepared_names();
          co_await look_up_unknown_names(frame);
        } else if (defines_ > 0 && gate_ && !gate_->discarding() &&
                   (frame.type == wire::frontend::kBind ||
                    frame.type == wire::frontend::kExecute)) {
          co_await look_up_prepared_names();
        }
      }
      forwarded_effect_.reset();
      const auto action = gate_ ? gate_->on_frame(frame) : StatementGate::Action::kForward;
      if (gate_) note_sent(frame, action);  // session_prepared.cc
      if (encoding_ && action != StatementGate::Action::kDrop)
        encoding_->on_client_frame(frame, forwarded_effect_, gate_->cycle());
      if (audit_) audit_->on_client_frame(frame, action);
      note_client_frame(frame.type, action == StatementGate::Action::kDrop);
      if (action == StatementGate::Action::kForward)
        to_backend_.forward(pos, frame.size);
      else if (action == StatementGate::Action::kReplace)
        to_backend_.add(gate_->replacement());
      pos += frame.size;
    }
    if (!to_backend_.empty()) {
      co_await backend_.write(to_backend_.buffers(from_client_.pending().data()), ec);
      // On failure the backend pump sees the loss too and reports it.
      if (ec) co_return;
    }
    from_client_.consume(pos);
    if (terminate) co_return co_await finish("", "", false);
  }
}

awaitable<void> Session::run_backend() {
  auto self = shared_from_this();
  const uint32_t max = runtime_->config->limits.max_message_size;
  try {
    for (;;) {
      const size_t n = co_await backend_.read_some(from_backend_.prepare());
      from_backend_.commit(n);
      // What this batch sends the client, in order, in one write: ranges of
      // the backend's bytes as they came, and kanon's replacements (copied
      // into to_client_). The backend's bytes are consumed after it.
      size_t pos = 0;
      to_client_.clear();
      std::optional<char> ready_status;  // a ReadyForQuery in this batch
      for (;;) {
        const wire::Frame frame = wire::frame_typed(from_backend_.pending().subspan(pos), max);
        if (frame.status == wire::FrameStatus::kNeedMore) break;
        const auto verdict = frame.status == wire::FrameStatus::kMalformed
                                 ? BackendStream::Verdict::kMalformed
                                 : backend_stream_.on_frame(frame);
        if (verdict == BackendStream::Verdict::kMalformed) {
          log(LogLevel::kError, "client {}: malformed message from the backend", peer_);
          throw boost::system::system_error(asio::error::invalid_argument);
        }
        const auto action = verdict == BackendStream::Verdict::kReplace || !filter_
                                ? ResponseFilter::Action::kForward
                                : filter_->on_frame(frame);
        const bool dropped =
            action == ResponseFilter::Action::kDrop || action == ResponseFilter::Action::kRetry;
        // The registry follows the backend, failed attempts included: the
        // cycle sent again is sent to it again (retry_guarded).
        if (gate_) registry_.on_backend(frame.type, backend_stream_.transaction_status());
        // The only ReadyForQuery the filter drops: a failed attempt's.
        if (dropped && frame.type == wire::backend::kReadyForQuery) backend_stream_.forget_ready();
        if (frame.type == wire::backend::kReadyForQuery && !dropped) {
          count_in_flight(-1);  // at once: the client may send its next one on receipt
          // Counted once the batch reached the client (below).
          if (ready_status) note_ready_for_query(*ready_status);
          ready_status = backend_stream_.transaction_status();
        }
        if (audit_ && frame.type == wire::backend::kBackendKeyData && backend_stream_.backend_key())
          audit_->set_backend_pid(static_cast<int32_t>(backend_stream_.backend_key()->process_id));
        if (verdict == BackendStream::Verdict::kReplace) {
          to_client_.add(backend_stream_.replacement());
        } else if (dropped) {  // held, swallowed, or the failed attempt of a guarded cycle
          if (action == ResponseFilter::Action::kRetry) co_await retry_guarded(filter_->retry());
        } else {
          if (audit_) audit_frame(frame, action == ResponseFilter::Action::kReplace);
          if (action == ResponseFilter::Action::kReplace)
            to_client_.add(filter_->replacement());
          else
            to_client_.forward(pos, frame.size);
        }
        pos += frame.size;
      }
      if (!to_client_.empty())
        co_await client_.write(to_client_.buffers(from_backend_.pending().data()));
      from_backend_.consume(pos);
      if (ready_status) note_ready_for_query(*ready_status);
    }
  } catch (const boost::system::system_error& e) {
    log(LogLevel::kDebug, "client {}: backend pump ended: {}", peer_, e.code().message());
  }
  backend_running_ = false;
  backend_done_.cancel();
  if (client_pump_owns_client_) co_return;
  // The backend went away on its own: tell the client unless the server did.
  if (!backend_stream_.ended_with_fatal()) {
    client_pump_owns_client_ = true;
    co_await send_fatal(sqlstate::kConnectionFailure,
                        "kanon lost the connection to the PostgreSQL server");
  }
  close_backend();
  close_client();
}

awaitable<void> Session::finish(std::string_view sqlstate, std::string_view message,
                                bool terminate_backend) {
  client_pump_owns_client_ = true;
  if (terminate_backend && backend_.is_open()) {
    static constexpr uint8_t kTerminate[] = {wire::frontend::kTerminate, 0, 0, 0, 4};
    boost::system::error_code ec;
    co_await backend_.write(asio::buffer(kTerminate), ec);
  }
  close_backend();
  if (backend_running_) {
    boost::system::error_code ec;
    co_await backend_done_.async_wait(asio::redirect_error(use_awaitable, ec));
  }
  if (!sqlstate.empty()) {
    co_await send_fatal(sqlstate, message);
    co_return co_await linger_close();
  }
  close_client();
}

awaitable<void> Session::linger_close() {
  // Closing a socket with unread bytes resets the connection, and a reset
  // can make the client lose the FATAL error it has not read yet (a client
  // that sent its next query just as its session was ended). So: end our
  // side, discard what the client still sends, and close at its EOF or
  // after half a second.
  auto& socket = client_.socket();
  boost::system::error_code ec;
  socket.shutdown(tcp::socket::shutdown_send, ec);
  asio::steady_timer limit(socket.get_executor(), std::chrono::milliseconds(500));
  limit.async_wait([weak = weak_from_this()](const boost::system::error_code& e) {
    if (auto self = weak.lock(); self && !e) self->close_client();
  });
  std::array<uint8_t, 4096> sink;
  while (!ec)
    co_await socket.async_read_some(asio::buffer(sink), asio::redirect_error(use_awaitable, ec));
  limit.cancel();
  close_client();
}

awaitable<void> Session::send_fatal(std::string_view sqlstate, std::string_view message) {
  wire::Buffer out;
  wire::encode_error(out, "FATAL", sqlstate, message);
  boost::system::error_code ec;
  co_await client_.write(asio::buffer(out), ec);
}

void Session::close_client() {
  client_.close();
}

void Session::close_backend() {
  backend_.close();
}

}  // namespace kanon::proxy
