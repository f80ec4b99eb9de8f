// StatementGate + ResponseFilter: what a restricted session forwards, how
// denials, syntax probes and fast-path calls are sent to the backend so that
// it raises the error itself, and how the backend's answers are turned into
// kanon's errors in protocol order, for both protocols.
#include "proxy/statement_gate.h"

#include <doctest/doctest.h>

#include "proxy/backend_stream.h"
#include "proxy/wire/authentication.h"
#include "proxy/wire/backend_messages.h"
#include "proxy/wire/error_fields.h"
#include "proxy/wire/frontend_messages.h"

using namespace kanon;
using proxy::Denial;
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

wire::Frame frame_of(wire::Bytes bytes) {
  const wire::Frame f = wire::frame_typed(bytes, 1 << 20);
  REQUIRE(f.status == wire::FrameStatus::kFrame);
  return f;
}

// Every frame in `bytes`, in order.
std::vector<wire::Frame> frames_of(const wire::Buffer& bytes) {
  std::vector<wire::Frame> out;
  size_t off = 0;
  while (off < bytes.size()) {
    out.push_back(frame_of(wire::Bytes(bytes).subspan(off)));
    off += out.back().size;
  }
  return out;
}

constexpr std::string_view kRollbackTo = "ROLLBACK TO SAVEPOINT a; ";

// A rewriter stand-in with fixed answers: texts containing "secret" are
// denied, "SELEC " does not parse, "people" is rewritten, everything else
// passed.
RewriteResult fake_rewrite(std::string_view sql, const char*) {
  RewriteResult r;
  if (sql.find("secret") != std::string_view::npos) {
    r = rewriter::make_denial(rewriter::rules::kWriteProtected, "public.secret");
  } else if (sql.find("SELEC ") != std::string_view::npos) {
    r = rewriter::make_denial(rewriter::rules::kSyntax, "");
    r.message = "syntax error at or near \"SELEC\"";
  } else if (sql.find("people") != std::string_view::npos) {
    r.verdict = Verdict::kRewritten;
    r.sql = "SELECT masked FROM people";
    if (sql.find("guarded") != std::string_view::npos) r.guard_generation = 7;
  }
  // The session's mark for a transaction whose caches may be older than
  // the catalog of generation 7 (Session::read_before).
  if (sql.find("fresh") != std::string_view::npos) r.read_invalidations_first = 7;
  // Transaction control first: where the next statement begins.
  if (sql.starts_with(kRollbackTo)) {
    if (r.verdict == Verdict::kRewritten) r.sql = std::string(kRollbackTo) + r.sql;
    r.leading_control = 1;
    r.leading_control_bytes = kRollbackTo.size() - 1;
  }
  return r;
}

RewriteResult fast_path(uint32_t oid) {
  if (rewriter::allowed_fast_path_function(oid)) return {};
  return rewriter::make_denial(rewriter::rules::kFunctionCall, "function " + std::to_string(oid));
}

wire::ErrorResponse error_of(const wire::Buffer& bytes) {
  const auto f = frame_of(wire::Bytes(bytes));
  REQUIRE(f.type == wire::backend::kErrorResponse);
  auto e = wire::decode_error_response(f.body);
  REQUIRE(e.ok());
  return e.value();
}

// The token quoted by a marker statement.
std::string token_of(std::string_view marker) {
  const auto open = marker.find('\'');
  const auto close = marker.find('\'', open + 1);
  REQUIRE(open != std::string_view::npos);
  REQUIRE(close != std::string_view::npos);
  CHECK(marker.substr(close) == "'::pg_catalog.int4");
  return std::string(marker.substr(open + 1, close - open - 1));
}

// What PostgreSQL answers to the marker: 22P02 quoting the literal.
wire::Buffer marker_error(std::string_view token) {
  wire::ErrorResponse e;
  e.fields = {{'S', "ERROR"},
              {'V', "ERROR"},
              {'C', "22P02"},
              {'M', "invalid input syntax for type integer: \"" + std::string(token) + "\""},
              {'P', "8"},
              {'F', "numutils.c"},
              {'R', "pg_strtoint32"}};
  return bytes_of(e);
}

wire::Buffer backend_error(std::string_view sqlstate, std::string_view message,
                           std::vector<std::pair<char, std::string>> extra = {}) {
  wire::ErrorResponse e;
  e.fields = {{'S', "ERROR"}, {'V', "ERROR"}, {'C', std::string(sqlstate)}};
  e.fields.emplace_back('M', std::string(message));
  for (auto& f : extra) e.fields.push_back(std::move(f));
  return bytes_of(e);
}

struct Harness {
  proxy::DenialQueue denials;
  proxy::GuardedQueue guarded;
  StatementGate gate{fake_rewrite, fast_path, denials, guarded, 0x0123456789abcdefULL};
  std::vector<std::pair<ResponseFilter::ProbeOutcome, std::string>> probes;
  ResponseFilter filter{
      denials, [this](const Denial&, ResponseFilter::ProbeOutcome o, std::string_view sqlstate) {
        probes.emplace_back(o, std::string(sqlstate));
      }};
  std::vector<int64_t> reads;  // ResponseFilter::ReadFn's generations
  Harness() {
    filter.on_invalidations_read([this](int64_t generation) { reads.push_back(generation); });
  }

  StatementGate::Action client(const wire::Buffer& b) {
    return gate.on_frame(frame_of(wire::Bytes(b)));
  }
  ResponseFilter::Action backend(const wire::Buffer& b) {
    return filter.on_frame(frame_of(wire::Bytes(b)));
  }
  void startup_done() {
    CHECK(backend(bytes_of(wire::ReadyForQuery{'I'})) == ResponseFilter::Action::kForward);
  }
  // The marker Query the gate sent instead of the last frame.
  std::string marker_query() {
    const auto f = frame_of(wire::Bytes(gate.replacement()));
    REQUIRE(f.type == wire::frontend::kQuery);
    REQUIRE(f.size == gate.replacement().size());
    auto q = wire::decode_query(f.body);
    REQUIRE(q.ok());
    return q.value().sql;
  }
  wire::Parse replaced_parse() {
    const auto f = frame_of(wire::Bytes(gate.replacement()));
    REQUIRE(f.type == wire::frontend::kParse);
    REQUIRE(f.size == gate.replacement().size());
    auto p = wire::decode_parse(f.body);
    REQUIRE(p.ok());
    return p.value();
  }
};

const auto kReady = bytes_of(wire::ReadyForQuery{'I'});
const auto kReadyFailed = bytes_of(wire::ReadyForQuery{'E'});

}  // namespace

