#include "proxy/statement_gate.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <optional>

#include "base/sqlstate.h"
#include "catalog/catalog_watch.h"
#include "proxy/wire/error_fields.h"
#include "proxy/wire/frontend_messages.h"
#include "proxy/wire/message_types.h"

namespace kanon::proxy {

namespace {

// What comes between the marker and the client's text in a syntax probe.
constexpr std::string_view kProbeSeparator = ";\n";
// Where PostgreSQL refuses a Parse of several statements (the routine field
// of that error; not translated).
constexpr std::string_view kMultipleCommandsRoutine = "exec_parse_message";

rewriter::RewriteResult malformed(const char* what) {
  return rewriter::make_denial(rewriter::rules::kMalformedMessage, what);
}

bool is_syntax(const rewriter::RewriteResult& r) {
  return r.verdict == rewriter::Verdict::kDenied && r.rule == rewriter::rules::kSyntax.id;
}

// A notice of severity LOG or DEBUG: the server's own diagnostics, which
// PostgreSQL sends a client that lowers client_min_messages. Among them
// debug_print_plan's plan trees, whose row estimates come from the
// statistics of protected columns (the distinct states and cities of
// people, found by an adversarial probe), and trace_sort's counts. A
// restricted session may set either (SET, set_config, start-up options);
// kanon drops such notices instead of tracking every route.
bool server_diagnostic(const wire::Frame& frame) {
  const auto notice = wire::decode_notice_response(frame.body);
  if (!notice.ok()) return true;  // unreadable: not passed either
  std::string_view severity = notice.value().field(wire::error_field::kSeverityNonLocalized);
  if (severity.empty()) severity = notice.value().field(wire::error_field::kSeverity);
  return severity == "LOG" || severity.starts_with("DEBUG");
}

wire::Buffer encode_denial(const rewriter::RewriteResult& result) {
  wire::ErrorResponse error;
  error.fields = {{wire::error_field::kSeverity, "ERROR"},
                  {wire::error_field::kSeverityNonLocalized, "ERROR"},
                  {wire::error_field::kSqlState, result.sqlstate},
                  {wire::error_field::kMessage, result.message}};
  if (result.position > 0)
    error.fields.emplace_back(wire::error_field::kPosition, std::to_string(result.position));
  wire::Buffer out;
  wire::encode(error, out);
  return out;
}

void append_raw(const wire::Frame& frame, wire::Buffer& out) {
  const wire::Bytes bytes = wire::whole(frame);
  out.insert(out.end(), bytes.begin(), bytes.end());
}

// An extended cycle's messages kept for a retry, at most (a larger cycle,
// e.g. a Bind of large values, gets 40001 when its guard fails).
constexpr size_t kMaxRetryBytes = 256 * 1024;

std::optional<uint64_t> position_of(const wire::ErrorResponse& e) {
  const auto p = e.field(wire::error_field::kPosition);
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), v);
  if (p.empty() || ec != std::errc() || end != p.data() + p.size()) return std::nullopt;
  return v;
}

}  // namespace

std::string marker_statement(std::string_view token) {
  return fmt::format("SELECT '{}'::pg_catalog.int4", token);
}

std::string StatementGate::next_token() {
  return fmt::format("kanon denial {:016x}{:08x}", nonce_, ++sequence_);
}

std::string StatementGate::deny(const rewriter::RewriteResult& result, uint64_t ordinal,
                                const char* protocol) {
  Denial d;
  d.kind = Denial::Kind::kMarker;
  d.ready_ordinal = ordinal;
  d.token = next_token();
  d.error = encode_denial(result);
  d.protocol = protocol;
  std::string sql = marker_statement(d.token);
  denials_.push_back(std::move(d));
  return sql;
}

std::string StatementGate::probe(std::string_view sql, uint64_t ordinal, const char* protocol) {
  Denial d;
  d.kind = Denial::Kind::kSyntaxProbe;
  d.ready_ordinal = ordinal;
  d.token = next_token();
  std::string text = marker_statement(d.token);
  text += kProbeSeparator;
  d.prefix_chars = text.size();  // ASCII only: characters == bytes
  text += sql;
  d.answers_before = answers_in_cycle_;
  d.error = encode_denial(rewriter::make_denial(rewriter::rules::kParserMismatch, ""));
  d.protocol = protocol;
  denials_.push_back(std::move(d));
  return text;
}

