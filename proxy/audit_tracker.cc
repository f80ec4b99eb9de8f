#include "proxy/audit_tracker.h"

#include <fmt/format.h>

#include "base/sqlstate.h"
#include "proxy/wire/message_types.h"

namespace kanon::proxy {

namespace {

// The NUL-terminated string at `*at` in `body`; moves *at past it. Empty
// when the body ends first (the gate has already refused malformed frames).
std::string_view cstring(wire::Bytes body, size_t* at) {
  const auto* begin = reinterpret_cast<const char*>(body.data()) + *at;
  size_t n = 0;
  while (*at + n < body.size() && begin[n] != '\0') ++n;
  *at += n + 1;
  return {begin, n};
}

AuditDecision decision_of(const rewriter::RewriteResult& r) {
  switch (r.verdict) {
    case rewriter::Verdict::kPass:
      return AuditDecision::kPassed;
    case rewriter::Verdict::kRewritten:  // only guarded (catalog_guard.h): nothing masked
      return r.masked ? AuditDecision::kRewritten : AuditDecision::kPassed;
    default:
      return AuditDecision::kDenied;
  }
}

}  // namespace

AuditTracker::~AuditTracker() {
  while (!owed_.empty()) {
    if (owed_.front().pending) finish(*owed_.front().pending, sqlstate::kConnectionFailure);
    owed_.pop_front();
  }
}

void AuditTracker::set_backend_pid(int32_t pid) {
  auto fresh = std::make_shared<AuditSession>(*session_);
  fresh->backend_pid = pid;
  session_ = std::move(fresh);
}

void AuditTracker::received() {
  received_at_ = std::chrono::system_clock::now();
  received_steady_ = std::chrono::steady_clock::now();
}

void AuditTracker::decided(const rewriter::RewriteResult& result, uint64_t snapshot_version,
                           std::optional<std::string> text) {
  Decided d;
  d.text = std::move(text);
  d.decision = decision_of(result);
  d.fingerprint = result.fingerprint;
  if (d.decision == AuditDecision::kDenied) {
    d.rule = result.rule;
    d.object = result.object;
  } else {
    d.tables = result.tables;
  }
  decision_ = std::move(d);
  decision_version_ = snapshot_version;
}

AuditTracker::Pending AuditTracker::start(const char* protocol, std::optional<std::string> text) {
  Pending p;
  p.started = received_steady_;
  auto& r = p.record;
  r.time = received_at_;
  r.session = session_;
  r.protocol = protocol;
  if (trail_.keep_text()) r.text = std::move(text);
  if (decision_) {
    r.decision = decision_->decision;
    r.fingerprint = decision_->fingerprint;
    r.snapshot_version = decision_version_;
    r.rule = decision_->rule;
    r.object = decision_->object;
    r.tables = decision_->tables;
  } else if (exempt_) {
    r.decision = AuditDecision::kExempt;
  }
  return p;
}

void AuditTracker::finish(Pending& p, std::string_view sqlstate) {
  auto& r = p.record;
  if (r.sqlstate.empty()) r.sqlstate = sqlstate;
  r.duration_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - p.started)
          .count();
  trail_.submit(std::move(r));
}

void AuditTracker::on_client_frame(const wire::Frame& frame, StatementGate::Action action) {
  if (action == StatementGate::Action::kDrop) return;  // never reaches the backend
  if (skipping_ && frame.type != wire::frontend::kSync) {
    // The backend skips it (an earlier message failed): no answer will come.
    on_message(frame);
    while (!owed_.empty()) {
      if (owed_.front().pending) finish(*owed_.front().pending, *skipping_);
      owed_.pop_front();
    }
    return;
  }
  if (frame.type == wire::frontend::kSync) skipping_.reset();
  on_message(frame);
}