TEST_CASE("simple Query: pass, rewrite; a denial becomes the marker, whose error is replaced") {
  Harness h;
  h.startup_done();
  CHECK(h.client(bytes_of(wire::Query{"SELECT 1"})) == StatementGate::Action::kForward);
  REQUIRE(h.client(bytes_of(wire::Query{"SELECT * FROM people"})) ==
          StatementGate::Action::kReplace);
  auto q = wire::decode_query(frame_of(wire::Bytes(h.gate.replacement())).body);
  REQUIRE(q.ok());
  CHECK(q.value().sql == "SELECT masked FROM people");
  REQUIRE(h.client(bytes_of(wire::Query{"SELECT secret"})) == StatementGate::Action::kReplace);
  const std::string marker = h.marker_query();
  CHECK(marker.starts_with("SELECT 'kanon denial 0123456789abcdef"));
  const std::string token = token_of(marker);
  CHECK(marker.find("secret") == std::string::npos);  // the denied text never reaches the backend
  CHECK(h.denials.size() == 1);

  // Answers to statements 1 and 2 pass untouched; the marker's error is
  // replaced by kanon's denial, and the ReadyForQuery is the backend's.
  CHECK(h.backend(bytes_of(wire::CommandComplete{"SELECT 1"})) == ResponseFilter::Action::kForward);
  CHECK(h.backend(kReady) == ResponseFilter::Action::kForward);
  CHECK(h.backend(bytes_of(wire::CommandComplete{"SELECT 11"})) ==
        ResponseFilter::Action::kForward);
  CHECK(h.backend(kReady) == ResponseFilter::Action::kForward);
  REQUIRE(h.backend(marker_error(token)) == ResponseFilter::Action::kReplace);
  const auto e = error_of(h.filter.replacement());
  CHECK(e.field('S') == "ERROR");
  CHECK(e.field('C') == "42501");
  CHECK(e.field('M').find("(kanon rule write-protected-table)") != std::string_view::npos);
  CHECK(e.field('M').find("kanon denial") == std::string_view::npos);
  CHECK(h.backend(kReadyFailed) == ResponseFilter::Action::kForward);
  CHECK(h.denials.empty());
  // The session goes on; a 22P02 of the user's own is not touched.
  CHECK(h.client(bytes_of(wire::Query{"SELECT 'x'::int"})) == StatementGate::Action::kForward);
  CHECK(h.backend(marker_error(token)) == ResponseFilter::Action::kForward);
  CHECK(h.backend(kReady) == ResponseFilter::Action::kForward);
}

TEST_CASE("a Query to send after kReadInvalidations: its answers swallowed, positions moved") {
  Harness h;
  h.startup_done();
  const std::string prefix(rewriter::kReadInvalidations);
  REQUIRE(h.client(bytes_of(wire::Query{"SELECT fresh"})) == StatementGate::Action::kReplace);
  CHECK(h.marker_query() == prefix + "SELECT fresh");
  // Rewritten: the rewritten text follows it.
  REQUIRE(h.client(bytes_of(wire::Query{"SELECT fresh FROM people"})) ==
          StatementGate::Action::kReplace);
  CHECK(h.marker_query() == prefix + "SELECT masked FROM people");
  // Denied: the marker alone.
  REQUIRE(h.client(bytes_of(wire::Query{"SELECT fresh secret"})) ==
          StatementGate::Action::kReplace);
  const std::string marker = h.marker_query();
  CHECK(marker.starts_with("SELECT 'kanon denial"));

  // Cycle 1: the first statement's RowDescription and CommandComplete are
  // dropped, the client's own answers pass.
  wire::RowDescription rd;
  rd.fields.push_back({"?column?", 0, 0, 23, 4, -1, 0});
  CHECK(h.backend(bytes_of(rd)) == ResponseFilter::Action::kDrop);
  CHECK(h.reads.empty());
  CHECK(h.backend(bytes_of(wire::CommandComplete{"SELECT 0"})) == ResponseFilter::Action::kDrop);
  CHECK(h.reads == std::vector<int64_t>{7});  // it ran
  CHECK(h.backend(bytes_of(rd)) == ResponseFilter::Action::kForward);
  wire::DataRow row;
  row.columns.push_back(std::vector<uint8_t>{'1'});
  CHECK(h.backend(bytes_of(row)) == ResponseFilter::Action::kForward);
  CHECK(h.backend(bytes_of(wire::CommandComplete{"SELECT 1"})) == ResponseFilter::Action::kForward);
  CHECK(h.backend(bytes_of(wire::ReadyForQuery{'T'})) == ResponseFilter::Action::kForward);
  // Cycle 2: an error in the client's text points into it.
  CHECK(h.backend(bytes_of(rd)) == ResponseFilter::Action::kDrop);
  CHECK(h.backend(bytes_of(wire::CommandComplete{"SELECT 0"})) == ResponseFilter::Action::kDrop);
  REQUIRE(h.backend(backend_error("42703", "column \"fresh\" does not exist",
                                  {{'P', std::to_string(prefix.size() + 8)}})) ==
          ResponseFilter::Action::kReplace);
  const auto e = error_of(h.filter.replacement());
  CHECK(e.field('C') == "42703");
  CHECK(e.field('P') == "8");
  CHECK(h.backend(bytes_of(wire::ReadyForQuery{'E'})) == ResponseFilter::Action::kForward);
  // Cycle 3: the marker's error is the denial's, as always.
  REQUIRE(h.backend(marker_error(token_of(marker))) == ResponseFilter::Action::kReplace);
  CHECK(error_of(h.filter.replacement()).field('C') == "42501");
  CHECK(h.backend(kReadyFailed) == ResponseFilter::Action::kForward);
  CHECK(h.denials.empty());

  // An error of the first statement itself (no position, or one inside it)
  // reaches the client unchanged.
  for (const auto& error : {backend_error("57014", "canceling statement due to statement timeout"),
                            backend_error("42601", "syntax error", {{'P', "20"}})}) {
    REQUIRE(h.client(bytes_of(wire::Query{"SELECT fresh"})) == StatementGate::Action::kReplace);
    CHECK(h.backend(error) == ResponseFilter::Action::kForward);
    CHECK(h.backend(kReadyFailed) == ResponseFilter::Action::kForward);
  }
  CHECK(h.denials.empty());
  CHECK(h.reads == std::vector<int64_t>{7, 7});  // not when it failed
}

