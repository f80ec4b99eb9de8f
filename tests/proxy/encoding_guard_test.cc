// EncodingGuard over a BackendStream fed the server's messages: how a
// restricted session's text is read in its client encoding, and when kanon
// may not rely on the encoding (start-up, a change under way).
#include "proxy/encoding_guard.h"

#include <doctest/doctest.h>

#include "proxy/wire/backend_messages.h"
#include "proxy/wire/frontend_messages.h"

using namespace kanon;
using proxy::EncodingGuard;
using Read = EncodingGuard::Read;
using Effect = rewriter::EncodingEffect;
using Kind = Effect::Kind;

namespace {

// A backend that reports what it is told, and a guard over it.
class Session {
 public:
  Session() : backend_(registry_), guard_(backend_) {}

  template <class M>
  void backend(const M& message) {
    wire::Buffer b;
    wire::encode(message, b);
    const wire::Frame f = wire::frame_typed(wire::Bytes(b), 1 << 20);
    REQUIRE(f.status == wire::FrameStatus::kFrame);
    REQUIRE(backend_.on_frame(f) == proxy::BackendStream::Verdict::kForward);
  }
  void parameter(const std::string& name, const std::string& value) {
    backend(wire::ParameterStatus{name, value});
  }
  void ready(char status = 'I') { backend(wire::ReadyForQuery{status}); }
  // Start-up: the server reports both encodings, then ReadyForQuery 1.
  void start(const std::string& client, const std::string& server = "UTF8") {
    parameter("server_encoding", server);
    parameter("client_encoding", client);
    ready();
  }

  // A client message the gate let through in cycle `cycle`.
  template <class M>
  void client(const M& message, uint64_t cycle, std::optional<Effect> forwarded = std::nullopt) {
    wire::Buffer b;
    wire::encode(message, b);
    const wire::Frame f = wire::frame_typed(wire::Bytes(b), 1 << 20);
    REQUIRE(f.status == wire::FrameStatus::kFrame);
    guard_.on_client_frame(f, forwarded, cycle);
  }
  void query(const std::string& sql, uint64_t cycle, Effect effect) {
    client(wire::Query{sql}, cycle, effect);
  }

  EncodingGuard& guard() { return guard_; }
  Read read(std::string_view text) { return guard_.read(text).read; }

 private:
  proxy::CancelRegistry registry_;
  proxy::BackendStream backend_;
  EncodingGuard guard_;
};

const Effect kNone{};
const Effect kAny{Kind::kAny, ""};
Effect set(const std::string& v) {
  return {Kind::kSet, v};
}

constexpr std::string_view kLatin1Zurich = "SELECT 'Z\xFCrich'";
constexpr std::string_view kUtf8Zurich = "SELECT 'Z\xC3\xBCrich'";

}  // namespace

TEST_CASE("ASCII text is read as it is, whatever kanon knows of the encoding") {
  Session s;
  CHECK(s.read("SELECT 1") == Read::kAsIs);  // before start-up ends
  s.start("SJIS");
  CHECK(s.read("SELECT * FROM people WHERE city = 'Zurich'") == Read::kAsIs);
  s.query("SET client_encoding = 'LATIN1'", 2, set("LATIN1"));
  CHECK(s.read("SELECT 2") == Read::kAsIs);  // unsettled, still ASCII
}

TEST_CASE("non-ASCII text before start-up has ended is refused") {
  Session s;
  s.parameter("server_encoding", "UTF8");
  s.parameter("client_encoding", "UTF8");
  const auto t = s.guard().read(kUtf8Zurich);
  CHECK(t.read == Read::kRefused);
  CHECK(t.refusal.find("may change it") != std::string::npos);
  s.ready();
  CHECK(s.read(kUtf8Zurich) == Read::kAsIs);
}

