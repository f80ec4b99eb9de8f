// The reachability suite: a restricted user (analyst) tries every path around
// the masks that goes through another object — views (nested, aliased,
// security_barrier, security_invoker, WITH CHECK OPTION), materialized views,
// SQL and PL/pgSQL functions, set-returning functions in FROM, rules and
// triggers on tables it may write, inheritance children and partitions,
// foreign tables — created before the policy was built and after it, renamed,
// replaced, and reached through every statement form the rewriter accepts,
// with both query protocols. A case passes when the result equals the same
// statement over physically masked tables (schema `oracle`, the same objects
// over `masked.people`) or when it is denied with 42501 and a message naming
// the object; no raw value may ever come back.
#include <doctest/doctest.h>

#include <chrono>
#include <fstream>
#include <pqxx/pqxx>
#include <thread>

#include "tests/support/kanon_proxy.h"
#include "tests/support/pg_sandbox.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/statement_outcome.h"
#include "tests/support/wait.h"

using namespace kanon::testing;

namespace {

// Values of public.people the tree releases nowhere, and direct identifiers.
const std::vector<std::string> kForbidden = {
    "Lawyer",       "Washington", "Columbus",     "Withamsville", "Whately",
    "College Park", "Bellevue",   "DC",           "MA",           "MD",
    "KY",           "Ada Quill",  "Kit Donnelly", "Cora Vance",   "100-00-00"};

// The objects an administrator made, in schema {s} over table {t}: created
// once as app.* over public.people and once as oracle.* over masked.people.
std::string objects(const std::string& s, const std::string& t) {
  std::string sql = R"(
CREATE SCHEMA {s};
CREATE TABLE {s}.plain (id int PRIMARY KEY, label text);
INSERT INTO {s}.plain SELECT g, 'label ' || g FROM generate_series(1, 11) g;
CREATE VIEW {s}.v_people AS SELECT * FROM {t};
CREATE VIEW {s}.v_cols (o, c) AS SELECT occupation, city FROM {t};
CREATE VIEW {s}.v_nested1 AS SELECT * FROM {s}.v_people WHERE id > 0;
CREATE VIEW {s}.v_nested2 AS SELECT occupation, state, count(*) AS n FROM {s}.v_nested1
  GROUP BY occupation, state;
CREATE VIEW {s}.v_nested3 AS SELECT * FROM {s}.v_nested2 WHERE n > 0;
CREATE VIEW {s}.v_check AS SELECT * FROM {t} WHERE id < 100 WITH CHECK OPTION;
CREATE VIEW {s}.v_barrier WITH (security_barrier) AS SELECT id, city, state FROM {t}
  WHERE id > 0;
CREATE VIEW {s}.v_invoker WITH (security_invoker) AS SELECT id, occupation FROM {t};
CREATE VIEW {s}.v_join AS SELECT p.id, p.city, u.label FROM {t} p JOIN {s}.plain u
  ON u.id = p.id;
CREATE VIEW {s}.v_agg AS SELECT state, count(*) AS n, min(city) AS first_city FROM {t}
  GROUP BY state;
CREATE VIEW {s}.v_case AS SELECT id, CASE WHEN occupation = 'Farmer' THEN 'agri'
  ELSE occupation END AS job, upper(city) AS city_uc FROM {t};
CREATE VIEW {s}.v_union AS SELECT city AS place FROM {t} UNION ALL
  SELECT label FROM {s}.plain;
CREATE VIEW {s}.v_sub AS SELECT id, (SELECT max(q.state) FROM {t} q WHERE q.id = p.id)
  AS st FROM {s}.plain p;
CREATE VIEW {s}.v_plain AS SELECT * FROM {s}.plain;
CREATE VIEW {s}.v_replaced AS SELECT id, label AS city FROM {s}.plain;
CREATE VIEW {s}.v_to_rename AS SELECT id, city FROM {t};
)";
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"{s}", s}, {"{t}", t}}) {
    for (size_t at = sql.find(from); at != std::string::npos; at = sql.find(from, at))
      sql.replace(at, from.size(), to);
  }
  return sql;
}

// Objects only on the kanon side: they are denied, so they need no oracle.
const char* const kDeniedObjects = R"(
CREATE MATERIALIZED VIEW app.mv AS SELECT * FROM public.people;
CREATE MATERIALIZED VIEW app.mv_plain AS SELECT * FROM app.plain;
CREATE FUNCTION app.f_sql() RETURNS text LANGUAGE sql AS 'SELECT max(city) FROM public.people';
CREATE FUNCTION app.f_atomic() RETURNS text LANGUAGE sql
  RETURN (SELECT max(city) FROM public.people);
CREATE FUNCTION app.f_begin_atomic() RETURNS SETOF text LANGUAGE sql
  BEGIN ATOMIC SELECT city FROM public.people; END;
CREATE FUNCTION app.f_nested() RETURNS text LANGUAGE sql AS 'SELECT app.f_sql()';
CREATE FUNCTION app.f_plpgsql() RETURNS text LANGUAGE plpgsql AS
  $$ BEGIN RETURN (SELECT max(city) FROM public.people); END $$;
CREATE FUNCTION app.f_allowed() RETURNS int LANGUAGE sql AS 'SELECT count(*)::int FROM public.people';
CREATE FUNCTION app.f_safe(x int) RETURNS int LANGUAGE sql AS 'SELECT x + 1';
CREATE FUNCTION app.f_safe_atomic(x int) RETURNS int LANGUAGE sql RETURN x * 2;
CREATE FUNCTION app.srf() RETURNS SETOF public.people LANGUAGE sql AS
  'SELECT * FROM public.people';
CREATE FUNCTION app.srf_plain() RETURNS SETOF app.plain LANGUAGE sql AS
  'SELECT * FROM app.plain';
CREATE VIEW app.v_unique AS SELECT id, city FROM public.people;
CREATE VIEW app.v_fn AS SELECT id, app.f_sql() AS c FROM app.plain;
CREATE VIEW app.v_mv AS SELECT * FROM app.mv;
CREATE TABLE app.log (v text);
CREATE TABLE app.trig_tab (id int);
CREATE FUNCTION app.copy_city() RETURNS trigger LANGUAGE plpgsql AS
  $$ BEGIN INSERT INTO app.log SELECT city FROM public.people; RETURN NEW; END $$;
CREATE TRIGGER copy_city AFTER INSERT ON app.trig_tab FOR EACH ROW EXECUTE FUNCTION app.copy_city();
CREATE TABLE app.rule_tab (id int);
CREATE RULE leak AS ON INSERT TO app.rule_tab DO ALSO INSERT INTO app.log
  SELECT city FROM public.people;
CREATE TABLE app.scratch (id int, v text);
CREATE FUNCTION app.op_city(int, int) RETURNS text LANGUAGE sql AS
  'SELECT max(city) FROM public.people';
CREATE OPERATOR app.### (FUNCTION = app.op_city, LEFTARG = int, RIGHTARG = int);
CREATE FUNCTION app.op_safe(int, int) RETURNS int LANGUAGE sql AS 'SELECT $1 * $2';
CREATE OPERATOR app.%%% (FUNCTION = app.op_safe, LEFTARG = int, RIGHTARG = int);
GRANT USAGE ON SCHEMA app TO analyst;
GRANT ALL ON ALL TABLES IN SCHEMA app TO analyst;
GRANT CREATE ON SCHEMA app TO analyst;
)";

enum class Expect { kOracle, kMasked, kDenied, kPasses };

struct Case {
  std::string sql;  // {s}: app through kanon, oracle directly
  Expect expect;
  std::string names = "";  // kDenied: the message names this object
  bool simple_only = false;
};

