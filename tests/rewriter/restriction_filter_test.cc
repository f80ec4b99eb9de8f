// Restrictions decided on raw values first (rewriter/restriction_filter.h):
// the filter kanon writes for a SELECT's restrictions on quasi-identifiers,
// and where the rewriter puts it (and where it does not). What the filter
// returns, and what a function of the user's sees next to it, is checked on
// PostgreSQL by rewriter_oracle_pg_test.
#include "rewriter/restriction_filter.h"

#include <doctest/doctest.h>

#include "rewriter/rewriter.h"
#include "tests/rewriter/golden_env.h"

using namespace kanon::rewriter;
using kanon::catalog::CatalogFacts;
using kanon::policy::ColumnMask;
using kanon::policy::TableMasks;

namespace {

TableMasks masks() {
  using Role = ColumnMask::Role;
  TableMasks m;
  m.columns.push_back({"id", "integer", "\"id\"", Role::kOther});
  m.columns.push_back({"age", "integer", "CASE WHEN p_age THEN \"age\" END", Role::kQuasiIdentifier,
                       "p_age", ColumnMask::Compared::kInteger});
  m.columns.push_back({"sex", "text", "CASE WHEN p_sex THEN \"sex\" END", Role::kQuasiIdentifier,
                       "p_sex", ColumnMask::Compared::kText});
  m.columns.push_back({"city", "character varying", "CASE WHEN p_city THEN \"city\" END",
                       Role::kQuasiIdentifier, "p_city", ColumnMask::Compared::kVarchar});
  // A mask of another form (no release test): never filtered.
  m.columns.push_back({"race", "text", "flat", Role::kQuasiIdentifier});
  return m;
}

std::string filter_for(const std::string& sql, const CatalogFacts* facts,
                       const std::vector<uint32_t>* parameter_types = nullptr) {
  const auto parsed = parse_sql(sql);
  REQUIRE(parsed.ok);
  return restriction_filter(parsed.statements.at(0).relations.at(0).restrictions, masks(), facts,
                            parameter_types);
}

}  // namespace

TEST_CASE("restriction filter: one CASE per column, the raw comparison guarding the release test") {
  const CatalogFacts facts;
  CHECK(filter_for("SELECT 1 FROM t WHERE age = 39", &facts) ==
        " WHERE CASE WHEN \"age\" OPERATOR(pg_catalog.=) 39 THEN p_age ELSE false END");
  // Columns in the order of their first restriction; one column's
  // restrictions in one CASE; either side; a string read as an integer.
  CHECK(filter_for("SELECT 1 FROM t WHERE 'Female' = sex AND age >= 30 AND t.age < '40'", &facts) ==
        " WHERE CASE WHEN 'Female' OPERATOR(pg_catalog.=) \"sex\" THEN p_sex ELSE false END AND "
        "CASE WHEN \"age\" OPERATOR(pg_catalog.>=) 30 AND \"age\" OPERATOR(pg_catalog.<) '40' "
        "THEN p_age ELSE false END");
  // IN: any; NOT IN and BETWEEN: all; a quote doubled.
  CHECK(filter_for("SELECT 1 FROM t WHERE sex IN ('F', 'O''Neil') AND age NOT IN (1, 2)", &facts) ==
        " WHERE CASE WHEN (\"sex\" OPERATOR(pg_catalog.=) 'F' OR \"sex\" OPERATOR(pg_catalog.=) "
        "'O''Neil') THEN p_sex ELSE false END AND CASE WHEN (\"age\" OPERATOR(pg_catalog.<>) 1 "
        "AND \"age\" OPERATOR(pg_catalog.<>) 2) THEN p_age ELSE false END");
  CHECK(filter_for("SELECT 1 FROM t WHERE age BETWEEN 30 AND 35", &facts) ==
        " WHERE CASE WHEN (\"age\" OPERATOR(pg_catalog.>=) 30 AND \"age\" OPERATOR(pg_catalog.<=) "
        "35) THEN p_age ELSE false END");
}

