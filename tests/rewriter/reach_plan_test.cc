// The planner with a catalog, without a database: hand-made CatalogFacts
// around the unit environment's public.people. Views are expanded with the
// masks inside, children get the parent's masks and keep their own columns,
// what reaches a protected table in a way kanon cannot mask is denied, and
// names the catalog does not know ask for a look-up.
#include <doctest/doctest.h>

#include <random>

#include "rewriter/rewriter.h"
#include "tests/rewriter/golden_env.h"
#include "tests/rewriter/golden_file.h"
#include "tests/rewriter/shape_variants.h"

using namespace kanon::rewriter;
using kanon::catalog::CatalogFacts;
using kanon::catalog::FunctionFacts;
using kanon::catalog::RelationFacts;
using kanon::policy::ColumnInfo;
using kanon::testing::make_unit_env;

namespace {

RelationFacts relation(uint32_t oid, std::string schema, std::string name, char kind,
                       std::vector<std::string> columns) {
  RelationFacts r;
  r.oid = oid;
  r.schema = std::move(schema);
  r.name = std::move(name);
  r.kind = kind;
  for (auto& c : columns) r.columns.push_back({c, "text", "text"});
  return r;
}

FunctionFacts function(uint32_t oid, std::string schema, std::string name, std::string language,
                       std::string body) {
  FunctionFacts f;
  f.oid = oid;
  f.schema = std::move(schema);
  f.name = std::move(name);
  f.language = std::move(language);
  f.body = std::move(body);
  f.builtin = oid < 16384;
  return f;
}

const std::vector<std::string> kPeopleColumns = {"id",   "name",  "ssn",      "occupation",
                                                 "city", "state", "diagnosis"};

std::shared_ptr<CatalogFacts> demo_catalog() {
  auto c = std::make_shared<CatalogFacts>();
  c->database = "postgres";
  c->relations.push_back(relation(20000, "public", "people", 'r', kPeopleColumns));
  c->relations.push_back(relation(20001, "public", "plain", 'r', {"id", "label"}));
  auto v = relation(20002, "app", "v_people", 'v', {"id", "city"});
  v.definition = "SELECT people.id, people.city FROM public.people";
  v.reads_relations = {20000};
  c->relations.push_back(v);
  auto v2 = relation(20003, "app", "v_outer", 'v', {"id", "city"});
  v2.definition = "SELECT v_people.id, v_people.city FROM app.v_people WHERE v_people.id > 1";
  v2.reads_relations = {20002};
  c->relations.push_back(v2);
  auto mv = relation(20004, "app", "mv", 'm', {"id", "city"});
  mv.definition = "SELECT people.id, people.city FROM public.people";
  mv.reads_relations = {20000};
  c->relations.push_back(mv);
  auto child = relation(20005, "public", "people_late", 'r', kPeopleColumns);
  child.columns.push_back({"note", "text", "text"});
  child.parents = {20000};
  c->relations.push_back(child);
  auto vp = relation(20006, "app", "v_plain", 'v', {"id", "label"});
  vp.definition = "SELECT plain.id, plain.label FROM public.plain";
  vp.reads_relations = {20001};
  c->relations.push_back(vp);
  auto barrier = relation(20007, "app", "v_barrier", 'v', {"id", "city"});
  barrier.definition = "SELECT people.id, people.city FROM public.people WHERE people.id > 0";
  barrier.reads_relations = {20000};
  barrier.security_barrier = true;
  c->relations.push_back(barrier);
  auto trig = relation(20008, "public", "with_trigger", 'r', {"id"});
  trig.write_functions = {30002};
  c->relations.push_back(trig);
  c->functions.push_back(function(100, "pg_catalog", "count", "internal", ""));
  c->functions.back().kind = 'a';
  c->functions.push_back(function(101, "pg_catalog", "upper", "internal", ""));
  c->functions.push_back(
      function(30000, "app", "f_sql", "sql", "SELECT max(city) FROM public.people"));
  c->functions.push_back(function(30001, "app", "f_safe", "sql", "SELECT $1 + 1"));
  c->functions.push_back(function(30002, "app", "f_trigger", "plpgsql", "BEGIN RETURN NEW; END"));
  c->index();
  return c;
}

struct Env {
  Env() : unit(make_unit_env("default")) {
    unit.snapshot.catalog = demo_catalog();
    ctx.event_triggers_confirmed = true;  // the proxy's look-up (tested below)
  }
  kanon::testing::GoldenEnv unit;
  Rewriter rw;
  PlanContext ctx{"public", false};
  RewriteResult run(const std::string& sql) { return rw.rewrite(sql, unit.snapshot, ctx); }
};

}  // namespace

TEST_CASE("reach plan: a view over a protected table is expanded with the masks inside") {
  Env e;
  const auto r = e.run("SELECT city FROM app.v_people WHERE city = 'Hamlet'");
  REQUIRE(r.verdict == Verdict::kRewritten);
  CHECK(r.sql.find("FROM (SELECT people.id, people.city FROM (SELECT ") != std::string::npos);
  CHECK(r.sql.find("CASE WHEN \"city\" = 'Hamlet' THEN \"city\" END") != std::string::npos);
  CHECK(r.sql.find(") AS \"v_people\" WHERE city = 'Hamlet'") != std::string::npos);
}

TEST_CASE("reach plan: nested views, aliases and TABLE keep working") {
  Env e;
  const auto nested = e.run("SELECT o.city FROM app.v_outer o");
  REQUIRE(nested.verdict == Verdict::kRewritten);
  CHECK(nested.sql.find("FROM app.v_people") == std::string::npos);  // expanded too
  CHECK(nested.sql.find(") o") != std::string::npos);
  const auto table = e.run("TABLE app.v_people");
  REQUIRE(table.verdict == Verdict::kRewritten);
  CHECK(table.sql.rfind("SELECT * FROM (", 0) == 0);
}

