// The audit trail of restricted statements, with a real kanon and a real
// PostgreSQL: one JSON line per statement with the right decision, rule,
// tables, rows and session fields (simple and extended protocol, a denial,
// a backend error); logrotate's rename + SIGHUP loses and repeats nothing;
// the table sink gets the records; an unusable table sink denies restricted
// statements (audit-unavailable, the session stays usable and recovers) or,
// with on_failure: continue, lets them pass and counts the lost records;
// SHOW AUDIT and /metrics report the trail.
#include <doctest/doctest.h>
#include <libpq-fe.h>
#include <libpq/libpq-fs.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "proxy/wire/frontend_messages.h"
#include "proxy/wire/startup_messages.h"
#include "tests/support/kanon_proxy.h"
#include "tests/support/pg_sandbox.h"
#include "tests/support/raw_client.h"
#include "tests/support/scratch_dir.h"

using namespace kanon::testing;
using Json = nlohmann::json;

namespace {

const std::string kDir = scratch_path("audit");

// A libpq connection; each call returns the SQLSTATE ("" on success) and the rows.
class Client {
 public:
  explicit Client(const std::string& conninfo) : conn_(PQconnectdb(conninfo.c_str())) {
    REQUIRE_MESSAGE(PQstatus(conn_) == CONNECTION_OK, PQerrorMessage(conn_));
  }
  ~Client() { PQfinish(conn_); }

  struct Answer {
    std::string sqlstate;
    std::string message;
    int rows = 0;
    std::string first;  // the first row's first value
  };
  Answer simple(const std::string& sql) { return answer(PQexec(conn_, sql.c_str())); }
  Answer prepare(const std::string& name, const std::string& sql) {
    return answer(PQprepare(conn_, name.c_str(), sql.c_str(), 0, nullptr));
  }
  Answer execute(const std::string& name, const std::vector<std::string>& params) {
    std::vector<const char*> values;
    for (const auto& p : params) values.push_back(p.c_str());
    return answer(PQexecPrepared(conn_, name.c_str(), static_cast<int>(values.size()),
                                 values.data(), nullptr, nullptr, 0));
  }
  Answer describe(const std::string& name) {
    return answer(PQdescribePrepared(conn_, name.c_str()));
  }
  PGconn* raw() { return conn_; }
  Answer extended(const std::string& sql, const std::vector<std::string>& params) {
    std::vector<const char*> values;
    for (const auto& p : params) values.push_back(p.c_str());
    return answer(PQexecParams(conn_, sql.c_str(), static_cast<int>(values.size()), nullptr,
                               values.data(), nullptr, nullptr, 0));
  }

 private:
  static Answer answer(PGresult* r) {
    Answer a;
    if (const char* s = PQresultErrorField(r, PG_DIAG_SQLSTATE)) a.sqlstate = s;
    if (const char* m = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY)) a.message = m;
    a.rows = PQntuples(r);
    if (a.rows > 0 && PQnfields(r) > 0) a.first = PQgetvalue(r, 0, 0);
    PQclear(r);
    return a;
  }
  PGconn* conn_;
};

std::string with_app(const std::string& conninfo, const std::string& app) {
  return conninfo + " application_name=" + app;
}

// Complete records only: a line the writer is still appending (no newline
// yet) is read on the next poll.
std::vector<Json> read_records(const std::string& path) {
  std::vector<Json> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (in.eof()) break;  // the last line had no newline: still being written
    if (!line.empty()) out.push_back(Json::parse(line));
  }
  return out;
}

std::vector<Json> records_of(const std::vector<Json>& all, const std::string& app) {
  std::vector<Json> out;
  for (const auto& r : all)
    if (r["application_name"] == app) out.push_back(r);
  return out;
}

// Polls `done` for up to 20 s (the writer hands records over within ~20 ms;
// a failed sink is retried every second).
bool eventually(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return done();
}

std::string http_get(uint16_t port, const std::string& path) {
  RawClient c(port);
  c.send("GET " + path + " HTTP/1.0\r\n\r\n");
  const auto bytes = c.read_until_close(5);
  return std::string(bytes.begin(), bytes.end());
}

// The value of a metric line "name value" (-1 when absent).
double metric(const std::string& text, const std::string& name) {
  std::smatch m;
  const std::string escaped = std::regex_replace(name, std::regex(R"([{}"\\])"), R"(\$&)");
  if (!std::regex_search(text, m, std::regex("(^|\n)" + escaped + " ([0-9.e+]+)"))) return -1;
  return std::stod(m[2]);
}

std::string policies_yaml() {
  return "policies: [" + source_dir() + "/config/policies/people.yaml]\n";
}

// kanon with both sinks, the console and metrics.
struct Audited {
  std::string file = kDir + "/audit.jsonl";
  uint16_t metrics_port = free_port();
  std::unique_ptr<KanonProxy> proxy;