// LIKE and NOT LIKE with a constant pattern on a text column: pg_catalog's
// textlike and textnlike, whose errors depend on the pattern alone (one
// without a backslash raises none).
TEST_CASE("restriction filter: LIKE patterns on text columns") {
  CatalogFacts facts;
  CHECK(filter_for("SELECT 1 FROM t WHERE sex LIKE 'F%' AND city NOT LIKE '_rie'", &facts) ==
        " WHERE CASE WHEN \"sex\" OPERATOR(pg_catalog.~~) 'F%' THEN p_sex ELSE false END AND "
        "CASE WHEN \"city\" OPERATOR(pg_catalog.!~~) '_rie' THEN p_city ELSE false END");
  CHECK(filter_for("SELECT 1 FROM t WHERE sex LIKE 'F%' AND sex <> 'Fx'", &facts) ==
        " WHERE CASE WHEN \"sex\" OPERATOR(pg_catalog.~~) 'F%' AND \"sex\" "
        "OPERATOR(pg_catalog.<>) 'Fx' THEN p_sex ELSE false END");
  // An integer column has no LIKE of its own: the user's statement fails
  // with PostgreSQL's own error, not kanon's filter's.
  CHECK(filter_for("SELECT 1 FROM t WHERE age LIKE '3%' AND age LIKE '39'", &facts).empty());
  // A user-defined `~~` of text's types could be the user's; for character
  // varying any of the name could.
  facts.operators = {{40000, "public", "~~", 40001, 25, 25}};
  CHECK(filter_for("SELECT 1 FROM t WHERE sex LIKE 'F%'", &facts).empty());
  CHECK(filter_for("SELECT 1 FROM t WHERE sex NOT LIKE 'F%'", &facts) ==
        " WHERE CASE WHEN \"sex\" OPERATOR(pg_catalog.!~~) 'F%' THEN p_sex ELSE false END");
  facts.operators = {{40000, "public", "~~", 40001, 50000, 25}};
  CHECK(!filter_for("SELECT 1 FROM t WHERE sex LIKE 'F%'", &facts).empty());
  CHECK(filter_for("SELECT 1 FROM t WHERE city LIKE 'E%'", &facts).empty());
}

TEST_CASE("restriction filter: nothing where the comparison might not be the user's") {
  CatalogFacts facts;
  // No catalog to tell which operators exist.
  CHECK(filter_for("SELECT 1 FROM t WHERE age = 39", nullptr).empty());
  // Columns without a release test (passed through, or another mask form).
  CHECK(filter_for("SELECT 1 FROM t WHERE id = 3 AND race = 'White'", &facts).empty());
  // Constants the column would read another way: an integer for text, a
  // string that is no integer for an integer column (an error PostgreSQL
  // reports for the user's own conjunct).
  CHECK(filter_for("SELECT 1 FROM t WHERE sex = 5 AND age = 'x' AND age = '1 '", &facts).empty());
  // A user-defined operator of that name and the comparison's exact types:
  // the user's `=` might be it; other names and types still go.
  facts.operators.push_back({40000, "public", "=", 40001, 23, 23});
  CHECK(filter_for("SELECT 1 FROM t WHERE age = 39", &facts).empty());
  CHECK(filter_for("SELECT 1 FROM t WHERE age = '39'", &facts).empty());  // unknown: integer's
  CHECK(filter_for("SELECT 1 FROM t WHERE age = 39 AND age < 50", &facts) ==
        " WHERE CASE WHEN \"age\" OPERATOR(pg_catalog.<) 50 THEN p_age ELSE false END");
  CHECK(filter_for("SELECT 1 FROM t WHERE sex = 'F'", &facts) ==
        " WHERE CASE WHEN \"sex\" OPERATOR(pg_catalog.=) 'F' THEN p_sex ELSE false END");
  // An extension's (citext's, PostGIS's) on types of its own: integers and
  // text compared with themselves find pg_catalog's of exact types first.
  facts.operators = {{40000, "public", "=", 40001, 50000, 50000}};
  CHECK(filter_for("SELECT 1 FROM t WHERE age = 39 AND sex = 'F'", &facts) ==
        " WHERE CASE WHEN \"age\" OPERATOR(pg_catalog.=) 39 THEN p_age ELSE false END AND "
        "CASE WHEN \"sex\" OPERATOR(pg_catalog.=) 'F' THEN p_sex ELSE false END");
  // Character varying has no `=` of its own in pg_catalog: PostgreSQL
  // chooses among candidates, which any operator of the name may be.
  CHECK(filter_for("SELECT 1 FROM t WHERE city = 'Erie'", &facts).empty());
  const std::vector<uint32_t> varchar{1043};
  CHECK(filter_for("SELECT 1 FROM t WHERE sex = $1", &facts, &varchar).empty());
  facts.operators.clear();
  CHECK(filter_for("SELECT 1 FROM t WHERE city = 'Erie'", &facts) ==
        " WHERE CASE WHEN \"city\" OPERATOR(pg_catalog.=) 'Erie' THEN p_city ELSE false END");
  // Another pair of integer types: (smallint, integer) is not (integer, integer).
  facts.operators = {{40000, "public", "<", 40001, 21, 23}};
  CHECK(!filter_for("SELECT 1 FROM t WHERE age < 39", &facts).empty());
  CHECK_FALSE(filter_for("SELECT 1 FROM t WHERE 39 < age", &facts).empty());
  facts.operators = {{40000, "public", "<", 40001, 23, 23}};
  CHECK(filter_for("SELECT 1 FROM t WHERE 39 < age", &facts).empty());
}

