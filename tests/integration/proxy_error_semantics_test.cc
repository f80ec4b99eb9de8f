// Every answer kanon gives a restricted session has PostgreSQL's error
// semantics, through a real kanon and PostgreSQL 15, compared with a direct
// connection in the same test: a denial aborts the transaction block (status
// 'E', 25P02 afterwards, COMMIT answers ROLLBACK) or the implicit
// transaction, PREPARE TRANSACTION after it fails like after any error, in
// both protocols; syntax errors are PostgreSQL's own, field for field; text
// only kanon cannot read is denied (parser-mismatch); the fast path allows
// the large-object functions (psql's \lo_import, \lo_export, \lo_unlink) and
// denies, logs and counts any other call.
#include <doctest/doctest.h>
#include <libpq-fe.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <set>

#include "proxy/wire/backend_messages.h"
#include "proxy/wire/frontend_messages.h"
#include "proxy/wire/startup_messages.h"
#include "rewriter/statement_rules.h"
#include "tests/support/kanon_proxy.h"
#include "tests/support/libpq_connection.h"
#include "tests/support/pg_sandbox.h"
#include "tests/support/raw_client.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/wire_session.h"

using namespace kanon;
using namespace kanon::testing;

namespace {

struct Fixture {
  PgSandbox& pg = PgSandbox::shared();
  std::unique_ptr<KanonProxy> proxy;

  Fixture() {
    pg.psql(
        "DROP TABLE IF EXISTS public.errsem; CREATE TABLE public.errsem (x int); "
        "GRANT ALL ON public.errsem TO analyst;");
    proxy = std::make_unique<KanonProxy>(pg.port(),
                                         "admin: {database: kanon, users: [postgres]}\n"
                                         "policies: [" +
                                             source_dir() + "/config/policies/people.yaml]\n");
  }
  std::string kanon(const std::string& user = "analyst") const { return proxy->conninfo(user); }
  std::string direct(const std::string& user = "analyst") const { return pg.conninfo(user); }
  int rows(int x) const {
    return std::stoi(pg.psql("SELECT count(*) FROM public.errsem WHERE x = " + std::to_string(x)));
  }
  std::string show_stats() const {
    const auto r = run_command(
        {"psql", "-X", "-At", "-d", proxy->conninfo("postgres", "kanon"), "-c", "SHOW STATS"});
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    return r.out;
  }
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

uint64_t stat(const std::string& show_stats, const std::string& name) {
  std::smatch m;
  if (!std::regex_search(show_stats, m, std::regex("(^|\n)" + name + "\\|([0-9]+)"))) return 0;
  return std::stoull(m[2]);
}

// The error fields libpq exposes, by protocol code.
constexpr char kFields[] = {'V', 'C', 'M', 'D', 'H', 'P', 'p', 'q', 'W', 'F', 'L', 'R'};

struct Outcome {
  std::string status;  // PQresStatus
  std::string tag;     // PQcmdStatus
  std::map<char, std::string> error;
  std::string value;  // the first cell
  char tx = '?';      // the transaction status afterwards: I, T or E

  std::string sqlstate() const { return error.count('C') ? error.at('C') : ""; }
  std::string message() const { return error.count('M') ? error.at('M') : ""; }
};

char tx_status(PGconn* c) {
  switch (PQtransactionStatus(c)) {
    case PQTRANS_IDLE:
      return 'I';
    case PQTRANS_INTRANS:
      return 'T';
    case PQTRANS_INERROR:
      return 'E';
    default:
      return '?';
  }
}

Outcome outcome_of(PGconn* c, PGresult* r) {
  Outcome o;
  o.status = PQresStatus(PQresultStatus(r));
  o.tag = PQcmdStatus(r);
  for (char code : kFields)
    if (const char* v = PQresultErrorField(r, code)) o.error[code] = v;
  if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) > 0) o.value = PQgetvalue(r, 0, 0);
  PQclear(r);
  o.tx = tx_status(c);
  return o;
}

// Simple protocol (PQexec) or extended (PQexecParams: Parse, Bind,
// Describe, Execute, Sync).
Outcome exec(PGconn* c, const std::string& sql, bool extended) {
  PGresult* r = extended ? PQexecParams(c, sql.c_str(), 0, nullptr, nullptr, nullptr, nullptr, 0)
                         : PQexec(c, sql.c_str());
  return outcome_of(c, r);
}