// Before anything is created after the build.
const std::vector<Case> kCases = {
    // Views an administrator created before the build: expanded, masked.
    {"SELECT * FROM {s}.v_people ORDER BY id", Expect::kOracle},
    {"SELECT o, c FROM {s}.v_cols ORDER BY 1, 2", Expect::kOracle},
    {"SELECT c FROM {s}.v_cols WHERE o = 'Lawyer'", Expect::kOracle},
    {"SELECT * FROM {s}.v_nested3 ORDER BY 1, 2", Expect::kOracle},
    {"SELECT * FROM {s}.v_nested2 ORDER BY 1, 2", Expect::kOracle},
    {"SELECT * FROM {s}.v_check ORDER BY id", Expect::kOracle},
    {"SELECT * FROM {s}.v_barrier WHERE city = 'Washington' ORDER BY id", Expect::kOracle},
    {"SELECT * FROM {s}.v_invoker ORDER BY id", Expect::kOracle},
    {"SELECT * FROM {s}.v_join ORDER BY id", Expect::kOracle},
    {"SELECT * FROM {s}.v_agg ORDER BY 1", Expect::kOracle},
    {"SELECT * FROM {s}.v_case ORDER BY id", Expect::kOracle},
    {"SELECT * FROM {s}.v_union ORDER BY 1", Expect::kOracle},
    {"SELECT * FROM {s}.v_sub ORDER BY id", Expect::kOracle},
    {"SELECT * FROM {s}.v_plain ORDER BY id", Expect::kOracle},
    {"SELECT v.c, count(*) FROM {s}.v_cols AS v(x, c) GROUP BY 1 ORDER BY 1", Expect::kOracle},
    {"SELECT x.* FROM {s}.v_people x WHERE x.state = 'OH' ORDER BY x.id", Expect::kOracle},
    {"SELECT p.city, v.label FROM {s}.v_people p JOIN {s}.plain v USING (id) ORDER BY 1, 2",
     Expect::kOracle},
    // Statement forms around a view.
    {"WITH w AS (SELECT * FROM {s}.v_people) SELECT city FROM w ORDER BY 1", Expect::kOracle},
    {"SELECT id FROM {s}.plain WHERE id IN (SELECT id FROM {s}.v_people WHERE city = "
     "'Washington') ORDER BY 1",
     Expect::kOracle},
    {"SELECT l.c FROM {s}.plain p, LATERAL (SELECT city AS c FROM {s}.v_people v WHERE v.id = "
     "p.id) l ORDER BY 1",
     Expect::kOracle},
    {"SELECT v FROM {s}.v_people v ORDER BY v.id", Expect::kOracle},
    {"SELECT row_to_json(v)::text FROM {s}.v_cols v ORDER BY 1", Expect::kOracle},
    {"TABLE {s}.v_people ORDER BY id", Expect::kOracle},
    {"SELECT (SELECT max(city) FROM {s}.v_people) AS m", Expect::kOracle},
    {"SELECT * FROM {s}.v_people WHERE id = 1 UNION ALL SELECT * FROM {s}.v_people WHERE id = 2 "
     "ORDER BY 1",
     Expect::kOracle},
    {"EXPLAIN (COSTS OFF) SELECT * FROM {s}.v_people", Expect::kMasked},
    {"PREPARE q AS SELECT city FROM {s}.v_people; EXECUTE q; DEALLOCATE q", Expect::kMasked, "",
     true},
    {"BEGIN; DECLARE c CURSOR FOR SELECT * FROM {s}.v_people; FETCH ALL FROM c; COMMIT",
     Expect::kMasked, "", true},
    // kanon does not know the session's search_path: a bare name that two
    // schemas define, one of them reaching a protected table, is denied...
    {"SET search_path = app, public; SELECT city FROM v_people ORDER BY 1", Expect::kDenied,
     "v_people", true},
    // ... and one that only one schema defines is that one.
    {"SET search_path = app, public; SELECT city FROM v_unique ORDER BY 1", Expect::kMasked, "",
     true},
    {"SELECT city FROM v_unique ORDER BY 1", Expect::kMasked},
    {"SELECT city FROM {s}.\"v_people\" ORDER BY 1", Expect::kOracle},
    {"SELECT city FROM {s}.V_PEOPLE ORDER BY 1", Expect::kOracle},
    // Functions.
    {"SELECT app.f_safe(41), app.f_safe_atomic(21)", Expect::kPasses},
    {"SELECT * FROM app.srf_plain() ORDER BY id", Expect::kPasses},
    {"SELECT app.f_sql()", Expect::kDenied, "app.f_sql"},
    // The policy lists it under allowed_functions: the administrator's word.
    {"SELECT app.f_allowed()", Expect::kPasses},
    {"SELECT app.f_atomic()", Expect::kDenied, "app.f_atomic"},
    {"SELECT * FROM app.f_begin_atomic()", Expect::kDenied, "app.f_begin_atomic"},
    {"SELECT app.f_nested()", Expect::kDenied, "app.f_nested"},
    {"SELECT app.f_plpgsql()", Expect::kDenied, "app.f_plpgsql"},
    {"SELECT * FROM app.srf()", Expect::kDenied, "app.srf"},
    {"SELECT * FROM ROWS FROM (app.srf_plain(), app.srf()) AS r", Expect::kDenied, "app.srf"},
    {"SELECT id FROM app.plain WHERE app.f_sql() IS NOT NULL", Expect::kDenied, "app.f_sql"},
    {"SELECT f_sql()", Expect::kDenied, "app.f_sql"},
    {"SELECT * FROM app.v_fn", Expect::kDenied, "app.f_sql"},
    // Operators run their function without its name in the text.
    {"SELECT 1 OPERATOR(app.###) 2", Expect::kDenied, "operator app.### (runs app.op_city"},
    {"SET search_path = app, public; SELECT 1 ### 2", Expect::kDenied, "operator app.###", true},
    {"SELECT id FROM app.plain ORDER BY id OPERATOR(app.###) 1", Expect::kDenied,
     "operator app.###"},
    {"SELECT 6 OPERATOR(app.%%%) 7", Expect::kPasses},
    // Materialized views.
    {"SELECT * FROM app.mv", Expect::kDenied, "app.mv"},
    {"SELECT count(*) FROM app.mv WHERE city = 'Washington'", Expect::kDenied, "app.mv"},
    {"SELECT * FROM app.v_mv", Expect::kDenied, "app.mv"},
    {"SELECT * FROM app.mv_plain ORDER BY id", Expect::kPasses},
    {"COPY app.mv TO STDOUT", Expect::kDenied, "app.mv", true},
    // Writes through objects that reach a protected table.
    {"INSERT INTO app.scratch SELECT id, city FROM app.v_people", Expect::kDenied, "app.v_people"},
    {"UPDATE app.v_people SET city = 'x' WHERE false", Expect::kDenied, "app.v_people"},
    {"DELETE FROM app.v_check WHERE false", Expect::kDenied, "app.v_check"},
    {"INSERT INTO app.v_check (id, name, ssn) VALUES (500, 'x', 'y')", Expect::kDenied,
     "app.v_check"},
    {"INSERT INTO app.trig_tab VALUES (1)", Expect::kDenied, "app.trig_tab"},
    {"INSERT INTO app.rule_tab VALUES (1)", Expect::kDenied, "app.rule_tab"},
    {"CREATE VIEW app.mine AS SELECT * FROM app.v_people", Expect::kDenied, "app.v_people"},
    {"CREATE TABLE app.mine AS SELECT * FROM app.v_people", Expect::kDenied, "app.v_people"},
    {"SELECT * INTO app.mine FROM app.v_cols", Expect::kDenied, "app.v_cols"},
    {"CREATE VIEW app.mine AS SELECT app.f_sql()", Expect::kDenied, "app.f_sql"},
    {"DROP VIEW app.v_people", Expect::kDenied, "app.v_people"},
    {"WITH w AS (INSERT INTO app.scratch VALUES (1, 'x') RETURNING *) SELECT * FROM w, "
     "app.v_people",
     Expect::kDenied, "app.v_people"},
    {"INSERT INTO app.scratch VALUES (1, 'ok') RETURNING id", Expect::kPasses},
    // Statistics of a view's columns are still statistics.
    // pg_stats: the session's own temporary tables only (no row here).
    {"SELECT * FROM pg_stats WHERE tablename = 'v_people'", Expect::kPasses},
    {"CREATE TEMP VIEW st AS SELECT * FROM pg_stats", Expect::kDenied, "pg_stats"},
};

std::string policy_file() {
  const std::string path = scratch_path("kanon-reach-policy.yaml");
  std::ofstream(path) << "tables:\n"
                         "  - table: public.people\n"
                         "    k: 2\n"
                         "    quasi_identifiers: [occupation, city, state]\n"
                         "    direct_identifiers: {name: null, ssn: \"***\"}\n"
                         "    exempt: [postgres]\n"
                         "    allowed_functions: [app.f_allowed]\n"
                         "    refresh: 1h\n";
  return path;
}

std::string with_schema(std::string sql, const std::string& schema) {
  for (size_t at = sql.find("{s}"); at != std::string::npos; at = sql.find("{s}", at))
    sql.replace(at, 3, schema);
  return sql;
}