StatementGate::Action StatementGate::decide_query(std::string_view sql, const wire::Frame& frame) {
  const auto result = rewrite_(sql, "simple");
  const bool rewritten = result.verdict == rewriter::Verdict::kRewritten;
  if (result.verdict == rewriter::Verdict::kPass && !result.read_invalidations_first)
    return Action::kForward;
  if (rewritten || result.verdict == rewriter::Verdict::kPass) {
    const std::string_view sent = rewritten ? std::string_view(result.sql) : sql;
    if (result.read_invalidations_first) {
      // kReadInvalidations in the same Query (Session::read_before), after
      // the transaction control it begins with (one CommandComplete each),
      // so that ROLLBACK TO SAVEPOINT leaves an aborted block before it:
      // its RowDescription and CommandComplete are swallowed, and an
      // error's position is moved back past it.
      const size_t at = std::min(result.leading_control_bytes, sent.size());
      Denial d;
      d.kind = Denial::Kind::kSwallow;
      d.ready_ordinal = ready_expected_;
      d.answers_before = at > 0 ? static_cast<uint64_t>(result.leading_control) : 0;
      d.swallow = 2;
      d.prefix_chars = rewriter::kReadInvalidations.size();
      d.prefix_at = at;
      d.reads_generation = result.read_invalidations_first;
      denials_.push_back(std::move(d));
      std::string text(sent.substr(0, at));
      text += rewriter::kReadInvalidations;
      text += sent.substr(at);
      wire::encode(wire::Query{std::move(text)}, replacement_);
      reads_invalidations_ = true;
    } else {
      wire::encode(wire::Query{std::string(sent)}, replacement_);
    }
    if (result.guard_generation > 0) {
      GuardedQuery q;
      q.ready_ordinal = ready_expected_;
      q.frames_seen = frames_seen_;
      append_raw(frame, q.frames);
      guarded_.push_back(std::move(q));
    }
    return Action::kReplace;
  }
  if (is_syntax(result)) {
    // A Query uses (and drops) the unnamed statement; so does its probe.
    wire::encode(wire::Parse{"", probe(sql, ready_expected_, "simple"), {}}, replacement_);
    wire::encode(wire::Sync{}, replacement_);
  } else {
    wire::encode(wire::Query{deny(result, ready_expected_, "simple")}, replacement_);
  }
  return Action::kReplace;
}

void StatementGate::record(const wire::Frame& frame) {
  if (!recording_) return;
  if (cycle_frames_.size() + frame.size > kMaxRetryBytes) {
    recording_ = false;
    cycle_frames_.clear();
    cycle_parses_.clear();
    return;
  }
  append_raw(frame, cycle_frames_);
}

void StatementGate::end_cycle_record(const wire::Frame& sync) {
  if (recording_ && !cycle_frames_.empty()) {
    GuardedQuery q;
    q.ready_ordinal = ready_expected_;
    q.frames_seen = frames_seen_;
    q.extended = true;
    q.frames = cycle_frames_;
    append_raw(sync, q.frames);
    q.named_parses = std::move(cycle_parses_);
    guarded_.push_back(std::move(q));
  }
  cycle_frames_.clear();
  cycle_parses_.clear();
  recording_ = true;
}

void StatementGate::begin_replay(const GuardedQuery& query, uint64_t prefix_answers) {
  replay_frames_seen_ = frames_seen_;
  replay_guarded_ = guarded_.size();
  std::erase_if(denials_, [&](const Denial& d) { return d.ready_ordinal == query.ready_ordinal; });
  // The cycle as it began: nothing was sent after it (ResponseFilter's
  // CanRetryFn), so the counters stand where its own messages left them.
  ready_expected_ = query.ready_ordinal - 1;
  cycle_ = query.ready_ordinal;
  answers_in_cycle_ = prefix_answers;
  discarding_ = false;
  cycle_frames_.clear();
  cycle_parses_.clear();
  recording_ = true;
  if (prefix_answers > 0) {
    Denial d;
    d.kind = Denial::Kind::kSwallow;
    d.ready_ordinal = query.ready_ordinal;
    d.swallow = prefix_answers;
    denials_.push_back(std::move(d));
  }
}