std::string describe(const Outcome& o) {
  std::string s = o.status + " tag=" + o.tag + " tx=" + o.tx;
  for (const auto& [k, v] : o.error) s += std::string(" ") + k + "=" + v;
  return s;
}

void check_usable(PGconn* c, bool extended) {
  const auto o = exec(c, "SELECT 41 + 1", extended);
  CHECK_MESSAGE(o.value == "42", describe(o));
}

const char* protocol_name(bool extended) {
  return extended ? "extended" : "simple";
}

}  // namespace

TEST_CASE("a denial inside a transaction block aborts it, like PostgreSQL's own errors") {
  auto& f = fixture();
  for (bool extended : {false, true}) {
    CAPTURE(protocol_name(extended));
    // The same steps on both connections; only the failing statement
    // differs: kanon's denial, and an error of PostgreSQL's own.
    const auto run = [&](const std::string& conninfo, const std::string& failing) {
      Pq c(conninfo);
      std::vector<Outcome> out;
      for (const std::string sql : {"BEGIN", "INSERT INTO errsem VALUES (1)", failing.c_str(),
                                    "SELECT 1", failing.c_str(), "COMMIT"})
        out.push_back(exec(c.get(), sql, extended));
      check_usable(c.get(), extended);
      return out;
    };
    const auto through = run(f.kanon(), "DELETE FROM people");
    const auto direct = run(f.direct(), "SELECT 1/0");
    REQUIRE(through.size() == direct.size());
    for (size_t i = 0; i < through.size(); ++i) {
      CAPTURE(i);
      CAPTURE(describe(through[i]));
      CAPTURE(describe(direct[i]));
      CHECK(through[i].status == direct[i].status);
      CHECK(through[i].tag == direct[i].tag);
      CHECK(through[i].tx == direct[i].tx);
      if (i != 2) CHECK(through[i].sqlstate() == direct[i].sqlstate());
    }
    // kanon's own error for the denial; 25P02 from the backend after it,
    // for a denied statement too; COMMIT answers ROLLBACK.
    CHECK(through[2].sqlstate() == "42501");
    CHECK(through[2].message().find("(kanon rule write-protected-table)") != std::string::npos);
    CHECK(through[2].message().find("kanon denial") == std::string::npos);
    CHECK(through[2].tx == 'E');
    CHECK(through[3].sqlstate() == "25P02");
    CHECK(through[4].sqlstate() == "25P02");
    CHECK(through[5].tag == "ROLLBACK");
    CHECK(through[5].tx == 'I');
    CHECK(f.rows(1) == 0);
  }
}

TEST_CASE("implicit transactions: nothing of a string or pipeline with a denial is committed") {
  auto& f = fixture();
  Pq c(f.kanon());
  // Simple protocol: one Query is one implicit transaction.
  auto o = exec(c.get(),
                "INSERT INTO errsem VALUES (2); DELETE FROM people; INSERT INTO errsem VALUES (2)",
                false);
  CHECK(o.sqlstate() == "42501");
  CHECK(o.tx == 'I');
  CHECK(f.rows(2) == 0);
  check_usable(c.get(), false);

  // Extended protocol: everything up to Sync is one implicit transaction.
  const auto pipeline = [&](const std::string& conninfo, const std::string& failing) {
    Pq p(conninfo);
    REQUIRE(PQenterPipelineMode(p.get()) == 1);
    for (const std::string sql : {"INSERT INTO errsem VALUES (3)", failing.c_str(), "SELECT 1"})
      REQUIRE(PQsendQueryParams(p.get(), sql.c_str(), 0, nullptr, nullptr, nullptr, nullptr, 0) ==
              1);
    REQUIRE(PQpipelineSync(p.get()) == 1);
    std::vector<std::string> statuses;
    std::string sqlstate;
    for (int ends = 0; ends < 10;) {
      PGresult* r = PQgetResult(p.get());
      if (r == nullptr) {  // the end of one query's results
        ++ends;
        continue;
      }
      const auto st = PQresultStatus(r);
      statuses.push_back(PQresStatus(st));
      if (st == PGRES_FATAL_ERROR) sqlstate = PQresultErrorField(r, PG_DIAG_SQLSTATE);
      PQclear(r);
      if (st == PGRES_PIPELINE_SYNC) break;
    }
    REQUIRE(PQexitPipelineMode(p.get()) == 1);
    check_usable(p.get(), true);
    return std::make_pair(statuses, sqlstate);
  };
  const auto through = pipeline(f.kanon(), "DELETE FROM people");
  const auto direct = pipeline(f.direct(), "SELECT * FROM no_such_table");
  CHECK(through.first == direct.first);  // COMMAND_OK, FATAL_ERROR, PIPELINE_ABORTED, SYNC
  CHECK(through.second == "42501");
  CHECK(f.rows(3) == 0);
}