TEST_CASE("reach plan: a security_barrier view is fenced with OFFSET 0") {
  Env e;
  const auto r = e.run("SELECT * FROM app.v_barrier");
  REQUIRE(r.verdict == Verdict::kRewritten);
  CHECK(r.sql.find("OFFSET 0)") != std::string::npos);
}

TEST_CASE("reach plan: views over unprotected tables pass unchanged") {
  Env e;
  CHECK(e.run("SELECT * FROM app.v_plain").verdict == Verdict::kPass);
  CHECK(e.run("SELECT app.f_safe(1), count(*), upper('x') FROM public.plain").verdict ==
        Verdict::kPass);
}

TEST_CASE("reach plan: materialized views and reaching functions are denied, naming them") {
  Env e;
  const auto mv = e.run("SELECT * FROM app.mv");
  CHECK(mv.verdict == Verdict::kDenied);
  CHECK(mv.rule == "derived-relation");
  CHECK(mv.object.find("app.mv") != std::string::npos);
  const auto fn = e.run("SELECT app.f_sql()");
  CHECK(fn.verdict == Verdict::kDenied);
  CHECK(fn.rule == "function-reaches-protected");
  CHECK(fn.object.find("app.f_sql") != std::string::npos);
  CHECK(fn.message.find("public.people") != std::string::npos);
  const auto bare = e.run("SELECT f_sql()");
  CHECK(bare.verdict == Verdict::kDenied);
}

TEST_CASE(
    "reach plan: a child created after the build gets the parent's masks and its own column") {
  Env e;
  const auto r = e.run("SELECT note, city FROM public.people_late");
  REQUIRE(r.verdict == Verdict::kRewritten);
  CHECK(r.sql.find("CASE WHEN \"city\" = 'Hamlet' THEN \"city\" END AS \"city\"") !=
        std::string::npos);
  CAPTURE(r.sql);
  CHECK(r.sql.find(", \"note\" FROM ONLY \"public\".\"people_late\"") == std::string::npos);
  CHECK(r.sql.find(", \"note\" FROM \"public\".\"people_late\")") != std::string::npos);
  // Fenced: the outer list names the child's own column too.
  CHECK(r.sql.find("\"note\" FROM (" + kanon::testing::kFence + " SELECT ") != std::string::npos);
  CHECK(e.run("SELECT ctid FROM public.people_late").rule == "system-column");
  CHECK(e.run("DELETE FROM public.people_late").verdict == Verdict::kDenied);
}

TEST_CASE("reach plan: writes through reaching objects are denied") {
  Env e;
  const auto ins = e.run("INSERT INTO public.plain SELECT id, city FROM app.v_people");
  CHECK(ins.verdict == Verdict::kDenied);
  CHECK(ins.rule == "write-protected-table");
  CHECK(e.run("UPDATE app.v_people SET city = 'x'").verdict == Verdict::kDenied);
  const auto trig = e.run("INSERT INTO public.with_trigger VALUES (1)");
  CHECK(trig.verdict == Verdict::kDenied);
  CHECK(trig.object.find("public.with_trigger") != std::string::npos);
  CHECK(e.run("CREATE VIEW mine AS SELECT * FROM app.v_people").verdict == Verdict::kDenied);
  CHECK(e.run("INSERT INTO public.plain VALUES (1, 'x')").verdict == Verdict::kPass);
}

TEST_CASE("reach plan: unknown names ask for a look-up; absent ones pass, uncached") {
  Env e;
  const auto r = e.run("SELECT * FROM my_temp JOIN public.plain USING (id)");
  REQUIRE(r.verdict == Verdict::kLookup);
  CHECK(r.unknown == std::vector<std::string>{"my_temp"});
  e.ctx.absent_names = {"my_temp"};
  const auto again = e.run("SELECT * FROM my_temp JOIN public.plain USING (id)");
  CHECK(again.verdict == Verdict::kPass);
  CHECK_FALSE(e.run("SELECT * FROM my_temp JOIN public.plain USING (id)").cache_hit);
  // A denial needs no look-up.
  e.ctx.absent_names.clear();
  CHECK(e.run("SELECT * FROM my_temp, app.mv").verdict == Verdict::kDenied);
}

TEST_CASE("reach plan: exemption covers what reaches only exempt tables") {
  Env e;
  e.ctx.exempt_tables = {"public.people"};
  CHECK(e.run("SELECT * FROM app.v_people").verdict == Verdict::kPass);
  CHECK(e.run("SELECT app.f_sql()").verdict == Verdict::kPass);
  CHECK(e.run("SELECT * FROM public.people_late").verdict == Verdict::kPass);
}

TEST_CASE("reach plan: without a catalog the proxy fails closed") {
  auto unit = make_unit_env("default");
  Rewriter rw;
  rw.set_require_catalog(true);
  const PlanContext ctx{"public", false};
  const auto r = rw.rewrite("SELECT * FROM public.plain", unit.snapshot, ctx);
  CHECK(r.verdict == Verdict::kDenied);
  CHECK(r.rule == "catalog-not-read");
  CHECK(rw.rewrite("SELECT 1", unit.snapshot, ctx).verdict == Verdict::kPass);
}

// The demo catalog with these user-defined operators and casts: a snapshot
// of its own, as each catalog read makes (facts are never changed in place).
struct ImplicitCodeEnv {
  ImplicitCodeEnv(std::vector<kanon::catalog::OperatorFacts> operators, std::vector<uint32_t> casts)
      : unit(make_unit_env("default")) {
    auto facts = std::make_shared<CatalogFacts>(*demo_catalog());
    facts->operators = std::move(operators);
    facts->cast_functions = std::move(casts);
    facts->index();
    unit.snapshot.catalog = facts;
  }
  RewriteResult run(const std::string& sql, std::vector<std::string> exempt_tables = {}) {
    PlanContext ctx{"public", false};
    ctx.exempt_tables = std::move(exempt_tables);
    return rw.rewrite(sql, unit.snapshot, ctx);
  }
  kanon::testing::GoldenEnv unit;
  Rewriter rw{0};
};

