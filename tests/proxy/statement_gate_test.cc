// StatementGate + ResponseFilter: what a restricted session forwards, and
// that denials reach the client in protocol order, for both protocols.
#include "proxy/statement_gate.h"

#include <doctest/doctest.h>

#include "proxy/backend_stream.h"
#include "proxy/wire/authentication.h"
#include "proxy/wire/backend_messages.h"
#include "proxy/wire/error_fields.h"
#include "proxy/wire/frontend_messages.h"

using namespace kanon;
using proxy::ResponseFilter;
using proxy::StatementGate;
using rewriter::RewriteResult;
using rewriter::Verdict;

namespace {

template <class M>
wire::Buffer bytes_of(const M& m) {
  wire::Buffer b;
  wire::encode(m, b);
  return b;
}

wire::Frame frame_of(const wire::Buffer& bytes) {
  const wire::Frame f = wire::frame_typed(wire::Bytes(bytes), 1 << 20);
  REQUIRE(f.status == wire::FrameStatus::kFrame);
  return f;
}

// A rewriter stand-in with fixed answers: texts containing "secret" are
// denied, "people" rewritten, everything else passed.
RewriteResult fake_rewrite(std::string_view sql, const char*) {
  RewriteResult r;
  if (sql.find("secret") != std::string_view::npos) {
    r.verdict = Verdict::kDenied;
    r.sqlstate = "42501";
    r.rule = "test-rule";
    r.message = "denied by test-rule";
  } else if (sql.find("people") != std::string_view::npos) {
    r.verdict = Verdict::kRewritten;
    r.sql = "SELECT masked FROM people";
  }
  return r;
}

std::string error_message(const wire::Buffer& bytes) {
  auto e = wire::decode_error_response(frame_of(bytes).body);
  REQUIRE(e.ok());
  return std::string(e.value().field('M'));
}

struct Harness {
  proxy::DenialQueue denials;
  StatementGate gate{fake_rewrite, denials};
  ResponseFilter filter{denials};

  StatementGate::Action client(const wire::Buffer& b) { return gate.on_frame(frame_of(b)); }
  ResponseFilter::Action backend(const wire::Buffer& b) { return filter.on_frame(frame_of(b)); }
  void startup_done() {
    CHECK(backend(bytes_of(wire::ReadyForQuery{'I'})) == ResponseFilter::Action::kForward);
  }
};

const auto kReady = bytes_of(wire::ReadyForQuery{'I'});

}  // namespace

TEST_CASE("simple Query: pass, rewrite, deny in order") {
  Harness h;
  h.startup_done();
  CHECK(h.client(bytes_of(wire::Query{"SELECT 1"})) == StatementGate::Action::kForward);
  REQUIRE(h.client(bytes_of(wire::Query{"SELECT * FROM people"})) ==
          StatementGate::Action::kReplace);
  auto q = wire::decode_query(frame_of(h.gate.replacement()).body);
  REQUIRE(q.ok());
  CHECK(q.value().sql == "SELECT masked FROM people");
  REQUIRE(h.client(bytes_of(wire::Query{"SELECT secret"})) == StatementGate::Action::kReplace);
  q = wire::decode_query(frame_of(h.gate.replacement()).body);
  CHECK(q.value().sql.empty());  // the backend answers an empty query
  CHECK(h.denials.size() == 1);

  // Backend: answers to query 1 and 2 pass untouched, the third's empty
  // answer is dropped and the error goes right before its ReadyForQuery.
  CHECK(h.backend(bytes_of(wire::CommandComplete{"SELECT 1"})) == ResponseFilter::Action::kForward);
  CHECK(h.backend(kReady) == ResponseFilter::Action::kForward);
  CHECK(h.backend(bytes_of(wire::EmptyQueryResponse{})) == ResponseFilter::Action::kForward);
  CHECK(h.backend(kReady) == ResponseFilter::Action::kForward);
  CHECK(h.backend(bytes_of(wire::EmptyQueryResponse{})) == ResponseFilter::Action::kDrop);
  REQUIRE(h.backend(kReady) == ResponseFilter::Action::kInsertBefore);
  CHECK(error_message(h.filter.insertion()) == "denied by test-rule");
  CHECK(h.denials.empty());
  // The session goes on.
  CHECK(h.client(bytes_of(wire::Query{"SELECT 2"})) == StatementGate::Action::kForward);
  CHECK(h.backend(kReady) == ResponseFilter::Action::kForward);
}