TEST_CASE("a Query that begins with transaction control gets kReadInvalidations after it") {
  // So that ROLLBACK TO SAVEPOINT leaves an aborted block before it runs.
  Harness h;
  h.startup_done();
  const std::string read(rewriter::kReadInvalidations);
  const std::string control(kRollbackTo.substr(0, kRollbackTo.size() - 1));
  REQUIRE(h.client(bytes_of(wire::Query{std::string(kRollbackTo) + "SELECT fresh"})) ==
          StatementGate::Action::kReplace);
  CHECK(h.marker_query() == control + read + " SELECT fresh");
  REQUIRE(h.client(bytes_of(wire::Query{std::string(kRollbackTo) + "SELECT fresh FROM people"})) ==
          StatementGate::Action::kReplace);
  CHECK(h.marker_query() == control + read + " SELECT masked FROM people");

  // Cycle 1: ROLLBACK's CommandComplete reaches the client, kanon's two
  // answers after it do not, the client's own pass.
  CHECK(h.backend(bytes_of(wire::CommandComplete{"ROLLBACK"})) == ResponseFilter::Action::kForward);
  wire::RowDescription rd;
  rd.fields.push_back({"?column?", 0, 0, 23, 4, -1, 0});
  CHECK(h.backend(bytes_of(rd)) == ResponseFilter::Action::kDrop);
  CHECK(h.reads.empty());
  CHECK(h.backend(bytes_of(wire::CommandComplete{"SELECT 0"})) == ResponseFilter::Action::kDrop);
  CHECK(h.reads == std::vector<int64_t>{7});
  CHECK(h.backend(bytes_of(rd)) == ResponseFilter::Action::kForward);
  CHECK(h.backend(bytes_of(wire::CommandComplete{"SELECT 1"})) == ResponseFilter::Action::kForward);
  CHECK(h.backend(bytes_of(wire::ReadyForQuery{'T'})) == ResponseFilter::Action::kForward);
  // Cycle 2: an error in the client's statement points into the client's
  // text; one in the leading control is the client's as it is.
  CHECK(h.backend(bytes_of(wire::CommandComplete{"ROLLBACK"})) == ResponseFilter::Action::kForward);
  CHECK(h.backend(bytes_of(rd)) == ResponseFilter::Action::kDrop);
  CHECK(h.backend(bytes_of(wire::CommandComplete{"SELECT 0"})) == ResponseFilter::Action::kDrop);
  const size_t client_at = kRollbackTo.size() + std::string("SELECT m").size();
  REQUIRE(h.backend(backend_error("42703", "column \"masked\" does not exist",
                                  {{'P', std::to_string(client_at + read.size())}})) ==
          ResponseFilter::Action::kReplace);
  CHECK(error_of(h.filter.replacement()).field('P') == std::to_string(client_at));
  CHECK(h.backend(bytes_of(wire::ReadyForQuery{'E'})) == ResponseFilter::Action::kForward);
  CHECK(h.reads == std::vector<int64_t>{7, 7});
  // A failed ROLLBACK TO: its error unchanged, nothing read.
  REQUIRE(h.client(bytes_of(wire::Query{std::string(kRollbackTo) + "SELECT fresh"})) ==
          StatementGate::Action::kReplace);
  CHECK(h.backend(backend_error("3B001", "savepoint \"a\" does not exist")) ==
        ResponseFilter::Action::kForward);
  CHECK(h.backend(kReadyFailed) == ResponseFilter::Action::kForward);
  CHECK(h.reads == std::vector<int64_t>{7, 7});
  CHECK(h.denials.empty());
}

TEST_CASE(
    "a guarded Query sent after kReadInvalidations can be sent again, as the client sent it") {
  Harness h;
  h.startup_done();
  const auto query = bytes_of(wire::Query{"SELECT fresh FROM people guarded"});
  REQUIRE(h.client(query) == StatementGate::Action::kReplace);
  CHECK(h.marker_query() ==
        std::string(rewriter::kReadInvalidations) + "SELECT masked FROM people");
  REQUIRE(h.guarded.size() == 1);
  CHECK(h.guarded.front().frames == query);  // decided again when sent again
  CHECK(h.guarded.front().ready_ordinal == 2);
  // Not guarded: nothing to send again.
  REQUIRE(h.client(bytes_of(wire::Query{"SELECT fresh"})) == StatementGate::Action::kReplace);
  CHECK(h.guarded.size() == 1);
}

TEST_CASE("a Parse to send after kReadInvalidations: kanon's messages first, answers swallowed") {
  Harness h;
  h.startup_done();
  REQUIRE(h.client(bytes_of(wire::Parse{"", "SELECT fresh", {}})) ==
          StatementGate::Action::kReplace);
  const auto parse_at = [](const std::vector<wire::Frame>& frames, size_t i) {
    auto p = wire::decode_parse(frames.at(i).body);
    REQUIRE(p.ok());
    return p.value();
  };
  const auto frames = frames_of(h.gate.replacement());
  REQUIRE(frames.size() == 6);
  const wire::Parse own = parse_at(frames, 0);
  CHECK(own.statement == "kanon invalidations 0123456789abcdef");
  CHECK(own.query == std::string(rewriter::kReadInvalidations));
  CHECK(frames[1].type == wire::frontend::kBind);
  CHECK(frames[2].type == wire::frontend::kExecute);
  CHECK(frames[3].type == wire::frontend::kClose);
  CHECK(frames[4].type == wire::frontend::kClose);
  const wire::Parse client = parse_at(frames, 5);
  CHECK(client.statement.empty());
  CHECK(client.query == "SELECT fresh");
  CHECK(h.gate.replacement_own_bytes() ==
        frames[0].size + frames[1].size + frames[2].size + frames[3].size + frames[4].size);
  CHECK(h.client(bytes_of(wire::Bind{})) == StatementGate::Action::kForward);
  CHECK(h.client(bytes_of(wire::Execute{"", 0})) == StatementGate::Action::kForward);
  CHECK(h.client(bytes_of(wire::Sync{})) == StatementGate::Action::kForward);
  // Rewritten: the rewritten Parse follows kanon's messages.
  REQUIRE(h.client(bytes_of(wire::Parse{"named", "SELECT fresh FROM people", {}})) ==
          StatementGate::Action::kReplace);
  const auto second = frames_of(h.gate.replacement());
  REQUIRE(second.size() == 6);
  const wire::Parse rewritten = parse_at(second, 5);
  CHECK(rewritten.statement == "named");
  CHECK(rewritten.query == "SELECT masked FROM people");
  CHECK(h.client(bytes_of(wire::Sync{})) == StatementGate::Action::kForward);

  // Cycle 1: kanon's five answers dropped, the client's forwarded.
  for (const auto& answer : {bytes_of(wire::ParseComplete{}), bytes_of(wire::BindComplete{}),
                             bytes_of(wire::CommandComplete{"SELECT 0"}),
                             bytes_of(wire::CloseComplete{}), bytes_of(wire::CloseComplete{})})
    CHECK(h.backend(answer) == ResponseFilter::Action::kDrop);
  CHECK(h.backend(bytes_of(wire::ParseComplete{})) == ResponseFilter::Action::kForward);
  CHECK(h.backend(bytes_of(wire::BindComplete{})) == ResponseFilter::Action::kForward);
  CHECK(h.backend(bytes_of(wire::CommandComplete{"SELECT 1"})) == ResponseFilter::Action::kForward);
  CHECK(h.backend(bytes_of(wire::ReadyForQuery{'T'})) == ResponseFilter::Action::kForward);
  CHECK(h.reads == std::vector<int64_t>{7});
  // Cycle 2: an error of kanon's statement reaches the client as it is.
  CHECK(h.backend(backend_error("57014", "canceling statement due to statement timeout")) ==
        ResponseFilter::Action::kForward);
  CHECK(h.backend(kReadyFailed) == ResponseFilter::Action::kForward);
  CHECK(h.denials.empty());
  CHECK(h.reads == std::vector<int64_t>{7});
}