void StatementGate::end_replay() {
  frames_seen_ = replay_frames_seen_;
  // The cycle keeps its GuardedQuery (marked retried): no second one.
  guarded_.resize(replay_guarded_);
  cycle_frames_.clear();
  cycle_parses_.clear();
  recording_ = true;
}

StatementGate::Action StatementGate::on_frame(const wire::Frame& frame) {
  ++frames_seen_;
  switch (frame.type) {
    case wire::frontend::kSync:
      ++ready_expected_;
      cycle_ = ready_expected_;
      answers_in_cycle_ = 0;
      discarding_ = false;
      end_cycle_record(frame);
      return Action::kForward;
    case wire::frontend::kTerminate:
      return Action::kForward;
    case wire::frontend::kQuery:
    case wire::frontend::kFunctionCall:
      if (discarding_) {  // ignored up to Sync, like the cycle's other messages
        record(frame);
        break;
      }
      // A cycle of their own; extended messages before them are not sent
      // again (PostgreSQL ends their cycle without Sync).
      cycle_frames_.clear();
      cycle_parses_.clear();
      recording_ = true;
      break;
    default:
      record(frame);
      break;
  }
  // Extended-protocol messages belong to the cycle of the next Sync; a
  // Query or FunctionCall is a cycle of its own (below).
  cycle_ = ready_expected_ + 1;
  // After a failed Parse PostgreSQL ignores everything up to Sync, Query
  // and FunctionCall included (they get no answer at all).
  if (discarding_) return Action::kDrop;
  replacement_.clear();
  reads_invalidations_ = false;
  own_bytes_ = 0;
  switch (frame.type) {
    case wire::frontend::kQuery: {
      // A Query is one cycle of its own and ends an open extended one.
      ++ready_expected_;
      cycle_ = ready_expected_;
      answers_in_cycle_ = 0;
      auto q = wire::decode_query(frame.body);
      if (q.ok()) return decide_query(q.value().sql, frame);
      wire::encode(wire::Query{deny(malformed("Query"), ready_expected_, "simple")}, replacement_);
      return Action::kReplace;
    }
    case wire::frontend::kFunctionCall: {
      ++ready_expected_;
      cycle_ = ready_expected_;
      answers_in_cycle_ = 0;
      auto call = wire::decode_function_call(frame.body);
      const auto result =
          call.ok() ? function_call_(call.value().function_oid) : malformed("FunctionCall");
      if (result.verdict == rewriter::Verdict::kPass) return Action::kForward;
      wire::encode(wire::Query{deny(result, ready_expected_, "function-call")}, replacement_);
      return Action::kReplace;
    }
    case wire::frontend::kParse:
      break;
    case wire::frontend::kBind:
    case wire::frontend::kExecute:
    case wire::frontend::kClose:
      if (use_) return on_use(frame);
      ++answers_in_cycle_;
      return Action::kForward;
    default:
      if (wire::expects_answer(frame.type)) ++answers_in_cycle_;
      return Action::kForward;
  }
  auto parse = wire::decode_parse(frame.body);
  const auto result = parse.ok() ? rewrite_(parse.value().query, "extended") : malformed("Parse");
  if (result.verdict == rewriter::Verdict::kPass ||
      result.verdict == rewriter::Verdict::kRewritten) {
    if (result.read_invalidations_first) read_invalidations_first(result.read_invalidations_first);
    ++answers_in_cycle_;
    if (!parse.value().statement.empty())
      cycle_parses_.emplace_back(parse.value().statement, answers_in_cycle_);
  }
  if (result.verdict == rewriter::Verdict::kPass) {
    if (own_bytes_ == 0) return Action::kForward;
    append_raw(frame, replacement_);
    return Action::kReplace;
  }
  if (result.verdict == rewriter::Verdict::kRewritten) {
    wire::Parse rewritten = std::move(parse.value());
    rewritten.query = result.sql;
    wire::encode(rewritten, replacement_);
    return Action::kReplace;
  }
  // The error is answered in the cycle of the next Sync. The marker (or
  // probe) keeps the client's statement name: a failing Parse stores
  // nothing, and an unnamed one drops the previous unnamed statement just
  // as the client's own Parse would have.
  const uint64_t ordinal = ready_expected_ + 1;
  wire::Parse replaced;
  if (parse.ok()) replaced.statement = parse.value().statement;
  replaced.query = is_syntax(result) ? probe(parse.value().query, ordinal, "extended")
                                     : deny(result, ordinal, "extended");
  wire::encode(replaced, replacement_);
  discarding_ = true;
  return Action::kReplace;
}

