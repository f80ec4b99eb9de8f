// StatementGate and ResponseFilter: enforcement for one restricted session,
// without sockets.
//
// StatementGate sees every frame the client sends after start-up. Query and
// Parse texts go through the rewriter, FunctionCalls through a decision by
// OID: passed frames are forwarded, rewritten ones replaced by a re-encoded
// message, and everything else is answered with PostgreSQL's own error
// semantics because the backend raises the error itself:
//
//   - a denied Query or FunctionCall becomes the marker Query,
//     `SELECT 'kanon denial <token>'::pg_catalog.int4`, which fails at parse
//     analysis (22P02) without side effects, so the backend aborts the
//     transaction block (ReadyForQuery 'E', later statements 25P02, COMMIT
//     answers ROLLBACK) or the implicit transaction exactly as for its own
//     errors, and answers 25P02 instead when the block was already aborted;
//   - a denied Parse becomes a Parse of the marker under the client's
//     statement name (it fails, so nothing is stored; an unnamed one drops
//     the previous unnamed statement, as any Parse does), after which the
//     backend discards everything up to Sync; the gate drops the client's
//     messages up to that Sync too (PostgreSQL ignores even Query and
//     FunctionCall there), so nothing pipelined after it reaches the backend;
//   - text kanon's parser cannot read (rewriter rule `syntax`) becomes the
//     syntax probe, a Parse of "<marker>;\n<text>" (a Query's probe is sent
//     as Parse + Sync, under the unnamed statement as a Query would use it; a
//     Parse's keeps the client's name and is followed by the discard above).
//     PostgreSQL raw-parses the whole string before anything else: a syntax
//     error in the client's text comes back with all its fields and only its
//     position moved back by the prefix; text PostgreSQL can read makes two
//     statements, which a Parse refuses (42601 without position, raised in
//     exec_parse_message) before any parse analysis, and kanon denies it with
//     `parser-mismatch`. The probe never succeeds, so it can neither store a
//     statement nor execute anything.
//
// ResponseFilter, on the backend's side, recognises the backend's error for
// each of these by the ReadyForQuery cycle the gate recorded, the SQLSTATE
// and, for the marker, the per-denial token quoted in the message (which
// lc_messages translations keep) or, for a probe, the answers the messages
// pipelined before it are owed, and replaces it by kanon's ErrorResponse
// (the denial's SQLSTATE and message) or by the probe's adjusted error. Any
// other error in that cycle is forwarded unchanged: an earlier pipelined
// message failed, or the block was already aborted, so PostgreSQL would
// never have looked at the denied message either. It also drops notices of
// severity LOG and DEBUG (the server's diagnostics a lowered
// client_min_messages sends, debug_print_plan's row estimates among them).
//
// Both run on the session's thread; they share the queue, nothing else.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "proxy/wire/framing.h"
#include "rewriter/rewriter.h"

namespace kanon::proxy {

struct Denial {
  enum class Kind {
    kMarker,       // the marker ran instead of a denied message
    kSyntaxProbe,  // "<marker>;\n<text>" for text kanon cannot parse
    // Not a denial: answers to messages kanon sent before the client's own
    // (a prepared statement prepared again, StatementGate::UseFn), which the
    // client must not see: `swallow` answers from the `answers_before`th on.
    kSwallow,
  };
  Kind kind = Kind::kMarker;
  uint64_t ready_ordinal = 0;  // the ReadyForQuery that ends its cycle (1 = start-up's)
  std::string token;           // the marker's literal, unique per denial
  // kSyntaxProbe, and kSwallow of a Query sent with
  // rewriter::kReadInvalidations: characters kanon put into the client's
  // text, after its first `prefix_at` characters (the leading transaction
  // control, RewriteResult::leading_control_bytes).
  size_t prefix_chars = 0;
  size_t prefix_at = 0;
  // kSyntaxProbe: answers the backend owes, in the same cycle, to messages
  // forwarded before the probe; an error before that many belongs to them.
  uint64_t answers_before = 0;
  uint64_t swallow = 0;  // kSwallow
  // kSwallow of rewriter::kReadInvalidations: the catalog generation the
  // backend's caches reach once it ran (ResponseFilter::ReadFn).
  int64_t reads_generation = 0;
  wire::Buffer error;  // kanon's ErrorResponse: the denial, or parser-mismatch
  const char* protocol = "simple";
};

using DenialQueue = std::deque<Denial>;

// A cycle that may fail a catalog guard (rewriter/catalog_guard.h): a Query
// sent with one, or an extended-protocol cycle (its messages up to Sync).
// When the guard fails (KN001) before its cycle answered anything the client
// can see, in an implicit transaction, with nothing sent after it, the
// session re-reads the catalog and sends the client's messages once more,
// decided again (Session::retry_guarded); the client sees only the second
// answer. Otherwise the client gets 40001.
struct GuardedQuery {
  uint64_t ready_ordinal = 0;  // the ReadyForQuery that ends its cycle
  uint64_t frames_seen = 0;    // StatementGate::frames_seen() right after it
  wire::Buffer frames;         // the client's messages as they came
  bool extended = false;       // an extended-protocol cycle
  // Extended: the client's Parse messages of named statements, each with
  // the answer of the cycle (1 = first) that confirms it.
  std::vector<std::pair<std::string, uint64_t>> named_parses;
  uint64_t answers_before_error = 0;  // set when its guard failed
  bool retried = false;
};
using GuardedQueue = std::deque<GuardedQuery>;

// The marker statement for `token`; its execution fails at once with 22P02.
std::string marker_statement(std::string_view token);

class StatementGate {
 public:
  // Called for every Query/Parse text; `protocol` is "simple" or "extended".
  using RewriteFn =
      std::function<rewriter::RewriteResult(std::string_view sql, const char* protocol)>;
  // Called for every FunctionCall: kPass forwards it, anything else denies it.
  using FunctionCallFn = std::function<rewriter::RewriteResult(uint32_t function_oid)>;

