// Session: one client connection and its backend connection.
//
// Start-up is decided by StartupHandshake (startup_handshake.h) and TLS
// toward the backend by BackendTlsNegotiator (backend_tls_negotiator.h),
// both state machines without sockets; the session only moves their bytes
// and performs their actions (TLS handshakes, forwarding a CancelRequest,
// FATAL errors). Then it finds who the login is and either hands the
// client leg to a ConsoleSession (console_session.h, the admin database)
// or connects the backend and runs the pumps.
//
// Two coroutines run on the session's io_context thread: the client pump
// reads the client, does the start-up above and relays frames to the
// backend; the backend pump relays the backend's frames to the client
// through a BackendStream. Only the backend pump writes to the client while
// both run; the client pump writes to the client only before the backend
// pump starts or after it has finished.
//
// Restricted sessions (a login that some protected table's policy does not
// exempt) pass their Query and Parse messages through the rewriter and their
// FunctionCalls through an OID check (StatementGate); denials are raised by
// the backend itself and their errors replaced in order by the backend pump
// (ResponseFilter). Exempt sessions are relayed untouched.
#pragma once

// clang-format off
#include <utility>  // before awaitable.hpp: Boost 1.74 uses std::exchange without it
#include <boost/asio/awaitable.hpp>
// clang-format on
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <memory>
#include <optional>
#include <string_view>

#include "proxy/audit_tracker.h"
#include "proxy/backend_stream.h"
#include "proxy/byte_stream.h"
#include "proxy/console_session.h"
#include "proxy/encoding_guard.h"
#include "proxy/out_batch.h"
#include "proxy/prepared_registry.h"
#include "proxy/receive_buffer.h"
#include "proxy/server_context.h"
#include "proxy/startup_handshake.h"
#include "proxy/statement_gate.h"
#include "proxy/wire/startup_messages.h"

namespace kanon::proxy {

class Session : public std::enable_shared_from_this<Session> {
 public:
  using tcp = boost::asio::ip::tcp;

  // An over-capacity session still answers encryption and cancel requests,
  // then refuses the StartupMessage with 53300, as PostgreSQL does.
  // `io_index`: the I/O thread the session runs on (its shard of counts).
  Session(tcp::socket client, ServerContext& context, bool over_capacity, size_t io_index);
  ~Session();

  // Starts the session's coroutines. Call once.
  void start();
  // Asks the session to end cleanly (shutdown) now. Thread-safe.
  void stop();
  // Graceful drain: the session ends (FATAL 57P01) as soon as it is idle
  // between transactions — at once when it already is. Thread-safe.
  void drain();
  // Idle between transactions: the backend's last ReadyForQuery said 'I'
  // and the client has sent nothing since (console sessions and sessions
  // still in start-up count as idle). Thread-safe.
  bool quiet() const { return quiet_.load(); }