void StatementGate::read_invalidations_first(int64_t generation) {
  // kReadInvalidations run under a statement and portal name of kanon's own
  // (unguessable: the session's nonce), closed again: the client's unnamed
  // statement and portal stay as they were. Their five answers are
  // swallowed.
  const std::string name = fmt::format("kanon invalidations {:016x}", nonce_);
  Denial d;
  d.kind = Denial::Kind::kSwallow;
  d.ready_ordinal = ready_expected_ + 1;
  d.answers_before = answers_in_cycle_;
  d.swallow = 5;  // ParseComplete, BindComplete, CommandComplete, two CloseComplete
  d.reads_generation = generation;
  denials_.push_back(std::move(d));
  answers_in_cycle_ += 5;
  wire::encode(wire::Parse{name, std::string(rewriter::kReadInvalidations), {}}, replacement_);
  wire::Bind bind;
  bind.portal = name;
  bind.statement = name;
  wire::encode(bind, replacement_);
  wire::encode(wire::Execute{name, 0}, replacement_);
  wire::encode(wire::Close{wire::kTargetPortal, name}, replacement_);
  wire::encode(wire::Close{wire::kTargetStatement, name}, replacement_);
  own_bytes_ = replacement_.size();
}

StatementGate::Action StatementGate::on_use(const wire::Frame& frame) {
  Use use = use_(frame);
  const uint64_t ordinal = ready_expected_ + 1;
  if (use.denial.verdict != rewriter::Verdict::kPass &&
      use.denial.verdict != rewriter::Verdict::kRewritten) {
    // A Parse of the marker under a name of kanon's own (it fails, so it
    // stores nothing and leaves the client's statements alone); the backend
    // then discards up to Sync, as after a denied Parse.
    const std::string sql = deny(use.denial, ordinal, "extended");
    wire::encode(wire::Parse{denials_.back().token, sql, {}}, replacement_);
    discarding_ = true;
    return Action::kReplace;
  }
  if (use.read_invalidations_first) read_invalidations_first(use.read_invalidations_first);
  if (use.prefix.empty() && own_bytes_ == 0) {
    ++answers_in_cycle_;
    return Action::kForward;
  }
  if (!use.prefix.empty()) {
    Denial d;
    d.kind = Denial::Kind::kSwallow;
    d.ready_ordinal = ordinal;
    d.answers_before = answers_in_cycle_;
    d.swallow = use.prefix_answers;
    denials_.push_back(std::move(d));
    answers_in_cycle_ += use.prefix_answers;
    replacement_.insert(replacement_.end(), use.prefix.begin(), use.prefix.end());
  }
  ++answers_in_cycle_;
  append_raw(frame, replacement_);
  return Action::kReplace;
}

