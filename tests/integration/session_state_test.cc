// Adversarial suite: what a restricted session can change about its own
// session must not change what kanon's masks release. The masks see raw
// values, so an operator, function or type the session puts on its
// search_path would be handed every raw value if kanon wrote a bare `=`;
// date, time and number settings change how literals are read. Each case
// reads the protected tables as a restricted login through kanon after
// changing a setting one way or another (SET, SET LOCAL, set_config, the
// start-up packet's options, ALTER ROLE ... SET, in the same message as the
// query, both protocols) and compares with the same read in a session with
// PostgreSQL's defaults: the releases must be identical, and nothing the
// planted operator could have recorded may hold a raw value.
#include <doctest/doctest.h>

#include <fstream>
#include <pqxx/pqxx>

#include "tests/support/kanon_proxy.h"
#include "tests/support/pg_sandbox.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/statement_outcome.h"
#include "tests/support/wire_session.h"

using namespace kanon::testing;

namespace {

// Values of public.people its tree never releases, and direct identifiers.
const std::vector<std::string> kForbidden = {"Lawyer",  "Washington",   "Columbus", "Withamsville",
                                             "Whately", "College Park", "Bellevue", "DC",
                                             "MA",      "MD",           "KY",       "Ada Quill"};

// A schema the analyst owns, with an `=` for text whose function records
// both arguments, and a type named like pg_catalog's.
const char* const kPlanted = R"(
CREATE ROLE state_analyst LOGIN IN ROLE pg_read_all_data;
GRANT state_analyst TO analyst;
CREATE SCHEMA evil AUTHORIZATION analyst;
GRANT USAGE, CREATE ON SCHEMA evil TO state_analyst;
SET ROLE analyst;
CREATE TABLE evil.loot (v text);
GRANT INSERT, SELECT ON evil.loot TO PUBLIC;
CREATE FUNCTION evil.grab(a text, b text) RETURNS boolean LANGUAGE sql VOLATILE AS
  'INSERT INTO evil.loot VALUES (a), (b) RETURNING a OPERATOR(pg_catalog.=) b';
CREATE OPERATOR evil.= (FUNCTION = evil.grab, LEFTARG = text, RIGHTARG = text);
CREATE FUNCTION evil.texteq(a text, b text) RETURNS boolean LANGUAGE sql VOLATILE AS
  'INSERT INTO evil.loot VALUES (a) RETURNING true';
CREATE TYPE evil.text AS (v pg_catalog.text);
CREATE TYPE evil.int4 AS (v pg_catalog.int4);
RESET ROLE;
CREATE TABLE public.events (id int PRIMARY KEY, day date, at timestamptz, score float8,
                            span interval, city text, tags text[]);
INSERT INTO public.events
  SELECT g, date '2024-01-01' + (g % 3), timestamptz '2024-03-01 10:00:00+00' + (g % 2) * interval '90 minutes',
         (g % 4) / 3.0, (g % 3) * interval '1 day 2 hours', (ARRAY['Bern', 'Chur', 'Sion'])[1 + g % 3],
         CASE WHEN g <= 24 THEN ARRAY['x', NULL] ELSE ARRAY['y'] END
  FROM generate_series(1, 40) g;
CREATE TABLE public.people2 AS SELECT * FROM public.people;
ALTER TABLE public.people2 ADD PRIMARY KEY (id);
CREATE SCHEMA moved;
INSERT INTO public.events VALUES (41, '2031-12-31', '2031-12-31 23:59:59.5+05', 0.1, '7 years', 'Zug', '{y}');
-- An array holding the string "NULL" where the others hold a NULL: what
-- '{x,NULL}' reads as under array_nulls = off.
INSERT INTO public.events SELECT 42, day, at, score, span, city, '{x,"NULL"}' FROM public.events WHERE id = 1;
)";

std::string policy_file() {
  const std::string path = scratch_path("kanon-state-policy.yaml");
  std::ofstream(path) << "tables:\n"
                         "  - table: public.people\n"
                         "    k: 2\n"
                         "    quasi_identifiers: [occupation, city, state]\n"
                         "    direct_identifiers: {name: null, ssn: \"***\"}\n"
                         "    exempt: [postgres]\n"
                         "    refresh: 1h\n"
                         "  - table: public.people2\n"
                         "    k: 2\n"
                         "    quasi_identifiers: [occupation, city, state]\n"
                         "    direct_identifiers: {name: null, ssn: \"***\"}\n"
                         "    exempt: [postgres]\n"
                         "    refresh: 1h\n"
                         "  - table: public.events\n"
                         "    k: 3\n"
                         "    quasi_identifiers: [day, at, score, span, city, tags]\n"
                         "    exempt: [postgres]\n"
                         "    refresh: 1h\n";
  return path;
}