TEST_CASE("UseFn: kReadInvalidations before a Bind or Execute, and before a prefix") {
  proxy::DenialQueue denials;
  const auto use = [&](const wire::Frame& f) {
    StatementGate::Use u;
    if (f.type == wire::frontend::kExecute) {
      u.read_invalidations_first = 8;
      return u;
    }
    auto b = wire::decode_bind(f.body);
    REQUIRE(b.ok());
    u.read_invalidations_first = 9;
    if (b.value().statement == "renew") {
      wire::encode(wire::Close{wire::kTargetStatement, "renew"}, u.prefix);
      wire::encode(wire::Parse{"renew", "SELECT masked FROM people", {}}, u.prefix);
      u.prefix_answers = 2;
    }
    return u;
  };
  proxy::GuardedQueue guarded;
  StatementGate gate{fake_rewrite, fast_path, denials, guarded, 0xfeedULL, use};
  ResponseFilter filter{denials, guarded};
  std::vector<int64_t> reads;
  filter.on_invalidations_read([&](int64_t generation) { reads.push_back(generation); });
  const auto client = [&](const wire::Buffer& b) {
    return gate.on_frame(frame_of(wire::Bytes(b)));
  };
  const auto backend = [&](const wire::Buffer& b) {
    return filter.on_frame(frame_of(wire::Bytes(b)));
  };
  const auto kanons_answers = [&] {
    for (const auto& answer : {bytes_of(wire::ParseComplete{}), bytes_of(wire::BindComplete{}),
                               bytes_of(wire::CommandComplete{"SELECT 0"}),
                               bytes_of(wire::CloseComplete{}), bytes_of(wire::CloseComplete{})})
      CHECK(backend(answer) == ResponseFilter::Action::kDrop);
  };
  CHECK(backend(kReady) == ResponseFilter::Action::kForward);
  // kanon's five messages, then the client's Bind as it came.
  const auto bind = bytes_of(wire::Bind{"", "kept", {}, {}, {}});
  REQUIRE(client(bind) == StatementGate::Action::kReplace);
  auto sent = frames_of(gate.replacement());
  REQUIRE(sent.size() == 6);
  auto own = wire::decode_parse(sent[0].body);
  REQUIRE(own.ok());
  CHECK(own.value().statement == "kanon invalidations 000000000000feed");
  CHECK(own.value().query == std::string(rewriter::kReadInvalidations));
  CHECK(gate.replacement_own_bytes() == gate.replacement().size() - bind.size());
  CHECK(wire::Buffer(gate.replacement().end() - bind.size(), gate.replacement().end()) == bind);
  CHECK(client(bytes_of(wire::Sync{})) == StatementGate::Action::kForward);
  // Prepared again too: kanon's five, then Close + Parse, then the Bind.
  REQUIRE(client(bytes_of(wire::Bind{"", "renew", {}, {}, {}})) == StatementGate::Action::kReplace);
  sent = frames_of(gate.replacement());
  REQUIRE(sent.size() == 8);
  CHECK(sent[5].type == wire::frontend::kClose);
  CHECK(sent[6].type == wire::frontend::kParse);
  CHECK(sent[7].type == wire::frontend::kBind);
  CHECK(gate.replacement_own_bytes() ==
        gate.replacement().size() - sent[5].size - sent[6].size - sent[7].size);
  // An Execute (of a portal bound in an earlier cycle).
  REQUIRE(client(bytes_of(wire::Execute{"p", 0})) == StatementGate::Action::kReplace);
  CHECK(frames_of(gate.replacement()).size() == 6);
  CHECK(client(bytes_of(wire::Sync{})) == StatementGate::Action::kForward);

  // The client's answers are held until the cycle completes (a guard may
  // fail and the cycle be sent again); kanon's are never among them.
  const auto released = [&] {
    std::vector<char> types;
    for (const auto& f : frames_of(filter.replacement())) types.push_back(f.type);
    return types;
  };
  // Cycle 1: kanon's answers dropped, the read reported after the last.
  kanons_answers();
  CHECK(reads == std::vector<int64_t>{9});
  CHECK(backend(bytes_of(wire::BindComplete{})) == ResponseFilter::Action::kDrop);
  REQUIRE(backend(bytes_of(wire::ReadyForQuery{'T'})) == ResponseFilter::Action::kReplace);
  CHECK(released() ==
        std::vector<char>{wire::backend::kBindComplete, wire::backend::kReadyForQuery});
  // Cycle 2: kanon's five, the prefix's two, then the client's answers.
  kanons_answers();
  CHECK(backend(bytes_of(wire::CloseComplete{})) == ResponseFilter::Action::kDrop);
  CHECK(backend(bytes_of(wire::ParseComplete{})) == ResponseFilter::Action::kDrop);
  CHECK(backend(bytes_of(wire::BindComplete{})) == ResponseFilter::Action::kDrop);
  // Then the Execute's read fails (say, statement_timeout): forwarded, not
  // reported.
  REQUIRE(backend(backend_error("57014", "canceling statement due to statement timeout")) ==
          ResponseFilter::Action::kReplace);
  CHECK(released() ==
        std::vector<char>{wire::backend::kBindComplete, wire::backend::kErrorResponse});
  CHECK(backend(kReadyFailed) == ResponseFilter::Action::kForward);
  CHECK(reads == std::vector<int64_t>{9, 9});
  CHECK(denials.empty());
}

TEST_CASE("every denial has its own token") {
  Harness h;
  h.startup_done();
  REQUIRE(h.client(bytes_of(wire::Query{"SELECT secret"})) == StatementGate::Action::kReplace);
  const std::string first = token_of(h.marker_query());
  REQUIRE(h.client(bytes_of(wire::Query{"SELECT secret"})) == StatementGate::Action::kReplace);
  const std::string second = token_of(h.marker_query());
  CHECK(first != second);
  // The second cycle's error quoting the first token is not the second marker's.
  CHECK(h.backend(marker_error(first)) == ResponseFilter::Action::kReplace);
  CHECK(h.backend(kReadyFailed) == ResponseFilter::Action::kForward);
  CHECK(h.backend(marker_error(first)) == ResponseFilter::Action::kForward);
  CHECK(h.backend(kReadyFailed) == ResponseFilter::Action::kForward);
}

TEST_CASE("an aborted block answers 25P02 to the marker: forwarded unchanged") {
  Harness h;
  h.startup_done();
  REQUIRE(h.client(bytes_of(wire::Query{"SELECT secret"})) == StatementGate::Action::kReplace);
  const auto aborted =
      backend_error("25P02",
                    "current transaction is aborted, commands ignored until end of transaction "
                    "block",
                    {{'R', "exec_simple_query"}});
  CHECK(h.backend(aborted) == ResponseFilter::Action::kForward);
  CHECK(h.backend(kReadyFailed) == ResponseFilter::Action::kForward);
  CHECK(h.denials.empty());
}