struct Fixture {
  Fixture() {
    auto& pg = PgSandbox::shared();
    pg.psql(objects("app", "public.people"));
    pg.psql(kDeniedObjects);
    proxy = std::make_unique<KanonProxy>(pg.port(), "policies: [" + policy_file() + "]\n");
    // The oracle: the same objects over the masks materialized by hand.
    const auto tree = run_command({kanon_executable(), "tree", "--config", proxy->config_path(),
                                   "--table", "public.people", "--format", "sql"});
    REQUIRE_MESSAGE(tree.exit_code == 0, tree.err);
    std::string select = tree.out;
    while (!select.empty() && (select.back() == '\n' || select.back() == ';')) select.pop_back();
    pg.psql("CREATE SCHEMA masked; CREATE TABLE masked.people AS " + select + ";" +
            objects("oracle", "masked.people"));
  }
  std::unique_ptr<KanonProxy> proxy;
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

void check_no_forbidden(const std::string& text, const std::string& sql) {
  for (const auto& v : kForbidden) {
    CAPTURE(sql);
    CAPTURE(v);
    CHECK_MESSAGE(text.find(v) == std::string::npos, text);
  }
}

// Runs one case as the analyst through kanon, with the oracle directly.
void check_case(pqxx::connection& analyst, const Case& c, bool extended) {
  const std::string sql = with_schema(c.sql, "app");
  CAPTURE(sql);
  CAPTURE(extended);
  const Outcome o = run(analyst, sql, extended);
  switch (c.expect) {
    case Expect::kDenied:
      CHECK_MESSAGE(o.sqlstate == "42501", o.rows << o.message);
      CHECK_MESSAGE(o.message.find("kanon rule") != std::string::npos, o.message);
      CHECK_MESSAGE(o.message.find(c.names) != std::string::npos, o.message);
      break;
    case Expect::kPasses:
    case Expect::kMasked:
      CHECK_MESSAGE(o.sqlstate.empty(), o.message);
      check_no_forbidden(o.rows, sql);
      break;
    case Expect::kOracle: {
      CHECK_MESSAGE(o.sqlstate.empty(), o.message);
      check_no_forbidden(o.rows, sql);
      pqxx::connection direct(PgSandbox::shared().conninfo("postgres"));
      pqxx::nontransaction tx(direct);
      CHECK(o.rows == render(tx.exec(with_schema(c.sql, "oracle"))));
      break;
    }
  }
  // The session stays usable.
  CHECK(run(analyst, "SELECT 41 + 1", extended).rows == "42|\n");
}

void run_cases(const std::vector<Case>& cases) {
  auto& f = fixture();
  for (bool extended : {false, true}) {
    pqxx::connection analyst(f.proxy->conninfo("analyst"));
    for (const auto& c : cases) {
      if (extended && c.simple_only) continue;
      check_case(analyst, c, extended);
    }
  }
}

// Waits until kanon's catalog knows `object`: `call` (which names it) is
// then decided on it, and denied with a message naming it.
void await_known(KanonProxy& proxy, const std::string& call, const std::string& object) {
  REQUIRE(until([&] {
    pqxx::connection c(proxy.conninfo("analyst"));
    return run(c, call, false).message.find(object) != std::string::npos;
  }));
}

struct Denial {
  std::string sql;
  std::string names;  // what the message must hold
};

// Each statement through `analyst`: 42501 with a message naming what it
// must, no rows, and the session usable after it.
void check_denials(pqxx::connection& analyst, const std::vector<Denial>& denials, bool extended) {
  for (const auto& d : denials) {
    // One statement per Parse; COPY's data flows in the simple protocol.
    if (extended && (d.sql.starts_with("BEGIN") || d.sql.starts_with("COPY"))) continue;
    CAPTURE(d.sql);
    const auto o = run(analyst, d.sql, extended);
    CHECK_MESSAGE(o.sqlstate == "42501", o.rows << o.message);
    CHECK_MESSAGE(o.message.find(d.names) != std::string::npos, o.message);
    CHECK(o.rows.empty());
    CHECK(run(analyst, "SELECT 41 + 1", extended).rows == "42|\n");
  }
}

}  // namespace

TEST_CASE("reach: objects created before the build, every statement form, both protocols") {
  run_cases(kCases);
  // Nothing a denied write would have touched changed.
  pqxx::connection direct(PgSandbox::shared().conninfo("postgres"));
  pqxx::nontransaction tx(direct);
  CHECK(tx.exec("SELECT count(*) FROM app.log")[0][0].as<int>() == 0);
  CHECK(tx.exec("SELECT count(*) FROM pg_class WHERE relname = 'mine'")[0][0].as<int>() == 0);
  CHECK(tx.exec("SELECT count(*) FROM public.people")[0][0].as<int>() == 11);
}

TEST_CASE("reach: COPY of a view is masked, COPY of a materialized view denied") {
  auto& f = fixture();
  const auto out = run_command({"psql", "-X", "-At", "-d", f.proxy->conninfo("analyst"), "-c",
                                "COPY (SELECT city, state FROM app.v_people) TO STDOUT"});
  CHECK_MESSAGE(out.exit_code == 0, out.err);
  CHECK(out.out.find("Hamlet") != std::string::npos);
  check_no_forbidden(out.out, "COPY view");
  const auto view = run_command({"psql", "-X", "-At", "-d", f.proxy->conninfo("analyst"), "-c",
                                 "\\copy app.v_cols TO STDOUT"});
  check_no_forbidden(view.out + view.err, "\\copy view");
}

TEST_CASE("reach: objects created, replaced and renamed after the build") {
  auto& f = fixture();
  auto& pg = PgSandbox::shared();
  pqxx::connection analyst(f.proxy->conninfo("analyst"));
  // Warm the cache with the objects as they were.
  CHECK(run(analyst, "SELECT city FROM app.v_replaced ORDER BY id", false).rows.find("label 1") !=
        std::string::npos);
  pg.psql(
      "CREATE VIEW app.v_late AS SELECT id, occupation, city FROM public.people;"
      "CREATE OR REPLACE VIEW app.v_replaced AS SELECT id, city FROM public.people;"
      "ALTER VIEW app.v_to_rename RENAME TO v_renamed;"
      "CREATE FUNCTION app.f_late() RETURNS text LANGUAGE plpgsql AS "
      "  $$ BEGIN RETURN (SELECT string_agg(city, ',') FROM public.people); END $$;"
      "CREATE OR REPLACE FUNCTION app.f_safe(x int) RETURNS int LANGUAGE sql AS "
      "  'SELECT count(*)::int FROM public.people WHERE city = ''Washington'' AND x > 0';"
      "CREATE MATERIALIZED VIEW app.mv_late AS SELECT * FROM public.people;"
      "CREATE TABLE public.people_child (note text) INHERITS (public.people);"
      "INSERT INTO public.people_child VALUES (20, 'Zed Zee', '100-00-0020', 'Lawyer', "
      "  'Washington', 'DC', 'flu', 'child note');"
      "GRANT SELECT ON ALL TABLES IN SCHEMA app TO analyst;"
      "GRANT SELECT ON public.people_child TO analyst;");
  const std::vector<Case> after = {
      {"SELECT * FROM {s}.v_late ORDER BY id", Expect::kMasked},
      {"SELECT city FROM app.v_replaced ORDER BY id", Expect::kMasked},
      {"SELECT * FROM app.v_renamed ORDER BY id", Expect::kMasked},
      {"SELECT app.f_late()", Expect::kDenied, "app.f_late"},
      {"SELECT app.f_safe(1)", Expect::kDenied, "app.f_safe"},
      {"SELECT * FROM app.mv_late", Expect::kDenied, "app.mv_late"},
      {"SELECT * FROM public.people_child ORDER BY id", Expect::kMasked},
      {"SELECT note, city FROM public.people_child", Expect::kMasked},
      {"SELECT ctid FROM public.people_child", Expect::kDenied, "ctid"},
      {"DELETE FROM public.people_child", Expect::kDenied, "public.people"},
  };
  for (bool extended : {false, true}) {
    pqxx::connection c(f.proxy->conninfo("analyst"));
    for (const auto& k : after) check_case(c, k, extended);
  }
  // The replaced view now reads the protected table: masked, not the labels.
  const auto replaced = run(analyst, "SELECT city FROM app.v_replaced ORDER BY id", false);
  CHECK(replaced.rows.find("label") == std::string::npos);
  CHECK(replaced.rows.find("Hamlet") != std::string::npos);
  // The child's own column comes through unmasked, its quasi-identifiers masked.
  const auto child = run(analyst, "SELECT note, occupation FROM public.people_child", false);
  CHECK(child.rows == "child note|<null>|\n");
}

TEST_CASE("reach: a partition attached after the build gets its parent's masks") {
  auto& pg = PgSandbox::shared();
  // A partitioned protected table needs a policy of its own: kanon reads the
  // policy files at start, so this one is a second proxy.
  pg.psql(
      "CREATE TABLE public.visits (id int, city text, day int) PARTITION BY RANGE (day);"
      "CREATE TABLE public.visits_1 PARTITION OF public.visits FOR VALUES FROM (0) TO (100);"
      "INSERT INTO public.visits SELECT g, CASE WHEN g % 10 = 0 THEN 'Rareville' ELSE 'Common' "
      "END, g % 100 FROM generate_series(1, 60) g;"
      "GRANT SELECT ON public.visits, public.visits_1 TO analyst;");
  const std::string path = scratch_path("kanon-reach-visits.yaml");
  std::ofstream(path) << "tables:\n"
                         "  - table: public.visits\n"
                         "    k: 10\n"
                         "    quasi_identifiers: [city]\n"
                         "    exempt: [postgres]\n";
  KanonProxy proxy(pg.port(), "policies: [" + path + "]\n");
  pqxx::connection analyst(proxy.conninfo("analyst"));
  const auto before = run(analyst, "SELECT DISTINCT city FROM public.visits_1 ORDER BY 1", false);
  CHECK(before.rows.find("Rareville") == std::string::npos);
  pg.psql(
      "CREATE TABLE public.visits_2 (id int, city text, day int);"
      "INSERT INTO public.visits_2 VALUES (1000, 'Rareville', 150), (1001, 'Lonelytown', 151);"
      "ALTER TABLE public.visits ATTACH PARTITION public.visits_2 FOR VALUES FROM (100) TO (200);"
      "GRANT SELECT ON public.visits_2 TO analyst;");
  for (bool extended : {false, true}) {
    CAPTURE(extended);
    const auto part = run(analyst, "SELECT id, city FROM public.visits_2 ORDER BY id", extended);
    CHECK_MESSAGE(part.sqlstate.empty(), part.message);
    CHECK(part.rows.find("Lonelytown") == std::string::npos);
    CHECK(part.rows.find("Rareville") == std::string::npos);
    CHECK(part.rows.find("1000|") != std::string::npos);
  }
  // An index on the new partition's quasi-identifier orders its rows by the
  // raw city: reads of the partition and of its parent are denied, naming it.
  pg.psql("CREATE INDEX visits_2_city ON public.visits_2 (city)");
  for (bool extended : {false, true}) {
    CAPTURE(extended);
    for (const std::string table : {"public.visits", "public.visits_2"}) {
      const auto denied = run(analyst, "SELECT id FROM " + table + " WHERE id > 0", extended);
      CHECK(denied.sqlstate == "42501");
      CHECK_MESSAGE(
          denied.message.find("public.visits_2_city (kanon rule quasi-identifier-index)") !=
              std::string::npos,
          denied.message);
    }
  }
  pg.psql("DROP INDEX public.visits_2_city");
  CHECK(run(analyst, "SELECT count(*) FROM public.visits", false).rows == "62|\n");
}