TEST_CASE("text in each kind of client encoding") {
  SUBCASE("UTF8 and SQL_ASCII: valid UTF-8 as it is, anything else refused") {
    for (const char* client : {"UTF8", "SQL_ASCII", "UNICODE"}) {
      CAPTURE(client);
      Session s;
      s.start(client);
      CHECK(s.read(kUtf8Zurich) == Read::kAsIs);
      const auto bad = s.guard().read(kLatin1Zurich);
      CHECK(bad.read == Read::kRefused);
      CHECK(bad.refusal.find("not valid UTF-8") != std::string::npos);
    }
  }
  SUBCASE("LATIN1: converted, and rewritten text written back") {
    Session s;
    s.start("LATIN1");
    const auto t = s.guard().read(kLatin1Zurich);
    REQUIRE(t.read == Read::kConverted);
    CHECK(t.utf8 == kUtf8Zurich);
    CHECK(s.guard().write("SELECT 'Z\xC3\xBCrich' FROM (SELECT 1) AS x") ==
          "SELECT 'Z\xFCrich' FROM (SELECT 1) AS x");
    CHECK_FALSE(s.guard().write("SELECT '\xE2\x82\xAC'").has_value());  // no euro in LATIN1
    CHECK(s.guard().message("public.b\xC3\xBCrger") == "public.b\xFCrger");
  }
  SUBCASE("WIN1252: a byte it does not define is refused") {
    Session s;
    s.start("WIN1252");
    CHECK(s.read("SELECT '\x80'") == Read::kConverted);
    const auto t = s.guard().read("SELECT '\x81'");
    CHECK(t.read == Read::kRefused);
    CHECK(t.refusal == "text that is not valid WIN1252 (client_encoding)");
  }
  SUBCASE("encodings that are not ASCII-safe: non-ASCII refused") {
    for (const char* client : {"SJIS", "BIG5", "GBK", "UHC", "GB18030", "JOHAB", "SHIFT_JIS_2004",
                               "EUC_JIS_2004", "MULE_INTERNAL"}) {
      CAPTURE(client);
      Session s;
      s.start(client);
      // SJIS: 0x82 0x5C is one character whose second byte is a backslash.
      const auto t = s.guard().read("SELECT E'\x82\\' || (SELECT 1)");
      CHECK(t.read == Read::kRefused);
      CHECK(t.refusal == std::string("client_encoding ") + client);
      CHECK(s.read("SELECT 1") == Read::kAsIs);
    }
  }
  SUBCASE("a server encoding other than UTF8: non-ASCII refused") {
    Session s;
    s.start("LATIN1", "LATIN1");
    const auto t = s.guard().read(kLatin1Zurich);
    CHECK(t.read == Read::kRefused);
    CHECK(t.refusal == "server_encoding LATIN1");
  }
}

TEST_CASE("a change of client_encoding leaves it unsettled until its cycle ends") {
  Session s;
  s.start("UTF8");
  CHECK(s.guard().settled());
  // SET client_encoding = 'LATIN1' (cycle 2) and, in the same write, a
  // statement in LATIN1 (cycle 3): refused, not read as UTF-8.
  s.query("SET client_encoding = 'LATIN1'", 2, set("LATIN1"));
  CHECK_FALSE(s.guard().settled());
  const auto t = s.guard().read(kLatin1Zurich);
  CHECK(t.read == Read::kRefused);
  CHECK(t.refusal.find("send the statement again") != std::string::npos);
  // The server's answer: ParameterStatus, then ReadyForQuery 2.
  s.parameter("client_encoding", "LATIN1");
  s.ready();
  CHECK(s.guard().settled());
  CHECK(s.read(kLatin1Zurich) == Read::kConverted);
}