struct Fixture {
  Fixture() {
    auto& pg = PgSandbox::shared();
    pg.psql(kPlanted);
    proxy = std::make_unique<KanonProxy>(
        pg.port(),
        "policies: [" + policy_file() + "]\nadmin: {database: kanon, users: [postgres]}\n");
  }
  std::unique_ptr<KanonProxy> proxy;
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

// What a read releases, in a form no session setting changes.
const std::string kPeople = "SELECT id, occupation, city, state, name, ssn FROM people ORDER BY id";
const std::string kEvents =
    "SELECT id, day - date '2000-01-01', extract(epoch FROM at)::bigint, score::numeric(8, 4), "
    "extract(epoch FROM span)::bigint, city, tags FROM events ORDER BY id";

std::string loot() {
  pqxx::connection direct(PgSandbox::shared().conninfo("postgres"));
  pqxx::nontransaction tx(direct);
  std::string all;
  for (const auto& r : tx.exec("SELECT v FROM evil.loot")) all += r[0].c_str() + std::string("|");
  tx.exec("TRUNCATE evil.loot");
  return all;
}

struct Reference {
  std::string people, events;
};

const Reference& reference() {
  static const Reference ref = [] {
    pqxx::connection analyst(fixture().proxy->conninfo("analyst"));
    Reference r{run(analyst, kPeople).rows, run(analyst, kEvents).rows};
    REQUIRE(r.people.find("Hamlet") != std::string::npos);  // something is released
    for (const auto& v : kForbidden) REQUIRE(r.people.find(v) == std::string::npos);
    REQUIRE(r.events.find("<null>") != std::string::npos);        // and something is not
    REQUIRE(r.events.find("{x,NULL}") != std::string::npos);      // arrays with NULL elements too
    REQUIRE(r.events.find("{x,\"NULL\"}") == std::string::npos);  // but not the one string
    return r;
  }();
  return ref;
}

// After `setup` (run as one simple Query, or statement by statement), the
// reads return exactly the reference, and the planted operator saw nothing.
void check_session(pqxx::connection& c, const std::string& setup, bool same_message,
                   bool extended) {
  CAPTURE(setup);
  CAPTURE(same_message);
  CAPTURE(extended);
  const Reference& ref = reference();
  if (same_message) {
    const Outcome o = run(c, setup + "; " + kPeople, false);
    CHECK_MESSAGE(o.sqlstate.empty(), o.message);
    CHECK(o.rows == ref.people);
  } else if (!setup.empty()) {
    const Outcome o = run(c, setup, false);
    CHECK_MESSAGE(o.sqlstate.empty(), o.message);
  }
  const Outcome people = run(c, kPeople, extended);
  CHECK_MESSAGE(people.sqlstate.empty(), people.message);
  CHECK(people.rows == ref.people);
  const Outcome events = run(c, kEvents, extended);
  CHECK_MESSAGE(events.sqlstate.empty(), events.message);
  CHECK(events.rows == ref.events);
  const std::string recorded = loot();
  for (const auto& v : kForbidden) {
    CAPTURE(v);
    CHECK_MESSAGE(recorded.find(v) == std::string::npos, recorded);
  }
  CHECK(recorded.find("Hamlet") == std::string::npos);  // not even released values
}

// Each setup in a new session: before the reads (simple, then extended
// protocol), and in the same Query message as the read.
void check_setups(const std::vector<std::string>& setups) {
  for (bool extended : {false, true}) {
    for (const auto& setup : setups) {
      pqxx::connection analyst(fixture().proxy->conninfo("analyst"));
      check_session(analyst, setup, false, extended);
    }
  }
  for (const auto& setup : setups) {
    pqxx::connection analyst(fixture().proxy->conninfo("analyst"));
    check_session(analyst, setup, true, false);
  }
}

const std::string kEvilPath = "evil, pg_catalog, public";

// The status column of `table` in the admin console's SHOW POLICIES; a
// failed check when the table is not listed.
std::string policy_status(const std::string& table) {
  pqxx::connection admin(fixture().proxy->conninfo("postgres", "kanon"));
  pqxx::nontransaction tx(admin);
  for (const auto& row : tx.exec("SHOW POLICIES"))
    if (row["table"].c_str() == table) return row["status"].c_str();
  FAIL_CHECK("SHOW POLICIES does not list " << table);
  return {};
}

}  // namespace

