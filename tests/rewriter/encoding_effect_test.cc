// encoding_effect(): what running a statement may do to client_encoding, on
// hand-built catalogs. Everything that can run code that is not built in is
// kAny; reads of plain tables with built-in functions are kNone.
#include "rewriter/encoding_effect.h"

#include <doctest/doctest.h>

#include "rewriter/object_catalog.h"
#include "rewriter/sql_parser.h"

using kanon::catalog::CatalogFacts;
using kanon::catalog::FunctionFacts;
using kanon::catalog::RelationFacts;
using kanon::rewriter::EncodingEffect;
using kanon::rewriter::ObjectCatalog;
using Kind = EncodingEffect::Kind;

namespace {

class Catalog {
 public:
  Catalog() {
    fn("pg_catalog", "count", "internal", 2147);
    fn("pg_catalog", "upper", "internal", 871);
    fn("pg_catalog", "set_config", "internal", 2078);
    fn("pg_catalog", "length", "internal", 1317);
    rel("public", "people");
    rel("public", "towns");
    facts_->system_relation_names.insert("pg_class");
  }

  uint32_t rel(const std::string& schema, const std::string& name, char kind = 'r') {
    RelationFacts r;
    r.oid = next_++;
    r.schema = schema;
    r.name = name;
    r.kind = kind;
    facts_->relations.push_back(r);
    return r.oid;
  }
  uint32_t fn(const std::string& schema, const std::string& name, const std::string& language,
              uint32_t oid = 0, const std::string& extension = "") {
    FunctionFacts f;
    f.oid = oid ? oid : next_++;
    f.schema = schema;
    f.name = name;
    f.language = language;
    f.builtin = f.oid < 16384;
    f.extension = extension;
    facts_->functions.push_back(f);
    return f.oid;
  }
  RelationFacts& relation(uint32_t oid) {
    for (auto& r : facts_->relations)
      if (r.oid == oid) return r;
    FAIL("no relation " << oid);
    return facts_->relations.front();
  }
  CatalogFacts& facts() { return *facts_; }

  EncodingEffect effect(const std::string& sql) {
    if (!catalog_) {
      facts_->index();
      catalog_ = std::make_unique<ObjectCatalog>(facts_, std::vector<std::string>{"public.people"});
    }
    const auto parsed = kanon::rewriter::parse_sql(sql);
    REQUIRE_MESSAGE(parsed.ok, parsed.error);
    return kanon::rewriter::encoding_effect(parsed, sql, catalog_.get());
  }

 private:
  std::shared_ptr<CatalogFacts> facts_ = std::make_shared<CatalogFacts>();
  std::unique_ptr<ObjectCatalog> catalog_;
  uint32_t next_ = 20000;
};

EncodingEffect set(const std::string& value) {
  return {Kind::kSet, value};
}

}  // namespace

TEST_CASE("SET, RESET and DISCARD of client_encoding") {
  Catalog c;
  CHECK(c.effect("SET client_encoding = 'LATIN1'") == set("LATIN1"));
  CHECK(c.effect("SET client_encoding TO latin1") == set("latin1"));
  CHECK(c.effect("SET LOCAL client_encoding = 'WIN1252'") == set("WIN1252"));
  CHECK(c.effect("SET SESSION client_encoding = 'UTF8'") == set("UTF8"));
  CHECK(c.effect("SET NAMES 'SJIS'") == set("SJIS"));
  CHECK(c.effect("SET NAMES").kind == Kind::kReset);
  CHECK(c.effect("SET client_encoding TO DEFAULT").kind == Kind::kReset);
  CHECK(c.effect("RESET client_encoding").kind == Kind::kReset);
  CHECK(c.effect("RESET ALL").kind == Kind::kReset);
  CHECK(c.effect("DISCARD ALL").kind == Kind::kReset);
  CHECK(c.effect("SET client_encoding FROM CURRENT").kind == Kind::kNone);
  // A number is not an encoding name kanon follows.
  CHECK(c.effect("SET client_encoding = 6").kind == Kind::kAny);
  // Other settings change nothing of it.
  CHECK(c.effect("SET search_path = public").kind == Kind::kNone);
  CHECK(c.effect("SET ROLE analyst").kind == Kind::kNone);
  CHECK(c.effect("RESET search_path").kind == Kind::kNone);
  CHECK(c.effect("SHOW client_encoding").kind == Kind::kNone);
  CHECK(c.effect("DISCARD PLANS").kind == Kind::kNone);
  CHECK(c.effect("DISCARD TEMP").kind == Kind::kNone);
}