TEST_CASE("reach plan: user-defined operators run their function without its name") {
  ImplicitCodeEnv e({{40000, "app", "###", 30000},   // runs app.f_sql
                     {40001, "app", "+++", 30001}},  // runs app.f_safe
                    {});
  for (const char* sql :
       {"SELECT 1 ### 2", "SELECT 1 OPERATOR(app.###) 2",
        "SELECT id FROM public.plain WHERE id ### 1 IS NOT NULL", "SELECT 1; SELECT 2 ### 3"}) {
    const auto r = e.run(sql);
    CHECK_MESSAGE(r.verdict == Verdict::kDenied, sql);
    CHECK(r.rule == "function-reaches-protected");
    CHECK(r.object == "operator app.### (runs app.f_sql, reaches public.people)");
  }
  CHECK(e.run("SELECT 1 +++ 2, id FROM public.plain").verdict == Verdict::kPass);
  CHECK(e.run("SELECT 1 + 2").verdict == Verdict::kPass);  // no symbol: not run
  // With the table exempt, what reaches only it is allowed.
  CHECK(e.run("SELECT 1 ### 2", {"public.people"}).verdict == Verdict::kPass);

  // Operators that reach nothing deny nothing, their symbol written or not.
  ImplicitCodeEnv harmless({{40001, "app", "+++", 30001}, {40003, "app", "=", 30001}}, {});
  CHECK(harmless.run("SELECT 1 +++ 2 WHERE 1 IN (1, 2)").verdict == Verdict::kPass);

  // An equality operator may run for IN, joins, GROUP BY...: every statement.
  ImplicitCodeEnv implied({{40002, "app", "=", 30002}}, {});  // app.f_trigger (plpgsql)
  const auto r = implied.run("SELECT 1 IN (1, 2)");
  CHECK(r.verdict == Verdict::kDenied);
  CHECK(r.rule == "opaque-function");
  CHECK(r.object == "operator app.= (runs app.f_trigger)");
  CHECK(implied.run("SELECT 1").verdict == Verdict::kDenied);
}

TEST_CASE("reach plan: a cast whose function reaches a protected table denies every statement") {
  ImplicitCodeEnv safe({}, {30001});  // app.f_safe: reaches nothing
  CHECK(safe.run("SELECT 1").verdict == Verdict::kPass);
  ImplicitCodeEnv reaching({}, {30000});  // app.f_sql: reads public.people
  const auto r = reaching.run("SELECT 1");
  CHECK(r.verdict == Verdict::kDenied);
  CHECK(r.rule == "function-reaches-protected");
  CHECK(r.object == "a cast (runs app.f_sql, reaches public.people)");
  CHECK(reaching.run("SELECT 1", {"public.people"}).verdict == Verdict::kPass);
}

TEST_CASE("reach plan: a rewrite names the protected tables it reads, through views too") {
  Env e;
  const auto direct = e.run("SELECT city FROM people JOIN plain ON true");
  REQUIRE(direct.verdict == Verdict::kRewritten);
  CHECK(direct.tables == std::vector<std::string>{"public.people"});
  const auto nested = e.run("SELECT o.city FROM app.v_outer o, public.people p");
  REQUIRE(nested.verdict == Verdict::kRewritten);
  CHECK(nested.tables == std::vector<std::string>{"public.people"});  // once
  CHECK(e.run("SELECT * FROM app.v_plain").tables.empty());
  CHECK(e.run("SELECT ctid FROM people").tables.empty());  // denied: none
  CHECK(e.run("SELECT city FROM app.v_people").tables == std::vector<std::string>{"public.people"});
}

TEST_CASE("sql functions: a body that reaches no protected table may be created") {
  Env e;
  for (const char* sql : {
           "CREATE FUNCTION sillysrf(int) RETURNS setof int AS 'values (1),(10),(2),($1)' "
           "LANGUAGE sql IMMUTABLE",
           "CREATE FUNCTION labels() RETURNS setof text LANGUAGE SQL AS $$ SELECT label FROM "
           "public.plain $$",
           "CREATE OR REPLACE FUNCTION add1(a int) RETURNS int LANGUAGE sql RETURN a + 1",
           "CREATE FUNCTION n() RETURNS bigint LANGUAGE sql BEGIN ATOMIC SELECT count(*) FROM "
           "public.plain; END",
           "CREATE FUNCTION g(x int) RETURNS int AS 'SELECT app.f_safe($1)' LANGUAGE sql",
           "CREATE PROCEDURE p() LANGUAGE sql AS $$ INSERT INTO public.plain VALUES (1, 'x') $$",
       }) {
    const auto r = e.run(sql);
    CHECK_MESSAGE(r.verdict == Verdict::kPass, sql, " -> ", r.message);
  }
}

