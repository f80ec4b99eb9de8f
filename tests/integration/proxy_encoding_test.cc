// Client encodings through a real kanon and PostgreSQL 15: a restricted
// session reads the same release whatever its client_encoding, and text
// kanon cannot read as PostgreSQL will is denied (rule client-encoding).
//
//   - kanon's conversions agree with PostgreSQL's over every character of
//     every encoding kanon converts, and its table of encoding names with
//     the server's;
//   - a protected table with a non-ASCII name and non-ASCII quasi-identifier
//     values (public."bürger": towns Zürich, Genève, Köln, Malmö and ASCII
//     ones; a column "tätigkeit") read in UTF8, LATIN1 and WIN1252 sessions,
//     simple and extended protocol: byte for byte the UTF8 session's release
//     once converted, never the raw rows; WHERE stadt = 'Zürich' written in
//     LATIN1 matches exactly the rows it matches in UTF8;
//   - SET client_encoding (or set_config()) pipelined before a non-ASCII
//     statement: denied, not misread (a text that reads as two constants in
//     UTF-8 and as a subquery of people in SJIS), in both protocols; in the
//     same Query message the server reads both in the old encoding, as kanon
//     does;
//   - an SJIS session's non-ASCII statement is denied with the rule, its
//     ASCII ones pass.
#include <doctest/doctest.h>
#include <iconv.h>
#include <libpq-fe.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <memory>
#include <set>

#include "proxy/client_text.h"
#include "proxy/wire/backend_messages.h"
#include "proxy/wire/error_fields.h"
#include "proxy/wire/frontend_messages.h"
#include "proxy/wire/startup_messages.h"
#include "tests/support/kanon_proxy.h"
#include "tests/support/libpq_connection.h"
#include "tests/support/pg_sandbox.h"
#include "tests/support/raw_client.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/wire_session.h"

using namespace kanon;
using namespace kanon::testing;

namespace {

// The protected table: 300 rows, non-ASCII name, column name and values.
const char* const kSetup = R"(
DROP TABLE IF EXISTS public."bürger";
CREATE TABLE public."bürger" (id int PRIMARY KEY, stadt text, "tätigkeit" text, "größe" int);
INSERT INTO public."bürger"
SELECT g,
       (ARRAY['Zürich', 'Genève', 'Köln', 'Malmö', 'Bern', 'Basel', 'Oslo', 'Paris'])
         [1 + (g * 7 + g / 13) % 8],
       (ARRAY['Bäcker', 'Arzt', 'Lehrer', 'Maler', 'Koch'])[1 + (g * 3 + g / 7) % 5],
       150 + g % 50
FROM generate_series(1, 300) g;
GRANT SELECT ON public."bürger" TO analyst;
)";

const char* const kPolicy = R"(tables:
  - table: public."bürger"
    k: 3
    quasi_identifiers: [stadt, tätigkeit]
    exempt: [postgres]
)";

// Values of public.people no release holds (as in proxy_error_semantics_test).
const std::vector<std::string> kRawPeople = {"Washington", "Columbus", "Bellevue"};

struct Fixture {
  PgSandbox& pg = PgSandbox::shared();
  std::unique_ptr<KanonProxy> proxy;