TEST_CASE("extended: a denied Parse discards until Sync; the error precedes that Sync's answer") {
  Harness h;
  h.startup_done();
  // An allowed statement first, in the same pipeline.
  CHECK(h.client(bytes_of(wire::Parse{"s1", "SELECT 1", {}})) == StatementGate::Action::kForward);
  CHECK(h.client(bytes_of(wire::Sync{})) == StatementGate::Action::kForward);
  CHECK(h.client(bytes_of(wire::Parse{"s2", "SELECT secret", {}})) == StatementGate::Action::kDrop);
  CHECK(h.gate.discarding());
  CHECK(h.client(bytes_of(wire::Bind{"", "s2", {}, {}, {}})) == StatementGate::Action::kDrop);
  CHECK(h.client(bytes_of(wire::Execute{"", 0})) == StatementGate::Action::kDrop);
  CHECK(h.client(bytes_of(wire::Sync{})) == StatementGate::Action::kForward);
  CHECK_FALSE(h.gate.discarding());
  // A rewritten Parse keeps its name and parameter types.
  REQUIRE(h.client(bytes_of(wire::Parse{"s3", "SELECT city FROM people WHERE k = $1", {23}})) ==
          StatementGate::Action::kReplace);
  auto p = wire::decode_parse(frame_of(h.gate.replacement()).body);
  REQUIRE(p.ok());
  CHECK(p.value().statement == "s3");
  CHECK(p.value().query == "SELECT masked FROM people");
  CHECK(p.value().param_types == std::vector<uint32_t>{23});

  CHECK(h.backend(bytes_of(wire::ParseComplete{})) == ResponseFilter::Action::kForward);
  CHECK(h.backend(kReady) == ResponseFilter::Action::kForward);         // first Sync
  REQUIRE(h.backend(kReady) == ResponseFilter::Action::kInsertBefore);  // second Sync
  CHECK(error_message(h.filter.insertion()) == "denied by test-rule");
}

TEST_CASE("a backend error earlier in the same cycle swallows the denial, as PostgreSQL would") {
  Harness h;
  h.startup_done();
  CHECK(h.client(bytes_of(wire::Parse{"", "SELEC 1", {}})) == StatementGate::Action::kForward);
  CHECK(h.client(bytes_of(wire::Parse{"", "SELECT secret", {}})) == StatementGate::Action::kDrop);
  CHECK(h.client(bytes_of(wire::Sync{})) == StatementGate::Action::kForward);
  wire::Buffer error;
  wire::encode_error(error, "ERROR", "42601", "syntax error");
  CHECK(h.backend(error) == ResponseFilter::Action::kForward);
  CHECK(h.backend(kReady) == ResponseFilter::Action::kForward);
  CHECK(h.denials.empty());
}

TEST_CASE("FunctionCall is denied; malformed Query bodies are denied, not forwarded") {
  Harness h;
  h.startup_done();
  REQUIRE(h.client(bytes_of(wire::FunctionCall{1234, {}, {}, 0})) ==
          StatementGate::Action::kReplace);
  CHECK(h.backend(bytes_of(wire::EmptyQueryResponse{})) == ResponseFilter::Action::kDrop);
  REQUIRE(h.backend(kReady) == ResponseFilter::Action::kInsertBefore);
  CHECK(error_message(h.filter.insertion()).find("function-call-message") != std::string::npos);

  const wire::Buffer bad = {'Q', 0, 0, 0, 7, 'a', 'b', 'c'};  // no terminating NUL
  REQUIRE(h.client(bad) == StatementGate::Action::kReplace);
  CHECK(h.backend(bytes_of(wire::EmptyQueryResponse{})) == ResponseFilter::Action::kDrop);
  CHECK(h.backend(kReady) == ResponseFilter::Action::kInsertBefore);
}

TEST_CASE("SCRAM's -PLUS mechanism is not offered to clients") {
  proxy::CancelRegistry registry;
  proxy::BackendStream stream(registry);
  const auto offer = bytes_of(wire::Authentication::sasl({"SCRAM-SHA-256-PLUS", "SCRAM-SHA-256"}));
  REQUIRE(stream.on_frame(frame_of(offer)) == proxy::BackendStream::Verdict::kReplace);
  auto sent = wire::decode_authentication(frame_of(stream.replacement()).body);
  REQUIRE(sent.ok());
  CHECK(sent.value().mechanisms == std::vector<std::string>{"SCRAM-SHA-256"});
  const auto plain = bytes_of(wire::Authentication::sasl({"SCRAM-SHA-256"}));
  CHECK(stream.on_frame(frame_of(plain)) == proxy::BackendStream::Verdict::kForward);
}