  // Called for every Bind, Execute and Close (the session's prepared
  // statements and portals, proxy/prepared_registry.h): forward the message,
  // deny it (`denial`), or send `prefix` first, whose `prefix_answers`
  // answers the client does not see; and before all of it
  // rewriter::kReadInvalidations, as messages of kanon's own, when
  // `read_invalidations_first` (a generation, as in RewriteResult) is set.
  struct Use {
    rewriter::RewriteResult denial;  // kDenied: the message is denied
    wire::Buffer prefix;
    uint64_t prefix_answers = 0;
    int64_t read_invalidations_first = 0;
  };
  using UseFn = std::function<Use(const wire::Frame& frame)>;

  enum class Action { kForward, kReplace, kDrop };

  // `nonce` makes the session's marker tokens unguessable.
  StatementGate(RewriteFn rewrite, FunctionCallFn function_call, DenialQueue& denials,
                GuardedQueue& guarded, uint64_t nonce, UseFn use = {})
      : rewrite_(std::move(rewrite)),
        function_call_(std::move(function_call)),
        use_(std::move(use)),
        denials_(denials),
        guarded_(guarded),
        nonce_(nonce) {}

  // REQUIRES: frame.status == kFrame, a frontend message after start-up.
  // On kReplace the backend gets replacement() instead of the frame.
  Action on_frame(const wire::Frame& frame);
  const wire::Buffer& replacement() const { return replacement_; }
  // The Query in replacement() begins with rewriter::kReadInvalidations: one
  // statement more than the client sent (Session::note_sent tells the
  // prepared registry).
  bool replacement_reads_invalidations() const { return reads_invalidations_; }
  // The bytes at the start of replacement() that are messages of kanon's
  // own (kReadInvalidations before a Parse, Bind or Execute), none of the
  // client's.
  size_t replacement_own_bytes() const { return own_bytes_; }

  // A guarded cycle sent again (GuardedQuery): between these two calls,
  // on_frame() takes its frames again for the cycle it already has, after
  // `prefix_answers` answers of kanon's own that the client does not see.
  // Denials queued for the failed attempt are dropped; frames_seen() and the
  // guarded queue stay as they were.
  void begin_replay(const GuardedQuery& query, uint64_t prefix_answers);
  void end_replay();

  // Frames on_frame() has seen.
  uint64_t frames_seen() const { return frames_seen_; }

  bool discarding() const { return discarding_; }
  // The ReadyForQuery ordinal (1 = start-up's) that ends the cycle of the
  // frame on_frame() last saw; while a Query or Parse is being decided (the
  // rewrite callback), that statement's.
  uint64_t cycle() const { return cycle_; }
  // Whether the extended cycle under way has sent anything yet.
  bool cycle_started() const { return answers_in_cycle_ > 0 || discarding_; }

 private:
  // Puts rewriter::kReadInvalidations, as a Parse, Bind, Execute and two
  // Closes of its own, into replacement_ (before the client's message);
  // `generation` as in RewriteResult::read_invalidations_first.
  void read_invalidations_first(int64_t generation);
  // Queues the denial for the cycle ending with ReadyForQuery `ordinal`;
  // returns the marker statement to send.
  std::string deny(const rewriter::RewriteResult& result, uint64_t ordinal, const char* protocol);
  // Queues the probe; returns the probe's text.
  std::string probe(std::string_view sql, uint64_t ordinal, const char* protocol);
  std::string next_token();
  // use_'s answer for a Bind, Execute or Close (the default branch of on_frame).
  Action on_use(const wire::Frame& frame);
  // A Query's decision made into replacement_; kForward when it passes.
  // `frame`: the Query as it came.
  Action decide_query(std::string_view sql, const wire::Frame& frame);
  // The extended cycle being recorded: a frame of it, and its end (Sync).
  void record(const wire::Frame& frame);
  void end_cycle_record(const wire::Frame& sync);