// A prepared transaction keeps its locks past the session (kanon's catalog
// guard's among them), so a restricted session may not prepare one: denied
// in a healthy transaction and after a denial alike, nothing is prepared,
// and ROLLBACK ends the transaction as after any error.
TEST_CASE("PREPARE TRANSACTION is denied to a restricted session; ROLLBACK recovers") {
  auto& f = fixture();
  for (bool extended : {false, true}) {
    CAPTURE(protocol_name(extended));
    for (const bool after_denial : {false, true}) {
      CAPTURE(after_denial);
      Pq c(f.kanon());
      exec(c.get(), "BEGIN", extended);
      exec(c.get(), "INSERT INTO errsem VALUES (4)", extended);
      if (after_denial) CHECK(exec(c.get(), "DELETE FROM people", extended).tx == 'E');
      const auto prepared = exec(c.get(), "PREPARE TRANSACTION 'errsem_kanon'", extended);
      CAPTURE(describe(prepared));
      // After a denial the transaction is aborted: the server refuses what
      // kanon sends in the statement's place (25P02), as any statement.
      CHECK(prepared.error.at(PG_DIAG_SQLSTATE) == (after_denial ? "25P02" : "42501"));
      if (!after_denial)
        CHECK(
            prepared.error.at(PG_DIAG_MESSAGE_PRIMARY).find("(kanon rule prepared-transaction)") !=
            std::string::npos);
      CHECK(prepared.tx == 'E');
      CHECK(exec(c.get(), "ROLLBACK", extended).tag == "ROLLBACK");
      check_usable(c.get(), extended);
      CHECK(f.pg.psql("SELECT count(*) FROM pg_prepared_xacts") == "0\n");
      CHECK(f.rows(4) == 0);
    }
  }
}

namespace {

// A byte-level session of analyst.
class Wire : public WireSession {
 public:
  using WireSession::WireSession;
  // The bytes of the messages up to and including one of `type`.
  std::string raw_until(char type) { return WireSession::until(type); }
  // Messages up to and including one of `type`, as "type" or, for errors,
  // "E:SQLSTATE", for ReadyForQuery "Z:status".
  std::vector<std::string> until(char type) {
    const std::string bytes = WireSession::until(type);
    REQUIRE_FALSE(bytes.empty());
    return message_summary(bytes);
  }
};

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + " ";
  return s;
}

}  // namespace