TEST_CASE("sql functions: a body that names or reaches a protected table is denied") {
  Env e;
  struct Case {
    const char* sql;
    const char* rule;
    const char* object;
  };
  for (const Case& c : {
           Case{"CREATE FUNCTION f() RETURNS text AS 'SELECT max(ssn) FROM public.people' "
                "LANGUAGE sql",
                "function-body-reaches-protected", "public.people"},
           Case{"CREATE FUNCTION f() RETURNS text LANGUAGE sql AS $q$ SELECT 1; SELECT ssn FROM "
                "people $q$",
                "function-body-reaches-protected", "public.people"},
           // A bare name is every schema's: another search_path at call time.
           Case{"SET search_path = app; CREATE FUNCTION f() RETURNS text LANGUAGE sql AS 'SELECT "
                "ssn FROM people'",
                "function-body-reaches-protected", "public.people"},
           Case{"CREATE FUNCTION f() RETURNS text LANGUAGE sql BEGIN ATOMIC SELECT max(ssn) FROM "
                "public.people; END",
                "function-body-reaches-protected", "public.people"},
           Case{"CREATE FUNCTION f() RETURNS text LANGUAGE sql RETURN (SELECT max(city) FROM "
                "app.v_people)",
                "function-body-reaches-protected", "app.v_people"},
           Case{"CREATE FUNCTION f() RETURNS text AS 'SELECT app.f_sql()' LANGUAGE sql",
                "function-reaches-protected", "app.f_sql"},
           Case{"CREATE FUNCTION f() RETURNS void AS 'SELECT app.f_trigger()' LANGUAGE sql",
                "opaque-function", "app.f_trigger"},
           Case{"CREATE FUNCTION f() RETURNS void AS 'DELETE FROM public.people_late' "
                "LANGUAGE sql",
                "function-body-reaches-protected", "public.people"},
           Case{"CREATE FUNCTION f() RETURNS setof name AS 'SELECT attname FROM pg_stats' "
                "LANGUAGE sql",
                "statistics-view", "pg_stats"},
           Case{"CREATE FUNCTION f() RETURNS xml AS $$SELECT query_to_xml('x', true, true, "
                "'')$$ LANGUAGE sql",
                "sql-text-function", "query_to_xml"},
           Case{"CREATE FUNCTION f() RETURNS int AS 'BEGIN RETURN 1; END' LANGUAGE plpgsql",
                "opaque-code", "CREATE FUNCTION"},
           Case{"CREATE FUNCTION f() RETURNS int AS 'SELEC 1' LANGUAGE sql", "opaque-code",
                "cannot parse"},
           Case{"CREATE FUNCTION f() RETURNS int AS 'x.so', 'f' LANGUAGE c", "opaque-code",
                "CREATE FUNCTION"},
       }) {
    const auto r = e.run(c.sql);
    CHECK_MESSAGE(r.verdict == Verdict::kDenied, c.sql);
    CHECK_MESSAGE(r.rule == c.rule, c.sql, " -> ", r.message);
    CHECK_MESSAGE(r.object.find(c.object) != std::string::npos, c.sql, " -> ", r.object);
  }
}

TEST_CASE("sql functions: in a database kanon does not protect, the statement rules still hold") {
  Env e;
  e.ctx.protected_database = false;
  CHECK(e.run("CREATE FUNCTION sillysrf(int) RETURNS setof int AS 'values (1),($1)' "
              "LANGUAGE sql")
            .verdict == Verdict::kPass);
  const auto dblink = e.run(
      "CREATE FUNCTION f() RETURNS setof record AS $$SELECT * FROM dblink('dbname=postgres', "
      "'select * from people') AS t(a text)$$ LANGUAGE sql");
  CHECK(dblink.verdict == Verdict::kDenied);
  CHECK(dblink.rule == "sql-text-function");
  CHECK(e.run("CREATE FUNCTION f() RETURNS int AS 'x' LANGUAGE plpython3u").rule == "opaque-code");
}

TEST_CASE("statistics views: only the session's own temporary tables' rows") {
  Env e;
  const auto r = e.run("SELECT histogram_bounds FROM pg_stats WHERE tablename = 'people'");
  REQUIRE(r.verdict == Verdict::kRewritten);
  CHECK(r.sql ==
        "SELECT histogram_bounds FROM (SELECT * FROM pg_catalog.pg_stats WHERE schemaname "
        "OPERATOR(pg_catalog.=) (SELECT nspname FROM pg_catalog.pg_namespace WHERE oid "
        "OPERATOR(pg_catalog.=) pg_catalog.pg_my_temp_schema())) AS \"pg_stats\" WHERE "
        "tablename = 'people'");
  const auto aliased = e.run("SELECT s.attname FROM pg_catalog.pg_stats_ext s, public.plain");
  REQUIRE(aliased.verdict == Verdict::kRewritten);
  CHECK(aliased.sql.find("FROM pg_catalog.pg_stats_ext WHERE schemaname") != std::string::npos);
  CHECK(aliased.sql.find(") s, public.plain") != std::string::npos);
  for (const char* sql :
       {"SELECT * FROM pg_statistic", "CREATE VIEW v AS SELECT * FROM pg_stats",
        "CREATE TABLE t AS SELECT * FROM pg_stats", "SELECT * INTO t FROM pg_stats",
        "INSERT INTO public.plain SELECT 1, attname FROM pg_stats"}) {
    const auto d = e.run(sql);
    CHECK_MESSAGE(d.verdict == Verdict::kDenied, sql);
    CHECK_MESSAGE(d.rule == "statistics-view", sql);
  }
}