TEST_CASE("reach: a foreign table is denied") {
  auto& f = fixture();
  auto& pg = PgSandbox::shared();
  const auto has_fdw =
      run_command({"psql", "-X", "-At", "-d", pg.conninfo("postgres"), "-c",
                   "SELECT count(*) FROM pg_available_extensions WHERE name = 'postgres_fdw'"});
  // postgres_fdw ships with Debian's postgresql-15: its absence is a broken
  // installation, not a reason to pass.
  REQUIRE_MESSAGE(has_fdw.out.find('1') != std::string::npos,
                  "postgres_fdw is not available: install postgresql-15 with its contrib modules");
  pg.psql(
      "CREATE EXTENSION IF NOT EXISTS postgres_fdw;"
      "CREATE SERVER loopback FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '127.0.0.1', port '" +
      std::to_string(pg.port()) +
      "', dbname 'postgres');"
      "CREATE USER MAPPING FOR PUBLIC SERVER loopback OPTIONS (user 'postgres');"
      "CREATE FOREIGN TABLE app.ft_people (id int, city text) SERVER loopback "
      "OPTIONS (schema_name 'public', table_name 'people');"
      "GRANT SELECT ON app.ft_people TO analyst;");
  pqxx::connection analyst(f.proxy->conninfo("analyst"));
  check_case(analyst, {"SELECT * FROM app.ft_people", Expect::kDenied, "app.ft_people"}, false);
  check_case(analyst, {"SELECT * FROM app.ft_people", Expect::kDenied, "app.ft_people"}, true);
}

TEST_CASE("reach: the analyst's own temporary and scratch objects keep working") {
  auto& f = fixture();
  pqxx::connection analyst(f.proxy->conninfo("analyst"));
  {
    pqxx::nontransaction tx(analyst);
    tx.exec("CREATE TEMP TABLE mine (x int)");
    tx.exec("INSERT INTO mine VALUES (1), (2)");
    CHECK(tx.exec("SELECT sum(x) FROM mine")[0][0].as<int>() == 3);
    CHECK(tx.exec("SELECT count(*) FROM app.scratch")[0][0].as<int>() >= 0);
    // A temporary view over the analyst's own table is its own business.
    tx.exec("CREATE TEMP VIEW mine_v AS SELECT x FROM mine");
    CHECK(tx.exec("SELECT count(*) FROM mine_v")[0][0].as<int>() == 2);
  }
  // A temporary view over a view that reaches a protected table is not.
  const auto temp_view =
      run(analyst, "CREATE TEMP VIEW leak_v AS SELECT * FROM app.v_people", false);
  CHECK(temp_view.sqlstate == "42501");
  // A missing table gets PostgreSQL's own error.
  const auto missing = run(analyst, "SELECT * FROM no_such_table", false);
  CHECK(missing.sqlstate == "42P01");
}

TEST_CASE("reach: a restricted login may not open a replication connection") {
  auto& f = fixture();
  for (const char* mode : {"database", "true"}) {
    CAPTURE(mode);
    try {
      pqxx::connection c(f.proxy->conninfo("analyst") + " replication=" + mode);
      FAIL("expected the connection to be refused");
    } catch (const std::exception& e) {
      CHECK_MESSAGE(std::string(e.what()).find(
                        "restricted sessions may not open replication connections: replication "
                        "(kanon rule replication-connection)") != std::string::npos,
                    e.what());
    }
  }
}

TEST_CASE("reach: another database never shares the protected database's trees") {
  auto& f = fixture();
  auto& pg = PgSandbox::shared();
  pg.psql("CREATE DATABASE other");
  run_command({"psql", "-X", "-q", "-d", pg.conninfo("postgres", "other"), "-c",
               "CREATE TABLE people (id int, city text); "
               "INSERT INTO people VALUES (1, 'Othertown'); GRANT SELECT ON people TO analyst"});
  // Not listed: a restricted login is refused at start-up, naming the rule.
  try {
    pqxx::connection c(f.proxy->conninfo("analyst", "other"));
    FAIL("expected the connection to be refused");
  } catch (const std::exception& e) {
    CHECK(std::string(e.what()).find("database-not-protected") != std::string::npos);
    CHECK(std::string(e.what()).find("other") != std::string::npos);
  }
  // An exempt login is relayed as before.
  pqxx::connection su(f.proxy->conninfo("postgres", "other"));
  CHECK(pqxx::nontransaction(su).exec("SELECT count(*) FROM people")[0][0].as<int>() == 1);
  // Listed: served; its own people table is not protected (no policy names
  // it), and the statement rules still apply.
  KanonProxy listed(pg.port(), "policies: [" + policy_file() + "]\ndatabases: [other]\n");
  pqxx::connection c(listed.conninfo("analyst", "other"));
  CHECK(run(c, "SELECT city FROM people", false).rows == "Othertown|\n");
  CHECK(run(c, "DO $$ BEGIN END $$", false).sqlstate == "42501");
  CHECK(run(c, "SELECT * FROM pg_statistic", false).sqlstate == "42501");
  // pg_stats: only the session's own temporary tables (none yet).
  CHECK(run(c, "SELECT count(*) FROM pg_stats", false).rows == "0|\n");
}

TEST_CASE("reach: LANGUAGE sql functions the analyst creates, unless their body reaches") {
  auto& f = fixture();
  for (bool extended : {false, true}) {
    CAPTURE(extended);
    pqxx::connection analyst(f.proxy->conninfo("analyst"));
    const std::string n = extended ? "x" : "s";
    // What PostgreSQL's own regression suite has an analyst write.
    REQUIRE(run(analyst,
                "CREATE FUNCTION app.sillysrf_" + n +
                    "(int) RETURNS setof int AS 'values (1),(10),(2),($1)' LANGUAGE sql IMMUTABLE",
                extended)
                .sqlstate.empty());
    CHECK(run(analyst, "SELECT sum(x) FROM app.sillysrf_" + n + "(5) AS x", extended).rows ==
          "18|\n");
    REQUIRE(run(analyst, "CREATE FUNCTION app.twice_" + n + "(a int) RETURNS int RETURN a * 2",
                extended)
                .sqlstate.empty());
    CHECK(run(analyst, "SELECT app.twice_" + n + "(21)", extended).rows == "42|\n");
    REQUIRE(run(analyst,
                "CREATE FUNCTION app.labels_" + n +
                    "() RETURNS bigint LANGUAGE sql BEGIN ATOMIC SELECT count(*) FROM app.plain; "
                    "END",
                extended)
                .sqlstate.empty());
    CHECK(run(analyst, "SELECT app.labels_" + n + "()", extended).rows == "11|\n");
    // Every way to get people's raw values into a body is denied, and no
    // function comes into being.
    struct Attempt {
      std::string sql;
      std::string names;
    };
    for (const Attempt& a : std::vector<Attempt>{
             {"CREATE FUNCTION app.leak1() RETURNS text AS 'SELECT string_agg(city, '','') FROM "
              "public.people' LANGUAGE sql",
              "function-body-reaches-protected"},
             {"CREATE FUNCTION app.leak2() RETURNS text LANGUAGE sql BEGIN ATOMIC SELECT "
              "string_agg(city, ',') FROM app.v_people; END",
              "app.v_people"},
             {"CREATE FUNCTION app.leak3() RETURNS text LANGUAGE sql RETURN (SELECT "
              "string_agg(occupation, ',') FROM people)",
              "public.people"},
             {"CREATE FUNCTION app.leak4() RETURNS text AS $$ SELECT 1; SELECT app.f_sql() $$ "
              "LANGUAGE sql",
              "app.f_sql"},
             {"CREATE FUNCTION app.leak5() RETURNS xml AS $$SELECT query_to_xml('select * from "
              "public.people', true, true, '')$$ LANGUAGE sql",
              "query_to_xml"},
             {"CREATE FUNCTION app.leak6() RETURNS text AS 'BEGIN RETURN (SELECT min(city) FROM "
              "public.people); END' LANGUAGE plpgsql",
              "opaque-code"},
             {"CREATE OR REPLACE FUNCTION app.twice_" + n +
                  "(a int) RETURNS int AS 'SELECT count(*)::int FROM app.v_cols' LANGUAGE sql",
              "app.v_cols"},
         }) {
      CAPTURE(a.sql);
      const auto o = run(analyst, a.sql, extended);
      CHECK_MESSAGE(o.sqlstate == "42501", o.rows << o.message);
      CHECK_MESSAGE(o.message.find(a.names) != std::string::npos, o.message);
    }
    // check_function_bodies = off changes nothing: kanon parses the body.
    run(analyst, "SET check_function_bodies = off", extended);
    const auto unchecked = run(analyst,
                               "CREATE FUNCTION app.leak7() RETURNS text AS 'SELECT city FROM "
                               "public.people' LANGUAGE sql",
                               extended);
    CHECK(unchecked.sqlstate == "42501");
    CHECK(run(analyst, "SELECT app.twice_" + n + "(2)", extended).rows == "4|\n");
  }
  pqxx::connection direct(PgSandbox::shared().conninfo("postgres"));
  CHECK(pqxx::nontransaction(direct)
            .exec("SELECT count(*) FROM pg_proc WHERE proname LIKE 'leak%'")[0][0]
            .as<int>() == 0);
}