ResponseFilter::Action ResponseFilter::on_error(const wire::Frame& frame) {
  auto decoded = wire::decode_error_response(frame.body);
  if (!decoded.ok()) return Action::kForward;  // BackendStream rejects it first
  auto& error = decoded.value();
  const auto sqlstate = error.field(wire::error_field::kSqlState);
  const auto message = error.field(wire::error_field::kMessage);
  const auto quotes = [&](const Denial& d) {
    return sqlstate == sqlstate::kInvalidTextRepresentation &&
           message.find(d.token) != std::string_view::npos;
  };
  // A marker's error, found by its token wherever its denial is queued: the
  // gate may count a cycle the backend never had (PostgreSQL ignores a Query
  // sent without Sync after a failed extended message), and then the cycle
  // would not match. Denials queued before it were never looked at.
  for (auto it = denials_.begin(); it != denials_.end(); ++it) {
    if (it->kind != Denial::Kind::kMarker || !quotes(*it)) continue;
    replacement_ = it->error;
    denials_.erase(denials_.begin(), it + 1);
    return Action::kReplace;
  }
  // A Query sent after kReadInvalidations: positions count from its start.
  for (const Denial& d : denials_) {
    if (d.kind != Denial::Kind::kSwallow || d.prefix_chars == 0 ||
        d.ready_ordinal != ready_seen_ + 1)
      continue;
    const auto position = position_of(error);
    if (!position || *position <= d.prefix_at + d.prefix_chars) return Action::kForward;
    for (auto& [code, value] : error.fields)
      if (code == wire::error_field::kPosition) value = std::to_string(*position - d.prefix_chars);
    replacement_.clear();
    wire::encode(error, replacement_);
    return Action::kReplace;
  }
  const auto next = std::find_if(denials_.begin(), denials_.end(),
                                 [](const Denial& d) { return d.kind != Denial::Kind::kSwallow; });
  if (next == denials_.end() || next->ready_ordinal != ready_seen_ + 1 ||
      next->kind != Denial::Kind::kSyntaxProbe)
    return Action::kForward;  // PostgreSQL never looked at a denied message here
  const Denial& due = *next;
  const bool is_marker = quotes(due);
  // A syntax probe.
  const auto report = [&](ProbeOutcome outcome) {
    if (on_probe_) on_probe_(due, outcome, sqlstate);
  };
  if (answers_in_cycle_ < due.answers_before) {
    report(ProbeOutcome::kNotLookedAt);  // a message pipelined before the probe failed
    return Action::kForward;
  }
  const auto position = position_of(error);
  const auto routine = error.field(wire::error_field::kRoutine);
  // The marker ran alone (PostgreSQL found no statement in the text), or
  // PostgreSQL read the text as a statement of its own and refused two.
  const bool read_by_server =
      is_marker || (sqlstate == sqlstate::kSyntaxError && !position &&
                    (routine.empty() || routine == kMultipleCommandsRoutine));
  if (read_by_server || (position && *position <= due.prefix_chars)) {
    report(ProbeOutcome::kParserMismatch);
    replacement_ = due.error;
    return Action::kReplace;
  }
  report(ProbeOutcome::kServerError);
  if (!position) return Action::kForward;
  // PostgreSQL's own error about the client's text, pointing into it.
  for (auto& [code, value] : error.fields)
    if (code == wire::error_field::kPosition) value = std::to_string(*position - due.prefix_chars);
  replacement_.clear();
  wire::encode(error, replacement_);
  return Action::kReplace;
}

ResponseFilter::Action ResponseFilter::release(const wire::Frame& frame, bool replaced) {
  answered_in_cycle_ = true;
  if (held_.empty()) return replaced ? Action::kReplace : Action::kForward;
  wire::Buffer out = std::move(held_);
  held_.clear();
  if (replaced)
    out.insert(out.end(), replacement_.begin(), replacement_.end());
  else
    append_raw(frame, out);
  replacement_ = std::move(out);
  return Action::kReplace;
}

ResponseFilter::Action ResponseFilter::on_guard_failure(const wire::Frame& frame,
                                                        std::string_view message) {
  // "... (generation N, decided under M)"
  int64_t now_at = 0;
  if (const size_t at = message.find("generation "); at != std::string_view::npos) {
    const char* begin = message.data() + at + 11;
    std::from_chars(begin, message.data() + message.size(), now_at);
  }
  if (on_stale_) on_stale_(now_at);
  const bool due = !guarded_.empty() && guarded_.front().ready_ordinal == ready_seen_ + 1;
  if (due && !answered_in_cycle_ && status_ == wire::kTxIdle && !guarded_.front().retried &&
      can_retry_ && can_retry_(guarded_.front())) {
    guarded_.front().retried = true;
    retry_ = guarded_.front();
    retry_.answers_before_error = answers_in_cycle_;
    held_.clear();
    swallow_ready_ = true;
    return Action::kRetry;
  }
  // The generations ("(generation N, decided under M)") say how far behind.
  std::string text =
      "the catalog changed between kanon's decision on this statement and its execution (a DDL "
      "statement ran meanwhile, committed or still open, or earlier in this transaction): run it "
      "again, after COMMIT if this transaction changed the catalog";
  if (const size_t at = message.find("(generation "); at != std::string_view::npos) {
    text.push_back(' ');
    text.append(message.substr(at));
  }
  if (const std::string why = why_stale_ ? why_stale_(now_at) : std::string(); !why.empty())
    text += "; " + why;
  wire::Buffer error;
  wire::encode_error(error, "ERROR", sqlstate::kSerializationFailure, text);
  replacement_ = std::move(error);
  return release(frame, true);
}