TEST_CASE("extended: a denied Parse becomes the marker's Parse; the rest is discarded until Sync") {
  Harness h;
  h.startup_done();
  // An allowed statement first, in its own cycle.
  CHECK(h.client(bytes_of(wire::Parse{"s1", "SELECT 1", {}})) == StatementGate::Action::kForward);
  CHECK(h.client(bytes_of(wire::Sync{})) == StatementGate::Action::kForward);
  REQUIRE(h.client(bytes_of(wire::Parse{"s2", "SELECT secret", {25}})) ==
          StatementGate::Action::kReplace);
  const auto marker = h.replaced_parse();
  CHECK(marker.statement == "s2");  // fails, so stores nothing, like the client's own would
  CHECK(marker.param_types.empty());
  const std::string token = token_of(marker.query);
  CHECK(h.gate.discarding());
  // PostgreSQL ignores everything up to Sync, Query and FunctionCall too.
  CHECK(h.client(bytes_of(wire::Bind{"", "s2", {}, {}, {}})) == StatementGate::Action::kDrop);
  CHECK(h.client(bytes_of(wire::Execute{"", 0})) == StatementGate::Action::kDrop);
  CHECK(h.client(bytes_of(wire::Query{"SELECT 1"})) == StatementGate::Action::kDrop);
  CHECK(h.client(bytes_of(wire::FunctionCall{952, {}, {}, 0})) == StatementGate::Action::kDrop);
  CHECK(h.client(bytes_of(wire::Flush{})) == StatementGate::Action::kDrop);
  CHECK(h.client(bytes_of(wire::Sync{})) == StatementGate::Action::kForward);
  CHECK_FALSE(h.gate.discarding());
  // A rewritten Parse keeps its name and parameter types.
  REQUIRE(h.client(bytes_of(wire::Parse{"s3", "SELECT city FROM people WHERE k = $1", {23}})) ==
          StatementGate::Action::kReplace);
  auto p = h.replaced_parse();
  CHECK(p.statement == "s3");
  CHECK(p.query == "SELECT masked FROM people");
  CHECK(p.param_types == std::vector<uint32_t>{23});

  CHECK(h.backend(bytes_of(wire::ParseComplete{})) == ResponseFilter::Action::kForward);
  CHECK(h.backend(kReady) == ResponseFilter::Action::kForward);  // first Sync
  // The marker's error arrives at once (no waiting for Sync) and is replaced.
  REQUIRE(h.backend(marker_error(token)) == ResponseFilter::Action::kReplace);
  CHECK(error_of(h.filter.replacement()).field('C') == "42501");
  CHECK(h.backend(kReady) == ResponseFilter::Action::kForward);  // second Sync
  CHECK(h.denials.empty());
}

TEST_CASE("an earlier pipelined error, even a 22P02, is forwarded and the denial dropped") {
  Harness h;
  h.startup_done();
  CHECK(h.client(bytes_of(wire::Parse{"", "SELECT 'x'::int", {}})) ==
        StatementGate::Action::kForward);
  REQUIRE(h.client(bytes_of(wire::Parse{"", "SELECT secret", {}})) ==
          StatementGate::Action::kReplace);
  CHECK(h.client(bytes_of(wire::Sync{})) == StatementGate::Action::kForward);
  const auto own = backend_error("22P02", "invalid input syntax for type integer: \"x\"",
                                 {{'P', "8"}, {'R', "pg_strtoint32"}});
  CHECK(h.backend(own) == ResponseFilter::Action::kForward);
  CHECK(h.backend(kReady) == ResponseFilter::Action::kForward);
  CHECK(h.denials.empty());
}

TEST_CASE("a Query PostgreSQL ignores (no Sync after a failed message) shifts no denial") {
  Harness h;
  h.startup_done();
  CHECK(h.client(bytes_of(wire::Parse{"", "SELECT nope", {}})) == StatementGate::Action::kForward);
  REQUIRE(h.client(bytes_of(wire::Query{"SELECT secret"})) == StatementGate::Action::kReplace);
  CHECK(h.client(bytes_of(wire::Sync{})) == StatementGate::Action::kForward);
  // The Parse fails; the backend ignores the marker Query (no answer at all)
  // and answers the Sync: one ReadyForQuery where the gate counted two.
  CHECK(h.backend(backend_error("42703", "column \"nope\" does not exist", {{'P', "8"}})) ==
        ResponseFilter::Action::kForward);
  CHECK(h.backend(kReady) == ResponseFilter::Action::kForward);
  // A later denial is still recognised by its token and replaced.
  REQUIRE(h.client(bytes_of(wire::Query{"SELECT secret"})) == StatementGate::Action::kReplace);
  REQUIRE(h.backend(marker_error(token_of(h.marker_query()))) == ResponseFilter::Action::kReplace);
  CHECK(error_of(h.filter.replacement()).field('C') == "42501");
  CHECK(h.backend(kReady) == ResponseFilter::Action::kForward);
  CHECK(h.denials.empty());
}

TEST_CASE("simple Query kanon cannot parse: the probe is Parse + Sync, the server's error kept") {
  Harness h;
  h.startup_done();
  const std::string text = "SELEC 1";
  REQUIRE(h.client(bytes_of(wire::Query{text})) == StatementGate::Action::kReplace);
  const auto frames = frames_of(h.gate.replacement());
  REQUIRE(frames.size() == 2);
  CHECK(frames[1].type == wire::frontend::kSync);
  auto probe = wire::decode_parse(frames[0].body);
  REQUIRE(probe.ok());
  CHECK(probe.value().statement.empty());
  const std::string& sql = probe.value().query;
  REQUIRE(sql.ends_with(";\n" + text));
  const std::string marker = sql.substr(0, sql.size() - text.size() - 2);
  token_of(marker);
  const size_t prefix = sql.size() - text.size();

  // PostgreSQL's syntax error: every field kept, the position moved back.
  const auto syntax = backend_error("42601", "syntax error at or near \"SELEC\"",
                                    {{'P', std::to_string(prefix + 1)},
                                     {'F', "scan.l"},
                                     {'L', "1188"},
                                     {'R', "scanner_yyerror"}});
  REQUIRE(h.backend(syntax) == ResponseFilter::Action::kReplace);
  auto e = error_of(h.filter.replacement());
  CHECK(e.field('P') == "1");
  CHECK(e.field('M') == "syntax error at or near \"SELEC\"");
  CHECK(e.field('C') == "42601");
  CHECK(e.field('R') == "scanner_yyerror");
  CHECK(e.field('L') == "1188");
  CHECK(e.fields.size() == 8);  // S V C M P F L R, in order
  CHECK(h.backend(kReady) == ResponseFilter::Action::kForward);
  REQUIRE(h.probes.size() == 1);
  CHECK(h.probes[0].first == ResponseFilter::ProbeOutcome::kServerError);
  CHECK(h.probes[0].second == "42601");
  CHECK(h.denials.empty());
  // One ReadyForQuery for the Query, as the client expects: the next Query
  // is in the next cycle.
  REQUIRE(h.client(bytes_of(wire::Query{"SELECT secret"})) == StatementGate::Action::kReplace);
  CHECK(h.backend(marker_error(token_of(h.marker_query()))) == ResponseFilter::Action::kReplace);
}