TEST_CASE("extended protocol, byte for byte: a failing Parse after an INSERT rolls it back") {
  auto& f = fixture();
  const auto insert = [](int x) {
    return wire::Parse{"", "INSERT INTO errsem VALUES (" + std::to_string(x) + ")", {}};
  };
  const wire::Bind bind{"", "", {}, {}, {}};
  const wire::Execute execute{"", 0};
  SUBCASE("a syntax error: the same answers as directly") {
    std::vector<std::vector<std::string>> answers;
    for (const uint16_t port : {f.pg.port(), f.proxy->port()}) {
      Wire w(port);
      w.send(insert(5), bind, execute, wire::Parse{"", "SELEC 1", {}}, bind, execute, wire::Sync{});
      answers.push_back(w.until('Z'));
      w.send(wire::Query{"SELECT 1"});
      CHECK(joined(w.until('Z')) == "T D C Z:I ");
    }
    CHECK(joined(answers[0]) == "1 2 C E:42601 Z:I ");
    CHECK(answers[1] == answers[0]);
    CHECK(f.rows(5) == 0);
  }
  SUBCASE("a denial: the same answers as a Parse PostgreSQL refuses") {
    std::vector<std::vector<std::string>> answers;
    for (const auto& [port, failing] :
         {std::pair<uint16_t, std::string>{f.pg.port(), "SELECT * FROM no_such_table"},
          std::pair<uint16_t, std::string>{f.proxy->port(), "DELETE FROM people"}}) {
      Wire w(port);
      w.send(wire::Query{"BEGIN"});
      w.until('Z');
      w.send(insert(6), bind, execute, wire::Parse{"", failing, {}}, bind, execute, wire::Sync{});
      answers.push_back(w.until('Z'));
      w.send(wire::Query{"COMMIT"});
      CHECK(joined(w.until('Z')) == "C Z:I ");
    }
    CHECK(joined(answers[0]) == "1 2 C E:42P01 Z:E ");
    CHECK(joined(answers[1]) == "1 2 C E:42501 Z:E ");
    CHECK(f.rows(6) == 0);
  }
  SUBCASE("the denial arrives on Flush, before any Sync; nothing after it runs") {
    Wire w(f.proxy->port());
    w.send(wire::Parse{"", "DELETE FROM people", {}}, wire::Flush{});
    CHECK(joined(w.until('E')) == "E:42501 ");
    // Pipelined after the denied Parse, before Sync: ignored, as PostgreSQL
    // ignores everything after an error; the Query too.
    w.send(insert(7), bind, execute, wire::Query{"INSERT INTO errsem VALUES (7)"}, wire::Sync{});
    CHECK(joined(w.until('Z')) == "Z:I ");
    CHECK(f.rows(7) == 0);
  }
  SUBCASE("a denied or unreadable named Parse creates no statement") {
    std::vector<std::vector<std::string>> answers;
    for (const uint16_t port : {f.pg.port(), f.proxy->port()}) {
      Wire w(port);
      w.send(
          wire::Parse{
              "s1", port == f.pg.port() ? "SELECT * FROM no_such_table" : "DELETE FROM people", {}},
          wire::Sync{});
      w.until('Z');
      w.send(wire::Parse{"s2", "SELEC 1", {}}, wire::Sync{});
      w.until('Z');
      w.send(wire::Describe{'S', "s1"}, wire::Sync{});
      auto a = w.until('Z');
      w.send(wire::Describe{'S', "s2"}, wire::Sync{});
      auto b = w.until('Z');
      a.insert(a.end(), b.begin(), b.end());
      answers.push_back(a);
    }
    CHECK(joined(answers[0]) == "E:26000 Z:I E:26000 Z:I ");
    CHECK(answers[1] == answers[0]);
  }
}

TEST_CASE("syntax errors are PostgreSQL's own, every field as on a direct connection") {
  auto& f = fixture();
  // Each is rejected by PostgreSQL's raw parser (and by kanon's).
  const std::vector<std::string> malformed = {
      "SELEC 1",
      "SELECT 1 +",
      "SELECT 'abc",
      "SELECT 1 LIMIT 1,2",                                           // 42601 with a HINT
      "DROP OPERATOR + (int4)",                                       // 42601 with a HINT
      "SELECT count(*) OVER (ROWS UNBOUNDED FOLLOWING) FROM people",  // 42P20
      "SELECT 1::float(0)",                                           // 22023
      "SELECT U&'\\00zz'",                                            // 42601 with a HINT
      "SELECT 123abc FROM people",
      "SELECT 'é', city FROM people WHERE",  // the position counts characters, not bytes
      "/* a comment */ SELECT 1;\nSELECT city FROM people WHERE ) ;",
  };
  Pq through(f.kanon());
  Pq direct(f.direct());
  for (bool extended : {false, true})
    for (const auto& sql : malformed) {
      if (extended && sql.find(";\n") != std::string::npos) continue;  // one statement per Parse
      CAPTURE(protocol_name(extended));
      CAPTURE(sql);
      const auto a = exec(through.get(), sql, extended);
      const auto b = exec(direct.get(), sql, extended);
      CHECK(a.status == "PGRES_FATAL_ERROR");
      CHECK(a.error.count('P') == 1);
      CHECK(a.error == b.error);
      CHECK(a.tx == b.tx);
    }
  CHECK(exec(through.get(), "SELECT 1::float(0)", false).sqlstate() == "22023");
  CHECK(exec(through.get(), "SELECT count(*) OVER (ROWS UNBOUNDED FOLLOWING) FROM people", false)
            .sqlstate() == "42P20");
  CHECK(exec(through.get(), "SELECT 1 LIMIT 1,2", true).error.at('H') ==
        "Use separate LIMIT and OFFSET clauses.");

  // Inside a transaction block the block is aborted, as directly.
  for (bool extended : {false, true}) {
    CAPTURE(protocol_name(extended));
    for (PGconn* c : {through.get(), direct.get()}) {
      exec(c, "BEGIN", extended);
      exec(c, "INSERT INTO errsem VALUES (8)", extended);
      CHECK(exec(c, "SELEC 1", extended).tx == 'E');
      CHECK(exec(c, "SELECT 1", extended).sqlstate() == "25P02");
      CHECK(exec(c, "COMMIT", extended).tag == "ROLLBACK");
    }
    CHECK(f.rows(8) == 0);
  }
  // A named statement that does not parse is not created.
  for (PGconn* c : {through.get(), direct.get()}) {
    PGresult* r = PQprepare(c, "bad", "SELEC 1", 0, nullptr);
    CHECK(std::string(PQresultErrorField(r, PG_DIAG_SQLSTATE)) == "42601");
    PQclear(r);
    const auto d = outcome_of(c, PQdescribePrepared(c, "bad"));
    CHECK(d.sqlstate() == "26000");
  }
  check_usable(through.get(), false);
  check_usable(through.get(), true);
}