TEST_CASE("reach: pg_stats shows a restricted session its own temporary tables only") {
  auto& f = fixture();
  auto& pg = PgSandbox::shared();
  pg.psql("ANALYZE public.people");
  // Directly, the analyst sees people's histograms: the test can fail.
  {
    pqxx::connection direct(pg.conninfo("analyst"));
    CHECK(pqxx::nontransaction(direct)
              .exec("SELECT count(*) FROM pg_stats WHERE tablename = 'people'")[0][0]
              .as<int>() > 0);
  }
  for (bool extended : {false, true}) {
    CAPTURE(extended);
    pqxx::connection analyst(f.proxy->conninfo("analyst"));
    for (const char* sql : {
             "SELECT count(*) FROM pg_stats WHERE tablename = 'people'",
             "SELECT count(*) FROM pg_catalog.pg_stats s WHERE s.schemaname = 'public'",
             "SELECT count(*) FROM (SELECT * FROM pg_stats) q WHERE q.tablename LIKE 'people%'",
         }) {
      CAPTURE(sql);
      CHECK(run(analyst, sql, extended).rows == "0|\n");
    }
    const auto all = run(analyst,
                         "SELECT tablename, most_common_vals::text, histogram_bounds::text "
                         "FROM pg_stats",
                         extended);
    CHECK(all.sqlstate.empty());
    check_no_forbidden(all.rows, "pg_stats");
    for (const char* sql : {"CREATE TEMP VIEW stats_v AS SELECT * FROM pg_stats",
                            "CREATE TEMP TABLE stats_t AS SELECT * FROM pg_stats",
                            "SELECT starelid FROM pg_statistic"}) {
      CAPTURE(sql);
      CHECK(run(analyst, sql, extended).sqlstate == "42501");
    }
    // Its own temporary table's statistics are there.
    run(analyst, "CREATE TEMP TABLE own_t AS SELECT g % 3 AS v FROM generate_series(1, 300) g",
        extended);
    run(analyst, "ANALYZE own_t", extended);
    CHECK(
        run(analyst, "SELECT attname, n_distinct FROM pg_stats WHERE tablename = 'own_t'", extended)
            .rows == "v|3|\n");
  }
}

TEST_CASE("reach: standard_conforming_strings off is read as the server reads it") {
  auto& f = fixture();
  for (bool extended : {false, true}) {
    CAPTURE(extended);
    pqxx::connection analyst(f.proxy->conninfo("analyst"));
    REQUIRE(run(analyst, "SET standard_conforming_strings = off", extended).sqlstate.empty());
    CHECK(run(analyst, "SELECT 'a\\'b', 'c\\\\d', E'e\\'f', $$g\\$$", extended).rows ==
          "a'b|c\\d|e'f|g\\|\n");
    // Quote smuggling: with the setting off the server reads one constant
    // up to the last quote of the first line; a reader with the standard
    // rules would see a constant, then code, then a constant hiding the
    // subquery. kanon decides what the server reads: the subquery is masked.
    const auto smuggled = run(analyst,
                              "SELECT 'a\\' AS x, ' AS y, (SELECT string_agg(city || "
                              "occupation, ',') FROM public.people) AS z --'",
                              extended);
    CHECK_MESSAGE(smuggled.sqlstate.empty(), smuggled.message);
    check_no_forbidden(smuggled.rows, "smuggled");
    CHECK(smuggled.rows.find("a' AS x, ") != std::string::npos);
    // The same the other way round: the standard reader sees the subquery.
    const auto other = run(analyst,
                           "SELECT 'b\\' || (SELECT string_agg(city, ',') FROM public.people) "
                           "|| '\\'' AS w",
                           extended);
    check_no_forbidden(other.rows + other.message, "other");
    // Constants kanon cannot spell as E'...' are denied.
    const auto national = run(analyst, "SELECT N'a\\\\b'", extended);
    CHECK(national.sqlstate == "42501");
    CHECK(national.message.find("standard-conforming-strings") != std::string::npos);
    REQUIRE(run(analyst, "SET standard_conforming_strings = on", extended).sqlstate.empty());
    CHECK(run(analyst, "SELECT 'h\\'", extended).rows == "h\\|\n");
  }
}

// What kanon reads from the catalog was printed, or is parsed, with the
// standard rules; PostgreSQL parses a SQL function's string body again at
// each call under the caller's standard_conforming_strings (or the
// function's SET clause), and kanon pastes a view's definition into the
// session's statement. A plain constant holding a backslash ends elsewhere
// with the setting off: a body that hid a subquery in constants ran it, and
// a view's '\' swallowed kanon's text up to the analyst's next quote.
TEST_CASE("reach: function bodies and views read alike with standard_conforming_strings off") {
  auto& f = fixture();
  auto& pg = PgSandbox::shared();
  const std::string smuggling_body =
      R"(SELECT 'A\'::text || '::text || (SELECT string_agg(concat_ws(chr(124), name, ssn, )"
      R"(occupation, city, state), chr(59)) FROM public.people) --')";
  pg.psql(
      "CREATE SCHEMA scs;"
      "CREATE VIEW scs.people_clean AS SELECT id, occupation, city, state, diagnosis "
      "  FROM public.people WHERE strpos(diagnosis, '\\') = 0;"
      "CREATE FUNCTION scs.f_admin() RETURNS text LANGUAGE sql AS $body$" +
      smuggling_body +
      "$body$;"
      "GRANT USAGE ON SCHEMA scs TO analyst; GRANT SELECT ON scs.people_clean TO analyst;");
  // Directly, with the setting off, the administrator's function shows raw rows.
  {
    pqxx::connection direct(pg.conninfo("analyst"));
    CHECK(run(direct, "SET standard_conforming_strings = off", false).sqlstate.empty());
    CHECK(run(direct, "SELECT scs.f_admin()", false).rows.find("Lawyer") != std::string::npos);
  }
  await_known(*f.proxy, "SELECT scs.f_admin()", "scs.f_admin");
  pqxx::connection direct(pg.conninfo());
  const std::string clean_count =
      run(direct, "SELECT count(*) FROM public.people WHERE strpos(diagnosis, '\\') = 0", false)
          .rows;
  for (bool extended : {false, true}) {
    CAPTURE(extended);
    pqxx::connection analyst(f.proxy->conninfo("analyst"));
    for (const char* setting : {"on", "off"}) {
      CAPTURE(setting);
      REQUIRE(run(analyst, std::string("SET standard_conforming_strings = ") + setting, extended)
                  .sqlstate.empty());
      // The analyst's own function with such a body, with or without a SET
      // clause: not created.
      for (const std::string clause : {"", " SET standard_conforming_strings = off"}) {
        const std::string sql = "CREATE FUNCTION pg_temp.f2() RETURNS text LANGUAGE sql" + clause +
                                " AS $body$" + smuggling_body + "$body$";
        const auto o = run(analyst, sql, extended);
        CHECK_MESSAGE(o.sqlstate == "42501", o.message);
        CHECK(o.message.find("standard_conforming_strings off") != std::string::npos);
        CHECK(o.message.find("(kanon rule opaque-code)") != std::string::npos);
      }
      // The administrator's: kanon cannot tell what it runs.
      const auto call = run(analyst, "SELECT scs.f_admin()", extended);
      CHECK_MESSAGE(call.sqlstate == "42501", call.rows << call.message);
      CHECK(call.message.find("scs.f_admin") != std::string::npos);
      check_no_forbidden(call.rows + call.message, "scs.f_admin");
      // The view reads as its definition says, whatever follows it.
      const auto smuggled = run(analyst,
                                "SELECT * FROM scs.people_clean WHERE diagnosis = ') = 0)) AS v, "
                                "LATERAL (SELECT string_agg(concat_ws(chr(124), name, ssn, "
                                "occupation, city, state), chr(59)) AS raw FROM public.people) r "
                                "--'",
                                extended);
      CHECK_MESSAGE(smuggled.sqlstate.empty(), smuggled.message);
      CHECK(smuggled.rows.empty());
      check_no_forbidden(smuggled.rows + smuggled.message, "smuggled");
      CHECK(run(analyst, "SELECT count(*) FROM scs.people_clean", extended).rows == clean_count);
    }
  }
  pg.psql("DROP SCHEMA scs CASCADE");
}