// What drivers send: `age = $1` in a Parse. Decided first where the
// parameter has one type in the filter and in the user's conjunct, and
// pg_catalog compares it with the column by a leakproof operator.
TEST_CASE("restriction filter: parameters a Parse types as the column") {
  const CatalogFacts facts;
  const std::vector<uint32_t> unspecified;
  CHECK(filter_for("SELECT 1 FROM t WHERE age = $1 AND $2 <> sex", &facts, &unspecified) ==
        " WHERE CASE WHEN \"age\" OPERATOR(pg_catalog.=) $1 THEN p_age ELSE false END AND "
        "CASE WHEN $2 OPERATOR(pg_catalog.<>) \"sex\" THEN p_sex ELSE false END");
  CHECK(filter_for("SELECT 1 FROM t WHERE age BETWEEN $2 AND 40 AND age IN ($1, 3)", &facts,
                   &unspecified) ==
        " WHERE CASE WHEN (\"age\" OPERATOR(pg_catalog.>=) $2 AND \"age\" OPERATOR(pg_catalog.<=) "
        "40) AND (\"age\" OPERATOR(pg_catalog.=) $1 OR \"age\" OPERATOR(pg_catalog.=) 3) THEN "
        "p_age ELSE false END");
  // Not typed by a Parse (a simple Query's PREPARE names its own types).
  CHECK(filter_for("SELECT 1 FROM t WHERE age = $1", &facts, nullptr).empty());
  // Declared types: the integers for an integer column, text and character
  // varying for text; not numeric (its operators are not leakproof), not a
  // text type for an integer column or the reverse.
  const auto with = [&](uint32_t type, const char* sql) {
    const std::vector<uint32_t> types{type};
    return !filter_for(sql, &facts, &types).empty();
  };
  for (uint32_t type : {20u, 21u, 23u}) CHECK(with(type, "SELECT 1 FROM t WHERE age < $1"));
  for (uint32_t type : {25u, 1043u, 1700u, 701u, 705u})
    CHECK_FALSE(with(type, "SELECT 1 FROM t WHERE age < $1"));
  for (uint32_t type : {0u, 25u, 1043u}) CHECK(with(type, "SELECT 1 FROM t WHERE sex = $1"));
  for (uint32_t type : {23u, 1042u, 19u, 705u})
    CHECK_FALSE(with(type, "SELECT 1 FROM t WHERE sex = $1"));
  // Character varying unspecified: `=` types it text, IN character varying.
  CHECK(with(25, "SELECT 1 FROM t WHERE city IN ($1)"));
  CHECK(with(1043, "SELECT 1 FROM t WHERE city = $1"));
  CHECK_FALSE(with(0, "SELECT 1 FROM t WHERE city IN ($1)"));
  CHECK_FALSE(with(0, "SELECT 1 FROM t WHERE city = $1"));
  // Types past the Parse's list are unspecified.
  const std::vector<uint32_t> one{25};
  CHECK(filter_for("SELECT 1 FROM t WHERE sex = $1 AND age = $2", &facts, &one) ==
        " WHERE CASE WHEN \"sex\" OPERATOR(pg_catalog.=) $1 THEN p_sex ELSE false END AND "
        "CASE WHEN \"age\" OPERATOR(pg_catalog.=) $2 THEN p_age ELSE false END");
  // A parameter used anywhere else could be typed there first.
  CHECK(filter_for("SELECT $1::text FROM t WHERE age = $1", &facts, &unspecified).empty());
  CHECK(filter_for("SELECT 1 FROM t WHERE age = $1 AND age < $1", &facts, &unspecified).empty());
}