 private:
  boost::asio::awaitable<void> run_client();
  boost::asio::awaitable<void> run_backend();
  // Runs the StartupHandshake until it starts a session or a console;
  // nullopt when the connection is to end (the client told when needed).
  boost::asio::awaitable<std::optional<StartupHandshake::Action>> read_startup();
  boost::asio::awaitable<void> forward_cancel(const wire::CancelRequest& request);
  // TCP, then TLS as backend.sslmode says; false (client told) on failure.
  boost::asio::awaitable<bool> connect_backend();
  // The TLS part of connect_backend(); what went wrong, or empty.
  boost::asio::awaitable<std::string> negotiate_backend_tls();
  // Who the login is: exempt for which protected tables. Fails closed.
  // Who the login is to the policies of `database` (access_).
  boost::asio::awaitable<void> resolve_access(const std::string& user, const std::string& database);
  // The store of the session's database (null: none protects it), and its
  // current snapshot (empty without a store; sets access_.protected_database).
  std::shared_ptr<store::PolicyStore> store() const;
  std::shared_ptr<const store::PolicySnapshot> snapshot();
  rewriter::RewriteResult rewrite(std::string_view sql, const char* protocol);
  // What a statement decided now needs so that PostgreSQL runs it with
  // catalog caches at least as new as the catalog kanon decided it with
  // (`runs`: it is more than transaction control): 0, nothing, or that
  // catalog's generation: rewriter::kReadInvalidations goes first, and the
  // caches then reach it (RewriteResult::read_invalidations_first, for a
  // Query or Parse; StatementGate::Use's, for a Bind or Execute). With
  // nothing unanswered outside any transaction, notes the catalog instead
  // (the transaction it begins reads every invalidation up to it).
  int64_t read_before(bool runs);
  // read_before() for a Bind or Execute (session_prepared.cc).
  void read_before_use(StatementGate::Use& use, bool runs);
  // The rewriter's decision on `text` (UTF-8), respelled when it holds a
  // backslash; sets `version` to the snapshot version it used (0: a decision
  // look_up_unknown_names() prepared) and `at` to the snapshot the decision
  // was made under (a look-up's too; nullopt for a respelled text).
  rewriter::RewriteResult decide(std::string_view text, uint64_t& version,
                                 std::optional<DecidedAt>& at);
  // session_lookup.cc: before the gate decides a Query or Parse, names the
  // snapshot's catalog does not know are looked up in the database; the
  // catalog is re-read when one of them now exists.
  boost::asio::awaitable<void> look_up_unknown_names(const wire::Frame& frame);
  // Before a Query, Bind or Execute: once the session may have made
  // temporary objects, the names prepared statements and portals not
  // decided under the current snapshot use without a schema are looked up
  // (one catalog query per snapshot and defining statement), so deciding
  // them again keeps them usable when no temporary object shadows them.
  boost::asio::awaitable<void> look_up_prepared_names();
  // session_prepared.cc: prepared statements, cursors and portals
  // (prepared_registry.h). track_decided: after rewrite() allowed `text`
  // (UTF-8), an EXECUTE/FETCH/MOVE of a stale or unknown name turns
  // `result` into a denial; what the text prepares or removes is staged for
  // note_sent. use_prepared: the gate's UseFn (Bind, Execute, Close).
  // note_sent: what went to the backend for a client frame.
  // `fresh`: `result` was decided just now from `text` itself under the
  // current snapshot (not a look-up's decision, no respelling or
  // conversion), so a Parse's entry takes it as it is.
  void track_decided(std::string_view text, const char* protocol, rewriter::RewriteResult& result,
                     bool fresh);
  StatementGate::Use use_prepared(const wire::Frame& frame);
  void note_sent(const wire::Frame& frame, StatementGate::Action action);
  DecidedAt decided_now();
  // The decision on `entry`'s text now (with its search_path); `sent` is
  // the text that would be sent when it is allowed. `looked_up`: its names
  // were just looked up (else one it uses without a schema is stale once
  // the session may have made temporary objects).
  rewriter::RewriteResult decide_again(const PreparedEntry& entry, std::string& sent,
                                       bool looked_up = false);
  // An entry for `text` decided now (a PREPARE or DECLARE statement's when
  // `sql_level`, else the Parse's, with its parameter types); nullopt when
  // it is not allowed. `decided`: the decision rewrite() just made of the
  // same text with the same context under the current snapshot (a Parse's,
  // as decide_again would make it), used instead of deciding it again.
  std::optional<PreparedEntry> entry_now(std::string_view text, bool sql_level,
                                         const rewriter::RewriteResult* decided = nullptr);
  // A denial unless every candidate was decided now or decides the same now.
  std::optional<rewriter::RewriteResult> check_use(
      Space space, const std::string& name, const std::vector<const PreparedEntry*>& candidates);
  // The statements of `text` that name prepared statements or cursors:
  // checks uses (a denial), fills `changes` per statement; with
  // `runs_names`, only says whether there is any.
  std::optional<rewriter::RewriteResult> track_names(std::string_view text,
                                                     std::vector<std::vector<Change>>& changes,
                                                     bool* runs_names);
  // The fast-path FunctionCall of function `oid`: allowed for the
  // large-object functions, denied otherwise; counted and logged.
  rewriter::RewriteResult function_call(uint32_t oid);
  // What PostgreSQL answered to a syntax probe: counted and logged.
  void probe_answered(const Denial& probe, ResponseFilter::ProbeOutcome outcome,
                      std::string_view sqlstate);
  void log_denial(const rewriter::RewriteResult& result, const char* protocol);
  // audit.on_failure: deny — a passed or rewritten statement becomes an
  // audit-unavailable denial while the audit trail cannot take records.
  void refuse_unless_audited(rewriter::RewriteResult& result);
  // A backend frame (or the filter's replacement of it: the frames it held,
  // then the frame or what replaced it) for the audit tracker.
  void audit_frame(const wire::Frame& frame, bool replaced);
  boost::asio::awaitable<void> relay_client_to_backend();
  // A guard failed (rewriter/catalog_guard.h): the database is at
  // `generation` (0: unknown), newer than the catalog the statement was
  // decided with.
  void catalog_behind(int64_t generation);
  // Why the catalog is still behind `generation` when a guard failed for
  // good: the last failed read's error ("" when the catalog caught up).
  std::string catalog_behind_why(int64_t generation) const;
  // Before the next decision: re-reads the catalog when a guard found it
  // behind and the watcher has not caught up yet (outside transaction
  // blocks only).
  boost::asio::awaitable<void> catch_up_catalog();
  // Sends a guarded cycle again (GuardedQuery), decided with the re-read
  // catalog; the client pump waits meanwhile, so nothing overtakes it.
  boost::asio::awaitable<void> retry_guarded(GuardedQuery query);
  // session_prepared.cc: Close messages for the named statements a guarded
  // cycle's failed attempt created (their answers: `closes`), told to the
  // registry, so that the cycle's Parse messages can be sent again.
  wire::Buffer close_prepared_by(const GuardedQuery& query, uint64_t& closes);
  // Ends the session from the client pump: stops the backend pump, sends the
  // client a FATAL error (unless sqlstate is empty) and closes both sides.
  boost::asio::awaitable<void> finish(std::string_view sqlstate, std::string_view message,
                                      bool terminate_backend);
  boost::asio::awaitable<void> send_fatal(std::string_view sqlstate, std::string_view message);
  // Closes the client after a FATAL error without losing it to a reset.
  boost::asio::awaitable<void> linger_close();
  void close_client();
  void close_backend();
  // Drain and pause bookkeeping: a client frame about to be forwarded, and
  // a batch of backend frames delivered to the client.
  void note_client_frame(char type, bool dropped);
  void note_ready_for_query(char status);
  // The statements in flight: `change` is +1 for a Query, Sync or
  // FunctionCall sent, -1 for the backend's ReadyForQuery read (before the
  // client has it). Keeps ServerContext::running_statements.
  void count_in_flight(int change);
  // Whether the statements running through kanon, this one included, reach
  // serial_masks_at (rewriter::PlanContext::serial_masks).
  bool server_busy() const;
  void request_stop();
  // While PAUSE holds this session (see ServerContext::paused).
  boost::asio::awaitable<void> wait_while_paused(bool new_session);
  void register_client(const wire::StartupMessage& startup, const char* access);