  Audited() {
    std::filesystem::create_directories(kDir);
    auto& pg = PgSandbox::shared();
    pg.psql("DROP TABLE IF EXISTS public.kanon_audit_trail");
    proxy = std::make_unique<KanonProxy>(
        pg.port(), policies_yaml() + "admin: {database: kanon, users: [postgres]}\n" +
                       "metrics: {listen: \"127.0.0.1:" + std::to_string(metrics_port) + "\"}\n" +
                       "audit: {file: " + file + ", table: public.kanon_audit_trail}\n");
  }
  ~Audited() {
    proxy.reset();  // kanon stops writing the file first
    std::error_code ignored;
    std::filesystem::remove_all(kDir, ignored);
  }
  std::string console(const std::string& command) {
    const auto r = run_command({"psql", "-X", "-At", "-F", "|", "-d",
                                proxy->conninfo("postgres", "kanon"), "-c", command});
    REQUIRE_MESSAGE(r.exit_code == 0, command << ": " << r.err);
    return r.out;
  }
};

Audited& audited() {
  static Audited a;
  return a;
}

// The records of `app`, once there are any.
std::vector<Json> records_when_any(Audited& a, const std::string& app) {
  std::vector<Json> r;
  CHECK(eventually([&] {
    r = records_of(read_records(a.file), app);
    return !r.empty();
  }));
  return r;
}

// A byte-level restricted session (trust login), for pipelines libpq does
// not send.
class Wire {
 public:
  Wire(uint16_t port, const std::string& app) : c_(port) {
    kanon::wire::StartupMessage m;
    m.parameters = {{"user", "analyst"}, {"database", "postgres"}, {"application_name", app}};
    send(m);
    REQUIRE_FALSE(c_.read_until_message('Z', 10).empty());
  }
  template <class... M>
  void send(const M&... messages) {
    kanon::wire::Buffer b;
    (kanon::wire::encode(messages, b), ...);
    c_.send(b);
  }
  // The messages and the end of the client's stream in one TCP segment.
  template <class... M>
  void send_and_end(const M&... messages) {
    kanon::wire::Buffer b;
    (kanon::wire::encode(messages, b), ...);
    c_.send_and_end(b);
  }
  // Whether kanon closed the connection within `seconds`.
  bool closed_within(int seconds) {
    c_.read_until_close(seconds);
    return c_.closed();
  }
  std::string until(char type) {
    const auto bytes = c_.read_until_message(type, 10);
    REQUIRE_FALSE(bytes.empty());
    return first_error_sqlstate(bytes);
  }

 private:
  RawClient c_;
};

}  // namespace