TEST_CASE("a syntax probe PostgreSQL can read is denied with parser-mismatch") {
  Harness h;
  h.startup_done();
  REQUIRE(h.client(bytes_of(wire::Query{"SELEC 1"})) == StatementGate::Action::kReplace);
  const auto two =
      backend_error("42601", "cannot insert multiple commands into a prepared statement",
                    {{'F', "postgres.c"}, {'R', "exec_parse_message"}});
  REQUIRE(h.backend(two) == ResponseFilter::Action::kReplace);
  auto e = error_of(h.filter.replacement());
  CHECK(e.field('C') == "42501");
  CHECK(e.field('M') == "kanon's parser cannot read this statement (kanon rule parser-mismatch)");
  CHECK(h.backend(kReady) == ResponseFilter::Action::kForward);
  REQUIRE(h.probes.size() == 1);
  CHECK(h.probes[0].first == ResponseFilter::ProbeOutcome::kParserMismatch);

  // A raw-parse error without a position from elsewhere is PostgreSQL's own.
  REQUIRE(h.client(bytes_of(wire::Query{"SELEC 2"})) == StatementGate::Action::kReplace);
  const auto other = backend_error("42601", "some grammar error", {{'R', "base_yyparse"}});
  CHECK(h.backend(other) == ResponseFilter::Action::kForward);
  CHECK(h.backend(kReady) == ResponseFilter::Action::kForward);
  CHECK(h.probes.back().first == ResponseFilter::ProbeOutcome::kServerError);

  // Nothing in the text for PostgreSQL: the marker ran alone.
  REQUIRE(h.client(bytes_of(wire::Query{"SELEC 3"})) == StatementGate::Action::kReplace);
  auto probe = wire::decode_parse(frames_of(h.gate.replacement())[0].body);
  REQUIRE(probe.ok());
  const std::string& sql = probe.value().query;
  const std::string token = token_of(sql.substr(0, sql.find(";\n")));
  CHECK(h.backend(marker_error(token)) == ResponseFilter::Action::kReplace);
  CHECK(error_of(h.filter.replacement()).field('C') == "42501");
  CHECK(h.probes.back().first == ResponseFilter::ProbeOutcome::kParserMismatch);
}

TEST_CASE("extended Parse kanon cannot parse: probed under its name, then discarded until Sync") {
  Harness h;
  h.startup_done();
  // Two messages before it in the same cycle are owed two answers.
  CHECK(h.client(bytes_of(wire::Parse{"a", "SELECT 1", {}})) == StatementGate::Action::kForward);
  CHECK(h.client(bytes_of(wire::Bind{"", "a", {}, {}, {}})) == StatementGate::Action::kForward);
  REQUIRE(h.client(bytes_of(wire::Parse{"b", "SELEC 1", {}})) == StatementGate::Action::kReplace);
  const auto probe = h.replaced_parse();
  CHECK(probe.statement == "b");
  CHECK(probe.query.ends_with(";\nSELEC 1"));
  const size_t prefix = probe.query.size() - 7;
  CHECK(h.client(bytes_of(wire::Describe{'S', "b"})) == StatementGate::Action::kDrop);
  CHECK(h.client(bytes_of(wire::Sync{})) == StatementGate::Action::kForward);

  SUBCASE("the earlier messages succeed: the error is the probe's") {
    CHECK(h.backend(bytes_of(wire::ParseComplete{})) == ResponseFilter::Action::kForward);
    CHECK(h.backend(bytes_of(wire::BindComplete{})) == ResponseFilter::Action::kForward);
    const auto syntax = backend_error("42601", "syntax error at or near \"SELEC\"",
                                      {{'P', std::to_string(prefix + 1)}});
    REQUIRE(h.backend(syntax) == ResponseFilter::Action::kReplace);
    CHECK(error_of(h.filter.replacement()).field('P') == "1");
    CHECK(h.probes.back().first == ResponseFilter::ProbeOutcome::kServerError);
  }
  SUBCASE("an earlier message fails: its error is forwarded untouched") {
    CHECK(h.backend(bytes_of(wire::ParseComplete{})) == ResponseFilter::Action::kForward);
    const auto bind = backend_error("42703", "column \"x\" does not exist", {{'P', "80"}});
    CHECK(h.backend(bind) == ResponseFilter::Action::kForward);
    CHECK(h.probes.back().first == ResponseFilter::ProbeOutcome::kNotLookedAt);
  }
  CHECK(h.backend(kReady) == ResponseFilter::Action::kForward);
  CHECK(h.denials.empty());
}

TEST_CASE("FunctionCall: large-object functions pass by OID, others become the marker") {
  Harness h;
  h.startup_done();
  for (const uint32_t oid :
       {952u, 953u, 954u, 955u, 956u, 957u, 958u, 964u, 715u, 1004u, 3170u, 3171u, 3172u}) {
    CHECK(h.client(bytes_of(wire::FunctionCall{oid, {}, {}, 0})) ==
          StatementGate::Action::kForward);
    CHECK(h.backend(bytes_of(wire::FunctionCallResponse{})) == ResponseFilter::Action::kForward);
    CHECK(h.backend(kReady) == ResponseFilter::Action::kForward);
  }
  // lo_import and lo_export (server files) and anything else are denied.
  for (const uint32_t oid : {764u, 765u, 767u, 1234u}) {
    CAPTURE(oid);
    REQUIRE(h.client(bytes_of(wire::FunctionCall{oid, {}, {}, 0})) ==
            StatementGate::Action::kReplace);
    const std::string token = token_of(h.marker_query());
    REQUIRE(h.backend(marker_error(token)) == ResponseFilter::Action::kReplace);
    const auto e = error_of(h.filter.replacement());
    CHECK(e.field('C') == "42501");
    CHECK(e.field('M').find("function " + std::to_string(oid) +
                            " (kanon rule function-call-message)") != std::string_view::npos);
    CHECK(h.backend(kReady) == ResponseFilter::Action::kForward);
  }
  CHECK(h.denials.empty());
}

TEST_CASE("malformed Query and Parse bodies are denied with the marker, not forwarded") {
  Harness h;
  h.startup_done();
  const wire::Buffer bad = {'Q', 0, 0, 0, 7, 'a', 'b', 'c'};  // no terminating NUL
  REQUIRE(h.client(bad) == StatementGate::Action::kReplace);
  const std::string token = token_of(h.marker_query());
  REQUIRE(h.backend(marker_error(token)) == ResponseFilter::Action::kReplace);
  CHECK(error_of(h.filter.replacement()).field('C') == "08P01");
  CHECK(h.backend(kReady) == ResponseFilter::Action::kForward);

  const wire::Buffer bad_parse = {'P', 0, 0, 0, 6, 'a', 0};  // no query, no count
  REQUIRE(h.client(bad_parse) == StatementGate::Action::kReplace);
  CHECK(h.replaced_parse().statement.empty());
  CHECK(h.gate.discarding());
}