TEST_CASE("code: DO, CALL and other languages only when PostgreSQL keeps the login out") {
  Env e;
  const char* const code[] = {
      "DO $$ BEGIN PERFORM 1; END $$",
      "CALL app.proc(1)",
      "CREATE FUNCTION f() RETURNS int AS 'BEGIN RETURN 1; END' LANGUAGE plpgsql",
  };
  for (const char* sql : code) {
    const auto r = e.run(sql);
    CHECK_MESSAGE(r.verdict == Verdict::kDenied, sql);
    CHECK_MESSAGE(r.rule == "opaque-code", sql);
  }
  CHECK(e.run("SELECT app.f_trigger()").rule == "opaque-function");
  e.ctx.reads_nothing_protected = true;
  e.ctx.absent_names = {"proc"};  // the session's own procedure
  for (const char* sql : code) CHECK_MESSAGE(e.run(sql).verdict == Verdict::kPass, sql);
  // Opaque code runs with the login's own privileges; what the catalog says
  // reads a protected table is still denied, and so are statement rules.
  CHECK(e.run("SELECT app.f_trigger()").verdict == Verdict::kPass);
  CHECK(e.run("SELECT app.f_sql()").rule == "function-reaches-protected");
  CHECK(e.run("CALL app.proc((SELECT count(*) FROM public.people))").rule ==
        "function-body-reaches-protected");
  CHECK(e.run("CALL app.proc(length(pg_read_file('/etc/passwd')))").rule == "server-file-function");
  CHECK(e.run("CREATE FUNCTION f() RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT count(*) FROM "
              "app.v_people; END")
            .rule == "function-body-reaches-protected");
  CHECK(e.run("CREATE EVENT TRIGGER t ON ddl_command_end EXECUTE FUNCTION app.f_trigger()").rule ==
        "opaque-code");
  CHECK(e.run("LOAD 'x'").rule == "server-access");
  // The proof is part of the cache key.
  e.ctx.reads_nothing_protected = false;
  CHECK(e.run("DO $$ BEGIN PERFORM 1; END $$").rule == "opaque-code");
}

// The demo catalog read at generation 7, with a view that calls a SQL
// function, a user-defined operator and a domain whose CHECK calls one.
struct GuardEnv {
  explicit GuardEnv(bool with_domain = false, bool c_guard = false)
      : unit(make_unit_env("default")) {
    auto facts = std::make_shared<CatalogFacts>(*demo_catalog());
    facts->generation = 7;
    facts->c_guard = c_guard;
    auto calls = relation(20009, "app", "v_calls", 'v', {"id"});
    calls.definition = "SELECT app.f_safe(plain.id) AS id FROM public.plain";
    calls.reads_relations = {20001};
    calls.reads_functions = {30001};
    facts->relations.push_back(calls);
    facts->functions.push_back(function(30003, "ext", "c_func", "c", ""));
    facts->functions.back().extension = "ext";
    // An aggregate that is also a plain function in another schema.
    facts->functions.push_back(function(30004, "app", "total", "internal", ""));
    facts->functions.back().kind = 'a';
    facts->functions.push_back(function(30005, "public", "total", "sql", "SELECT $1"));
    facts->operators = {{40001, "app", "+++", 30001}};
    if (with_domain) facts->type_functions = {30001};
    for (auto& r : facts->relations)
      if (r.name == "plain") {
        r.columns[0].sql_type = "pg_catalog.int4";
        r.columns[1].sql_type = "pg_catalog.text";
      }
    // One name in two schemas, whose first columns differ in type.
    auto twin = relation(20010, "public", "twin", 'r', {"id"});
    twin.columns[0].sql_type = "pg_catalog.int4";
    facts->relations.push_back(twin);
    twin = relation(20011, "app", "twin", 'r', {"id"});
    twin.columns[0].sql_type = "pg_catalog.int8";
    facts->relations.push_back(twin);
    facts->index();
    unit.snapshot.catalog = facts;
  }
  // people's id read through a mask with a release test, compared as an
  // integer: a restriction on it is decided on raw values first.
  void restrict_people_id() {
    auto facts = std::make_shared<CatalogFacts>(*unit.snapshot.catalog);
    for (auto& r : facts->relations)
      if (r.name == "people") r.columns[0].sql_type = "pg_catalog.int4";
    facts->index();
    unit.snapshot.catalog = facts;
    kanon::testing::add_release_test(unit, "public.people", "id", "\"id\" > 100",
                                     kanon::policy::ColumnMask::Compared::kInteger,
                                     "CASE WHEN \"id\" > 100 THEN \"id\" END");
  }
  RewriteResult rewrite(const std::string& sql) {
    return rw.rewrite(sql, unit.snapshot, PlanContext{"public", false});
  }
  // Which guard the rewrite carries: "catalog_is", "catalog_stays" or "".
  std::string guard(const std::string& sql) {
    const RewriteResult r = rewrite(sql);
    REQUIRE_MESSAGE(r.verdict != Verdict::kDenied, sql << ": " << r.rule << " " << r.object);
    const bool stays =
        r.sql.find("\"kanon\".\"catalog_stays\"(7::pg_catalog.int8)") != std::string::npos;
    const bool is = r.sql.find("\"kanon\".\"catalog_is\"(7::pg_catalog.int8)") != std::string::npos;
    CHECK_MESSAGE(!(stays && is), r.sql);
    return stays ? "catalog_stays" : is ? "catalog_is" : "";
  }
  kanon::testing::GoldenEnv unit;
  Rewriter rw{0};
};

TEST_CASE("reach plan: a statement that may call a function read late holds the catalog still") {
  GuardEnv e;
  // Built-ins, C functions of extensions and masked reads: checked once.
  CHECK(e.guard("SELECT id FROM public.plain") == "catalog_is");
  CHECK(e.guard("SELECT upper(label) FROM public.plain") == "catalog_is");
  CHECK(e.guard("SELECT ext.c_func(1)") == "catalog_is");
  CHECK(e.guard("SELECT city FROM people") == "catalog_is");
  CHECK(e.guard("SELECT 1 + 2") == "catalog_is");
  // Only writing it runs its (plpgsql) trigger.
  CHECK(e.guard("SELECT id FROM public.with_trigger") == "catalog_is");
  // A SQL function named, behind a view, run by an operator's symbol.
  CHECK(e.guard("SELECT app.f_safe(1)") == "catalog_stays");
  CHECK(e.guard("SELECT f_safe(id) FROM public.plain") == "catalog_stays");
  CHECK(e.guard("SELECT id FROM app.v_calls") == "catalog_stays");
  CHECK(e.guard("SELECT 1 +++ 2") == "catalog_stays");
  CHECK(e.guard("SELECT city FROM people; SELECT app.f_safe(1)") == "catalog_stays");
  // A domain's CHECK may run on any value.
  GuardEnv domain(true);
  CHECK(domain.guard("SELECT 1 + 2") == "catalog_stays");
}