TEST_CASE("session state: an operator planted on the search_path never sees a raw value") {
  auto& f = fixture();
  const std::vector<std::string> setups = {
      "SET search_path = " + kEvilPath,
      "SET SESSION search_path TO " + kEvilPath,
      "SELECT pg_catalog.set_config('search_path', '" + kEvilPath + "', false)",
      "SELECT set_config('search_path', '" + kEvilPath + "', false)",
      "SET search_path = evil, public",  // pg_catalog implicitly first: harmless, still checked
      "SET search_path = evil, pg_catalog, public; RESET search_path; SET search_path = " +
          kEvilPath,
      "BEGIN; SET LOCAL search_path = " + kEvilPath + "; ROLLBACK; SET search_path = " + kEvilPath,
  };
  check_setups(setups);
  // Inside a transaction, with SET LOCAL.
  {
    pqxx::connection analyst(f.proxy->conninfo("analyst"));
    const Outcome o =
        run(analyst, "BEGIN; SET LOCAL search_path = " + kEvilPath + "; " + kPeople + "; COMMIT");
    CHECK_MESSAGE(o.sqlstate.empty(), o.message);
    CHECK(loot().empty());
    pqxx::work tx(analyst);
    tx.exec("SET LOCAL search_path = " + kEvilPath);
    CHECK(render(tx.exec(kPeople)) == reference().people);
    tx.commit();
    CHECK(loot().empty());
  }
  // The start-up packet's options, and a role's own default.
  {
    pqxx::connection analyst(f.proxy->conninfo("analyst") +
                             " options='-c search_path=evil,pg_catalog,public'");
    CHECK(run(analyst, "SHOW search_path").rows == "evil,pg_catalog,public|\n");
    check_session(analyst, "", false, false);
    check_session(analyst, "", false, true);
  }
  {
    PgSandbox::shared().psql("ALTER ROLE state_analyst SET search_path = " + kEvilPath);
    pqxx::connection analyst(f.proxy->conninfo("state_analyst"));
    CHECK(run(analyst, "SHOW search_path").rows == "evil, pg_catalog, public|\n");
    check_session(analyst, "", false, false);
    check_session(analyst, "", false, true);
  }
  // The planted operator works: the same read without kanon, by a session
  // that can read the table directly, hands it the values (the test can fail).
  {
    pqxx::connection direct(PgSandbox::shared().conninfo("state_analyst"));
    pqxx::nontransaction tx(direct);
    tx.exec("SELECT count(*) FROM public.people WHERE city = 'Hamlet'");
    CHECK(loot().find("Washington") != std::string::npos);
  }
}

TEST_CASE("session state: date, time, number and string settings release the same rows") {
  const std::vector<std::string> setups = {
      "SET DateStyle = 'SQL, DMY'",
      "SET DateStyle = 'German'",
      "SET DateStyle = 'Postgres, MDY'",
      "SET TimeZone = 'Pacific/Kiritimati'",
      "SET TIME ZONE -11",
      "SET IntervalStyle = 'sql_standard'",
      "SET IntervalStyle = 'iso_8601'",
      "SET extra_float_digits = -15",
      "SET extra_float_digits = 3",
      "SET standard_conforming_strings = off",
      "SET array_nulls = off",
      "SELECT set_config('array_nulls', 'off', false)",
      "SET transform_null_equals = on",
      "SELECT set_config('datestyle', 'SQL, DMY', false)",
      "SET ROLE state_analyst",
      "SELECT set_config('role', 'state_analyst', false)",
  };
  check_setups(setups);
  // The start-up packet's options: array_nulls off from the first statement.
  pqxx::connection analyst(fixture().proxy->conninfo("analyst") + " options='-c array_nulls=off'");
  CHECK(run(analyst, "SHOW array_nulls").rows == "off|\n");
  check_session(analyst, "", false, false);
  check_session(analyst, "", false, true);
}