TEST_CASE("transaction control") {
  Catalog c;
  for (const char* none : {"BEGIN", "START TRANSACTION", "SAVEPOINT s", "RELEASE SAVEPOINT s"}) {
    CAPTURE(none);
    CHECK(c.effect(none).kind == Kind::kNone);
  }
  for (const char* end : {"COMMIT", "ROLLBACK", "ABORT", "END", "ROLLBACK TO SAVEPOINT s",
                          "PREPARE TRANSACTION 'x'", "COMMIT AND CHAIN"}) {
    CAPTURE(end);
    CHECK(c.effect(end).kind == Kind::kTransactionEnd);
  }
}

TEST_CASE("reads that run only built-in code change nothing") {
  Catalog c;
  for (const char* sql :
       {"SELECT 1", "SELECT * FROM people", "SELECT count(*), upper(city) FROM people GROUP BY 2",
        "SELECT p.* FROM public.people p JOIN towns t ON t.id = p.id ORDER BY 1",
        "WITH w AS (SELECT 1 AS x) SELECT x FROM w", "SELECT relname FROM pg_class",
        "SELECT * FROM pg_catalog.pg_proc", "EXPLAIN SELECT * FROM people",
        "EXPLAIN ANALYZE SELECT count(*) FROM people", "COPY people TO STDOUT",
        "COPY (SELECT 1) TO STDOUT", "PREPARE q AS SELECT 1", "DEALLOCATE q", "CLOSE c",
        "DECLARE c CURSOR FOR SELECT * FROM people", "LISTEN x", "NOTIFY x", "VALUES (1), (2)",
        "TABLE people"}) {
    CAPTURE(sql);
    CHECK(c.effect(sql).kind == Kind::kNone);
  }
}

TEST_CASE("anything that may run other code may change it") {
  Catalog c;
  c.fn("public", "mine", "sql");
  c.fn("app", "upper", "plpgsql");  // shadows a built-in name in another schema
  for (const char* sql : {
           "SELECT set_config('client_encoding', 'LATIN1', false)",
           "SELECT pg_catalog.set_config('search_path', 'x', true)",
           "SELECT mine()",
           "SELECT upper('x')",            // app.upper too, for all kanon knows
           "SELECT no_such_function()",    // the session's own, or unknown
           "SELECT * FROM no_such_table",  // a temporary table
           "INSERT INTO towns VALUES (1)",
           "UPDATE towns SET id = 2",
           "DELETE FROM towns",
           "COPY towns FROM STDIN",
           "EXECUTE q",
           "FETCH ALL FROM c",
           "CALL p()",
           "DO $$ BEGIN END $$",
           "CREATE TABLE x (a int)",
           "CREATE FUNCTION f() RETURNS int LANGUAGE sql AS 'SELECT 1'",
           "SELECT * INTO scratch FROM towns",
           "EXPLAIN ANALYZE INSERT INTO towns VALUES (1)",
           "WITH d AS (DELETE FROM towns RETURNING *) SELECT * FROM d",
           "LOCK towns",
           "SET client_encoding = 'LATIN1'; SET client_encoding = 'UTF8'",
       }) {
    CAPTURE(sql);
    CHECK(c.effect(sql).kind == Kind::kAny);
  }
  CHECK(c.effect("SELECT public.upper('x')").kind == Kind::kAny);
  CHECK(c.effect("SELECT pg_catalog.upper('x')").kind == Kind::kNone);
}