TEST_CASE("reach: DO and CALL run only for a login PostgreSQL keeps from protected data") {
  auto& f = fixture();
  auto& pg = PgSandbox::shared();
  // reader: no grant at all. reader_view: SELECT on a view over people (its
  // owner's rights read people). reader_rule: may insert into a table whose
  // rule copies people. reader_definer: EXECUTE on a SECURITY DEFINER
  // function over people. reader_files: may read the table's files with
  // pg_read_file. Created before the proxy reads the catalog again.
  pg.psql(
      "CREATE ROLE reader LOGIN; CREATE ROLE reader_view LOGIN; CREATE ROLE reader_rule LOGIN;"
      "CREATE ROLE reader_definer LOGIN; CREATE ROLE reader_files LOGIN;"
      "GRANT EXECUTE ON FUNCTION pg_read_file(text) TO reader_files;"
      "GRANT USAGE ON SCHEMA app TO reader_view, reader_rule, reader_definer;"
      "GRANT SELECT ON app.v_people TO reader_view;"
      "GRANT INSERT ON app.rule_tab TO reader_rule;"
      "CREATE FUNCTION app.sd_city() RETURNS text LANGUAGE sql SECURITY DEFINER AS "
      "  'SELECT max(city) FROM public.people';"
      "REVOKE EXECUTE ON FUNCTION app.sd_city() FROM PUBLIC;"
      "GRANT EXECUTE ON FUNCTION app.sd_city() TO reader_definer;");
  // Until the catalog watcher has seen app.sd_city, no proof may hold for
  // reader_definer: wait for a session in which kanon knows it.
  await_known(*f.proxy, "SELECT app.sd_city()", "app.sd_city");
  const std::string leak =
      "DO $$ DECLARE c text; BEGIN SELECT string_agg(city, ',') INTO c FROM public.people; "
      "RAISE EXCEPTION 'got %', c; END $$";
  for (bool extended : {false, true}) {
    CAPTURE(extended);
    pqxx::connection reader(f.proxy->conninfo("reader"));
    CHECK(run(reader, "DO $$ BEGIN PERFORM 1; END $$", extended).sqlstate.empty());
    REQUIRE(run(reader,
                "CREATE FUNCTION pg_temp.sum_to(n int) RETURNS int LANGUAGE plpgsql AS $$ "
                "DECLARE s int := 0; BEGIN FOR i IN 1..n LOOP s := s + i; END LOOP; RETURN s; "
                "END $$",
                extended)
                .sqlstate.empty());
    CHECK(run(reader, "SELECT pg_temp.sum_to(4)", extended).rows == "10|\n");
    // Reading people from inside the code is PostgreSQL's to refuse.
    const auto refused = run(reader, leak, extended);
    CHECK(refused.sqlstate == "42501");
    CHECK(refused.message.find("permission denied for table people") != std::string::npos);
    check_no_forbidden(refused.rows + refused.message, leak);
    // The analyst (pg_read_all_data) and every reader with a way in: kanon denies.
    for (const char* login :
         {"analyst", "reader_view", "reader_rule", "reader_definer", "reader_files"}) {
      CAPTURE(login);
      pqxx::connection c(f.proxy->conninfo(login));
      const auto o = run(c, leak, extended);
      CHECK(o.sqlstate == "42501");
      CHECK(o.message.find("(kanon rule opaque-code)") != std::string::npos);
      check_no_forbidden(o.rows + o.message, leak);
    }
  }
}

// kanon's catalog reader, the DDL event trigger and the guard of statements
// that call late-read code take advisory locks of one key space every session
// of the database shares (catalog/catalog_watch.h). An analyst holding one
// would stall every DDL, kanon's catalog reads or the other analysts'
// statements: so a restricted session takes no advisory lock, by any path.
TEST_CASE("reach: advisory locks, which kanon's catalog machinery holds, are never taken") {
  auto& f = fixture();
  auto& pg = PgSandbox::shared();
  pg.psql(
      "CREATE FUNCTION app.hold_catalog() RETURNS void LANGUAGE sql AS "
      "  'SELECT pg_advisory_lock(7306355, 2)';"
      "CREATE VIEW app.v_hold AS SELECT pg_try_advisory_lock(7306355, 3) AS got;"
      "GRANT SELECT ON app.v_hold TO analyst;");
  // Until the catalog watcher has seen them, a session may find them unknown.
  await_known(*f.proxy, "SELECT app.hold_catalog()", "app.hold_catalog");
  const std::string n = "7306355";
  const std::vector<Denial> attempts = {
      {"SELECT pg_advisory_lock(" + n + ", 2)", "(kanon rule advisory-lock)"},
      {"SELECT pg_catalog.pg_advisory_lock_shared(" + n + ", 3)", "(kanon rule advisory-lock)"},
      {"SELECT pg_try_advisory_lock(7306000 + 355, 1)", "(kanon rule advisory-lock)"},
      {"BEGIN; SELECT pg_advisory_xact_lock(" + n + ", 3); COMMIT", "(kanon rule advisory-lock)"},
      {"SELECT pg_advisory_lock(" + n + "::bigint << 32 | 2)", "(kanon rule advisory-lock)"},
      // The replica leader's key and a table's release history's (one key).
      {"SELECT pg_advisory_lock(1801547375, 1)", "(kanon rule advisory-lock)"},
      {"SELECT pg_advisory_lock(hashtext('kanon.releases:public.people'))",
       "(kanon rule advisory-lock)"},
      {"SELECT * FROM pg_try_advisory_xact_lock_shared(" + n + ", 2)",
       "(kanon rule advisory-lock)"},
      {"SELECT app.hold_catalog()", "app.hold_catalog"},
      {"SELECT got FROM app.v_hold", "app.v_hold"},
      {"CREATE FUNCTION pg_temp.hold() RETURNS bool LANGUAGE sql AS "
       "'SELECT pg_try_advisory_lock(" +
           n + ", 2)'",
       "(kanon rule advisory-lock)"},
      {"CREATE VIEW pg_temp.v_hold AS SELECT pg_advisory_lock(" + n + ", 2)",
       "(kanon rule advisory-lock)"},
      {"PREPARE hold AS SELECT pg_advisory_lock(" + n + ", 2)", "(kanon rule advisory-lock)"},
  };
  pqxx::connection direct(pg.conninfo("postgres"));
  for (bool extended : {false, true}) {
    CAPTURE(extended);
    pqxx::connection analyst(f.proxy->conninfo("analyst"));
    check_denials(analyst, attempts, extended);
    // Releasing frees only the session's own locks: allowed.
    CHECK(run(analyst, "SELECT pg_advisory_unlock_all()", extended).sqlstate.empty());
    // No session of the analyst holds or waits for an advisory lock.
    CHECK(pqxx::nontransaction(direct)
              .exec("SELECT count(*) FROM pg_catalog.pg_locks l JOIN pg_catalog.pg_stat_activity "
                    "a USING (pid) WHERE l.locktype = 'advisory' AND a.usename = 'analyst'")[0][0]
              .as<int>() == 0);
    // With the analyst's session open, DDL's event trigger gets its locks.
    pg.psql("CREATE TABLE app.after_locks (x int); DROP TABLE app.after_locks;");
  }
}

// kanon's own tables hold what it derived from raw rows: trees with the row
// count of every node (kanon.releases, kanon.snapshots), the release history
// and the keys it holds back, and what replicas adopt as their masks. A role
// PostgreSQL lets read them (the analyst has pg_read_all_data here) reads
// none of it through kanon, by name or through an administrator's objects.
TEST_CASE("reach: kanon's own tables are out of a restricted session's reach") {
  auto& f = fixture();
  auto& pg = PgSandbox::shared();
  pg.psql(
      "CREATE VIEW app.v_trees AS SELECT table_name, tree FROM kanon.releases;"
      "GRANT SELECT ON app.v_trees TO analyst;"
      "CREATE FUNCTION app.f_snapshots() RETURNS bigint LANGUAGE sql AS "
      "  'SELECT count(*) FROM kanon.snapshots';");
  // PostgreSQL's grants would let the analyst read them.
  {
    pqxx::connection direct(pg.conninfo("analyst"));
    pqxx::nontransaction tx(direct);
    CHECK(tx.exec("SELECT count(*) FROM kanon.releases WHERE tree IS NOT NULL")[0][0].as<int>() >=
          1);
  }
  await_known(*f.proxy, "SELECT app.f_snapshots()", "app.f_snapshots");
  const std::string internal = "(kanon rule kanon-internal)";
  const std::vector<Denial> attempts = {
      {"SELECT tree FROM kanon.releases", internal},
      {"SELECT * FROM \"kanon\".\"snapshots\"", internal},
      {"SELECT count(*) FROM kanon.release_rows r JOIN app.plain p ON p.id::text = r.key",
       internal},
      {"WITH h AS (SELECT * FROM kanon.held_keys) SELECT count(*) FROM h", internal},
      {"SELECT (SELECT max(version) FROM kanon.snapshots)", internal},
      {"COPY kanon.releases TO STDOUT", internal},
      {"COPY (SELECT tree FROM kanon.releases) TO STDOUT", internal},
      {"INSERT INTO kanon.refresh_requests (group_id, verb, table_name, replica) "
       "VALUES (0, 'refresh', 'public.people', 'x')",
       internal},
      {"DELETE FROM kanon.release_rows", internal},
      {"LOCK TABLE kanon.snapshots IN ACCESS SHARE MODE", internal},
      {"SELECT * FROM app.v_trees", "app.v_trees (reaches kanon.releases) " + internal},
      {"SELECT app.f_snapshots()", "app.f_snapshots (reads kanon.snapshots) " + internal},
      {"CREATE TEMP VIEW trees AS SELECT tree FROM kanon.releases", "kanon.releases " + internal},
  };
  for (bool extended : {false, true}) {
    CAPTURE(extended);
    pqxx::connection analyst(f.proxy->conninfo("analyst"));
    check_denials(analyst, attempts, extended);
    // With schema kanon first on the search_path (SET, set_config), a bare
    // name reaches the table: still denied.
    CHECK(run(analyst, "SET search_path = kanon, public", extended).sqlstate.empty());
    check_denials(analyst, {{"SELECT tree FROM releases", internal}}, extended);
    CHECK(run(analyst, "SELECT set_config('search_path', 'kanon', false)", extended)
              .sqlstate.empty());
    check_denials(analyst, {{"SELECT count(*) FROM held_keys", internal}}, extended);
    CHECK(run(analyst, "RESET search_path", extended).sqlstate.empty());
    // What kanon grants to PUBLIC holds no row's data.
    CHECK(run(analyst, "SELECT last_value >= 0 FROM kanon.catalog_generation", extended).rows ==
          "t|\n");
    CHECK(run(analyst, "SELECT max(version) > 0 FROM kanon.schema_version", extended).rows ==
          "t|\n");
  }
}