  // The admin database: the rest of the connection is a ConsoleSession.
  boost::asio::awaitable<void> run_console(const wire::StartupMessage& startup);

  ServerContext& context_;
  std::shared_ptr<const Runtime> runtime_;
  ByteStream client_;
  ByteStream backend_;
  ReceiveBuffer from_client_;
  ReceiveBuffer from_backend_;
  // Each pump's batch toward its peer, written at once (out_batch.h).
  OutBatch to_client_;
  OutBatch to_backend_;
  BackendStream backend_stream_;
  boost::asio::steady_timer backend_done_;
  boost::asio::steady_timer retry_done_;  // cancelled when a retry was sent
  bool retrying_ = false;
  int64_t needed_generation_ = 0;  // a guard saw this generation; 0: none pending
  // The DDL notifications a catalog re-read was last tried for (failed or
  // not): not tried again for them by every statement.
  uint64_t catch_up_tried_ = 0;
  bool backend_running_ = false;
  bool client_pump_owns_client_ = false;  // backend pump must not touch the client
  bool stopping_ = false;
  bool draining_ = false;
  // Statements sent (Query, Sync, FunctionCall) whose ReadyForQuery has not
  // come back yet; extended-protocol messages sent after the last Sync.
  uint32_t pending_syncs_ = 0;
  bool unsynced_ = false;
  // As pending_syncs_, but counted down as soon as the backend pump reads
  // the ReadyForQuery; above 0, the session counts as running.
  uint32_t in_flight_ = 0;
  std::atomic<bool> quiet_{true};
  const bool over_capacity_;
  const size_t io_index_;
  std::string peer_;
  std::string user_;
  uint64_t client_id_ = 0;