TEST_CASE("shapes: statements that differ in compared constants share a guarded decision") {
  GuardEnv e;
  const PlanContext context{"public", false};
  // Shared (each constant compared with a column): guards in WHERE, in an
  // OFFSET (a gathering SELECT), catalog_stays, after transaction control;
  // a masked read whose constants stay where they are. Not shared: a
  // restriction decided on raw values first (its filter copies the
  // constant), a LIMIT's constant, a constant in arithmetic, a constant
  // whose value the text sent holds elsewhere.
  const std::vector<std::pair<std::string, bool>> statements = {
      {"SELECT id, label FROM public.plain WHERE id = 5", true},
      {"SELECT count(*) FROM plain WHERE id IN (11, 12, 13)", true},
      {"UPDATE plain SET label = 'x' WHERE id = 12", true},
      {"DELETE FROM plain WHERE id >= 100 AND id < 2147483648", true},
      {"SELECT app.f_safe(id) FROM public.plain WHERE id = 17", true},
      {"BEGIN; SELECT label FROM plain WHERE 0 = id", true},
      // pgbench's TPC-B-like statements: arithmetic, a negated constant,
      // VALUES rows (one row becomes INSERT ... SELECT, several keep their
      // VALUES with the guard around the first item).
      {"UPDATE plain SET id = id + -1234 WHERE id = 56", true},
      {"INSERT INTO plain (id, label) VALUES (31, 'x'), (32, 'y')", true},
      {"INSERT INTO plain (id) VALUES (-31)", true},
      {"SELECT city FROM people WHERE id IN (SELECT id FROM plain WHERE plain.id = 123457)", true},
      {"SELECT * FROM people p JOIN plain USING (id) WHERE plain.id IN (123457, 2)", true},
      {"SELECT count(*) FROM people WHERE id = 123457", false},
      {"SELECT * FROM plain WHERE id = 1 LIMIT 5", false},
      {"SELECT id FROM plain WHERE id + 1 = 2", false},
      // The text sent holds a number of the constant's value (the guard's
      // generation, 7): it could be a copy, so the text is decided alone.
      {"SELECT id FROM public.plain WHERE id = 7", false},
  };
  e.restrict_people_id();
  // The restriction's filter holds the constant (restriction_filter.h).
  CHECK(e.rewrite("SELECT count(*) FROM people WHERE id = 123457")
            .sql.find("CASE WHEN \"id\" OPERATOR(pg_catalog.=) 123457 THEN") != std::string::npos);
  std::mt19937 rng(7);
  for (const auto& [sql, shared] : statements) {
    CAPTURE(sql);
    Rewriter cached(64);
    const auto first = cached.rewrite(sql, e.unit.snapshot, context);
    REQUIRE(first.verdict != Verdict::kDenied);
    CHECK(first.guard_generation == 7);
    for (int round = 0; round < 6; ++round) {
      const std::string variant = kanon::testing::with_other_constants(sql, rng);
      if (variant == sql) continue;
      CAPTURE(variant);
      Rewriter fresh(0);
      const auto want = fresh.rewrite(variant, e.unit.snapshot, context);
      const auto got = cached.rewrite(variant, e.unit.snapshot, context);
      CHECK(kanon::testing::result_difference(got, want) == "");
      CHECK(got.cache_hit == shared);
    }
  }
}

TEST_CASE("reach plan: INSERT ... VALUES of several rows: the guard around the first item") {
  GuardEnv e;
  const std::string g = "(CASE WHEN \"kanon\".\"catalog_is\"(7::pg_catalog.int8) THEN ";
  // A string constant is cast to its column's type from the catalog.
  CHECK(e.rewrite("INSERT INTO public.plain (label) VALUES ('a'), ('b')").sql ==
        "INSERT INTO public.plain (label) VALUES (" + g + "'a'::pg_catalog.text END)), ('b')");
  CHECK(e.rewrite("INSERT INTO plain VALUES (DEFAULT, NULL), (2, 'b')").sql ==
        "INSERT INTO plain VALUES (DEFAULT, " + g + "NULL::pg_catalog.text END)), (2, 'b')");
  CHECK(e.rewrite("INSERT INTO plain VALUES ('1', 'a'), (2, 'b')").sql ==
        "INSERT INTO plain VALUES (" + g + "'1'::pg_catalog.int4 END), 'a'), (2, 'b')");
  // A typed item needs no cast; a parameter takes its column's type.
  CHECK(e.rewrite("INSERT INTO plain VALUES (1, 'a'), (2, 'b')").sql ==
        "INSERT INTO plain VALUES (" + g + "1 END), 'a'), (2, 'b')");
  CHECK(e.rewrite("INSERT INTO plain (id) VALUES ($1), ($2)").sql ==
        "INSERT INTO plain (id) VALUES (" + g + "$1::pg_catalog.int4 END)), ($2)");
  // Relations of that name in two schemas disagree, a column kanon does not
  // know, a first row of DEFAULTs: no place for the guard, denied (fail
  // closed; docs/security.md).
  const auto denied = [&](const std::string& sql) {
    const RewriteResult r = e.rewrite(sql);
    CHECK_MESSAGE(r.verdict == Verdict::kDenied, sql);
    CHECK_MESSAGE(r.rule == "catalog-guard", sql << ": " << r.rule);
  };
  denied("INSERT INTO twin VALUES ('1'), ('2')");
  CHECK(e.guard("INSERT INTO public.twin VALUES ('1'), ('2')") == "catalog_is");
  denied("INSERT INTO app.v_calls VALUES ('1'), ('2')");  // no sql_type known
  denied("INSERT INTO plain (nosuch) VALUES ('1'), ('2')");
  denied("INSERT INTO plain VALUES (DEFAULT, DEFAULT), (2, 'b')");
}