// Code PostgreSQL runs on its own, with no call of it in the statement: an
// argument left out runs its DEFAULT, a row written to a partitioned table
// (or to a partition) runs the partition key, ANALYZE runs the expressions
// of extended statistics, a domain's DEFAULT runs for a column an INSERT
// leaves out, a range type's subtype_diff when PostgreSQL plans or indexes a
// range. Each of these, made by the administrator over a function that reads
// public.people, handed the analyst raw values before kanon read them from
// the catalog (fmt() returned Lawyer, the partition a row went to told its
// occupation). VACUUM, ANALYZE, CLUSTER and REINDEX run index and statistics
// expressions too: kanon decides them by the tables they name, so without a
// list (every table the analyst owns) or on an index they are denied.
TEST_CASE("reach: code PostgreSQL runs without its name in the statement") {
  auto& f = fixture();
  auto& pg = PgSandbox::shared();
  pg.psql(R"(
CREATE SCHEMA imp;
CREATE FUNCTION imp.occ_of(int) RETURNS text LANGUAGE sql STABLE AS
  'SELECT occupation FROM public.people WHERE id = $1';
CREATE FUNCTION imp.occ_imm(int) RETURNS text LANGUAGE sql IMMUTABLE AS
  'SELECT occupation FROM public.people WHERE id = $1';
CREATE FUNCTION imp.fmt(x text DEFAULT imp.occ_of(1)) RETURNS text LANGUAGE sql AS 'SELECT x';
CREATE FUNCTION imp.fmt_safe(x text DEFAULT upper('ok')) RETURNS text LANGUAGE sql AS 'SELECT x';
CREATE TABLE imp.pk (a int) PARTITION BY LIST ((imp.occ_imm(a)));
CREATE TABLE imp.pk1 PARTITION OF imp.pk FOR VALUES IN ('Lawyer');
CREATE TABLE imp.pk2 PARTITION OF imp.pk DEFAULT;
CREATE TABLE imp.sx (a int);
ALTER TABLE imp.sx OWNER TO analyst;
CREATE STATISTICS imp.sx_st ON (imp.occ_imm(a)) FROM imp.sx;
CREATE TABLE imp.ix (a int);
ALTER TABLE imp.ix OWNER TO analyst;
CREATE INDEX ix_e ON imp.ix ((imp.occ_imm(a)));
CREATE FUNCTION imp.time_diff(x time, y time) RETURNS float8 LANGUAGE sql IMMUTABLE STRICT AS
  'SELECT EXTRACT(EPOCH FROM (x - y))';
CREATE TYPE imp.timerange AS RANGE (subtype = time, subtype_diff = imp.time_diff);
CREATE FUNCTION imp.diff_leak(int4, int4) RETURNS float8 LANGUAGE sql IMMUTABLE AS
  'SELECT count(*)::float8 FROM public.people WHERE occupation = ''Lawyer''';
GRANT USAGE ON SCHEMA imp TO analyst;
GRANT ALL ON ALL TABLES IN SCHEMA imp TO analyst;
)");
  // Directly, each of them reads raw rows.
  {
    pqxx::connection direct(pg.conninfo("analyst"));
    pqxx::nontransaction tx(direct);
    CHECK(tx.exec("SELECT imp.fmt()")[0][0].as<std::string>() == "Lawyer");
  }
  await_known(*f.proxy, "SELECT imp.fmt()", "imp.fmt");
  const std::vector<Denial> attempts = {
      {"SELECT imp.fmt()", "imp.fmt (reaches public.people)"},
      {"SELECT upper(imp.fmt())", "imp.fmt (reaches public.people)"},
      {"INSERT INTO imp.pk VALUES (1)", "imp.pk (reaches public.people)"},
      {"INSERT INTO imp.pk2 VALUES (4)", "imp.pk2 (reaches public.people)"},
      {"UPDATE imp.pk SET a = a + 1", "imp.pk (reaches public.people)"},
      {"ANALYZE imp.sx", "imp.sx (reaches public.people)"},
      {"REINDEX TABLE imp.ix", "imp.ix (reaches public.people)"},
      // Without a table list these would run the same expressions on every
      // table the analyst owns; REINDEX INDEX names no table.
      {"ANALYZE", "VACUUM or ANALYZE without a table list (kanon rule maintenance-scope)"},
      {"VACUUM (FULL)", "VACUUM or ANALYZE without a table list (kanon rule maintenance-scope)"},
      {"CLUSTER", "CLUSTER without a table (kanon rule maintenance-scope)"},
      {"REINDEX INDEX imp.ix_e", "(kanon rule maintenance-scope)"},
      {"REINDEX SCHEMA imp", "(kanon rule maintenance-scope)"},
  };
  const auto expect_passes = [](pqxx::connection& c, const std::string& sql, bool extended,
                                const std::string& rows) {
    CAPTURE(sql);
    const auto o = run(c, sql, extended);
    CHECK_MESSAGE(o.sqlstate.empty(), o.message);
    CHECK(o.rows == rows);
  };
  for (bool extended : {false, true}) {
    CAPTURE(extended);
    pqxx::connection analyst(f.proxy->conninfo("analyst"));
    check_denials(analyst, attempts, extended);
    // What reaches nothing keeps working: a harmless DEFAULT, a range type
    // with a harmless subtype_diff and the constructors CREATE TYPE made.
    expect_passes(analyst, "SELECT imp.fmt_safe()", extended, "OK|\n");
    expect_passes(analyst, "SELECT imp.timerange('10:00', '11:00')::text", extended,
                  "[10:00:00,11:00:00)|\n");
    expect_passes(analyst, "SELECT count(*) FROM imp.pk", extended, "0|\n");
    // Maintenance of the analyst's own tables, named, keeps working.
    expect_passes(analyst, "CREATE TEMP TABLE IF NOT EXISTS own (a int PRIMARY KEY)", extended, "");
    expect_passes(analyst, "ANALYZE own", extended, "");
    expect_passes(analyst, "REINDEX TABLE own", extended, "");
  }
  // Types' code may run in any statement: while a domain's DEFAULT or a
  // range's subtype_diff reaches the table, every restricted statement is
  // denied, and served again once it is gone.
  const std::vector<std::pair<std::string, std::string>> types = {
      {"CREATE DOMAIN imp.occ_d AS text DEFAULT imp.occ_of(4);"
       "CREATE TABLE imp.notes (a int, v imp.occ_d);"
       "GRANT ALL ON imp.notes TO analyst;",
       "DROP TABLE imp.notes; DROP DOMAIN imp.occ_d;"},
      {"CREATE TYPE imp.lr AS RANGE (subtype = int4, subtype_diff = imp.diff_leak);",
       "DROP TYPE imp.lr;"},
  };
  for (const auto& [create, drop] : types) {
    CAPTURE(create);
    pg.psql(create);
    const std::string names = "a type's code (domain CHECK or DEFAULT, range subtype_diff)";
    await_known(*f.proxy, "SELECT 41 + 1", names);
    for (bool extended : {false, true}) {
      pqxx::connection analyst(f.proxy->conninfo("analyst"));
      for (const std::string sql : {"SELECT 41 + 1", "SELECT imp.fmt_safe()"}) {
        CAPTURE(sql);
        const auto o = run(analyst, sql, extended);
        CHECK_MESSAGE(o.sqlstate == "42501", o.rows << o.message);
        CHECK_MESSAGE(o.message.find(names + " (runs imp.") != std::string::npos, o.message);
        CHECK_MESSAGE(o.message.find("reaches public.people") != std::string::npos, o.message);
      }
    }
    pg.psql(drop);
    REQUIRE(until([&] {
      pqxx::connection c(f.proxy->conninfo("analyst"));
      return run(c, "SELECT 41 + 1", false).rows == "42|\n";
    }));
  }
  pg.psql("DROP SCHEMA imp CASCADE");
}