TEST_CASE(
    "object identity: a protected table renamed or moved stays protected; its old name is "
    "denied") {
  auto& f = fixture();
  auto& pg = PgSandbox::shared();
  const std::string read2 = "SELECT id, occupation, city, state, name, ssn FROM ";
  pqxx::connection analyst(f.proxy->conninfo("analyst"));
  const std::string before = run(analyst, read2 + "people2 ORDER BY id").rows;
  REQUIRE(before == reference().people);  // the same rows, the same tree
  const auto masked_or_denied = [&](const std::string& sql, bool extended) {
    CAPTURE(sql);
    CAPTURE(extended);
    const Outcome o = run(analyst, sql, extended);
    if (o.sqlstate.empty()) {
      CHECK(o.rows == before);
    } else {
      CHECK_MESSAGE(o.sqlstate == "42501", o.message);
    }
    for (const auto& v : kForbidden) CHECK(o.rows.find(v) == std::string::npos);
    return o;
  };
  // Renamed: the first statement after the DDL committed, in both protocols,
  // and through a new session.
  pg.psql("ALTER TABLE public.people2 RENAME TO people3");
  for (bool extended : {false, true}) {
    // Served, masked, under the new name, bare and qualified.
    for (const char* name : {"people3", "public.people3"}) {
      const Outcome o = masked_or_denied(read2 + name + " ORDER BY id", extended);
      CHECK_MESSAGE(o.sqlstate.empty(), o.message);
    }
  }
  // The admin console says what happened.
  CHECK(policy_status("public.people2").find("renamed to public.people3") != std::string::npos);
  // Moved to another schema.
  pg.psql("ALTER TABLE public.people3 SET SCHEMA moved");
  for (bool extended : {false, true}) {
    const Outcome o = masked_or_denied(read2 + "moved.people3 ORDER BY id", extended);
    CHECK_MESSAGE(o.sqlstate.empty(), o.message);
  }
  // Another object takes the protected name: denied until a build covers it.
  pg.psql("CREATE TABLE public.people2 AS SELECT * FROM public.people");
  for (bool extended : {false, true}) {
    const Outcome o = run(analyst, read2 + "people2 ORDER BY id", extended);
    CHECK(o.sqlstate == "42501");
    CHECK_MESSAGE(o.message.find("public.people2") != std::string::npos, o.message);
    CHECK(o.rows.empty());
  }
  // A refresh in between builds the name's new table: refused while the
  // table the policy protected exists under another name, which keeps its
  // tree; the name stays denied.
  {
    pqxx::connection admin(f.proxy->conninfo("postgres", "kanon"));
    pqxx::nontransaction tx(admin);
    std::string refresh_error;
    try {
      tx.exec("REFRESH public.people2");
    } catch (const pqxx::sql_error& e) {
      refresh_error = e.what();
    }
    CHECK_MESSAGE(refresh_error.find("was renamed to moved.people3") != std::string::npos,
                  refresh_error);
  }
  CHECK(policy_status("public.people2").find("renamed to moved.people3") != std::string::npos);
  for (bool extended : {false, true}) {
    const Outcome o = masked_or_denied(read2 + "moved.people3 ORDER BY id", extended);
    CHECK_MESSAGE(o.sqlstate.empty(), o.message);
    CHECK(run(analyst, read2 + "people2 ORDER BY id", extended).sqlstate == "42501");
  }
  // A renamed quasi-identifier column stays masked (or the read fails).
  pg.psql("ALTER TABLE moved.people3 RENAME COLUMN city TO town");
  for (bool extended : {false, true}) {
    const Outcome o = run(analyst, "SELECT * FROM moved.people3 ORDER BY id", extended);
    CAPTURE(o.message);
    for (const auto& v : kForbidden) CHECK(o.rows.find(v) == std::string::npos);
  }
}

// restricted_settings go to PostgreSQL inside the start-up `options`, after
// the client's own; PostgreSQL applies plain start-up parameters after
// `options`, so a client's `jit=on` (or `JIT=on`) won until kanon dropped it.
TEST_CASE("session state: a start-up parameter does not override restricted_settings") {
  KanonProxy proxy(
      PgSandbox::shared().port(),
      "policies: [" + policy_file() + "]\nrestricted_settings: {jit: 'off', work_mem: '3MB'}\n");
  for (const auto& [name, value] : std::vector<std::pair<std::string, std::string>>{
           {"jit", "on"}, {"JIT", "on"}, {"work_mem", "64MB"}}) {
    CAPTURE(name);
    WireSession w(proxy.port(), {{"user", "analyst"}, {"database", "postgres"}, {name, value}});
    w.send(
        kanon::wire::Query{"SELECT current_setting('jit') || ',' || "
                           "current_setting('work_mem')"});
    const std::string bytes = w.until('Z', 30);
    CHECK_MESSAGE(bytes.find("off,3MB") != std::string::npos, bytes);
  }
  // An exempt login keeps what it asked for.
  WireSession exempt(proxy.port(), {{"user", "postgres"}, {"database", "postgres"}, {"jit", "on"}});
  exempt.send(kanon::wire::Query{"SELECT current_setting('jit')"});
  CHECK(exempt.until('Z', 30).find("on") != std::string::npos);
}