TEST_CASE("reach plan: a statement that gathers rows is guarded by an OFFSET of its top level") {
  GuardEnv e;
  const std::string offset =
      " OFFSET (CASE WHEN \"kanon\".\"catalog_is\"(7::pg_catalog.int8) THEN 0 ELSE -1 END)";
  const auto ends_with_offset = [&](const std::string& sql) {
    const RewriteResult r = e.rewrite(sql);
    REQUIRE_MESSAGE(r.verdict != Verdict::kDenied, sql << ": " << r.rule);
    CAPTURE(r.sql);
    return r.sql.size() > offset.size() &&
           r.sql.compare(r.sql.size() - offset.size(), offset.size(), offset) == 0;
  };
  // An aggregate, by the catalog; GROUP BY, DISTINCT, HAVING by the text.
  CHECK(ends_with_offset("SELECT count(*) FROM public.plain"));
  CHECK(ends_with_offset("SELECT pg_catalog.count(id) FROM public.plain WHERE id > 2"));
  CHECK(ends_with_offset("SELECT app.total(id) FROM public.plain"));
  CHECK(ends_with_offset("SELECT label FROM public.plain GROUP BY label"));
  CHECK(ends_with_offset("SELECT DISTINCT label FROM public.plain"));
  CHECK(ends_with_offset("SELECT city, count(*) FROM people GROUP BY city"));
  // Rows one for one, or a name that is not only an aggregate: WHERE.
  CHECK_FALSE(ends_with_offset("SELECT id FROM public.plain"));
  CHECK_FALSE(ends_with_offset("SELECT upper(label) FROM public.plain"));
  CHECK_FALSE(ends_with_offset("SELECT total(id) FROM public.plain"));
  CHECK(e.rewrite("SELECT id FROM public.plain").sql.find(" WHERE \"kanon\".\"catalog_is\"") !=
        std::string::npos);
  // A LIMIT at the top: WHERE.
  CHECK_FALSE(ends_with_offset("SELECT count(*) FROM public.plain LIMIT 1"));
  // A function read late: the holding guard, in the OFFSET too.
  CHECK(e.rewrite("SELECT count(app.f_safe(id)) FROM public.plain")
            .sql.find("OFFSET (CASE WHEN \"kanon\".\"catalog_stays\"(7::pg_catalog.int8) THEN 0 "
                      "ELSE -1 END)") != std::string::npos);
}

TEST_CASE("reach plan: where the catalog holds the guard in C, statements carry it instead") {
  GuardEnv c(false, true);
  for (const char* sql :
       {"SELECT id FROM public.plain", "SELECT city FROM people", "SELECT count(*) FROM people",
        "SELECT app.f_safe(1)", "INSERT INTO public.plain (label) VALUES ('a'), ('b')"}) {
    CAPTURE(sql);
    const RewriteResult r = c.rewrite(sql);
    REQUIRE(r.verdict == Verdict::kRewritten);
    CHECK(r.guard_generation == 7);
    CHECK(r.sql.find("\"kanon\".\"catalog_") == std::string::npos);
    const bool late = std::string(sql).find("f_safe") != std::string::npos;
    CHECK_MESSAGE(
        r.sql.find(late ? "\"kanon_mask\".\"catalog_stays\"(7::pg_catalog.int8)"
                        : "\"kanon_mask\".\"catalog_is\"(7::pg_catalog.int8)") != std::string::npos,
        r.sql);
    // The same statement where it is not installed: the PL/pgSQL guard.
    GuardEnv plain;
    const RewriteResult p = plain.rewrite(sql);
    CHECK(p.sql.find("\"kanon_mask\".\"catalog_") == std::string::npos);
    CHECK(p.sql.find("\"kanon\".\"catalog_") != std::string::npos);
  }
}

// Parallel workers where masks are evaluated: SQL masks always run
// serially; the function's masks (evaluator: function) only while the proxy
// says the server is busy (PlanContext::serial_masks); a statement that
// evaluates no mask never does.
TEST_CASE("reach plan: the serial marker for SQL masks always, for the function's when busy") {
  const std::string marker = " AND \"kanon\".\"serial\"()";
  for (const bool function_masks : {false, true}) {
    CAPTURE(function_masks);
    GuardEnv e;
    auto facts = std::make_shared<CatalogFacts>(*e.unit.snapshot.catalog);
    facts->functions.push_back(function(30100, "kanon_mask", "released", "c", ""));
    facts->index();
    e.unit.snapshot.catalog = facts;
    auto people =
        std::make_shared<kanon::policy::TableSnapshot>(*e.unit.snapshot.tables.at("public.people"));
    (function_masks ? people->masks.calls_function : people->masks.interpreted) = true;
    people->mask_function = function_masks ? 30100 : 0;
    e.unit.snapshot.tables["public.people"] = people;
    for (const bool busy : {false, true}) {
      CAPTURE(busy);
      PlanContext ctx{"public", false};
      ctx.serial_masks = busy;
      const auto masked =
          e.rw.rewrite("SELECT city, count(*) FROM people GROUP BY 1", e.unit.snapshot, ctx);
      REQUIRE_MESSAGE(masked.verdict == Verdict::kRewritten, masked.rule);
      CHECK_MESSAGE((masked.sql.find(marker) != std::string::npos) == (busy || !function_masks),
                    masked.sql);
      // Through a view, the same.
      const auto viewed = e.rw.rewrite("SELECT city FROM app.v_people", e.unit.snapshot, ctx);
      REQUIRE_MESSAGE(viewed.verdict == Verdict::kRewritten, viewed.rule);
      CHECK_MESSAGE((viewed.sql.find(marker) != std::string::npos) == (busy || !function_masks),
                    viewed.sql);
      // No mask evaluated: the server's own parallel plans, busy or not.
      const auto plain = e.rw.rewrite("SELECT count(*) FROM public.plain", e.unit.snapshot, ctx);
      REQUIRE(plain.verdict == Verdict::kRewritten);
      CHECK_MESSAGE(plain.sql.find(marker) == std::string::npos, plain.sql);
    }
    // The rewrite cache keeps the two apart.
    Rewriter cached;
    PlanContext ctx{"public", false};
    const std::string sql = "SELECT city FROM people";
    const bool idle_marked =
        cached.rewrite(sql, e.unit.snapshot, ctx).sql.find(marker) != std::string::npos;
    ctx.serial_masks = true;
    const auto busy = cached.rewrite(sql, e.unit.snapshot, ctx);
    CHECK_FALSE(busy.cache_hit);
    CHECK(busy.sql.find(marker) != std::string::npos);
    CHECK(idle_marked == !function_masks);
  }
}