namespace {

struct Env {
  explicit Env(const std::string& name = "default") : unit(kanon::testing::make_unit_env(name)) {
    auto facts = std::make_shared<CatalogFacts>();
    facts->database = "postgres";
    uint32_t oid = 20000;
    for (const char* name : {"people", "other"}) {
      kanon::catalog::RelationFacts r;
      r.oid = oid++;
      r.schema = "public";
      r.name = name;
      r.kind = 'r';
      for (const char* c : {"id", "name", "ssn", "occupation", "city", "state", "diagnosis"})
        r.columns.push_back({c, "text", "text"});
      facts->relations.push_back(std::move(r));
    }
    kanon::catalog::FunctionFacts count;
    count.oid = 2803;
    count.schema = "pg_catalog";
    count.name = "count";
    count.language = "internal";
    count.builtin = true;
    facts->functions.push_back(count);
    facts->index();
    unit.snapshot.catalog = facts;
    // The hand-made people's city mask as build_masks describes it.
    kanon::testing::add_release_test(unit, "public.people", "city", "\"city\" = 'Hamlet'",
                                     ColumnMask::Compared::kText);
    ctx.event_triggers_confirmed = true;
  }
  kanon::testing::GoldenEnv unit;
  Rewriter rw;
  PlanContext ctx{"public", false};
  RewriteResult run(const std::string& sql) { return rw.rewrite(sql, unit.snapshot, ctx); }
};

constexpr const char* kCityFilter =
    " WHERE CASE WHEN \"city\" OPERATOR(pg_catalog.=) 'Hamlet' THEN \"city\" = 'Hamlet' ELSE "
    "false END)";

}  // namespace

TEST_CASE("restriction filter: in the masked read of the restricted item, nowhere else") {
  Env e;
  auto r = e.run("SELECT count(*) FROM people WHERE city = 'Hamlet'");
  REQUIRE(r.verdict == Verdict::kRewritten);
  CHECK(r.sql.find("FROM \"public\".\"people\"" + std::string(kCityFilter) +
                   " AS \"kanon fenced\") AS \"people\" WHERE city = 'Hamlet'") !=
        std::string::npos);
  // A subquery's restriction goes to its own read only.
  r = e.run(
      "SELECT p.state FROM people p WHERE p.id IN (SELECT id FROM people WHERE "
      "city = 'Hamlet')");
  REQUIRE(r.verdict == Verdict::kRewritten);
  CHECK(r.sql.find(kCityFilter) == r.sql.rfind(kCityFilter));
  CHECK(r.sql.find(kCityFilter) > r.sql.find("(SELECT id FROM"));
  // In a join, on either side of an outer join: the WHERE rejects the rows
  // the other side's NULLs stand in for anyway.
  r = e.run(
      "SELECT count(*) FROM other o LEFT JOIN people p ON p.id = o.id WHERE p.city = 'Hamlet'");
  REQUIRE(r.verdict == Verdict::kRewritten);
  CHECK(r.sql.find(kCityFilter) != std::string::npos);
  // An outer query's WHERE on a subquery that passes the rows on unchanged
  // (as BI tools wrap a dataset's SQL): the table's read.
  r = e.run("SELECT count(*) FROM (SELECT city AS c FROM people) s WHERE s.c = 'Hamlet'");
  REQUIRE(r.verdict == Verdict::kRewritten);
  CHECK(r.sql.find(kCityFilter) != std::string::npos);
  // The same through a CTE the statement names once.
  r = e.run("WITH s AS (SELECT city AS c FROM people) SELECT count(*) FROM s WHERE s.c = 'Hamlet'");
  REQUIRE(r.verdict == Verdict::kRewritten);
  CHECK(r.sql.find(kCityFilter) != std::string::npos);
  // Not a restriction of the item's rows: OR, a bare name in a join, a
  // join's ON, an outer query's WHERE above a subquery that changes rows.
  for (const char* sql : {
           "SELECT count(*) FROM people WHERE city = 'Hamlet' OR state = 'OH'",
           "SELECT count(*) FROM people p LEFT JOIN other o ON true WHERE city = 'Hamlet'",
           "SELECT count(*) FROM other o LEFT JOIN people p ON p.city = 'Hamlet'",
           "SELECT count(*) FROM (SELECT city FROM people LIMIT 9) s WHERE s.city = 'Hamlet'",
           "SELECT count(*) FROM (SELECT count(*) AS city FROM people) s WHERE s.city = 'Hamlet'",
           "WITH s AS (SELECT * FROM people) SELECT count(*) FROM s WHERE city = 'Hamlet' AND "
           "EXISTS (SELECT FROM s)",
       }) {
    CAPTURE(sql);
    r = e.run(sql);
    REQUIRE(r.verdict == Verdict::kRewritten);
    CHECK(r.sql.find("OPERATOR(pg_catalog.=) 'Hamlet'") == std::string::npos);
  }
}