// A write runs more than its statement names: COPY FROM runs what an INSERT
// runs (triggers, defaults, constraints, foreign keys), and an UPDATE or
// DELETE of a table that a foreign key of people references reads people by
// the old key (NO ACTION, RESTRICT: an error whose DETAIL names the key
// still referenced, or success when no row holds it). Both were found by an
// adversarial probe: COPY FROM STDIN into a table whose trigger filled in
// people's city and occupation, and DELETE of a city from a lookup table.
TEST_CASE("reach: COPY FROM and writes to a table people's foreign key references") {
  auto& f = fixture();
  auto& pg = PgSandbox::shared();
  pg.psql(R"(
CREATE SCHEMA wr;
CREATE TABLE wr.visits (person_id int, city text, occupation text);
CREATE FUNCTION wr.fill_visit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  SELECT p.city, p.occupation INTO NEW.city, NEW.occupation FROM public.people p
    WHERE p.id = NEW.person_id;
  RETURN NEW;
END $$;
CREATE TRIGGER fill BEFORE INSERT ON wr.visits FOR EACH ROW EXECUTE FUNCTION wr.fill_visit();
CREATE TABLE wr.cities (city text PRIMARY KEY);
INSERT INTO wr.cities SELECT DISTINCT city FROM public.people UNION SELECT 'Atlantis';
ALTER TABLE public.people ADD CONSTRAINT people_city_fk FOREIGN KEY (city) REFERENCES wr.cities;
CREATE TABLE wr.notes (id int, v text);
GRANT USAGE ON SCHEMA wr TO analyst;
GRANT ALL ON ALL TABLES IN SCHEMA wr TO analyst;
)");
  // Directly, the DELETE's error names a raw city.
  {
    pqxx::connection direct(pg.conninfo("analyst"));
    pqxx::nontransaction tx(direct);
    std::string error;
    try {
      tx.exec("DELETE FROM wr.cities WHERE city = 'Columbus'");
    } catch (const pqxx::sql_error& e) {
      error = e.what();
    }
    CHECK_MESSAGE(error.find("still referenced") != std::string::npos, error);
  }
  await_known(*f.proxy, "DELETE FROM wr.cities WHERE city = 'Columbus'", "wr.cities");
  const std::vector<Denial> attempts = {
      {"COPY wr.visits (person_id) FROM STDIN", "wr.visits (reaches "},
      {"COPY wr.visits FROM STDIN WITH (FORMAT csv)", "wr.visits (reaches "},
      {"DELETE FROM wr.cities WHERE city = 'Columbus'", "wr.cities (reaches public.people)"},
      {"UPDATE wr.cities SET city = city || 'x' WHERE city = 'Bellevue'",
       "wr.cities (reaches public.people)"},
      {"MERGE INTO wr.cities c USING (VALUES ('Columbus')) v(x) ON c.city = v.x "
       "WHEN MATCHED THEN DELETE",
       "wr.cities (reaches public.people)"},
  };
  for (bool extended : {false, true}) {
    CAPTURE(extended);
    pqxx::connection analyst(f.proxy->conninfo("analyst"));
    check_denials(analyst, attempts, extended);
    // Tables whose writes reach nothing keep working, and reading the
    // lookup table is a read.
    CHECK(run(analyst, "INSERT INTO wr.notes VALUES (1, 'x')", extended).sqlstate.empty());
    CHECK(run(analyst, "SELECT count(*) > 0 FROM wr.cities", extended).rows == "t|\n");
  }
  pg.psql("ALTER TABLE public.people DROP CONSTRAINT people_city_fk; DROP SCHEMA wr CASCADE");
}

// Event triggers an administrator made run their function on the DDL of
// every session, restricted ones included, with the session's rights (the
// owner's when SECURITY DEFINER), and creating, altering or dropping one
// fires no event trigger: the catalog watch never hears of it. kanon compares
// the event triggers that fire now with its catalog before it decides a
// restricted statement that runs DDL, and decides with what their functions
// reach. kanon's own catalog watch (kanon_catalog_ddl, kanon_catalog_drop)
// fires on every DDL of these tests and is recognized by its exact body.
TEST_CASE("reach: event triggers run on a restricted session's DDL") {
  auto& f = fixture();
  auto& pg = PgSandbox::shared();
  pg.psql(
      "CREATE SCHEMA evt;"
      "CREATE FUNCTION evt.leak() RETURNS event_trigger LANGUAGE plpgsql AS $$ DECLARE o text; "
      "BEGIN SELECT string_agg(occupation || '/' || city, ',' ORDER BY id) INTO o "
      "FROM public.people; RAISE EXCEPTION 'ddl saw %', o; END $$;"
      "CREATE FUNCTION evt.leak_definer() RETURNS event_trigger LANGUAGE plpgsql "
      "SECURITY DEFINER AS $$ DECLARE o text; BEGIN SELECT string_agg(city, ',') INTO o "
      "FROM public.people; RAISE EXCEPTION 'ddl saw %', o; END $$;"
      "CREATE ROLE evt_reader LOGIN;");
  // Created in a transaction of its own: no DDL moves the catalog generation.
  pg.psql("CREATE EVENT TRIGGER evt_leak ON ddl_command_end EXECUTE FUNCTION evt.leak()");
  const auto drop_all = [&] {
    pg.psql("DROP EVENT TRIGGER IF EXISTS evt_leak; DROP EVENT TRIGGER IF EXISTS evt_definer;");
  };
  // Directly, the analyst's DDL shows raw rows.
  {
    pqxx::connection direct(pg.conninfo("analyst"));
    const auto o = run(direct, "CREATE TEMP TABLE evt_direct (a int)", false);
    CHECK(o.message.find("Lawyer/Washington") != std::string::npos);
  }
  const std::vector<std::string> ddl = {
      "CREATE TEMP TABLE evt_t (a int)",
      "SELECT 1 AS a INTO TEMP evt_s",
      "CREATE TEMP VIEW evt_v AS SELECT 1 AS a",
      "DROP TABLE IF EXISTS pg_temp.evt_none",
  };
  const auto expect = [&](const std::string& login, const std::string& sql, bool extended,
                          const std::string& sqlstate, const std::string& holds) {
    CAPTURE(login);
    CAPTURE(sql);
    CAPTURE(extended);
    pqxx::connection c(f.proxy->conninfo(login));
    const auto o = run(c, sql, extended);
    CHECK_MESSAGE(o.sqlstate == sqlstate, o.rows << o.message);
    CHECK_MESSAGE(o.message.find(holds) != std::string::npos, o.message);
    check_no_forbidden(o.rows + o.message, sql);
    CHECK(run(c, "SELECT 41 + 1", extended).rows == "42|\n");
  };
  const std::string rule = "(kanon rule event-trigger)";
  for (bool extended : {false, true}) {
    // The first DDL after the trigger was made is denied: no waiting for kanon
    // to hear of it.
    for (const auto& sql : ddl) {
      expect("analyst", sql, extended, "42501", rule);
      expect("analyst", sql, extended, "42501", "event trigger evt_leak (runs evt.leak");
    }
    // What runs no DDL fires nothing: served.
    pqxx::connection analyst(f.proxy->conninfo("analyst"));
    pqxx::connection direct(pg.conninfo());
    CHECK(run(analyst, "SELECT count(*) FROM public.people", extended).rows ==
          run(direct, "SELECT count(*) FROM public.people", false).rows);
    // A login PostgreSQL keeps from protected data runs the trigger with
    // rights that cannot read it: PostgreSQL refuses.
    expect("evt_reader", "CREATE TEMP TABLE evt_t (a int)", extended, "42501",
           "permission denied for table people");
  }
  // Disabled, or firing only under session_replication_role replica: the
  // analyst's DDL is served at once, and denied again once it is enabled.
  pg.psql("ALTER EVENT TRIGGER evt_leak DISABLE");
  expect("analyst", "CREATE TEMP TABLE evt_t (a int)", false, "", "");
  pg.psql("ALTER EVENT TRIGGER evt_leak ENABLE REPLICA");
  expect("analyst", "CREATE TEMP TABLE evt_t (a int)", true, "", "");
  pg.psql("ALTER EVENT TRIGGER evt_leak ENABLE");
  expect("analyst", "CREATE TEMP TABLE evt_t (a int)", false, "42501", rule);
  // Its owner's rights: denied to every restricted login, the one PostgreSQL
  // keeps from protected data too.
  pg.psql(
      "DROP EVENT TRIGGER evt_leak;"
      "CREATE EVENT TRIGGER evt_definer ON ddl_command_start "
      "EXECUTE FUNCTION evt.leak_definer()");
  for (bool extended : {false, true})
    for (const char* login : {"analyst", "evt_reader"})
      expect(login, "CREATE TEMP TABLE evt_t (a int)", extended, "42501",
             "event trigger evt_definer (runs evt.leak_definer");
  drop_all();
  expect("analyst", "CREATE TEMP TABLE evt_t (a int)", true, "", "");
  expect("evt_reader", "CREATE TEMP TABLE evt_t (a int)", false, "", "");
  pg.psql("DROP SCHEMA evt CASCADE; DROP ROLE evt_reader;");
}