TEST_CASE("the fast-path allow-list is the large-object functions, lo_import/lo_export excluded") {
  CHECK(std::string(rewriter::allowed_fast_path_function(952)) == "lo_open");
  CHECK(std::string(rewriter::allowed_fast_path_function(955)) == "lowrite");
  CHECK(rewriter::allowed_fast_path_function(764) == nullptr);
  CHECK(rewriter::allowed_fast_path_function(765) == nullptr);
  CHECK(rewriter::allowed_fast_path_function(767) == nullptr);
  CHECK(rewriter::allowed_fast_path_functions().size() == 13);
}

TEST_CASE("SCRAM's -PLUS mechanism is not offered to clients") {
  proxy::CancelRegistry registry;
  proxy::BackendStream stream(registry);
  const auto offer = bytes_of(wire::Authentication::sasl({"SCRAM-SHA-256-PLUS", "SCRAM-SHA-256"}));
  REQUIRE(stream.on_frame(frame_of(wire::Bytes(offer))) == proxy::BackendStream::Verdict::kReplace);
  auto sent = wire::decode_authentication(frame_of(wire::Bytes(stream.replacement())).body);
  REQUIRE(sent.ok());
  CHECK(sent.value().mechanisms == std::vector<std::string>{"SCRAM-SHA-256"});
  const auto plain = bytes_of(wire::Authentication::sasl({"SCRAM-SHA-256"}));
  CHECK(stream.on_frame(frame_of(wire::Bytes(plain))) == proxy::BackendStream::Verdict::kForward);
}

TEST_CASE("cycle(): the ReadyForQuery that ends each frame's cycle, also while deciding") {
  proxy::DenialQueue denials;
  proxy::GuardedQueue guarded;
  std::vector<uint64_t> seen;  // cycle() inside the rewrite callback
  StatementGate* gate_ptr = nullptr;
  StatementGate gate(
      [&](std::string_view sql, const char* protocol) {
        seen.push_back(gate_ptr->cycle());
        return fake_rewrite(sql, protocol);
      },
      fast_path, denials, guarded, 1);
  gate_ptr = &gate;
  const auto cycle_of = [&](const auto& message) {
    const auto bytes = bytes_of(message);
    gate.on_frame(frame_of(wire::Bytes(bytes)));
    return gate.cycle();
  };
  // ReadyForQuery 1 ends start-up: the first Query is cycle 2.
  CHECK(cycle_of(wire::Query{"SELECT 1"}) == 2);
  CHECK(cycle_of(wire::Query{"SELECT 2"}) == 3);
  // Extended messages belong to the next Sync's cycle.
  CHECK(cycle_of(wire::Parse{"", "SELECT 3", {}}) == 4);
  CHECK(cycle_of(wire::Bind{"", "", {}, {}, {}}) == 4);
  CHECK(cycle_of(wire::Execute{"", 0}) == 4);
  CHECK(cycle_of(wire::Sync{}) == 4);
  CHECK(cycle_of(wire::FunctionCall{952, {}, {}, wire::kFormatText}) == 5);
  // A denied Parse: dropped messages up to Sync, which still ends cycle 6.
  CHECK(cycle_of(wire::Parse{"", "SELECT secret", {}}) == 6);
  CHECK(cycle_of(wire::Execute{"", 0}) == 6);
  CHECK(cycle_of(wire::Sync{}) == 6);
  CHECK(seen == std::vector<uint64_t>{2, 3, 4, 6});
}

TEST_CASE("UseFn: a prefix's answers are swallowed; a denied Bind becomes a marker Parse") {
  proxy::DenialQueue denials;
  int calls = 0;
  const auto use = [&](const wire::Frame& f) {
    StatementGate::Use u;
    if (f.type != wire::frontend::kBind) return u;
    auto b = wire::decode_bind(f.body);
    REQUIRE(b.ok());
    ++calls;
    if (b.value().statement == "stale") {
      u.denial =
          rewriter::make_denial(rewriter::rules::kStalePrepared, "prepared statement \"stale\"");
    } else if (b.value().statement == "renew") {
      wire::encode(wire::Close{wire::kTargetStatement, "renew"}, u.prefix);
      wire::encode(wire::Parse{"renew", "SELECT masked FROM people", {}}, u.prefix);
      u.prefix_answers = 2;
    }
    return u;
  };
  proxy::GuardedQueue guarded;
  StatementGate gate{fake_rewrite, fast_path, denials, guarded, 1, use};
  ResponseFilter filter{denials, guarded};
  const auto client = [&](const wire::Buffer& b) {
    return gate.on_frame(frame_of(wire::Bytes(b)));
  };
  const auto backend = [&](const wire::Buffer& b) {
    return filter.on_frame(frame_of(wire::Bytes(b)));
  };
  CHECK(backend(kReady) == ResponseFilter::Action::kForward);
  // Prepared again: Close + Parse + the client's Bind, in that order.
  CHECK(client(bytes_of(wire::Parse{"other", "SELECT 1", {}})) == StatementGate::Action::kForward);
  const auto bind = bytes_of(wire::Bind{"", "renew", {}, {}, {}});
  REQUIRE(client(bind) == StatementGate::Action::kReplace);
  const auto sent = frames_of(gate.replacement());
  REQUIRE(sent.size() == 3);
  CHECK(sent[0].type == wire::frontend::kClose);
  CHECK(sent[1].type == wire::frontend::kParse);
  CHECK(sent[2].type == wire::frontend::kBind);
  CHECK(wire::Buffer(gate.replacement().end() - bind.size(), gate.replacement().end()) == bind);
  CHECK(client(bytes_of(wire::Execute{"", 0})) == StatementGate::Action::kForward);
  CHECK(client(bytes_of(wire::Sync{})) == StatementGate::Action::kForward);
  // The cycle's answers before its first row or completion are held (a
  // guard may fail and the cycle be sent again); kanon's own are swallowed.
  CHECK(backend(bytes_of(wire::ParseComplete{})) == ResponseFilter::Action::kDrop);  // other
  CHECK(backend(bytes_of(wire::CloseComplete{})) == ResponseFilter::Action::kDrop);
  CHECK(backend(bytes_of(wire::ParseComplete{})) == ResponseFilter::Action::kDrop);
  CHECK(backend(bytes_of(wire::BindComplete{})) == ResponseFilter::Action::kDrop);
  REQUIRE(backend(bytes_of(wire::CommandComplete{"SELECT 1"})) == ResponseFilter::Action::kReplace);
  const auto answered = frames_of(filter.replacement());
  REQUIRE(answered.size() == 3);
  CHECK(answered[0].type == wire::backend::kParseComplete);
  CHECK(answered[1].type == wire::backend::kBindComplete);
  CHECK(answered[2].type == wire::backend::kCommandComplete);
  CHECK(backend(kReady) == ResponseFilter::Action::kForward);
  CHECK(denials.empty());
  // Denied: a Parse of the marker under a name of kanon's own; the rest is
  // discarded until Sync and the marker's error replaced by the denial.
  REQUIRE(client(bytes_of(wire::Bind{"", "stale", {}, {}, {}})) == StatementGate::Action::kReplace);
  const auto marker = frame_of(wire::Bytes(gate.replacement()));
  REQUIRE(marker.type == wire::frontend::kParse);
  auto parse = wire::decode_parse(marker.body);
  REQUIRE(parse.ok());
  CHECK(parse.value().statement.rfind("kanon denial ", 0) == 0);
  CHECK(gate.discarding());
  CHECK(client(bytes_of(wire::Execute{"", 0})) == StatementGate::Action::kDrop);
  CHECK(client(bytes_of(wire::Sync{})) == StatementGate::Action::kForward);
  REQUIRE(backend(marker_error(token_of(parse.value().query))) == ResponseFilter::Action::kReplace);
  const auto e = error_of(filter.replacement());
  CHECK(e.field('C') == "42501");
  CHECK(e.field('M').find("stale-prepared-statement") != std::string_view::npos);
  CHECK(backend(kReadyFailed) == ResponseFilter::Action::kForward);
  CHECK(calls == 2);
}