// Event triggers run their function on every session's DDL; the proxy
// confirms the ones firing now are the catalog's before the decision.
TEST_CASE("event triggers: DDL is decided with what their functions reach") {
  auto facts = std::make_shared<CatalogFacts>(*demo_catalog());
  facts->functions.push_back(function(30010, "kanon", "catalog_changed", "plpgsql", ""));
  facts->functions.back().security_definer = true;
  facts->functions.back().trigger = true;
  facts->functions.push_back(function(30011, "audit", "log_ddl", "plpgsql", ""));
  facts->functions.back().trigger = true;
  facts->index();
  facts->event_triggers = {{"kanon_catalog_ddl", 30010, true}};
  Env e;
  e.unit.snapshot.catalog = facts;
  e.unit.snapshot.version += 100;
  e.ctx.absent_names = {"s", "t", "t2", "x"};  // the session's own
  const std::vector<std::string> ddl = {
      "CREATE TEMP TABLE t (a int)", "SELECT 1 AS a INTO TEMP s", "DROP TABLE IF EXISTS x",
      "EXPLAIN CREATE TABLE t2 AS SELECT 1", "GRANT SELECT ON public.plain TO analyst"};
  // Unconfirmed, every DDL asks the proxy; a query or a write does not.
  e.ctx.event_triggers_confirmed = false;
  for (const auto& sql : ddl) {
    CAPTURE(sql);
    const auto r = e.run(sql);
    CHECK(r.verdict == Verdict::kLookup);
    CHECK(r.event_triggers);
    CHECK(r.unknown.empty());
    // Not settled: the proxy denies it.
    CHECK(lookup_denial(r).rule == "event-trigger");
  }
  for (const char* sql : {"SELECT 1", "INSERT INTO public.plain VALUES (1, 'x')",
                          "TRUNCATE public.plain", "VACUUM public.plain", "SET search_path = x"}) {
    CAPTURE(sql);
    CHECK(e.run(sql).verdict != Verdict::kLookup);
  }
  // Confirmed: kanon's own watch reaches nothing, served.
  e.ctx.event_triggers_confirmed = true;
  for (const auto& sql : ddl) CHECK_MESSAGE(e.run(sql).verdict == Verdict::kPass, sql);
  // An administrator's PL/pgSQL trigger: opaque, so DDL is denied naming it.
  facts->event_triggers.push_back({"audit", 30011, false});
  e.unit.snapshot.version += 1;
  for (const auto& sql : ddl) {
    CAPTURE(sql);
    const auto r = e.run(sql);
    CHECK(r.verdict == Verdict::kDenied);
    CHECK(r.rule == "event-trigger");
    CHECK(r.object == "event trigger audit (runs audit.log_ddl, code kanon cannot analyse)");
  }
  CHECK(e.run("SELECT 1").verdict == Verdict::kPass);
  // A login PostgreSQL keeps from protected data runs it with its own rights.
  e.ctx.reads_nothing_protected = true;
  CHECK(e.run("CREATE TEMP TABLE t (a int)").verdict == Verdict::kPass);
  CHECK(e.run("DO $$ BEGIN PERFORM 1; END $$").verdict == Verdict::kPass);
  // With its owner's rights: denied to that login too, and opaque code it
  // may run (which may run DDL) is no longer harmless.
  auto definer = std::make_shared<CatalogFacts>(*facts);
  for (auto& f : definer->functions)
    if (f.oid == 30011) f.security_definer = true;
  definer->index();
  e.unit.snapshot.catalog = definer;
  e.unit.snapshot.version += 1;
  CHECK(e.run("CREATE TEMP TABLE t (a int)").rule == "event-trigger");
  CHECK(e.run("DO $$ BEGIN PERFORM 1; END $$").rule == "event-trigger");
  CHECK(e.run("SELECT app.f_trigger()").rule == "opaque-function");
  // A kanon_watch trigger whose function is not kanon's is not exempt by name.
  auto renamed = std::make_shared<CatalogFacts>(*demo_catalog());
  renamed->functions.push_back(function(30012, "public", "catalog_changed", "plpgsql", ""));
  renamed->index();
  renamed->event_triggers = {{"kanon_catalog_ddl", 30012, false}};
  e.unit.snapshot.catalog = renamed;
  e.unit.snapshot.version += 1;
  e.ctx.reads_nothing_protected = false;
  CHECK(e.run("CREATE TEMP TABLE t (a int)").rule == "event-trigger");
}
