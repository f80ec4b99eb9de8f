// CatalogFacts read from a real PostgreSQL 15 (the sandbox with the demo
// tables) and the ObjectCatalog built from them: every kind of object that
// can reach a protected table, created in a scratch schema.
#include <doctest/doctest.h>

#include <algorithm>
#include <pqxx/pqxx>

#include "catalog/catalog_facts.h"
#include "rewriter/object_catalog.h"
#include "rewriter/sql_parser.h"
#include "tests/support/pg_sandbox.h"

using kanon::catalog::CatalogFacts;
using kanon::catalog::read_catalog_facts;
using kanon::rewriter::ObjectCatalog;
using kanon::rewriter::RelationClass;
using kanon::testing::PgSandbox;

namespace {

const std::vector<std::string> kProtected = {"public.people", "public.adult"};
using Tables = std::vector<std::string>;

std::string conninfo() {
  return PgSandbox::shared().conninfo("postgres", "postgres");
}

const kanon::rewriter::CatalogRelation& rel(const ObjectCatalog& cat, const std::string& schema,
                                            const std::string& name) {
  const auto found = cat.relations(schema, name);
  REQUIRE_MESSAGE(found.size() == 1, schema << "." << name);
  return *found[0];
}

const kanon::rewriter::CatalogFunction& fn(const ObjectCatalog& cat, const std::string& schema,
                                           const std::string& name) {
  const auto found = cat.functions(schema, name);
  REQUIRE_MESSAGE(found.size() == 1, schema << "." << name);
  return *found[0];
}

bool has_extension(pqxx::connection& conn, const std::string& name) {
  pqxx::nontransaction tx(conn);
  return !tx.exec_params("SELECT 1 FROM pg_extension WHERE extname = $1", name).empty();
}

bool extension_available(pqxx::connection& conn, const std::string& name) {
  pqxx::nontransaction tx(conn);
  return !tx.exec_params("SELECT 1 FROM pg_available_extensions WHERE name = $1", name).empty();
}

}  // namespace

TEST_CASE("catalog facts of the demo database, and how long reading them takes") {
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  // A new connection each time: the backend's catalog caches start cold.
  std::vector<double> cold;
  for (int i = 0; i < 3; ++i) {
    pqxx::connection fresh(conninfo());
    cold.push_back(read_catalog_facts(fresh).read_ms);
  }
  // One connection (the statements are planned once), everything read.
  pqxx::connection conn(conninfo());
  CatalogFacts facts = read_catalog_facts(conn);
  std::vector<double> warm;
  for (int i = 0; i < 7; ++i) {
    facts = read_catalog_facts(conn);
    warm.push_back(facts.read_ms);
  }
  // What PolicyStore does on its catalog connection: built-ins reused.
  std::vector<double> reuse;
  for (int i = 0; i < 7; ++i) {
    const CatalogFacts again = read_catalog_facts(conn, &facts);
    reuse.push_back(again.read_ms);
    CHECK(again.functions.size() == facts.functions.size());
    CHECK(again.relations.size() == facts.relations.size());
  }
  MESSAGE("read_catalog_facts on the demo database ("
          << facts.relations.size() << " relations, " << facts.functions.size()
          << " functions), median ms: new connection " << median(cold) << ", same connection "
          << median(warm) << ", same connection reusing built-ins " << median(reuse));
  CHECK(facts.database == "postgres");
  const auto people = facts.relations_named("people");
  REQUIRE(!people.empty());
  const auto* p = *std::find_if(people.begin(), people.end(),
                                [](const auto* r) { return r->schema == "public"; });
  CHECK(p->kind == 'r');
  REQUIRE(p->columns.size() == 7);
  CHECK(p->columns[0].name == "id");
  CHECK(p->columns[0].type == "integer");
  CHECK(facts.relation(p->oid) == p);
  // No system relations, every function (pg_catalog's included).
  for (const auto& r : facts.relations) {
    CHECK(r.schema != "pg_catalog");
    CHECK(r.schema != "information_schema");
    CHECK(r.schema.rfind("pg_temp", 0) != 0);
  }
  CHECK(facts.functions.size() > 2000);
  const auto lower = facts.functions_named("lower");
  REQUIRE(!lower.empty());
  CHECK(lower[0]->builtin);
  CHECK(lower[0]->schema == "pg_catalog");
  CHECK(lower[0]->body.empty());
  const auto count = facts.functions_named("count");
  REQUIRE(!count.empty());
  CHECK(count[0]->kind == 'a');
  CHECK(!count[0]->support_functions.empty());

  const ObjectCatalog cat(std::make_shared<const CatalogFacts>(facts), kProtected);
  CHECK(rel(cat, "public", "people").cls == RelationClass::kProtected);
  CHECK(rel(cat, "public", "adult").cls == RelationClass::kProtected);
  CHECK(fn(cat, "pg_catalog", "now").reach.any() == false);
  CHECK(cat.functions("pg_catalog", "query_to_xml").at(0)->reach.opaque);

  // Temporary relations are not facts, but any_persistent_relation_named
  // tells a name that exists from one that does not.
  {
    pqxx::nontransaction tx(conn);
    tx.exec("CREATE TEMP TABLE catalog_temp_only (id int)");
  }
  CHECK(read_catalog_facts(conn).relations_named("catalog_temp_only").empty());
  CHECK_FALSE(kanon::catalog::any_persistent_relation_named(conn, {"catalog_temp_only"}));
  CHECK(kanon::catalog::any_persistent_relation_named(conn, {"nope", "people"}));
  CHECK_FALSE(kanon::catalog::any_persistent_relation_named(conn, {"People"}));  // case kept
  CHECK_FALSE(kanon::catalog::any_persistent_relation_named(conn, {"pg_class"}));
  CHECK_FALSE(kanon::catalog::any_persistent_relation_named(conn, {}));
  CHECK_FALSE(kanon::catalog::any_persistent_relation_named(conn, {"a\"b\\c", "{x}"}));
}