  RewriteFn rewrite_;
  FunctionCallFn function_call_;
  UseFn use_;
  DenialQueue& denials_;
  GuardedQueue& guarded_;
  uint64_t frames_seen_ = 0;
  uint64_t nonce_;
  uint64_t sequence_ = 0;
  wire::Buffer replacement_;
  bool reads_invalidations_ = false;  // replacement_reads_invalidations()
  size_t own_bytes_ = 0;              // replacement_own_bytes()
  uint64_t ready_expected_ = 1;       // ReadyForQuery messages the backend owes so far
  uint64_t answers_in_cycle_ = 0;     // extended messages forwarded since the cycle began
  uint64_t cycle_ = 1;
  bool discarding_ = false;
  // The extended cycle so far, for a retry (GuardedQuery); `recording_`
  // false once it grew past kMaxRetryBytes.
  wire::Buffer cycle_frames_;
  std::vector<std::pair<std::string, uint64_t>> cycle_parses_;
  bool recording_ = true;
  // begin_replay(): what end_replay() restores.
  uint64_t replay_frames_seen_ = 0;
  size_t replay_guarded_ = 0;
};

class ResponseFilter {
 public:
  // kDrop: nothing reaches the client (held or swallowed); kRetry: the same,
  // and the session sends retry() again (GuardedQuery).
  enum class Action { kForward, kReplace, kDrop, kRetry };
  // What became of a syntax probe.
  enum class ProbeOutcome {
    kServerError,     // PostgreSQL's own error reached the client (a syntax error, mostly)
    kParserMismatch,  // PostgreSQL reads the text; kanon denied it (parser-mismatch)
    kNotLookedAt,     // an earlier error in the cycle: the text was never parsed
  };
  using ProbeFn =
      std::function<void(const Denial&, ProbeOutcome outcome, std::string_view sqlstate)>;

  // Whether nothing was sent after the guarded cycle (the session's gate).
  using CanRetryFn = std::function<bool(const GuardedQuery&)>;
  // A guard failed: the generation the database is at (0: not readable).
  using StaleFn = std::function<void(int64_t generation)>;
  // Why kanon's catalog is still behind `generation` when a guard failed
  // for good ("" when it is not, or nothing is known): the client's error
  // says it.
  using WhyStaleFn = std::function<std::string(int64_t generation)>;
  // rewriter::kReadInvalidations ran (all its answers came): the backend's
  // caches reach the catalog of Denial::reads_generation.
  using ReadFn = std::function<void(int64_t generation)>;

  ResponseFilter(DenialQueue& denials, GuardedQueue& guarded, ProbeFn on_probe = {},
                 CanRetryFn can_retry = {}, StaleFn on_stale = {}, WhyStaleFn why_stale = {})
      : denials_(denials),
        guarded_(guarded),
        on_probe_(std::move(on_probe)),
        can_retry_(std::move(can_retry)),
        on_stale_(std::move(on_stale)),
        why_stale_(std::move(why_stale)) {}
  explicit ResponseFilter(DenialQueue& denials, ProbeFn on_probe = {})
      : ResponseFilter(denials, own_guarded_, std::move(on_probe)) {}

  // REQUIRES: frame.status == kFrame, a backend message. On kReplace the
  // client gets replacement() instead of the frame.
  Action on_frame(const wire::Frame& frame);
  const wire::Buffer& replacement() const { return replacement_; }
  // After kRetry: the cycle to send again.
  const GuardedQuery& retry() const { return retry_; }
  void on_invalidations_read(ReadFn read) { on_read_ = std::move(read); }

 private:
  Action on_error(const wire::Frame& frame);
  // A guard's failure (KN001): retried, or 40001.
  Action on_guard_failure(const wire::Frame& frame, std::string_view message);
  // Frames held at the start of a guarded cycle, released before `frame`
  // (or before `replacement_` when `replaced`).
  Action release(const wire::Frame& frame, bool replaced);
  // Counts an extended answer: whether it answers a message of kanon's own
  // (Denial::kSwallow).
  bool swallowed();

  DenialQueue& denials_;
  GuardedQueue own_guarded_;  // the one-argument constructor's: never filled
  GuardedQueue& guarded_;
  ProbeFn on_probe_;
  CanRetryFn can_retry_;
  StaleFn on_stale_;
  WhyStaleFn why_stale_;
  ReadFn on_read_;
  GuardedQuery retry_;
  wire::Buffer held_;
  bool answered_in_cycle_ = false;  // something of this cycle reached the client
  bool swallow_ready_ = false;      // the failed attempt's ReadyForQuery
  char status_ = 'I';               // the last ReadyForQuery's transaction status
  wire::Buffer replacement_;
  uint64_t ready_seen_ = 0;
  uint64_t answers_in_cycle_ = 0;  // ParseComplete, BindComplete, CommandComplete, ...
  bool error_in_cycle_ = false;
};

}  // namespace kanon::proxy