TEST_CASE("text PostgreSQL reads but kanon's parser cannot is denied: parser-mismatch") {
  auto& f = fixture();
  // A sum of 6,000 terms: PostgreSQL's raw parser reads it (its analysis
  // then runs out of stack); libpg_query's tree is deeper than kanon reads.
  std::string sql = "SELECT 1";
  for (int i = 1; i < 6000; ++i) sql += "+1";
  const auto before = f.show_stats();
  Pq c(f.kanon());
  for (bool extended : {false, true}) {
    CAPTURE(protocol_name(extended));
    exec(c.get(), "BEGIN", extended);
    const auto o = exec(c.get(), sql, extended);
    CHECK(o.sqlstate() == "42501");
    CHECK(o.message() == "kanon's parser cannot read this statement (kanon rule parser-mismatch)");
    CHECK(o.tx == 'E');
    CHECK(exec(c.get(), "ROLLBACK", extended).tx == 'I');
    check_usable(c.get(), extended);
  }
  Pq direct(f.direct());
  CHECK(exec(direct.get(), sql, false).sqlstate() == "54001");  // analysed: it did parse
  const auto after = f.show_stats();
  CHECK(stat(after, "denied: parser-mismatch") - stat(before, "denied: parser-mismatch") == 2);
  CHECK(f.proxy->log().find("protocol=extended rule=parser-mismatch") != std::string::npos);
}

namespace {

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string hex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

}  // namespace

TEST_CASE("fast path: psql's \\lo_import, \\lo_export and \\lo_unlink work for a restricted role") {
  auto& f = fixture();
  const std::string dir = scratch_path("lo");
  std::filesystem::create_directories(dir);
  std::string content(100000, '\0');
  std::mt19937 gen(7);
  for (auto& ch : content) ch = static_cast<char>(gen() & 0xff);
  std::ofstream(dir + "/in.bin", std::ios::binary) << content;
  const auto psql = [&](const std::string& command) {
    return run_command(
        {"psql", "-X", "-At", "-v", "ON_ERROR_STOP=1", "-d", f.kanon(), "-c", command});
  };
  const auto imported = psql("\\lo_import " + dir + "/in.bin");
  REQUIRE_MESSAGE(imported.exit_code == 0, imported.err);
  std::smatch m;
  const std::string out = imported.out;
  REQUIRE(std::regex_search(out, m, std::regex("lo_import ([0-9]+)")));
  const std::string oid = m[1];
  CHECK(f.pg.psql("SELECT lomowner::regrole FROM pg_largeobject_metadata WHERE oid = " + oid) ==
        "analyst\n");
  CHECK(f.pg.psql("SELECT encode(lo_get(" + oid + "), 'hex')") == hex(content) + "\n");

  const auto exported = psql("\\lo_export " + oid + " " + dir + "/out.bin");
  REQUIRE_MESSAGE(exported.exit_code == 0, exported.err);
  CHECK(read_bytes(dir + "/out.bin") == content);

  const auto unlinked = psql("\\lo_unlink " + oid);
  REQUIRE_MESSAGE(unlinked.exit_code == 0, unlinked.err);
  CHECK(unlinked.out.find("lo_unlink " + oid) != std::string::npos);
  CHECK(f.pg.psql("SELECT count(*) FROM pg_largeobject_metadata WHERE oid = " + oid) == "0\n");
  std::filesystem::remove_all(dir);
}