TEST_CASE("what may change it, and what cannot") {
  SUBCASE("SET to the encoding in force changes nothing, under any alias") {
    Session s;
    s.start("LATIN1");
    s.query("SET client_encoding = 'latin1'", 2, set("latin1"));
    s.query("SET NAMES 'ISO-8859-1'", 3, set("ISO-8859-1"));
    CHECK(s.guard().settled());
    s.query("SET NAMES 'WIN1252'", 4, set("WIN1252"));
    CHECK_FALSE(s.guard().settled());
  }
  SUBCASE("RESET, RESET ALL, DISCARD ALL: back to the start-up value") {
    Session s;
    s.start("UTF8");
    const Effect reset{Kind::kReset, ""};
    s.query("DISCARD ALL", 2, reset);  // npgsql's pooled-connection reset
    CHECK(s.guard().settled());
    s.ready();  // cycle 2
    s.query("SET client_encoding = 'LATIN1'", 3, set("LATIN1"));
    s.parameter("client_encoding", "LATIN1");
    s.ready();  // cycle 3
    CHECK(s.guard().settled());
    s.query("RESET ALL", 4, reset);  // LATIN1 -> UTF8
    CHECK_FALSE(s.guard().settled());
  }
  SUBCASE("statements that run code kanon has not read") {
    Session s;
    s.start("UTF8");
    s.query("SELECT mine()", 2, kAny);
    CHECK_FALSE(s.guard().settled());
    s.ready();
    CHECK(s.guard().settled());
    s.query("SELECT 1", 3, kNone);
    CHECK(s.guard().settled());
  }
  SUBCASE("COMMIT and ROLLBACK undo what the transaction changed") {
    Session s;
    s.start("UTF8");
    const Effect end{Kind::kTransactionEnd, ""};
    s.query("BEGIN", 2, kNone);
    s.ready('T');
    s.query("COMMIT", 3, end);  // nothing changed in the transaction
    CHECK(s.guard().settled());
    s.ready('I');
    s.query("BEGIN; SET LOCAL client_encoding = 'LATIN1'", 4, kAny);
    s.parameter("client_encoding", "LATIN1");
    s.ready('T');
    CHECK(s.guard().settled());
    s.query("COMMIT", 5, end);  // back to UTF8 at the end
    CHECK_FALSE(s.guard().settled());
    s.parameter("client_encoding", "UTF8");
    s.ready('I');
    CHECK(s.guard().settled());
    s.query("ROLLBACK", 6, end);  // nothing since the session was last idle
    CHECK(s.guard().settled());
  }
  SUBCASE("an effect decided while unsettled counts, whatever its value") {
    Session s;
    s.start("UTF8");
    s.query("SET client_encoding = 'LATIN1'", 2, set("LATIN1"));
    s.query("SET client_encoding = 'UTF8'", 3, set("UTF8"));
    s.ready();
    CHECK_FALSE(s.guard().settled());  // cycle 3 has not ended
    s.ready();
    CHECK(s.guard().settled());
  }
}

TEST_CASE("extended protocol: a statement's effect again at every Bind and Execute") {
  Session s;
  s.start("UTF8");
  // Parse of SELECT set_config(...) as S1 in cycle 2, then Sync.
  s.client(wire::Parse{"S1", "SELECT set_config('client_encoding', 'LATIN1', false)", {}}, 2, kAny);
  s.client(wire::Parse{"S2", "SELECT 1", {}}, 2, kNone);
  s.client(wire::Sync{}, 2);
  s.ready();
  CHECK(s.guard().settled());
  // Cycle 3: Bind and Execute of S2 change nothing; of S1 they may.
  s.client(wire::Bind{"", "S2", {}, {}, {}}, 3);
  s.client(wire::Execute{"", 0}, 3);
  CHECK(s.guard().settled());
  s.client(wire::Bind{"p", "S1", {}, {}, {}}, 3);
  CHECK_FALSE(s.guard().settled());
  s.client(wire::Sync{}, 3);
  s.ready();
  CHECK(s.guard().settled());
  // Cycle 4: another Execute of the portal (suspended, say) may again.
  s.client(wire::Execute{"p", 10}, 4);
  CHECK_FALSE(s.guard().settled());
  s.ready();
  // Closed, and a denied Parse under its name: forgotten.
  s.client(wire::Close{'P', "p"}, 5);
  s.client(wire::Execute{"p", 0}, 5);
  s.client(wire::Parse{"S1", "SELECT 'denied'", {}}, 5, std::nullopt);
  s.client(wire::Bind{"", "S1", {}, {}, {}}, 5);
  CHECK(s.guard().settled());
}
