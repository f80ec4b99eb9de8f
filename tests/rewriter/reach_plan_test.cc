// The planner with a catalog, without a database: hand-made CatalogFacts
// around the unit environment's public.people. Views are expanded with the
// masks inside, children get the parent's masks and keep their own columns,
// what reaches a protected table in a way kanon cannot mask is denied, and
// names the catalog does not know ask for a look-up.
#include <doctest/doctest.h>

#include "rewriter/rewriter.h"
#include "tests/rewriter/golden_env.h"

using namespace kanon::rewriter;
using kanon::policy::CatalogFacts;
using kanon::policy::ColumnInfo;
using kanon::policy::FunctionFacts;
using kanon::policy::RelationFacts;
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
  c->functions.push_back(function(101, "pg_catalog", "upper", "internal", ""));
  c->functions.push_back(
      function(30000, "app", "f_sql", "sql", "SELECT max(city) FROM public.people"));
  c->functions.push_back(function(30001, "app", "f_safe", "sql", "SELECT $1 + 1"));
  c->functions.push_back(function(30002, "app", "f_trigger", "plpgsql", "BEGIN RETURN NEW; END"));
  c->index();
  return c;
}

struct Env {
  Env() : unit(make_unit_env("default")) { unit.snapshot.catalog = demo_catalog(); }
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
  CHECK(r.sql.find(", \"note\" FROM ONLY public.people_late") == std::string::npos);
  CHECK(r.sql.find(", \"note\" FROM public.people_late) AS \"people_late\"") != std::string::npos);
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
  ImplicitCodeEnv(std::vector<kanon::policy::OperatorFacts> operators, std::vector<uint32_t> casts)
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