ResponseFilter::Action ResponseFilter::on_frame(const wire::Frame& frame) {
  const bool guarded_cycle =
      !guarded_.empty() && guarded_.front().ready_ordinal == ready_seen_ + 1 && !answered_in_cycle_;
  switch (frame.type) {
    case wire::backend::kErrorResponse: {
      // Only the first error of a cycle can be a denial's: the backend
      // discards everything after an error up to the cycle's end.
      const bool first = !error_in_cycle_;
      error_in_cycle_ = true;
      if (first) {
        auto decoded = wire::decode_error_response(frame.body);
        if (decoded.ok() &&
            decoded.value().field(wire::error_field::kSqlState) == catalog::kGuardSqlState)
          return on_guard_failure(frame, decoded.value().field(wire::error_field::kMessage));
      }
      if (denials_.empty() || !first) return release(frame, false);
      const Action a = on_error(frame);
      return release(frame, a == Action::kReplace);
    }
    case wire::backend::kReadyForQuery:
      if (!frame.body.empty()) status_ = static_cast<char>(frame.body[0]);
      answers_in_cycle_ = 0;
      error_in_cycle_ = false;
      if (swallow_ready_) {  // the failed attempt's: the retry's ends the cycle
        swallow_ready_ = false;
        answered_in_cycle_ = false;
        return Action::kDrop;
      }
      ++ready_seen_;
      answered_in_cycle_ = false;
      while (!denials_.empty() && denials_.front().ready_ordinal <= ready_seen_)
        denials_.pop_front();
      while (!guarded_.empty() && guarded_.front().ready_ordinal <= ready_seen_)
        guarded_.pop_front();
      if (!held_.empty()) {  // nothing but held frames in the cycle
        const Action a = release(frame, false);
        answered_in_cycle_ = false;
        return a;
      }
      return Action::kForward;
    case wire::backend::kRowDescription:
    case wire::backend::kNoticeResponse:
    case wire::backend::kParameterStatus:
    case wire::backend::kParseComplete:
    case wire::backend::kBindComplete:
    case wire::backend::kCloseComplete:
    case wire::backend::kNoData:
    case wire::backend::kParameterDescription: {
      if (frame.type == wire::backend::kNoticeResponse && server_diagnostic(frame))
        return Action::kDrop;
      // Sent before the plan runs: held in a guarded cycle until the guard
      // passed (the first row or completion), so a retry shows nothing twice.
      const bool counted = wire::is_extended_answer(frame.type);
      if (counted && swallowed()) return Action::kDrop;
      const bool held = guarded_cycle && (guarded_.front().extended ||
                                          frame.type == wire::backend::kRowDescription ||
                                          frame.type == wire::backend::kNoticeResponse ||
                                          frame.type == wire::backend::kParameterStatus);
      if (held) {
        append_raw(frame, held_);
        return Action::kDrop;
      }
      return release(frame, false);
    }
    default:
      if (wire::is_extended_answer(frame.type) && swallowed()) return Action::kDrop;
      return release(frame, false);
  }
}

bool ResponseFilter::swallowed() {
  ++answers_in_cycle_;
  for (const Denial& d : denials_)
    if (d.kind == Denial::Kind::kSwallow && d.ready_ordinal == ready_seen_ + 1 &&
        answers_in_cycle_ > d.answers_before && answers_in_cycle_ <= d.answers_before + d.swallow) {
      // The last answer of kReadInvalidations: it ran.
      if (d.reads_generation > 0 && answers_in_cycle_ == d.answers_before + d.swallow && on_read_)
        on_read_(d.reads_generation);
      return true;
    }
  return false;
}

}  // namespace kanon::proxy