TEST_CASE("every kind of object in a scratch schema: facts, classes and reach") {
  auto& pg = PgSandbox::shared();
  pqxx::connection conn(conninfo());
  pg.psql("DROP SCHEMA IF EXISTS cat_s CASCADE; CREATE SCHEMA cat_s");
  pg.psql(R"sql(
SET search_path = public;
CREATE TABLE cat_s.notes (id int, body text);
CREATE TABLE cat_s.audit (id int);
CREATE VIEW cat_s.v1 AS SELECT id, city, state FROM people;
CREATE VIEW cat_s.v2 AS SELECT * FROM cat_s.v1 WHERE state = 'OH';
CREATE VIEW cat_s.v3 AS SELECT count(*) AS n FROM cat_s.v2;
CREATE VIEW cat_s.v_alias (a, b) AS SELECT city, occupation FROM people p;
CREATE VIEW cat_s.v_barrier WITH (security_barrier) AS SELECT * FROM people WHERE id > 0;
CREATE VIEW cat_s.v_invoker WITH (security_invoker = on) AS SELECT sex, age FROM adult;
CREATE VIEW cat_s.v_check AS SELECT * FROM people WHERE id > 0 WITH CASCADED CHECK OPTION;
CREATE VIEW cat_s.v_local AS SELECT * FROM cat_s.notes WHERE id > 0 WITH LOCAL CHECK OPTION;
CREATE VIEW cat_s.v_plain AS SELECT n.body, lower(n.body) AS l FROM cat_s.notes n;
CREATE MATERIALIZED VIEW cat_s.m AS SELECT state, count(*) AS n FROM people GROUP BY state;
CREATE MATERIALIZED VIEW cat_s.m_plain AS SELECT * FROM cat_s.notes;
CREATE FUNCTION cat_s.f_string(text) RETURNS bigint LANGUAGE sql STABLE
  AS 'SELECT count(*) FROM people WHERE city = $1';
CREATE FUNCTION cat_s.f_atomic(text) RETURNS bigint LANGUAGE sql STABLE
  BEGIN ATOMIC SELECT count(*) FROM people WHERE city = $1; END;
CREATE FUNCTION cat_s.f_return(int) RETURNS int LANGUAGE sql STABLE
  RETURN (SELECT max(age) FROM adult) + $1;
CREATE FUNCTION cat_s.f_calls() RETURNS bigint LANGUAGE sql AS 'SELECT cat_s.f_string(''x'')';
CREATE FUNCTION cat_s.f_plain(int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT $1 + 1';
CREATE FUNCTION cat_s.f_plpgsql() RETURNS bigint LANGUAGE plpgsql
  AS $$BEGIN RETURN (SELECT count(*) FROM people); END$$;
CREATE VIEW cat_s.v_opaque AS SELECT cat_s.f_plpgsql() AS n;
CREATE VIEW cat_s.v_calls_atomic AS SELECT cat_s.f_atomic('Hamlet') AS n;
CREATE VIEW cat_s.v_calls_plain AS SELECT cat_s.f_plain(id) FROM cat_s.notes;
CREATE VIEW cat_s.v_xml AS SELECT query_to_xml('select * from people', true, true, '') AS x;
CREATE VIEW cat_s.v_stats AS SELECT attname, most_common_vals::text FROM pg_stats;
CREATE TABLE cat_s.people_child (extra text) INHERITS (public.people);
CREATE TABLE cat_s.people_grandchild () INHERITS (cat_s.people_child);
CREATE TABLE cat_s.parted (id int, k int) PARTITION BY RANGE (k);
CREATE TABLE cat_s.parted_1 PARTITION OF cat_s.parted FOR VALUES FROM (0) TO (10);
CREATE TABLE cat_s.parted_2 (id int, k int);
ALTER TABLE cat_s.parted ATTACH PARTITION cat_s.parted_2 FOR VALUES FROM (10) TO (20);
CREATE FUNCTION cat_s.trg() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RETURN NEW; END$$;
CREATE TRIGGER t BEFORE INSERT ON cat_s.notes FOR EACH ROW EXECUTE FUNCTION cat_s.trg();
CREATE TABLE cat_s.ruled (id int);
CREATE RULE r AS ON INSERT TO cat_s.ruled
  DO ALSO INSERT INTO cat_s.audit SELECT id FROM people LIMIT 1;
CREATE TABLE cat_s.tenant (id int);
ALTER TABLE cat_s.tenant ENABLE ROW LEVEL SECURITY;
CREATE POLICY p ON cat_s.tenant USING (id IN (SELECT id FROM people));
CREATE FUNCTION cat_s.step(int, int) RETURNS int LANGUAGE plpgsql
  AS $$BEGIN RETURN $1 + $2; END$$;
CREATE AGGREGATE cat_s.leaky_sum(int) (SFUNC = cat_s.step, STYPE = int);
CREATE FUNCTION cat_s.people_eq(int, int) RETURNS boolean LANGUAGE sql STABLE
  AS 'SELECT $1 = $2 AND EXISTS (SELECT 1 FROM people)';
CREATE OPERATOR cat_s.=== (LEFTARG = int, RIGHTARG = int, FUNCTION = cat_s.people_eq);
CREATE VIEW cat_s.v_operator AS SELECT id FROM cat_s.notes WHERE id OPERATOR(cat_s.===) 1;
)sql");

  const bool had_fdw = has_extension(conn, "postgres_fdw");
  const bool fdw = had_fdw || extension_available(conn, "postgres_fdw");
  if (fdw) {
    if (!had_fdw) pg.psql("CREATE EXTENSION postgres_fdw");
    pg.psql(
        "DROP SERVER IF EXISTS cat_loop CASCADE; "
        "CREATE SERVER cat_loop FOREIGN DATA WRAPPER postgres_fdw "
        "OPTIONS (host '127.0.0.1', port '" +
        std::to_string(pg.port()) +
        "', dbname 'postgres'); "
        "CREATE FOREIGN TABLE cat_s.remote (id int) SERVER cat_loop "
        "OPTIONS (schema_name 'public', table_name 'people')");
  } else {
    MESSAGE("postgres_fdw is not available in this PostgreSQL: foreign tables not tested");
  }

  const auto facts = std::make_shared<const CatalogFacts>(read_catalog_facts(conn));
  MESSAGE("read_catalog_facts with the scratch schema, new connection: " << facts->read_ms
                                                                         << " ms");
  {
    // Reusing the built-ins gives the same facts.
    const CatalogFacts again = read_catalog_facts(conn, facts.get());
    MESSAGE("read_catalog_facts with the scratch schema, same connection reusing built-ins: "
            << again.read_ms << " ms");
    REQUIRE(again.functions.size() == facts->functions.size());
    for (size_t i = 0; i < again.functions.size(); ++i) {
      CHECK(again.functions[i].oid == facts->functions[i].oid);
      CHECK(again.functions[i].support_functions == facts->functions[i].support_functions);
      CHECK(again.functions[i].reads_relations == facts->functions[i].reads_relations);
    }
    CHECK(again.builtin_fingerprint == facts->builtin_fingerprint);
  }
  const ObjectCatalog cat(facts, kProtected);

  {  // views, three deep, aliases, options
    const auto& v1 = rel(cat, "cat_s", "v1");
    CHECK(v1.cls == RelationClass::kView);
    CHECK(v1.read.tables == Tables{"public.people"});
    CHECK(v1.read.via == "public.people");
    CHECK(v1.facts->kind == 'v');
    REQUIRE(v1.facts->columns.size() == 3);
    CHECK(v1.facts->columns[1].name == "city");
    const auto& v3 = rel(cat, "cat_s", "v3");
    CHECK(v3.cls == RelationClass::kView);
    CHECK(v3.read.tables == Tables{"public.people"});
    CHECK(v3.read.via == "cat_s.v2");
    CHECK(rel(cat, "cat_s", "v2").read.via == "cat_s.v1");
    const auto& alias = rel(cat, "cat_s", "v_alias");
    CHECK(alias.cls == RelationClass::kView);
    REQUIRE(alias.facts->columns.size() == 2);
    CHECK(alias.facts->columns[0].name == "a");
    CHECK(alias.facts->columns[1].name == "b");
    const auto& barrier = rel(cat, "cat_s", "v_barrier");
    CHECK(barrier.facts->security_barrier);
    CHECK_FALSE(barrier.facts->security_invoker);
    CHECK(barrier.cls == RelationClass::kView);
    const auto& invoker = rel(cat, "cat_s", "v_invoker");
    CHECK(invoker.facts->security_invoker);
    CHECK_FALSE(invoker.facts->security_barrier);
    CHECK(invoker.read.tables == Tables{"public.adult"});
    CHECK(rel(cat, "cat_s", "v_check").facts->check_option == "cascaded");
    CHECK(rel(cat, "cat_s", "v_local").facts->check_option == "local");
    CHECK(rel(cat, "cat_s", "v1").facts->check_option.empty());
    CHECK(rel(cat, "cat_s", "v_plain").cls == RelationClass::kPlain);
    CHECK(rel(cat, "cat_s", "v_local").cls == RelationClass::kPlain);
    // A view over a table with a plpgsql trigger reads nothing opaque...
    CHECK_FALSE(rel(cat, "cat_s", "v_local").read.any());
    // ...but writing it (auto-updatable) would run the trigger.
    CHECK(rel(cat, "cat_s", "v_local").write.opaque);
  }

  {  // definitions are schema-qualified and parse
    for (const auto& r : facts->relations) {
      if (r.schema != "cat_s" || (r.kind != 'v' && r.kind != 'm')) continue;
      CAPTURE(r.name);
      CAPTURE(r.definition);
      REQUIRE(!r.definition.empty());
      CHECK(r.definition.back() != ';');
      const auto parsed = kanon::rewriter::parse_sql(r.definition);
      REQUIRE(parsed.ok);
      REQUIRE(parsed.statements.size() == 1);
      CHECK(parsed.statements[0].kind == kanon::rewriter::StatementKind::kSelect);
      for (const auto& ref : parsed.statements[0].relations) {
        // pg_catalog is always searched first: its names stay bare.
        if (ref.name.rfind("pg_", 0) == 0) continue;
        CHECK_MESSAGE(!ref.schema.empty(), ref.name);
      }
      for (const auto& call : parsed.statements[0].functions) {
        if (facts->functions_named(call.name).size() == 0) continue;
        bool system = true;
        for (const auto* f : facts->functions_named(call.name)) system = system && f->builtin;
        if (!system) CHECK_MESSAGE(!call.schema.empty(), call.name);
      }
    }
    CHECK(rel(cat, "cat_s", "v1").facts->definition.find("public.people") != std::string::npos);
    CHECK(rel(cat, "cat_s", "v_opaque").facts->definition.find("cat_s.f_plpgsql()") !=
          std::string::npos);
  }

  {  // materialized views
    const auto& m = rel(cat, "cat_s", "m");
    CHECK(m.facts->kind == 'm');
    CHECK(m.cls == RelationClass::kDerived);
    CHECK(m.read.tables == Tables{"public.people"});
    CHECK(rel(cat, "cat_s", "m_plain").cls == RelationClass::kPlain);
  }

  {  // SQL functions: string, BEGIN ATOMIC and RETURN bodies
    const auto& s = fn(cat, "cat_s", "f_string");
    CHECK(s.facts->language == "sql");
    CHECK_FALSE(s.facts->atomic);
    CHECK(s.facts->body == "SELECT count(*) FROM people WHERE city = $1");
    CHECK(s.facts->volatility == 's');
    CHECK(s.reach.tables == Tables{"public.people"});
    const auto& a = fn(cat, "cat_s", "f_atomic");
    CHECK(a.facts->atomic);
    CHECK(a.facts->body.empty());
    CHECK(a.reach.tables == Tables{"public.people"});
    CHECK_FALSE(a.reach.opaque);
    const auto& r = fn(cat, "cat_s", "f_return");
    CHECK(r.facts->atomic);
    CHECK(r.reach.tables == Tables{"public.adult"});
    CHECK(fn(cat, "cat_s", "f_calls").reach.tables == Tables{"public.people"});
    CHECK(fn(cat, "cat_s", "f_calls").reach.via == "cat_s.f_string");
    CHECK_FALSE(fn(cat, "cat_s", "f_plain").reach.any());
    CHECK(rel(cat, "cat_s", "v_calls_atomic").cls == RelationClass::kView);
    CHECK(rel(cat, "cat_s", "v_calls_atomic").read.via == "cat_s.f_atomic");
    CHECK(rel(cat, "cat_s", "v_calls_plain").cls == RelationClass::kPlain);
    CHECK_FALSE(fn(cat, "cat_s", "f_string").facts->builtin);
    CHECK(fn(cat, "cat_s", "f_string").facts->extension.empty());
  }

  {  // opaque code: plpgsql, views over it, denied built-ins, statistics
    const auto& pl = fn(cat, "cat_s", "f_plpgsql");
    CHECK(pl.facts->language == "plpgsql");
    CHECK(pl.facts->body.empty());
    CHECK(pl.reach.opaque);
    CHECK(pl.reach.via == "cat_s.f_plpgsql");
    CHECK(rel(cat, "cat_s", "v_opaque").cls == RelationClass::kOpaque);
    CHECK(rel(cat, "cat_s", "v_opaque").read.via == "cat_s.f_plpgsql");
    // query_to_xml is pinned (no pg_depend row): found in the stored tree.
    CHECK(rel(cat, "cat_s", "v_xml").cls == RelationClass::kOpaque);
    CHECK(rel(cat, "cat_s", "v_xml").read.via == "pg_catalog.query_to_xml");
    CHECK(rel(cat, "cat_s", "v_stats").cls == RelationClass::kOpaque);
    CHECK(rel(cat, "cat_s", "v_stats").read.via == "pg_catalog.pg_stats");
  }

  {  // children and partitions
    const auto& child = rel(cat, "cat_s", "people_child");
    CHECK(child.cls == RelationClass::kChild);
    CHECK(child.protected_parent == "public.people");
    CHECK(child.read.tables == Tables{"public.people"});
    CHECK(child.facts->columns.size() == 8);
    const auto& grandchild = rel(cat, "cat_s", "people_grandchild");
    CHECK(grandchild.cls == RelationClass::kChild);
    CHECK(grandchild.protected_parent == "public.people");
    const auto& parted = rel(cat, "cat_s", "parted");
    CHECK(parted.facts->kind == 'p');
    CHECK(parted.cls == RelationClass::kPlain);
    const auto& p2 = rel(cat, "cat_s", "parted_2");
    CHECK(p2.facts->parents == std::vector<uint32_t>{parted.facts->oid});
    CHECK(rel(cat, "cat_s", "parted_1").facts->parents == std::vector<uint32_t>{parted.facts->oid});
    // With the partitioned table protected, its partitions are children.
    auto with_parted = kProtected;
    with_parted.push_back("cat_s.parted");
    const ObjectCatalog cat2(facts, with_parted);
    CHECK(rel(cat2, "cat_s", "parted").cls == RelationClass::kProtected);
    CHECK(rel(cat2, "cat_s", "parted_2").cls == RelationClass::kChild);
    CHECK(rel(cat2, "cat_s", "parted_2").protected_parent == "cat_s.parted");
  }

  {  // triggers, rules, row security
    const auto& notes = rel(cat, "cat_s", "notes");
    CHECK(notes.cls == RelationClass::kPlain);
    REQUIRE(notes.facts->write_functions.size() == 1);
    CHECK(facts->function(notes.facts->write_functions[0])->name == "trg");
    CHECK(notes.write.opaque);
    CHECK(notes.write.via == "cat_s.trg");
    const auto& ruled = rel(cat, "cat_s", "ruled");
    CHECK(ruled.cls == RelationClass::kPlain);
    CHECK_FALSE(ruled.read.any());
    CHECK(ruled.write.tables == Tables{"public.people"});
    const auto& tenant = rel(cat, "cat_s", "tenant");
    CHECK(tenant.cls == RelationClass::kDerived);
    CHECK(tenant.read.tables == Tables{"public.people"});
  }

  {  // aggregates and operators
    const auto& agg = fn(cat, "cat_s", "leaky_sum");
    CHECK(agg.facts->kind == 'a');
    CHECK(agg.reach.opaque);
    CHECK(agg.reach.via == "cat_s.step");
    const auto& op = rel(cat, "cat_s", "v_operator");
    CHECK(op.cls == RelationClass::kView);
    CHECK(op.read.tables == Tables{"public.people"});
    CHECK(op.read.via == "cat_s.people_eq");
    CHECK(cat.implicit_reach().tables == Tables{"public.people"});
  }

  if (fdw) {  // foreign tables
    const auto& remote = rel(cat, "cat_s", "remote");
    CHECK(remote.facts->kind == 'f');
    CHECK(remote.facts->foreign_server != 0);
    CHECK(remote.cls == RelationClass::kOpaque);
    CHECK(remote.read.opaque);
    CHECK(remote.read.via == "cat_s.remote");
    const auto conns = cat.functions("", "postgres_fdw_get_connections");
    REQUIRE(!conns.empty());
    CHECK(conns[0]->facts->extension == "postgres_fdw");
    CHECK(conns[0]->reach.opaque);
    const auto handler = cat.functions("", "postgres_fdw_handler");
    REQUIRE(!handler.empty());
    CHECK(handler[0]->facts->language == "c");
  }

  pg.psql("DROP SCHEMA cat_s CASCADE");
  if (fdw) {
    pg.psql("DROP SERVER IF EXISTS cat_loop CASCADE");
    if (!had_fdw) pg.psql("DROP EXTENSION IF EXISTS postgres_fdw");
  }
}