  Fixture() {
    pg.psql(kSetup);
    const std::string path = scratch_path("kanon-encoding-policy.yaml");
    std::ofstream(path) << kPolicy;
    proxy = std::make_unique<KanonProxy>(
        pg.port(), "policies: [" + path + ", " + source_dir() + "/config/policies/people.yaml]\n");
  }
  std::string kanon(const std::string& options = "") const {
    return proxy->conninfo("analyst") + " " + options;
  }
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

// glibc iconv, independent of kanon's own conversion.
std::string convert(std::string_view text, const char* to, const char* from) {
  iconv_t cd = iconv_open(to, from);
  REQUIRE(cd != reinterpret_cast<iconv_t>(-1));
  std::string out(text.size() * 4 + 16, '\0');
  char* ip = const_cast<char*>(text.data());
  size_t il = text.size();
  char* op = out.data();
  size_t ol = out.size();
  const size_t r = iconv(cd, &ip, &il, &op, &ol);
  iconv(cd, nullptr, nullptr, &op, &ol);
  iconv_close(cd);
  REQUIRE_MESSAGE(r != static_cast<size_t>(-1), "iconv " << from << " -> " << to);
  out.resize(static_cast<size_t>(op - out.data()));
  return out;
}

struct Answer {
  std::string rows;  // "v1|v2|\n" per row, NULL as <null>
  std::string sqlstate;
  std::string message;
};

Answer answer_of(PGresult* r) {
  Answer a;
  if (PQresultStatus(r) == PGRES_TUPLES_OK) {
    for (int i = 0; i < PQntuples(r); ++i) {
      for (int j = 0; j < PQnfields(r); ++j)
        a.rows += (PQgetisnull(r, i, j) ? std::string("<null>") : PQgetvalue(r, i, j)) + "|";
      a.rows += "\n";
    }
  } else if (PQresultStatus(r) != PGRES_COMMAND_OK) {
    const char* state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    const char* message = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
    a.sqlstate = state ? state : "?";
    a.message = message ? message : "";
  }
  PQclear(r);
  return a;
}

// `sql` (in the session's encoding) with PQexec or PQexecParams.
Answer run(PGconn* c, const std::string& sql, bool extended) {
  return answer_of(extended ? PQexecParams(c, sql.c_str(), 0, nullptr, nullptr, nullptr, nullptr, 0)
                            : PQexec(c, sql.c_str()));
}

// A raw protocol session of analyst in a client encoding.
class Wire : public WireSession {
 public:
  explicit Wire(uint16_t port, const std::string& client_encoding = "UTF8")
      : WireSession(
            port,
            {{"user", "analyst"}, {"database", "postgres"}, {"client_encoding", client_encoding}}) {
  }
  // What came back up to and including the next ReadyForQuery: the rows,
  // and the errors as "SQLSTATE message".
  struct Cycle {
    std::string raw;
    std::string rows;
    std::vector<std::string> errors;
  };
  Cycle until_ready() {
    const std::string raw = until('Z');
    REQUIRE_FALSE(raw.empty());
    const wire::Buffer bytes(raw.begin(), raw.end());
    Cycle out;
    out.raw = raw;
    for (size_t off = 0; off < bytes.size();) {
      const auto f = wire::frame_typed(wire::Bytes(bytes).subspan(off), 1u << 30);
      REQUIRE(f.status == wire::FrameStatus::kFrame);
      off += f.size;
      if (f.type == 'D') {
        const auto row = wire::decode_data_row(f.body);
        REQUIRE(row.ok());
        for (const auto& v : row.value().columns)
          out.rows += (v ? std::string(v->begin(), v->end()) : std::string("<null>")) + "|";
        out.rows += "\n";
      } else if (f.type == 'E') {
        const auto e = wire::decode_error_response(f.body);
        REQUIRE(e.ok());
        out.errors.push_back(std::string(e.value().field('C')) + " " +
                             std::string(e.value().field('M')));
      }
    }
    return out;
  }
};

const std::string kRelease = "SELECT id, stadt, \"tätigkeit\" FROM \"bürger\" ORDER BY id";
const std::string kZurich = "SELECT id FROM \"bürger\" WHERE stadt = 'Zürich' ORDER BY id";
const std::string kBaker =
    "SELECT id, stadt FROM public.\"bürger\" WHERE \"tätigkeit\" = 'Bäcker' ORDER BY id";

// In UTF-8 it is two string constants, the first ending in an escaped
// quote after U+3043; in SJIS the same bytes are 0xE381 0x835C, two
// characters whose second ends in the backslash byte, so the constant ends
// before " AS x" and the rest reads people's cities.
const std::string kSjisSmuggle =
    "SELECT E'\xE3\x81\x83\\' AS x, (SELECT string_agg(city, ',') FROM people) AS y --'";

bool holds_raw_people(const std::string& text) {
  for (const auto& v : kRawPeople)
    if (text.find(v) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("kanon converts every character as PostgreSQL does") {
  auto& f = fixture();
  Pq direct(f.pg.conninfo("postgres"));
  PQclear(PQexec(direct.get(), R"(
CREATE FUNCTION pg_temp.enc_map(enc name, seqs bytea[])
RETURNS TABLE (b bytea, u bytea) LANGUAGE plpgsql AS $$
DECLARE s bytea;
BEGIN
  FOREACH s IN ARRAY seqs LOOP
    BEGIN
      u := convert(s, enc, 'UTF8');
      b := s;
      RETURN NEXT;
    EXCEPTION WHEN OTHERS THEN NULL;
    END;
  END LOOP;
END $$;
CREATE FUNCTION pg_temp.seqs(prefix bytea, lo int, hi int, lo2 int, hi2 int) RETURNS bytea[]
LANGUAGE sql AS $$
  SELECT array_agg(prefix || CASE WHEN lo2 < 0 THEN set_byte('\x00'::bytea, 0, i)
                                  ELSE set_byte(set_byte('\x0000'::bytea, 0, i), 1, j) END)
  FROM generate_series(lo, hi) i, generate_series(greatest(lo2, 0), greatest(hi2, 0)) j $$;
)"));
  // The byte sequences each encoding defines (PostgreSQL rejects the rest).
  const std::map<std::string, std::vector<std::string>> domains = {
      {"EUC_JP",
       {"seqs('', 161, 254, 161, 254)", "seqs('\\x8e', 161, 223, -1, -1)",
        "seqs('\\x8f', 161, 254, 161, 254)"}},
      {"EUC_CN", {"seqs('', 161, 254, 161, 254)"}},
      {"EUC_KR", {"seqs('', 161, 254, 161, 254)"}},
      {"EUC_TW",
       {"seqs('', 161, 254, 161, 254)", "seqs('\\x8ea1', 161, 254, 161, 254)",
        "seqs('\\x8ea2', 161, 254, 161, 254)", "seqs('\\x8ea3', 161, 254, 161, 254)"}},
  };
  for (const auto& e : proxy::client_encodings()) {
    if (e.support != proxy::EncodingSupport::kConverted) continue;
    const std::string name(e.name);
    CAPTURE(name);
    std::vector<std::string> sets = {"seqs('', 128, 255, -1, -1)"};
    if (domains.count(name)) sets = domains.at(name);
    size_t characters = 0;
    for (const auto& set : sets) {
      const std::string sql =
          "SELECT b, u FROM pg_temp.enc_map('" + name + "', pg_temp." + set + ")";
      PGresult* r = PQexecParams(direct.get(), sql.c_str(), 0, nullptr, nullptr, nullptr, nullptr,
                                 1);  // binary: the bytes as they are
      REQUIRE_MESSAGE(PQresultStatus(r) == PGRES_TUPLES_OK, PQerrorMessage(direct.get()));
      for (int i = 0; i < PQntuples(r); ++i) {
        const std::string bytes(PQgetvalue(r, i, 0), PQgetlength(r, i, 0));
        const std::string utf8(PQgetvalue(r, i, 1), PQgetlength(r, i, 1));
        ++characters;
        const auto ours = proxy::to_utf8(bytes, e);
        CAPTURE(proxy::printable_utf8(bytes));
        REQUIRE(ours.has_value());
        REQUIRE(*ours == utf8);
        // Written back, it reads as the same character again.
        const auto back = proxy::from_utf8(utf8, e);
        REQUIRE(back.has_value());
        REQUIRE(proxy::to_utf8(*back, e) == utf8);
      }
      PQclear(r);
    }
    CHECK(characters > 60);
  }
}

TEST_CASE("kanon's encoding names are PostgreSQL's") {
  auto& f = fixture();
  Pq direct(f.pg.conninfo("postgres"));
  const char* const aliases[] = {
      "latin1",  "ISO-8859-1", "iso88599",   "LATIN10", "win",    "Windows-1252",
      "WIN1258", "tcvn",       "abc",        "vscii",   "alt",    "koi8",
      "KOI8U",   "mskanji",    "ShiftJIS",   "win932",  "win949", "windows950",
      "gbk",     "GB18030",    "UHC",        "johab",   "EUC-JP", "eucjis2004",
      "EUC_TW",  "ISO_8859_8", "sql_ascii",  "unicode", "utf-8",  "shift_jis_2004",
      "Big5",    "euc_kr",     "iso-8859-5", "win874",  "WIN866", "windows1250"};
  for (const char* alias : aliases) {
    CAPTURE(alias);
    const auto ours = proxy::find_encoding(alias);
    REQUIRE(ours.has_value());
    const Answer set = answer_of(
        PQexec(direct.get(), ("SET client_encoding = '" + std::string(alias) + "'").c_str()));
    REQUIRE_MESSAGE(set.sqlstate.empty(), set.message);
    const std::string shown = PQparameterStatus(direct.get(), "client_encoding");
    // PostgreSQL reports its canonical name (UNICODE as it was written).
    const auto reported = proxy::find_encoding(shown);
    REQUIRE(reported.has_value());
    CHECK(reported->name == ours->name);
    CHECK((shown == ours->name || shown == "UNICODE"));
    PQclear(PQexec(direct.get(), "RESET client_encoding"));
  }
}

TEST_CASE("the same release in UTF8, LATIN1 and WIN1252 sessions, both protocols") {
  auto& f = fixture();
  INFO("kanon's log: " << f.proxy->log());
  Pq utf8(f.kanon("client_encoding=UTF8"));
  Pq raw(f.pg.conninfo("analyst"));
  for (bool extended : {false, true}) {
    CAPTURE(extended);
    const Answer release = run(utf8.get(), kRelease, extended);
    REQUIRE_MESSAGE(release.sqlstate.empty(), release.message);
    REQUIRE(std::count(release.rows.begin(), release.rows.end(), '\n') == 300);
    // Masked: not the raw rows, and some towns released.
    CHECK(release.rows != run(raw.get(), kRelease, extended).rows);
    CHECK(release.rows.find("|Z\xC3\xBCrich|") != std::string::npos);
    const Answer zurich = run(utf8.get(), kZurich, extended);
    REQUIRE(zurich.sqlstate.empty());
    REQUIRE_FALSE(zurich.rows.empty());
    CHECK(zurich.rows != run(raw.get(), kZurich, extended).rows);
    const Answer baker = run(utf8.get(), kBaker, extended);
    REQUIRE(baker.sqlstate.empty());
    REQUIRE_FALSE(baker.rows.empty());

    for (const auto& [pg_name, iconv_name] :
         {std::pair<std::string, const char*>{"LATIN1", "ISO-8859-1"}, {"WIN1252", "CP1252"}}) {
      CAPTURE(pg_name);
      Pq c(f.kanon("client_encoding=" + pg_name));
      const auto in = [&](const std::string& sql) { return convert(sql, iconv_name, "UTF-8"); };
      const auto out = [&](const Answer& a) {
        CHECK_MESSAGE(a.sqlstate.empty(), a.sqlstate << " " << a.message);
        return convert(a.rows, "UTF-8", iconv_name);
      };
      // The bytes differ from the UTF8 session's: the test means something.
      REQUIRE(in(kRelease) != kRelease);
      CHECK(out(run(c.get(), in(kRelease), extended)) == release.rows);
      CHECK(out(run(c.get(), in(kZurich), extended)) == zurich.rows);
      CHECK(out(run(c.get(), in(kBaker), extended)) == baker.rows);
      // Other spellings of the protected name, and the name in a Unicode
      // escape (ASCII text): masked alike.
      CHECK(
          out(run(c.get(), in("SELECT id, stadt, \"tätigkeit\" FROM public.\"bürger\" ORDER BY 1"),
                  extended)) == release.rows);
      CHECK(out(run(c.get(),
                    "SELECT id, stadt, U&\"t\\00e4tigkeit\" FROM U&\"b\\00fcrger\" ORDER BY 1",
                    extended)) == release.rows);
      // A string with a backslash is respelled (E'...') in the client's encoding.
      CHECK(out(run(c.get(), in("SELECT stadt || '\\' FROM \"bürger\" WHERE id = 1"), extended)) ==
            run(utf8.get(), "SELECT stadt || '\\' FROM \"bürger\" WHERE id = 1", extended).rows);
    }
  }
}

TEST_CASE("a client_encoding set at start-up (options) is read from the first statement") {
  auto& f = fixture();
  Pq utf8(f.kanon());
  Pq latin1(f.kanon("options='-c client_encoding=LATIN1'"));
  CHECK(std::string(PQparameterStatus(latin1.get(), "client_encoding")) == "LATIN1");
  const Answer a = run(latin1.get(), convert(kZurich, "ISO-8859-1", "UTF-8"), false);
  REQUIRE_MESSAGE(a.sqlstate.empty(), a.message);
  CHECK(a.rows == run(utf8.get(), kZurich, false).rows);
}

TEST_CASE("SET client_encoding pipelined before a non-ASCII statement: denied, not misread") {
  auto& f = fixture();
  INFO("kanon's log: " << f.proxy->log());
  SUBCASE("SET client_encoding = 'SJIS', then the smuggle in the same write") {
    Wire w(f.proxy->port());
    w.send(wire::Query{"SET client_encoding = 'SJIS'"}, wire::Query{kSjisSmuggle});
    const auto set = w.until_ready();
    CHECK(set.errors.empty());
    const auto smuggle = w.until_ready();
    CHECK_FALSE(holds_raw_people(set.raw + smuggle.raw));
    REQUIRE(smuggle.errors.size() == 1);
    CHECK(smuggle.errors[0].starts_with("42501 "));
    CHECK(smuggle.errors[0].find("kanon rule client-encoding") != std::string::npos);
    // Settled in SJIS now: the same text is refused for what it is.
    w.send(wire::Query{kSjisSmuggle});
    const auto again = w.until_ready();
    REQUIRE(again.errors.size() == 1);
    CHECK(again.errors[0].find("client_encoding SJIS") != std::string::npos);
    CHECK_FALSE(holds_raw_people(again.raw));
  }
  SUBCASE("set_config() and the smuggle behind it") {
    Wire w(f.proxy->port());
    w.send(wire::Query{"SELECT length(set_config('client_encoding', 'SJIS', false))"},
           wire::Query{kSjisSmuggle});
    const auto set = w.until_ready();
    CHECK(set.errors.empty());
    const auto smuggle = w.until_ready();
    CHECK_FALSE(holds_raw_people(set.raw + smuggle.raw));
    REQUIRE(smuggle.errors.size() == 1);
    CHECK(smuggle.errors[0].find("kanon rule client-encoding") != std::string::npos);
  }
  SUBCASE("set_config() and a LATIN1 statement behind it, then resent") {
    Wire w(f.proxy->port());
    w.send(wire::Query{"SELECT set_config('client_encoding', 'LATIN1', false)"},
           wire::Query{convert(kZurich, "ISO-8859-1", "UTF-8")});
    CHECK(w.until_ready().errors.empty());
    const auto zurich = w.until_ready();
    REQUIRE(zurich.errors.size() == 1);
    CHECK(zurich.errors[0].find("kanon rule client-encoding") != std::string::npos);
    // Resent once the change has been reported: read in LATIN1.
    w.send(wire::Query{convert(kZurich, "ISO-8859-1", "UTF-8")});
    const auto resent = w.until_ready();
    CHECK(resent.errors.empty());
    Pq utf8(f.kanon());
    CHECK(resent.rows == run(utf8.get(), kZurich, false).rows);
  }
  SUBCASE("extended protocol: SET and the statement in one pipeline") {
    Wire w(f.proxy->port());
    w.send(wire::Parse{"", "SET client_encoding = 'SJIS'", {}}, wire::Bind{"", "", {}, {}, {}},
           wire::Execute{"", 0}, wire::Parse{"", kSjisSmuggle, {}}, wire::Bind{"", "", {}, {}, {}},
           wire::Execute{"", 0}, wire::Sync{});
    const auto cycle = w.until_ready();
    CHECK_FALSE(holds_raw_people(cycle.raw));
    REQUIRE(cycle.errors.size() == 1);
    CHECK(cycle.errors[0].find("kanon rule client-encoding") != std::string::npos);
  }
  SUBCASE("in the same Query message the server reads it all in the old encoding, as kanon does") {
    Wire w(f.proxy->port());
    w.send(wire::Query{"SET client_encoding = 'SJIS'; " + kSjisSmuggle});
    const auto both = w.until_ready();
    CHECK(both.errors.empty());
    CHECK_FALSE(holds_raw_people(both.raw));
    CHECK(both.rows.find(") FROM people) AS y --") != std::string::npos);  // the second constant
  }
  SUBCASE("a pure-ASCII statement behind the change is unaffected") {
    Wire w(f.proxy->port());
    w.send(wire::Query{"SET client_encoding = 'LATIN1'"},
           wire::Query{"SELECT count(*) FROM \"b\\u00fcrger\""},  // not an escape: no such table
           wire::Query{"SELECT 41 + 1"});
    CHECK(w.until_ready().errors.empty());
    const auto missing = w.until_ready();
    REQUIRE(missing.errors.size() == 1);
    CHECK(missing.errors[0].starts_with("42P01 "));  // PostgreSQL's own answer
    CHECK(w.until_ready().rows == "42|\n");
  }
}

TEST_CASE("an SJIS session: non-ASCII statements denied with the rule, ASCII ones pass") {
  auto& f = fixture();
  Pq sjis(f.kanon("client_encoding=SJIS"));
  for (bool extended : {false, true}) {
    CAPTURE(extended);
    const Answer smuggle = run(sjis.get(), kSjisSmuggle, extended);
    CHECK(smuggle.sqlstate == "42501");
    CHECK(smuggle.message.find("client_encoding SJIS (kanon rule client-encoding)") !=
          std::string::npos);
    CHECK_FALSE(holds_raw_people(smuggle.rows));
    // あ in SJIS.
    const Answer kana = run(sjis.get(), "SELECT '\x82\xA0' AS x", extended);
    CHECK(kana.sqlstate == "42501");
    const Answer ascii = run(sjis.get(), "SELECT count(*) FROM people", extended);
    CHECK_MESSAGE(ascii.sqlstate.empty(), ascii.message);
    CHECK(ascii.rows == "11|\n");
  }
}