TEST_CASE("one JSON line per statement of a restricted session, with what was decided") {
  auto& a = audited();
  const std::string app = "audit-script";
  int pid = 0;
  {
    Client c(with_app(a.proxy->conninfo("analyst"), app));
    // The backend's own pid (kanon gives clients cancel keys of its own).
    const auto one = c.simple("SELECT pg_backend_pid() AS one");
    CHECK(one.sqlstate == "");
    pid = std::stoi(one.first);
    const auto masked = c.simple("SELECT city FROM people");
    CHECK(masked.sqlstate == "");
    CHECK(masked.rows == 11);
    const auto denied = c.simple("SELECT ctid FROM people");
    CHECK(denied.sqlstate == "42501");
    const auto ext = c.extended("SELECT city FROM people WHERE id = $1", {"3"});
    CHECK(ext.sqlstate == "");
    CHECK(ext.rows == 1);
    CHECK(c.simple("SELECT 1 / 0").sqlstate == "22012");
  }
  std::vector<Json> mine;
  CHECK(eventually([&] {
    mine = records_of(read_records(a.file), app);
    return mine.size() >= 5;
  }));
  REQUIRE(mine.size() == 5);
  for (const auto& r : mine) {
    CHECK(r["user"] == "analyst");
    CHECK(r["database"] == "postgres");
    CHECK(r["backend_pid"] == pid);
    CHECK(std::regex_match(r["client"].get<std::string>(), std::regex(R"(127\.0\.0\.1:\d+)")));
    CHECK(std::regex_match(r["time"].get<std::string>(),
                           std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)")));
    CHECK(r["fingerprint"].get<std::string>().size() == 16);
    CHECK(r["duration_ms"].get<double>() >= 0);
    CHECK(r["snapshot_version"].get<int>() >= 1);
  }
  CHECK(mine[0]["text"] == "SELECT pg_backend_pid() AS one");
  CHECK(mine[0]["decision"] == "passed");
  CHECK(mine[0]["protocol"] == "simple");
  CHECK(mine[0]["rows"] == 1);
  CHECK(mine[0]["tables"].empty());
  CHECK(mine[0]["sqlstate"].is_null());

  CHECK(mine[1]["text"] == "SELECT city FROM people");
  CHECK(mine[1]["decision"] == "rewritten");
  CHECK(mine[1]["tables"] == Json::array({"public.people"}));
  CHECK(mine[1]["rows"] == 11);
  CHECK(mine[1]["rule"].is_null());

  CHECK(mine[2]["text"] == "SELECT ctid FROM people");
  CHECK(mine[2]["decision"] == "denied");
  CHECK(mine[2]["rule"] == "system-column");
  CHECK(mine[2]["object"] == "public.people.ctid");
  CHECK(mine[2]["sqlstate"] == "42501");
  CHECK(mine[2]["rows"].is_null());

  CHECK(mine[3]["protocol"] == "extended");
  CHECK(mine[3]["text"] == "SELECT city FROM people WHERE id = $1");
  CHECK(mine[3]["decision"] == "rewritten");
  CHECK(mine[3]["tables"] == Json::array({"public.people"}));
  CHECK(mine[3]["rows"] == 1);

  CHECK(mine[4]["decision"] == "passed");
  CHECK(mine[4]["sqlstate"] == "22012");
  CHECK(mine[4]["rows"].is_null());

  // Same statement shape, other constants: same fingerprint.
  {
    Client c(with_app(a.proxy->conninfo("analyst"), "audit-fingerprint"));
    c.simple("SELECT city FROM people WHERE id = 1");
    c.simple("SELECT city FROM people WHERE id = 2");
  }
  std::vector<Json> fp;
  CHECK(eventually([&] {
    fp = records_of(read_records(a.file), "audit-fingerprint");
    return fp.size() >= 2;
  }));
  REQUIRE(fp.size() == 2);
  CHECK(fp[0]["fingerprint"] == fp[1]["fingerprint"]);
  CHECK(fp[0]["fingerprint"] != mine[1]["fingerprint"]);

  // Exempt sessions are not audited.
  {
    Client c(with_app(a.proxy->conninfo("postgres"), "audit-exempt"));
    c.simple("SELECT city FROM people");
    Client r(with_app(a.proxy->conninfo("analyst"), "audit-after-exempt"));
    r.simple("SELECT 2");
  }
  CHECK(eventually(
      [&] { return records_of(read_records(a.file), "audit-after-exempt").size() == 1; }));
  CHECK(records_of(read_records(a.file), "audit-exempt").empty());

  // The table sink got the same records.
  auto& pg = PgSandbox::shared();
  CHECK(eventually([&] {
    return pg.psql("SELECT count(*) FROM public.kanon_audit_trail WHERE application_name = '" +
                   app + "'") == "5\n";
  }));
  // Sorted by content, not by `at`: statements on localhost share a
  // millisecond, and the five records differ in what they hold.
  const std::string p = "|analyst|" + std::to_string(pid) + "\n";
  std::vector<std::string> want = {"passed|||1|" + p, "rewritten||public.people|11|" + p,
                                   "denied|system-column|||42501" + p,
                                   "rewritten||public.people|1|" + p, "passed||||22012" + p};
  std::sort(want.begin(), want.end());
  std::string expected;
  for (const auto& line : want) expected += line;
  const std::string got = pg.psql(
      "SELECT decision || '|' || coalesce(rule, '') || '|' || array_to_string(tables, "
      "',') || '|' || coalesce(rows::text, '') || '|' || coalesce(sqlstate, '') || '|' "
      "|| user_name || '|' || backend_pid FROM public.kanon_audit_trail WHERE "
      "application_name = '" +
      app + "'");
  std::vector<std::string> lines;
  for (size_t at = 0; at < got.size();) {
    const size_t nl = got.find('\n', at);
    const size_t end = nl == std::string::npos ? got.size() : nl + 1;
    lines.push_back(got.substr(at, end - at));
    at = end;
  }
  std::sort(lines.begin(), lines.end());
  std::string sorted;
  for (const auto& line : lines) sorted += line;
  CHECK(sorted == expected);
}

// The trail is UTF-8 (a JSON file, a table written over a UTF-8 connection):
// a statement of a session in another client encoding is recorded as kanon
// read it, converted; bytes kanon could not read are written as \xHH. Raw
// LATIN1 bytes would make the table's COPY fail (the sink down, every
// restricted statement denied meanwhile).
TEST_CASE("statements in other client encodings are recorded in UTF-8, in the file and the table") {
  auto& a = audited();
  {
    Client latin1(with_app(a.proxy->conninfo("analyst"), "audit-latin1") +
                  " client_encoding=LATIN1");
    CHECK(latin1.simple("SELECT city FROM people WHERE city <> 'Z\xFCrich'").sqlstate == "");
    CHECK(latin1.extended("SELECT count(*) FROM people WHERE city <> 'K\xF6ln'", {}).sqlstate ==
          "");
    Client sjis(with_app(a.proxy->conninfo("analyst"), "audit-sjis") + " client_encoding=SJIS");
    CHECK(sjis.simple("SELECT '\x82\xA0'").sqlstate == "42501");
  }
  std::vector<Json> latin1;
  std::vector<Json> sjis;
  CHECK(eventually([&] {
    const auto all = read_records(a.file);
    latin1 = records_of(all, "audit-latin1");
    sjis = records_of(all, "audit-sjis");
    return latin1.size() >= 2 && !sjis.empty();
  }));
  REQUIRE(latin1.size() == 2);
  CHECK(latin1[0]["text"] == "SELECT city FROM people WHERE city <> 'Z\xC3\xBCrich'");
  CHECK(latin1[0]["decision"] == "rewritten");
  CHECK(latin1[1]["text"] == "SELECT count(*) FROM people WHERE city <> 'K\xC3\xB6ln'");
  CHECK(latin1[1]["protocol"] == "extended");
  REQUIRE(sjis.size() == 1);
  CHECK(sjis[0]["text"] == "SELECT '\\x82\\xA0'");
  CHECK(sjis[0]["rule"] == "client-encoding");
  auto& pg = PgSandbox::shared();
  CHECK(eventually([&] {
    return pg.psql(
               "SELECT string_agg(statement, ' | ' ORDER BY application_name, statement) FROM "
               "public.kanon_audit_trail WHERE application_name IN ('audit-latin1', "
               "'audit-sjis')") ==
           "SELECT city FROM people WHERE city <> 'Z\xC3\xBCrich' | SELECT count(*) FROM people "
           "WHERE city <> 'K\xC3\xB6ln' | SELECT '\\x82\\xA0'\n";
  }));
}

TEST_CASE("extended protocol: one record per Execute, one per denied Parse; syntax; fast path") {
  auto& a = audited();
  const std::string app = "audit-extended";
  {
    Client c(with_app(a.proxy->conninfo("analyst"), app));
    CHECK(c.prepare("by_state", "SELECT city FROM people WHERE state = $1").sqlstate == "");
    CHECK(c.describe("by_state").sqlstate == "");  // no record: nothing ran
    CHECK(c.execute("by_state", {"OH"}).rows == 6);
    CHECK(c.execute("by_state", {"DC"}).rows == 0);  // DC is masked
    CHECK(c.prepare("sys", "SELECT xmin FROM people").sqlstate == "42501");
    CHECK(c.simple("SELEC 1").sqlstate == "42601");  // PostgreSQL's own syntax error
    CHECK(c.simple("BEGIN").sqlstate == "");
    CHECK(lo_creat(c.raw(), INV_READ | INV_WRITE) != 0);  // fast-path FunctionCall
    CHECK(c.simple("ROLLBACK").sqlstate == "");
  }
  std::vector<Json> all;
  CHECK(eventually([&] {
    all = records_of(read_records(a.file), app);
    return !all.empty() && all.back()["text"] == "ROLLBACK";
  }));
  std::vector<Json> ext, other;
  for (const auto& r : all) (r["protocol"] == "extended" ? ext : other).push_back(r);
  REQUIRE(ext.size() == 3);
  CHECK(ext[0]["text"] == "SELECT city FROM people WHERE state = $1");
  CHECK(ext[0]["decision"] == "rewritten");
  CHECK(ext[0]["rows"] == 6);
  CHECK(ext[1]["text"] == ext[0]["text"]);
  CHECK(ext[1]["fingerprint"] == ext[0]["fingerprint"]);
  CHECK(ext[1]["rows"] == 0);
  CHECK(ext[2]["text"] == "SELECT xmin FROM people");
  CHECK(ext[2]["decision"] == "denied");
  CHECK(ext[2]["rule"] == "system-column");
  CHECK(ext[2]["sqlstate"] == "42501");
  REQUIRE(other.size() >= 4);
  CHECK(other[0]["text"] == "SELEC 1");
  CHECK(other[0]["decision"] == "denied");
  CHECK(other[0]["rule"] == "syntax");
  CHECK(other[0]["sqlstate"] == "42601");
  CHECK(other[1]["text"] == "BEGIN");
  bool fast_path = false;
  for (const auto& r : other)
    if (r["protocol"] == "function-call") {
      fast_path = true;
      CHECK(r["decision"] == "passed");
      CHECK(r["text"] == "function 957");  // lo_creat
      CHECK(r["sqlstate"].is_null());
    }
  CHECK(fast_path);
}

TEST_CASE("what PostgreSQL skips after a failed extended message carries that error") {
  namespace w = kanon::wire;
  auto& a = audited();
  const std::string app = "audit-pipeline";
  {
    Wire c(a.proxy->port(), app);
    // All in one write: the Query after the failing Execute is ignored by
    // PostgreSQL (no Sync in between).
    c.send(w::Parse{"", "SELECT 1 / 0", {}}, w::Bind{}, w::Execute{},
           w::Query{"SELECT 'ignored one'"}, w::Sync{});
    CHECK(c.until('Z') == "22012");
    // The error reaches the client before it sends the rest.
    c.send(w::Parse{"", "SELECT 1 / 0", {}}, w::Bind{}, w::Execute{}, w::Flush{});
    CHECK(c.until('E') == "22012");
    c.send(w::Query{"SELECT 'ignored two'"}, w::Parse{"", "SELECT 'ignored three'", {}}, w::Bind{},
           w::Execute{}, w::Sync{});
    c.until('Z');
    c.send(w::Query{"SELECT 'answered'"});
    CHECK(c.until('Z') == "");
  }
  std::vector<Json> r;
  CHECK(eventually([&] {
    r = records_of(read_records(a.file), app);
    return !r.empty() && r.back()["text"] == "SELECT 'answered'";
  }));
  REQUIRE(r.size() == 6);  // the last Parse and Bind make no record of their own
  CHECK(r[0]["text"] == "SELECT 1 / 0");
  CHECK(r[0]["protocol"] == "extended");
  CHECK(r[1]["text"] == "SELECT 'ignored one'");
  CHECK(r[2]["text"] == "SELECT 1 / 0");
  CHECK(r[3]["text"] == "SELECT 'ignored two'");
  CHECK(r[4]["text"] == "SELECT 'ignored three'");
  for (int i = 0; i < 5; ++i) {
    CHECK(r[i]["sqlstate"] == "22012");
    CHECK(r[i]["rows"].is_null());
  }
  CHECK(r[5]["text"] == "SELECT 'answered'");
}

TEST_CASE("a statement the client walks away from is recorded with 08006") {
  namespace w = kanon::wire;
  auto& a = audited();
  const std::string app = "audit-walk-away";
  {
    Wire c(a.proxy->port(), app);
    c.send(w::Query{"SELECT pg_sleep(2)"});
  }  // closed before the answer
  const auto r = records_when_any(a, app);
  REQUIRE(r.size() == 1);
  CHECK(r[0]["text"] == "SELECT pg_sleep(2)");
  CHECK(r[0]["decision"] == "passed");
  CHECK(r[0]["sqlstate"] == "08006");
  CHECK(r[0]["rows"].is_null());
}

// The statement and the client's FIN in one segment raise one readiness
// edge. A relay that took a short read for a drained socket would wait for
// an edge that never comes, and notice the end only when the answer came
// (the change stop 45 reverted). The statement waits on a lock the test
// holds, so no answer can come first; the record then says 08006, not rows.
TEST_CASE("a statement that arrives with the client's FIN is recorded with 08006 at once") {
  namespace w = kanon::wire;
  auto& a = audited();
  const std::string app = "audit-fin-with-statement";
  // The policy is built and the session started before the lock is taken.
  REQUIRE(Client(with_app(a.proxy->conninfo("analyst"), app + "-before"))
              .simple("SELECT count(*) FROM people")
              .sqlstate.empty());
  Wire c(a.proxy->port(), app);
  Client holder(PgSandbox::shared().conninfo("postgres"));
  REQUIRE(holder.simple("BEGIN").sqlstate.empty());
  REQUIRE(holder.simple("LOCK TABLE public.people IN ACCESS EXCLUSIVE MODE").sqlstate.empty());
  c.send_and_end(w::Query{"SELECT count(*) FROM people"});
  const bool closed = c.closed_within(60);
  holder.simple("COMMIT");
  REQUIRE(closed);
  const auto r = records_when_any(a, app);
  REQUIRE(r.size() == 1);
  CHECK(r[0]["text"] == "SELECT count(*) FROM people");
  CHECK(r[0]["sqlstate"] == "08006");
  CHECK(r[0]["rows"].is_null());
}

// The audit trail's table is kanon's: a restricted role PostgreSQL lets read
// or write it (the analyst has pg_read_all_data here) neither reads the other
// analysts' statements nor touches its own records through kanon.
TEST_CASE("the audit table is out of a restricted session's reach") {
  auto& a = audited();
  const std::string app = "audit-own-table";
  {
    Client c(with_app(a.proxy->conninfo("analyst"), app));
    REQUIRE(c.simple("SELECT 1 AS one").sqlstate.empty());
  }
  // The table exists, and PostgreSQL's grants would let the analyst read it.
  CHECK(eventually([&] {
    Client direct(PgSandbox::shared().conninfo("analyst"));
    const auto n = direct.simple(
        "SELECT count(*) FROM public.kanon_audit_trail WHERE application_name = '" + app + "'");
    return n.sqlstate.empty() && n.first != "0";
  }));
  Client c(with_app(a.proxy->conninfo("analyst"), app + "-probe"));
  for (const std::string sql : {
           "SELECT statement FROM public.kanon_audit_trail",
           "SELECT count(*) FROM kanon_audit_trail",
           "SELECT * FROM \"public\".\"kanon_audit_trail\" LIMIT 1",
           "WITH t AS (SELECT * FROM public.kanon_audit_trail) SELECT count(*) FROM t",
           "DELETE FROM public.kanon_audit_trail WHERE user_name = 'analyst'",
           "UPDATE kanon_audit_trail SET statement = ''",
           "COPY public.kanon_audit_trail TO STDOUT",
       }) {
    CAPTURE(sql);
    const auto r = c.simple(sql);
    CHECK(r.sqlstate == "42501");
    CHECK(r.message.find("public.kanon_audit_trail (kanon rule kanon-internal)") !=
          std::string::npos);
    CHECK(c.simple("SELECT 41 + 1").first == "42");
  }
  // A table of its own under another name is the analyst's to read.
  CHECK(c.simple("CREATE TEMP TABLE trail_notes (n int)").sqlstate.empty());
  CHECK(c.simple("SELECT count(*) FROM trail_notes").first == "0");
}

// What reads the audit table is as internal as the table: a view or a SQL
// function an administrator made over it, and code a login runs with its
// own privileges when its only read is the audit table (before the table was
// part of the catalog's reach, such a login counted as reading nothing
// protected, and its DO blocks ran).
TEST_CASE("views and functions over the audit table, and code of a login that may read it") {
  auto& a = audited();
  const std::string app = "audit-over-table";
  auto& pg = PgSandbox::shared();
  {
    Client c(with_app(a.proxy->conninfo("analyst"), app));
    REQUIRE(c.simple("SELECT 1 AS one").sqlstate.empty());
  }
  REQUIRE(eventually(
      [&] { return pg.psql("SELECT count(*) > 0 FROM public.kanon_audit_trail") == "t\n"; }));
  pg.psql(
      "CREATE OR REPLACE VIEW public.my_trail AS SELECT statement FROM public.kanon_audit_trail "
      "WHERE user_name = current_user; "
      "CREATE OR REPLACE FUNCTION public.trail_count() RETURNS bigint LANGUAGE sql STABLE "
      "AS 'SELECT count(*) FROM public.kanon_audit_trail'; "
      "GRANT SELECT ON public.my_trail TO analyst; "
      "DO $$BEGIN CREATE ROLE trail_reader LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; "
      "END$$; "
      "GRANT SELECT ON public.kanon_audit_trail TO trail_reader");
  {
    Client c(with_app(a.proxy->conninfo("analyst"), app + "-view"));
    for (const auto& [sql, object] : std::vector<std::pair<std::string, std::string>>{
             {"SELECT count(*) FROM public.my_trail", "public.my_trail (reaches "},
             {"SELECT * FROM my_trail", "public.my_trail (reaches "},
             {"SELECT public.trail_count()", "public.trail_count (reads "},
             {"SELECT 1 WHERE trail_count() > 0", "public.trail_count (reads "},
         }) {
      CAPTURE(sql);
      const auto r = c.simple(sql);
      CHECK(r.sqlstate == "42501");
      CHECK(r.message.find(object + "public.kanon_audit_trail)") != std::string::npos);
      CHECK(r.message.find("kanon rule kanon-internal") != std::string::npos);
      CHECK(c.simple("SELECT 41 + 1").first == "42");
    }
  }
  {
    // Directly, PostgreSQL lets this login read the trail and nothing else.
    Client direct(PgSandbox::shared().conninfo("trail_reader"));
    REQUIRE(direct.simple("SELECT count(*) > 0 FROM public.kanon_audit_trail").first == "t");
    Client c(with_app(a.proxy->conninfo("trail_reader"), app + "-code"));
    const auto r = c.simple(
        "DO $$BEGIN RAISE NOTICE 'trail %', (SELECT max(statement) FROM "
        "public.kanon_audit_trail); END$$");
    CHECK(r.sqlstate == "42501");
    const auto fn = c.simple(
        "CREATE FUNCTION pg_temp.peek() RETURNS text LANGUAGE plpgsql AS "
        "$$BEGIN RETURN (SELECT max(statement) FROM public.kanon_audit_trail); END$$");
    CHECK(fn.sqlstate == "42501");
    CHECK(c.simple("SELECT 41 + 1").first == "42");
  }
  pg.psql(
      "DROP VIEW public.my_trail; DROP FUNCTION public.trail_count(); "
      "REVOKE ALL ON public.kanon_audit_trail FROM trail_reader");
}

TEST_CASE("SHOW AUDIT lists the latest records; /metrics counts them") {
  auto& a = audited();
  {
    Client c(with_app(a.proxy->conninfo("analyst"), "audit-console"));
    c.simple("SELECT state FROM people");
  }
  std::string shown;
  CHECK(eventually([&] {
    shown = a.console("SHOW AUDIT");
    return shown.find("audit-console") != std::string::npos;
  }));
  // The last row is the latest record.
  const std::string last = shown.substr(shown.rfind('\n', shown.size() - 2) + 1);
  CHECK(last.find("|analyst|postgres|") != std::string::npos);
  CHECK(last.find("|audit-console|") != std::string::npos);
  CHECK(last.find("|simple|") != std::string::npos);
  CHECK(last.find("|rewritten||") != std::string::npos);
  CHECK(last.find("|public.people|") != std::string::npos);
  CHECK(last.find("|11|") != std::string::npos);
  CHECK(last.find("|SELECT state FROM people\n") != std::string::npos);
  CHECK(a.console("SHOW HELP").find("SHOW AUDIT") != std::string::npos);
  const std::string stats = a.console("SHOW STATS");
  CHECK(stats.find("\naudit_lost|0\n") != std::string::npos);
  CHECK(stats.find("\naudit_records|") != std::string::npos);

  const std::string m = http_get(a.metrics_port, "/metrics");
  CHECK(metric(m, "kanon_audit_records_total") >= 6);
  CHECK(metric(m, "kanon_audit_lost_total") == 0);
  CHECK(metric(m, "kanon_audit_sink_up{sink=\"file\"}") == 1);
  CHECK(metric(m, "kanon_audit_sink_up{sink=\"table\"}") == 1);
}

TEST_CASE("logrotate: rename the file, SIGHUP, and every record is in one file exactly once") {
  auto& a = audited();
  const std::string app = "audit-rotate";
  const std::string rotated = a.file + ".1";
  constexpr int kStatements = 300;  // a third before, a third during, a third after the reopen
  Client c(with_app(a.proxy->conninfo("analyst"), app));
  const auto run = [&](int from, int to) {
    for (int i = from; i < to; ++i) c.simple("SELECT " + std::to_string(i) + " AS n");
  };
  run(0, kStatements / 3);
  CHECK(eventually([&] { return !records_of(read_records(a.file), app).empty(); }));
  // Rotate while statements keep coming.
  std::thread during([&] { run(kStatements / 3, 2 * kStatements / 3); });
  std::filesystem::rename(a.file, rotated);
  REQUIRE(kill(a.proxy->process().pid(), SIGHUP) == 0);
  during.join();
  CHECK(eventually(
      [&] { return a.proxy->log().find("audit: reopened file " + a.file) != std::string::npos; }));
  run(2 * kStatements / 3, kStatements);
  std::map<std::string, int> seen;
  size_t in_old = 0, in_new = 0;
  CHECK(eventually([&] {
    seen.clear();
    const auto old_records = records_of(read_records(rotated), app);
    const auto new_records = records_of(read_records(a.file), app);
    in_old = old_records.size();
    in_new = new_records.size();
    for (const auto* list : {&old_records, &new_records})
      for (const auto& r : *list) ++seen[r["text"].get<std::string>()];
    return seen.size() == kStatements;
  }));
  CHECK(seen.size() == kStatements);
  for (int i = 0; i < kStatements; ++i)
    CHECK_MESSAGE(seen["SELECT " + std::to_string(i) + " AS n"] == 1, "statement " << i);
  CHECK(in_old + in_new == kStatements);
  CHECK(in_old > 0);                 // written before the reopen: in the moved file
  CHECK(in_new >= kStatements / 3);  // everything after the reopen: in the new file
}

TEST_CASE(
    "a table sink that cannot be written: deny by default, the session recovers; text: none") {
  auto& pg = PgSandbox::shared();
  pg.psql("DROP SCHEMA IF EXISTS audit_deny CASCADE");
  const uint16_t metrics_port = free_port();
  KanonProxy proxy(
      pg.port(), policies_yaml() + "metrics: {listen: \"127.0.0.1:" + std::to_string(metrics_port) +
                     "\"}\naudit: {table: audit_deny.trail, text: none, exempt: true}\n");
  Client c(with_app(proxy.conninfo("analyst"), "audit-deny"));
  const auto denied = c.simple("SELECT city FROM people");
  CHECK(denied.sqlstate == "42501");
  CHECK(denied.message.find("restricted statements are refused while kanon cannot write its "
                            "audit trail: table audit_deny.trail (kanon rule "
                            "audit-unavailable)") != std::string::npos);
  const auto again = c.simple("SELECT 1");  // the session is still usable
  CHECK(again.sqlstate == "42501");
  Client exempt(with_app(proxy.conninfo("postgres"), "audit-deny-exempt"));
  CHECK(exempt.simple("SELECT city FROM people").rows == 11);  // relayed untouched: never denied
  CHECK(proxy.log().find("audit: table audit_deny.trail is down") != std::string::npos);
  CHECK(http_get(metrics_port, "/readyz").find("503 Service Unavailable") != std::string::npos);
  CHECK(http_get(metrics_port, "/readyz")
            .find("not ready: the audit trail cannot take records (table audit_deny.trail)") !=
        std::string::npos);
  // Once the table can be created, the sink comes back and statements pass.
  pg.psql("CREATE SCHEMA audit_deny");
  CHECK(eventually([&] { return c.simple("SELECT city FROM people").sqlstate.empty(); }));
  CHECK(http_get(metrics_port, "/readyz").find("200 OK") != std::string::npos);
  CHECK(eventually([&] {
    return pg.psql(
               "SELECT count(*) FROM audit_deny.trail WHERE decision = 'rewritten' AND "
               "application_name = 'audit-deny'") != "0\n";
  }));
  // audit.exempt: true records exempt sessions too.
  exempt.simple("SELECT name FROM people");
  CHECK(eventually([&] {
    return pg.psql(
               "SELECT count(*) FROM audit_deny.trail WHERE decision = 'exempt' AND "
               "user_name = 'postgres' AND rows = 11") != "0\n";
  }));
  // text: none keeps the fingerprint, never the text (exempt sessions have none).
  CHECK(pg.psql("SELECT count(*) FROM audit_deny.trail WHERE decision = 'exempt' AND "
                "fingerprint IS NOT NULL") == "0\n");
  pg.psql("DELETE FROM audit_deny.trail WHERE decision = 'exempt'");
  CHECK(pg.psql("SELECT count(*) FROM audit_deny.trail WHERE statement IS NOT NULL OR "
                "fingerprint IS NULL") == "0\n");
  // A write that fails after the sink opened (a trigger rejecting rows) lost
  // the records of the statements already served, also with on_failure:
  // deny (found by an adversarial probe). They are held and written when the
  // table takes rows again.
  pg.psql(
      "CREATE TABLE audit_deny.block (b boolean); "
      "CREATE FUNCTION audit_deny.reject() RETURNS trigger LANGUAGE plpgsql AS "
      "$$BEGIN IF EXISTS (SELECT FROM audit_deny.block) THEN RAISE EXCEPTION 'refused'; END IF; "
      "RETURN NEW; END$$; "
      "CREATE TRIGGER reject BEFORE INSERT ON audit_deny.trail FOR EACH ROW "
      "EXECUTE FUNCTION audit_deny.reject(); "
      "INSERT INTO audit_deny.block VALUES (true)");
  {
    Client held(with_app(proxy.conninfo("analyst"), "audit-held"));
    CHECK(held.simple("SELECT city FROM people").rows == 11);  // the sink is up: served
  }
  CHECK(eventually([&] { return c.simple("SELECT city FROM people").sqlstate == "42501"; }));
  CHECK(proxy.log().find("refused") != std::string::npos);
  pg.psql("DELETE FROM audit_deny.block");
  CHECK(eventually([&] { return c.simple("SELECT city FROM people").sqlstate.empty(); }));
  CHECK(eventually([&] {
    return pg.psql(
               "SELECT count(*) FROM audit_deny.trail WHERE decision = 'rewritten' AND "
               "application_name = 'audit-held' AND rows = 11") == "1\n";
  }));
  CHECK(metric(http_get(metrics_port, "/metrics"), "kanon_audit_lost_total") == 0);
  pg.psql("DROP TRIGGER reject ON audit_deny.trail");
  // A table kanon cannot insert into (a column renamed) does not open: the
  // first statement is denied, not served with its record lost (found by an
  // adversarial probe: the sink opened, was reported up, and lost the
  // records of the statements it let through until a write failed).
  pg.psql("ALTER TABLE audit_deny.trail RENAME COLUMN at TO at_renamed");
  {
    KanonProxy broken(pg.port(),
                      policies_yaml() + "audit: {table: audit_deny.trail, text: none}\n");
    Client b(with_app(broken.conninfo("analyst"), "audit-broken"));
    const auto first = b.simple("SELECT city FROM people");
    CHECK(first.sqlstate == "42501");
    CHECK(first.message.find("audit-unavailable") != std::string::npos);
    CHECK(broken.log().find("column \"at\"") != std::string::npos);
    pg.psql("ALTER TABLE audit_deny.trail RENAME COLUMN at_renamed TO at");
    CHECK(eventually([&] { return b.simple("SELECT city FROM people").sqlstate.empty(); }));
  }
  pg.psql("DROP SCHEMA audit_deny CASCADE");
}

TEST_CASE(
    "on_failure: continue lets statements pass, holds queue_size records and counts the rest "
    "lost") {
  auto& pg = PgSandbox::shared();
  pg.psql("DROP SCHEMA IF EXISTS audit_lost CASCADE");
  const uint16_t metrics_port = free_port();
  KanonProxy proxy(pg.port(), policies_yaml() +
                                  "metrics: {listen: \"127.0.0.1:" + std::to_string(metrics_port) +
                                  "\"}\naudit: {table: audit_lost.trail, on_failure: continue, "
                                  "queue_size: 3}\n");
  Client c(with_app(proxy.conninfo("analyst"), "audit-continue"));
  for (int i = 0; i < 5; ++i) {
    const auto r = c.simple("SELECT city FROM people");
    CHECK(r.sqlstate == "");
    CHECK(r.rows == 11);
  }
  std::string m;
  CHECK(eventually([&] {
    m = http_get(metrics_port, "/metrics");
    return metric(m, "kanon_audit_lost_total") >= 2;
  }));
  CHECK(metric(m, "kanon_audit_lost_total") == 2);  // 3 held for the table
  CHECK(metric(m, "kanon_audit_records_total") == 5);
  CHECK(metric(m, "kanon_audit_sink_up{sink=\"table\"}") == 0);
  CHECK(metric(m, "kanon_statements_rewritten_total") == 5);
  // The schema appears: the table is created and takes the held records.
  pg.psql("CREATE SCHEMA audit_lost");
  CHECK(eventually([&] {
    if (pg.psql("SELECT to_regclass('audit_lost.trail') IS NULL") == "t\n") return false;
    return pg.psql(
               "SELECT count(*) FROM audit_lost.trail WHERE application_name = "
               "'audit-continue'") == "3\n";
  }));
  CHECK(metric(http_get(metrics_port, "/metrics"), "kanon_audit_lost_total") == 2);
  pg.psql("DROP SCHEMA audit_lost CASCADE");
}