TEST_CASE("views, row security, operators, casts and domain checks") {
  SUBCASE("a view is read through everything it reads and calls") {
    Catalog c;
    const uint32_t mine = c.fn("public", "mine", "sql");
    const uint32_t plain = c.rel("public", "v_plain", 'v');
    c.relation(plain).reads_relations = {20000};
    c.relation(plain).reads_functions = {871};
    const uint32_t calls = c.rel("public", "v_calls", 'v');
    c.relation(calls).reads_functions = {mine};
    const uint32_t sets = c.rel("public", "v_sets", 'v');
    c.relation(sets).reads_functions = {2078};
    const uint32_t outer = c.rel("public", "v_outer", 'v');
    c.relation(outer).reads_relations = {calls};
    const uint32_t system = c.rel("public", "v_system", 'v');
    c.relation(system).reads_relations = {1259};
    c.facts().system_relations[1259] = "pg_catalog.pg_class";
    const uint32_t unknown = c.rel("public", "v_unknown", 'v');
    c.relation(unknown).reads_relations = {99999};
    CHECK(c.effect("SELECT * FROM v_plain").kind == Kind::kNone);
    CHECK(c.effect("SELECT * FROM v_system").kind == Kind::kNone);
    CHECK(c.effect("SELECT * FROM v_calls").kind == Kind::kAny);
    CHECK(c.effect("SELECT * FROM v_sets").kind == Kind::kAny);
    CHECK(c.effect("SELECT * FROM public.v_outer").kind == Kind::kAny);
    CHECK(c.effect("SELECT * FROM v_unknown").kind == Kind::kAny);
  }
  SUBCASE("row security policies run when the table is read") {
    Catalog c;
    const uint32_t t = c.rel("public", "secured");
    c.relation(t).policy_functions = {c.fn("public", "allowed", "sql")};
    CHECK(c.effect("SELECT * FROM secured").kind == Kind::kAny);
    CHECK(c.effect("SELECT * FROM towns").kind == Kind::kNone);
  }
  SUBCASE("user-defined operators where they may apply") {
    Catalog c;
    c.facts().operators.push_back({30000, "app", "###", c.fn("app", "op_fn", "sql")});
    CHECK(c.effect("SELECT 1 ### 2").kind == Kind::kAny);
    CHECK(c.effect("SELECT 1 OPERATOR(app.###) 2").kind == Kind::kAny);
    CHECK(c.effect("SELECT 1 + 2").kind == Kind::kNone);
  }
  SUBCASE("an implied operator applies anywhere; an extension's compiled one does not count") {
    Catalog c;
    c.facts().operators.push_back({30000, "public", "=", c.fn("public", "eq_fn", "sql")});
    CHECK(c.effect("SELECT 1").kind == Kind::kAny);
    Catalog e;
    e.facts().operators.push_back(
        {30000, "public", "=", e.fn("public", "citext_eq", "c", 0, "citext")});
    CHECK(e.effect("SELECT 1").kind == Kind::kNone);
  }
  SUBCASE("a cast's function may run in any statement") {
    Catalog c;
    c.facts().cast_functions.push_back(c.fn("public", "to_mine", "plpgsql"));
    CHECK(c.effect("SELECT 1").kind == Kind::kAny);
  }
  SUBCASE("a domain's CHECK may run in any statement, built-in set_config included") {
    Catalog c;
    c.facts().type_functions.push_back(2078);
    CHECK(c.effect("SELECT 1").kind == Kind::kAny);
    Catalog plain;
    plain.facts().type_functions.push_back(1317);
    CHECK(plain.effect("SELECT 1").kind == Kind::kNone);
  }
}

TEST_CASE("without a catalog every named relation or function counts") {
  const auto effect = [](const std::string& sql) {
    const auto parsed = kanon::rewriter::parse_sql(sql);
    REQUIRE(parsed.ok);
    return kanon::rewriter::encoding_effect(parsed, sql, nullptr).kind;
  };
  CHECK(effect("SELECT 1") == Kind::kNone);
  CHECK(effect("SHOW client_encoding") == Kind::kNone);
  CHECK(effect("SELECT now()") == Kind::kAny);
  CHECK(effect("SELECT * FROM towns") == Kind::kAny);
  CHECK(effect("WITH w AS (SELECT 1) SELECT * FROM w") == Kind::kNone);
  CHECK(effect("SET NAMES 'LATIN1'") == set("LATIN1").kind);
}

TEST_CASE("a string of statements: one change is followed, two are kAny") {
  Catalog c;
  CHECK(c.effect("SELECT 1; SET client_encoding = 'LATIN1'; SELECT 2") == set("LATIN1"));
  CHECK(c.effect("BEGIN; SET LOCAL client_encoding = 'LATIN1'; COMMIT").kind == Kind::kAny);
  CHECK(c.effect("SELECT 1; SELECT 2").kind == Kind::kNone);
}
