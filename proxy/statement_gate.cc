#include "proxy/statement_gate.h"

#include "proxy/wire/error_fields.h"
#include "proxy/wire/frontend_messages.h"
#include "proxy/wire/message_types.h"

namespace kanon::proxy {

namespace {

rewriter::RewriteResult malformed(const char* what) {
  return rewriter::make_denial(rewriter::rules::kMalformedMessage, what);
}

}  // namespace

void StatementGate::deny(const rewriter::RewriteResult& result, bool swallow_empty_query) {
  Denial d;
  d.ready_ordinal = ready_expected_;
  d.swallow_empty_query = swallow_empty_query;
  wire::ErrorResponse error;
  error.fields = {{'S', "ERROR"}, {'V', "ERROR"}, {'C', result.sqlstate}, {'M', result.message}};
  if (result.position > 0) error.fields.emplace_back('P', std::to_string(result.position));
  wire::encode(error, d.error);
  denials_.push_back(std::move(d));
}

StatementGate::Action StatementGate::on_frame(const wire::Frame& frame) {
  switch (frame.type) {
    case wire::frontend::kQuery: {
      ++ready_expected_;
      discarding_ = false;
      auto q = wire::decode_query(frame.body);
      const auto result = q.ok() ? rewrite_(q.value().sql, "simple") : malformed("Query");
      if (result.verdict == rewriter::Verdict::kPass) return Action::kForward;
      replacement_.clear();
      if (result.verdict == rewriter::Verdict::kRewritten) {
        wire::encode(wire::Query{result.sql}, replacement_);
      } else {
        deny(result, true);
        wire::encode(wire::Query{""}, replacement_);
      }
      return Action::kReplace;
    }
    case wire::frontend::kFunctionCall:
      ++ready_expected_;
      deny(rewriter::make_denial(rewriter::rules::kFunctionCall, "FunctionCall"), true);
      replacement_.clear();
      wire::encode(wire::Query{""}, replacement_);
      return Action::kReplace;
    case wire::frontend::kSync:
      ++ready_expected_;
      discarding_ = false;
      return Action::kForward;
    case wire::frontend::kTerminate:
      return Action::kForward;
    default:
      break;
  }
  if (discarding_) return Action::kDrop;
  if (frame.type != wire::frontend::kParse) return Action::kForward;
  auto parse = wire::decode_parse(frame.body);
  const auto result = parse.ok() ? rewrite_(parse.value().query, "extended") : malformed("Parse");
  if (result.verdict == rewriter::Verdict::kPass) return Action::kForward;
  if (result.verdict == rewriter::Verdict::kDenied) {
    // The error is answered before the ReadyForQuery of the next Sync.
    deny(result, false);
    denials_.back().ready_ordinal = ready_expected_ + 1;
    discarding_ = true;
    return Action::kDrop;
  }
  wire::Parse rewritten = std::move(parse.value());
  rewritten.query = result.sql;
  replacement_.clear();
  wire::encode(rewritten, replacement_);
  return Action::kReplace;
}

ResponseFilter::Action ResponseFilter::on_frame(const wire::Frame& frame) {
  const bool due = !denials_.empty() && denials_.front().ready_ordinal == ready_seen_ + 1;
  switch (frame.type) {
    case wire::backend::kErrorResponse:
      error_in_cycle_ = true;
      return Action::kForward;
    case wire::backend::kEmptyQueryResponse:
      if (due && denials_.front().swallow_empty_query && !error_in_cycle_) return Action::kDrop;
      return Action::kForward;
    case wire::backend::kReadyForQuery: {
      ++ready_seen_;
      const bool had_error = error_in_cycle_;
      error_in_cycle_ = false;
      if (!due) return Action::kForward;
      Denial d = std::move(denials_.front());
      denials_.pop_front();
      if (had_error) return Action::kForward;
      insertion_ = std::move(d.error);
      return Action::kInsertBefore;
    }
    default:
      return Action::kForward;
  }
}

}  // namespace kanon::proxy