TEST_CASE("extended: a failed guard sends the cycle again, after closing what it prepared") {
  proxy::DenialQueue denials;
  proxy::GuardedQueue guarded;
  int decisions = 0;
  const auto rewrite = [&](std::string_view sql, const char* protocol) {
    ++decisions;
    return fake_rewrite(sql, protocol);
  };
  const auto use = [](const wire::Frame&) { return StatementGate::Use{}; };
  StatementGate gate{rewrite, fast_path, denials, guarded, 1, use};
  bool may_retry = true;
  int64_t stale_at = 0;
  ResponseFilter filter{denials,
                        guarded,
                        {},
                        [&](const proxy::GuardedQuery&) { return may_retry; },
                        [&](int64_t generation) { stale_at = generation; }};
  const auto client = [&](const wire::Buffer& b) {
    return gate.on_frame(frame_of(wire::Bytes(b)));
  };
  const auto backend = [&](const wire::Buffer& b) {
    return filter.on_frame(frame_of(wire::Bytes(b)));
  };
  const auto guard_failed =
      backend_error("KN001", "kanon: the catalog changed (generation 7, decided under 6)");
  CHECK(backend(kReady) == ResponseFilter::Action::kForward);
  wire::Buffer sent_by_client;
  for (const auto& m : {bytes_of(wire::Parse{"s1", "SELECT * FROM people", {}}),
                        bytes_of(wire::Bind{"p", "s1", {}, {}, {}}),
                        bytes_of(wire::Describe{wire::kTargetPortal, "p"}),
                        bytes_of(wire::Execute{"p", 0}), bytes_of(wire::Sync{})}) {
    client(m);
    sent_by_client.insert(sent_by_client.end(), m.begin(), m.end());
  }
  REQUIRE(guarded.size() == 1);
  CHECK(guarded.front().extended);
  CHECK(guarded.front().frames == sent_by_client);
  REQUIRE(guarded.front().named_parses.size() == 1);
  CHECK(guarded.front().named_parses[0] == std::pair<std::string, uint64_t>{"s1", 1});
  // The failed attempt: nothing reaches the client.
  CHECK(backend(bytes_of(wire::ParseComplete{})) == ResponseFilter::Action::kDrop);
  CHECK(backend(bytes_of(wire::BindComplete{})) == ResponseFilter::Action::kDrop);
  CHECK(backend(bytes_of(wire::RowDescription{})) == ResponseFilter::Action::kDrop);
  REQUIRE(backend(guard_failed) == ResponseFilter::Action::kRetry);
  CHECK(stale_at == 7);
  const proxy::GuardedQuery retry = filter.retry();
  CHECK(retry.answers_before_error == 3);  // s1 exists in the backend now
  // Sent again: Close s1 (its answer swallowed), then the client's messages
  // decided again, in the cycle they had.
  gate.begin_replay(retry, 1);
  const int before = decisions;
  std::vector<char> types;
  for (const auto& f : frames_of(retry.frames)) {
    const auto action = gate.on_frame(f);
    CHECK(action != StatementGate::Action::kDrop);
    types.push_back(f.type);
  }
  gate.end_replay();
  CHECK(decisions == before + 1);
  CHECK(types == std::vector<char>{'P', 'B', 'D', 'E', 'S'});
  CHECK(gate.frames_seen() == 5);
  CHECK(guarded.size() == 1);
  CHECK(backend(kReady) == ResponseFilter::Action::kDrop);  // the failed attempt's
  CHECK(backend(bytes_of(wire::CloseComplete{})) == ResponseFilter::Action::kDrop);
  CHECK(backend(bytes_of(wire::ParseComplete{})) == ResponseFilter::Action::kDrop);
  CHECK(backend(bytes_of(wire::BindComplete{})) == ResponseFilter::Action::kDrop);
  CHECK(backend(bytes_of(wire::RowDescription{})) == ResponseFilter::Action::kDrop);
  REQUIRE(backend(bytes_of(wire::DataRow{{wire::Value(wire::Buffer{'m'})}})) ==
          ResponseFilter::Action::kReplace);
  std::vector<char> answered;
  for (const auto& f : frames_of(filter.replacement())) answered.push_back(f.type);
  CHECK(answered == std::vector<char>{'1', '2', 'T', 'D'});
  CHECK(backend(bytes_of(wire::CommandComplete{"SELECT 1"})) == ResponseFilter::Action::kForward);
  CHECK(backend(kReady) == ResponseFilter::Action::kForward);
  CHECK(guarded.empty());
  CHECK(denials.empty());

  SUBCASE("a second failure, or one that cannot be retried, is 40001 after what was held") {
    may_retry = false;
    client(bytes_of(wire::Bind{"", "s1", {}, {}, {}}));
    client(bytes_of(wire::Execute{"", 0}));
    client(bytes_of(wire::Sync{}));
    CHECK(backend(bytes_of(wire::BindComplete{})) == ResponseFilter::Action::kDrop);
    REQUIRE(backend(guard_failed) == ResponseFilter::Action::kReplace);
    const auto out = frames_of(filter.replacement());
    REQUIRE(out.size() == 2);
    CHECK(out[0].type == wire::backend::kBindComplete);
    auto e = wire::decode_error_response(out[1].body);
    REQUIRE(e.ok());
    CHECK(e.value().field('C') == "40001");
    CHECK(backend(kReadyFailed) == ResponseFilter::Action::kForward);
  }
}