TEST_CASE(
    "fast path: any other function is denied with backend-raised semantics, logged, counted") {
  auto& f = fixture();
  const auto before = f.show_stats();
  const uint32_t pg_backend_pid = std::stoul(f.pg.psql("SELECT 'pg_backend_pid'::regproc::oid"));
  const uint32_t lo_import = 764;  // server files: denied like any other
  Pq c(f.kanon());
  Pq direct(f.direct());
  const auto call = [](PGconn* conn, uint32_t oid) {
    int value = 0, length = 0;
    return outcome_of(conn, PQfn(conn, oid, &value, &length, 1, nullptr, 0));
  };
  CHECK(call(direct.get(), pg_backend_pid).status == "PGRES_COMMAND_OK");  // allowed directly
  for (const uint32_t oid : {pg_backend_pid, lo_import}) {
    CAPTURE(oid);
    const auto o = call(c.get(), oid);
    CHECK(o.sqlstate() == "42501");
    CHECK(o.message().find("function " + std::to_string(oid) +
                           " (kanon rule function-call-message)") != std::string::npos);
    CHECK(o.tx == 'I');
    check_usable(c.get(), false);
  }
  // Inside a block it aborts the block, like directly after an error.
  exec(c.get(), "BEGIN", false);
  exec(c.get(), "INSERT INTO errsem VALUES (9)", false);
  CHECK(call(c.get(), pg_backend_pid).tx == 'E');
  CHECK(call(c.get(), pg_backend_pid).sqlstate() == "25P02");
  CHECK(exec(c.get(), "COMMIT", false).tag == "ROLLBACK");
  CHECK(f.rows(9) == 0);
  check_usable(c.get(), true);

  const auto after = f.show_stats();
  CHECK(stat(after, "denied: function-call-message") -
            stat(before, "denied: function-call-message") ==
        4);
  const std::string log = f.proxy->log();
  CHECK(log.find("protocol=function-call rule=function-call-message object=function " +
                 std::to_string(pg_backend_pid)) != std::string::npos);
  CHECK(log.find("object=function 764") != std::string::npos);
}

TEST_CASE("the fast-path allow-list matches PostgreSQL's catalog") {
  auto& f = fixture();
  std::string expected;
  std::set<std::string> names;
  for (const auto& fn : rewriter::allowed_fast_path_functions()) names.insert(fn.name);
  std::map<uint32_t, std::string> by_oid;
  for (const auto& fn : rewriter::allowed_fast_path_functions()) by_oid[fn.oid] = fn.name;
  for (const auto& [oid, name] : by_oid) expected += std::to_string(oid) + "|" + name + "\n";
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "'" : ", '") + n + "'";
  // Every pg_catalog function of those names, and no other OID.
  CHECK(f.pg.psql("SELECT oid, proname FROM pg_proc WHERE proname IN (" + list +
                  ") AND pronamespace = 'pg_catalog'::regnamespace ORDER BY oid") == expected);
  CHECK(by_oid.count(764) == 0);
  CHECK(by_oid.count(765) == 0);
  CHECK(by_oid.count(767) == 0);
}

// The client turns standard_conforming_strings off and, in the same write,
// sends a statement that a reader with the setting on sees as constants only,
// while the server, with the setting off, would see a subquery of people.
// kanon decides before the server's ParameterStatus arrives; the text it
// sends is read alike under both settings (rewriter/string_literals.h).
TEST_CASE("a pipelined SET standard_conforming_strings = off smuggles nothing") {
  auto& f = fixture();
  Wire w(f.proxy->port());
  w.send(wire::Query{"SET standard_conforming_strings = off"},
         wire::Query{"SELECT 'a\\' AS x, ' AS y, (SELECT string_agg(city, ',') FROM people) AS "
                     "z --'"});
  std::string answers = w.raw_until('Z');
  answers += w.raw_until('Z');
  for (const char* raw : {"Washington", "Columbus", "Bellevue"}) {
    CAPTURE(raw);
    CHECK(answers.find(raw) == std::string::npos);
  }
  // Settled: the setting is off now, and the same text is read as the server
  // reads it: the subquery is there, and masked.
  w.send(
      wire::Query{"SELECT 'a\\' AS x, ' AS y, (SELECT string_agg(city, ',') FROM people) AS "
                  "z --'"});
  const std::string settled = w.raw_until('Z');
  CHECK(settled.find("a' AS x, ") != std::string::npos);
  for (const char* raw : {"Washington", "Columbus", "Bellevue"}) {
    CAPTURE(raw);
    CHECK(settled.find(raw) == std::string::npos);
  }
}