void AuditTracker::on_message(const wire::Frame& frame) {
  const wire::Bytes body = frame.body;
  size_t at = 0;
  switch (frame.type) {
    case wire::frontend::kQuery: {
      owed_.push_back({Owes::kCycle, start("simple", statement_text(cstring(body, &at)))});
      break;
    }
    case wire::frontend::kFunctionCall: {
      const uint32_t oid = body.size() >= 4 ? (uint32_t{body[0]} << 24 | uint32_t{body[1]} << 16 |
                                               uint32_t{body[2]} << 8 | uint32_t{body[3]})
                                            : 0;
      owed_.push_back({Owes::kCycle, start("function-call", fmt::format("function {}", oid))});
      break;
    }
    case wire::frontend::kParse: {
      const std::string name(cstring(body, &at));
      const std::string_view sql = cstring(body, &at);
      if (decision_ && decision_->decision == AuditDecision::kDenied) {
        statements_.erase(name);
        owed_.push_back({Owes::kAnswer, start("extended", statement_text(sql))});
        break;
      }
      auto prepared = std::make_shared<Prepared>();
      if (exempt_) prepared->decision = AuditDecision::kExempt;
      if (decision_) {
        prepared->decision = decision_->decision;
        prepared->fingerprint = decision_->fingerprint;
        prepared->tables = decision_->tables;
      }
      prepared->snapshot_version = decision_version_;
      if (trail_.keep_text()) prepared->text = statement_text(sql);
      statements_[name] = std::move(prepared);
      owed_.push_back({Owes::kAnswer, std::nullopt});
      break;
    }
    case wire::frontend::kBind: {
      const std::string portal(cstring(body, &at));
      const std::string statement(cstring(body, &at));
      const auto it = statements_.find(statement);
      if (it != statements_.end())
        portals_[portal] = it->second;
      else
        portals_.erase(portal);  // e.g. prepared by SQL PREPARE, audited there
      owed_.push_back({Owes::kAnswer, std::nullopt});
      break;
    }
    case wire::frontend::kExecute: {
      const std::string portal(cstring(body, &at));
      const auto it = portals_.find(portal);
      decision_.reset();
      Pending p = start("extended", std::nullopt);
      if (it != portals_.end()) {
        const Prepared& s = *it->second;
        p.record.decision = s.decision;
        p.record.fingerprint = s.fingerprint;
        p.record.text = s.text;
        p.record.tables = s.tables;
        p.record.snapshot_version = s.snapshot_version;
      } else if (trail_.keep_text()) {
        p.record.text =
            fmt::format("(portal \"{}\" of a statement prepared by SQL PREPARE)", portal);
      }
      owed_.push_back({Owes::kAnswer, std::move(p)});
      break;
    }
    case wire::frontend::kClose: {
      const char what = body.empty() ? 0 : static_cast<char>(body[0]);
      at = 1;
      const std::string name(cstring(body, &at));
      (what == 'S' ? statements_ : portals_).erase(name);
      owed_.push_back({Owes::kAnswer, std::nullopt});
      break;
    }
    case wire::frontend::kDescribe:
      owed_.push_back({Owes::kAnswer, std::nullopt});
      break;
    case wire::frontend::kSync:
      owed_.push_back({Owes::kSync, std::nullopt});
      break;
    default:
      break;
  }
  if (frame.type == wire::frontend::kQuery || frame.type == wire::frontend::kParse ||
      frame.type == wire::frontend::kFunctionCall)
    decision_.reset();
}

std::string AuditTracker::statement_text(std::string_view sent) const {
  return decision_ && decision_->text ? *decision_->text : std::string(sent);
}

void AuditTracker::probe_was_mismatch() {
  if (owed_.empty() || !owed_.front().pending) return;
  auto& r = owed_.front().pending->record;
  r.rule = rewriter::rules::kParserMismatch.id;
}

void AuditTracker::on_error(std::string_view sqlstate) {
  if (owed_.empty()) return;
  Entry& front = owed_.front();
  if (front.owes == Owes::kCycle) {
    if (front.pending && front.pending->record.sqlstate.empty())
      front.pending->record.sqlstate = sqlstate;
    return;
  }
  if (front.owes == Owes::kSync) return;  // e.g. a COMMIT at Sync failed: no statement of its own
  // An extended message failed: PostgreSQL skips everything up to Sync,
  // even a Query or FunctionCall, and answers none of it.
  while (!owed_.empty() && owed_.front().owes != Owes::kSync) {
    if (owed_.front().pending) finish(*owed_.front().pending, sqlstate);
    owed_.pop_front();
  }
  if (owed_.empty()) skipping_ = std::string(sqlstate);  // the Sync is still to come
}

void AuditTracker::on_ready() {
  while (!owed_.empty()) {
    Entry e = std::move(owed_.front());
    owed_.pop_front();
    if (e.pending) finish(*e.pending);
    if (e.owes != Owes::kAnswer) break;
  }
}

void AuditTracker::on_backend_frame(char type, wire::Bytes body, std::string_view error_sqlstate) {
  switch (type) {
    case wire::backend::kErrorResponse:
      return on_error(error_sqlstate);
    case wire::backend::kReadyForQuery:
      return on_ready();
    case wire::backend::kDataRow:
      if (!owed_.empty() && owed_.front().pending) ++owed_.front().pending->data_rows;
      return;
    default:
      break;
  }
  if (owed_.empty()) return;
  Entry& front = owed_.front();
  if (front.owes == Owes::kCycle) {
    if (type != wire::backend::kCommandComplete || !front.pending) return;
    size_t at = 0;
    if (const auto rows = rows_of_tag(cstring(body, &at))) {
      auto& r = front.pending->record;
      r.rows = r.rows.value_or(0) + *rows;
    }
    return;
  }
  if (front.owes != Owes::kAnswer || !wire::is_extended_answer(type)) return;
  Entry e = std::move(front);
  owed_.pop_front();
  if (!e.pending) return;
  auto& r = e.pending->record;
  if (type == wire::backend::kCommandComplete) {
    size_t at = 0;
    r.rows = rows_of_tag(cstring(body, &at));
  } else if (type == wire::backend::kPortalSuspended) {
    r.rows = e.pending->data_rows;
  }
  finish(*e.pending);
}

}  // namespace kanon::proxy