  // Admin console sessions only; uses client_ and from_client_.
  std::unique_ptr<ConsoleSession> console_;

  // Enforcement (restricted sessions only).
  rewriter::PlanContext access_;
  // The snapshot of the transaction's first statement (snapshot()), the
  // store's snapshot last seen, and what statements are decided with.
  std::shared_ptr<const store::PolicySnapshot> pinned_, pinned_seen_, pinned_view_;
  // The rewrite look_up_unknown_names() made of `prepared_sql_`, for the gate.
  std::string prepared_sql_;
  // How many statements the session was allowed that may create, change or
  // drop an object (RewriteResult::defines). Once there is one, it may hold
  // temporary objects that shadow the names of persistent ones: the names
  // its statements use without a schema are looked up (session_lookup.cc),
  // and so are those of prepared statements and portals before they are
  // decided again under a newer snapshot (look_up_prepared_names); one
  // decided again without that look-up is stale (session_prepared.cc).
  uint64_t defines_ = 0;
  // BackendStream::ready_count() when the last defining statement was
  // decided: once a ReadyForQuery said 'I' after it, whatever it did has
  // committed or rolled back, and no DDL of the session's own holds the
  // catalog's generation lock (session_lookup.cc asks the generation before
  // a denial only then).
  uint64_t defined_at_ready_ = 0;
  // A catalog generation the backend's caches reach (read_before): the
  // one kanon had when it last decided a statement outside any transaction
  // with nothing unanswered (the transaction under way, if any, began after
  // it), or the one of the last kReadInvalidations that ran
  // (ResponseFilter::ReadFn).
  int64_t block_generation_ = 0;
  // kReadInvalidations sent in the extended cycle under way (ordinal as
  // StatementGate::cycle()): the cycle's later messages run after it, or
  // not at all (the backend skips to Sync after an error).
  struct CycleRead {
    uint64_t cycle = 0;
    int64_t generation = 0;
  } cycle_read_;
  // The last look_up_prepared_names(): under which snapshot and after how
  // many defining statements (never 0: it runs only after one) it found no
  // temporary object of `names` that runs code.
  struct TemporaryClear {
    DecidedAt at;
    uint64_t defines = 0;            // 0: never looked up
    std::vector<std::string> names;  // sorted
  } temporary_clear_;
  // Whether TemporaryClear covers `names` now.
  bool clear_of_temporary(const std::vector<std::string>& names);
  std::optional<rewriter::RewriteResult> prepared_;
  // The snapshot prepared_ was decided under.
  DecidedAt prepared_at_;
  DenialQueue denials_;
  GuardedQueue guarded_;
  std::optional<EncodingGuard> encoding_;
  // What the Query or Parse the gate is deciding may do to client_encoding,
  // when it goes to the backend (rewrite() sets it).
  std::optional<rewriter::EncodingEffect> forwarded_effect_;
  std::optional<StatementGate> gate_;
  std::optional<ResponseFilter> filter_;
  PreparedRegistry registry_;
  // Registry changes of the messages the gate is about to send, by type.
  std::deque<std::pair<char, std::vector<std::vector<Change>>>> staged_;
  std::optional<AuditTracker> audit_;  // restricted sessions, when audit: is configured
};

}  // namespace kanon::proxy