TEST_CASE("restriction filter: a masked copy or view holds no raw value to decide on") {
  Env e("materialized");
  auto people =
      std::make_shared<kanon::policy::TableSnapshot>(*e.unit.snapshot.tables.at("public.people"));
  people->policy.mode = kanon::policy::EnforcementMode::kView;
  e.unit.snapshot.tables["public.people"] = people;
  const auto r = e.run("SELECT count(*) FROM people WHERE city = 'Hamlet'");
  REQUIRE(r.verdict == Verdict::kRewritten);
  CHECK(r.sql.find("\"kanon_masked\".\"people\"") != std::string::npos);
  CHECK(r.sql.find("OPERATOR(pg_catalog.=) 'Hamlet'") == std::string::npos);
}

TEST_CASE("restriction filter: a parameter's, with the Parse's types, cached apart") {
  Env e;
  const std::string sql = "SELECT count(*) FROM people WHERE city = $1";
  const std::string filter =
      " WHERE CASE WHEN \"city\" OPERATOR(pg_catalog.=) $1 THEN \"city\" = 'Hamlet' ELSE false "
      "END)";
  // A simple Query's text (PREPARE's parameters are its own): none.
  auto r = e.run(sql);
  REQUIRE(r.verdict == Verdict::kRewritten);
  CHECK(r.sql.find(filter) == std::string::npos);
  e.ctx.parse_message = true;
  r = e.run(sql);
  REQUIRE(r.verdict == Verdict::kRewritten);
  CHECK(r.sql.find(filter) != std::string::npos);
  e.ctx.parameter_types = {1042};  // character: not text's comparison
  r = e.run(sql);
  REQUIRE(r.verdict == Verdict::kRewritten);
  CHECK(r.sql.find(filter) == std::string::npos);
  e.ctx.parameter_types = {25};
  r = e.run(sql);
  CHECK(r.sql.find(filter) != std::string::npos);
  CHECK(e.rw.cache_stats().hits == 0);
  CHECK(e.run(sql).cache_hit);
  // A list as drivers send it, `= ANY ($1)` of an array: text[] or
  // character varying[] (or unspecified) for a text column, not integer[].
  const std::string list = "SELECT count(*) FROM people WHERE city = ANY ($1)";
  const std::string list_filter =
      " WHERE CASE WHEN \"city\" OPERATOR(pg_catalog.=) ANY ($1) THEN \"city\" = 'Hamlet' "
      "ELSE false END)";
  for (const auto& [types, filtered] : std::vector<std::pair<std::vector<uint32_t>, bool>>{
           {{}, true}, {{1009}, true}, {{1015}, true}, {{1007}, false}, {{25}, false}}) {
    CAPTURE(types.size());
    e.ctx.parameter_types = types;
    r = e.run(list);
    REQUIRE(r.verdict == Verdict::kRewritten);
    CHECK((r.sql.find(list_filter) != std::string::npos) == filtered);
  }
}
