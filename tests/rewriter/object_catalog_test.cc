// ObjectCatalog on hand-built CatalogFacts: which protected tables each
// relation and function reaches, and how each relation is classified.
#include "rewriter/object_catalog.h"

#include <doctest/doctest.h>

using kanon::catalog::CatalogFacts;
using kanon::catalog::FunctionFacts;
using kanon::catalog::RelationFacts;
using kanon::rewriter::ObjectCatalog;
using kanon::rewriter::RelationClass;

namespace {

const std::vector<std::string> kProtected = {"public.people", "public.adult"};

// Builds facts object by object; oids start at 20000 like user objects.
class Facts {
 public:
  Facts() {
    // Two built-ins every database has.
    fn("pg_catalog", "count", "internal", 'a', 100);
    fn("pg_catalog", "query_to_xml", "internal", 'f', 2923);
    people_ = rel("public", "people");
    adult_ = rel("public", "adult");
  }

  uint32_t people() const { return people_; }
  uint32_t adult() const { return adult_; }

  uint32_t rel(const std::string& schema, const std::string& name, char kind = 'r') {
    RelationFacts r;
    r.oid = next_++;
    r.schema = schema;
    r.name = name;
    r.kind = kind;
    r.columns.push_back({"id", "integer", "integer"});
    f_->relations.push_back(r);
    return r.oid;
  }
  uint32_t view(const std::string& schema, const std::string& name,
                std::vector<uint32_t> reads_relations, std::vector<uint32_t> reads_functions = {},
                char kind = 'v') {
    const uint32_t oid = rel(schema, name, kind);
    R(oid).reads_relations = std::move(reads_relations);
    R(oid).reads_functions = std::move(reads_functions);
    return oid;
  }
  uint32_t fn(const std::string& schema, const std::string& name, const std::string& language,
              char kind = 'f', uint32_t oid = 0) {
    FunctionFacts g;
    g.oid = oid ? oid : next_++;
    g.schema = schema;
    g.name = name;
    g.language = language;
    g.kind = kind;
    g.builtin = g.oid < 16384;
    f_->functions.push_back(g);
    return g.oid;
  }
  uint32_t sql(const std::string& schema, const std::string& name, const std::string& body) {
    const uint32_t oid = fn(schema, name, "sql");
    F(oid).body = body;
    return oid;
  }
  uint32_t atomic(const std::string& schema, const std::string& name,
                  std::vector<uint32_t> reads_relations, std::vector<uint32_t> reads_functions = {},
                  char volatility = 'v') {
    const uint32_t oid = fn(schema, name, "sql");
    F(oid).atomic = true;
    F(oid).volatility = volatility;
    F(oid).reads_relations = std::move(reads_relations);
    F(oid).reads_functions = std::move(reads_functions);
    return oid;
  }

  RelationFacts& R(uint32_t oid) {
    for (auto& r : f_->relations)
      if (r.oid == oid) return r;
    FAIL("no relation " << oid);
    return f_->relations.front();
  }
  FunctionFacts& F(uint32_t oid) {
    for (auto& g : f_->functions)
      if (g.oid == oid) return g;
    FAIL("no function " << oid);
    return f_->functions.front();
  }
  CatalogFacts& facts() { return *f_; }

  ObjectCatalog build(const std::vector<std::string>& internal = {}) {
    f_->index();
    return ObjectCatalog(f_, kProtected, internal);
  }

 private:
  std::shared_ptr<CatalogFacts> f_ = std::make_shared<CatalogFacts>();
  uint32_t next_ = 20000;
  uint32_t people_ = 0;
  uint32_t adult_ = 0;
};

using Tables = std::vector<std::string>;

}  // namespace

TEST_CASE("protected tables and plain tables") {
  Facts f;
  const uint32_t plain = f.rel("public", "notes");
  const auto cat = f.build();
  const auto* p = cat.relation(f.people());
  REQUIRE(p != nullptr);
  CHECK(p->cls == RelationClass::kProtected);
  CHECK(p->read.tables == Tables{"public.people"});
  CHECK(p->read.via == "public.people");
  CHECK_FALSE(p->read.opaque);
  const auto* n = cat.relation(plain);
  CHECK(n->cls == RelationClass::kPlain);
  CHECK_FALSE(n->read.any());
  CHECK_FALSE(n->write.any());
  CHECK(cat.relation(1) == nullptr);
}

TEST_CASE("views over a protected table, three deep, and over two protected tables") {
  Facts f;
  const uint32_t v1 = f.view("public", "v_people", {f.people()});
  const uint32_t v2 = f.view("public", "v2", {v1});
  const uint32_t v3 = f.view("s", "v3", {v2});
  const uint32_t both = f.view("public", "both", {f.people(), f.adult()});
  const uint32_t plain = f.view("public", "v_plain", {f.rel("public", "notes")});
  const auto cat = f.build();
  CHECK(cat.relation(v1)->cls == RelationClass::kView);
  CHECK(cat.relation(v1)->read.tables == Tables{"public.people"});
  CHECK(cat.relation(v1)->read.via == "public.people");
  CHECK(cat.relation(v2)->cls == RelationClass::kView);
  CHECK(cat.relation(v2)->read.via == "public.v_people");
  CHECK(cat.relation(v3)->cls == RelationClass::kView);
  CHECK(cat.relation(v3)->read.tables == Tables{"public.people"});
  CHECK(cat.relation(v3)->read.via == "public.v2");
  CHECK_FALSE(cat.relation(v3)->read.opaque);
  CHECK(cat.relation(both)->read.tables == Tables{"public.adult", "public.people"});
  CHECK(cat.relation(plain)->cls == RelationClass::kPlain);
  // Writing a view reaches what reading it does.
  CHECK(cat.relation(v3)->write.tables == Tables{"public.people"});
}

TEST_CASE("materialized views") {
  Facts f;
  const uint32_t m = f.view("public", "m_people", {f.people()}, {}, 'm');
  const uint32_t m2 = f.view("public", "m_plain", {f.rel("public", "notes")}, {}, 'm');
  const uint32_t v = f.view("public", "v_over_m", {m});
  const auto cat = f.build();
  CHECK(cat.relation(m)->cls == RelationClass::kDerived);
  CHECK(cat.relation(m)->read.tables == Tables{"public.people"});
  CHECK(cat.relation(m2)->cls == RelationClass::kPlain);
  CHECK(cat.relation(v)->cls == RelationClass::kView);
  CHECK(cat.relation(v)->read.via == "public.m_people");
}

TEST_CASE("children, grandchildren and parents of protected tables") {
  Facts f;
  const uint32_t child = f.rel("public", "people_2024");
  f.R(child).parents = {f.people()};
  const uint32_t grandchild = f.rel("archive", "people_2024_q1");
  f.R(grandchild).parents = {child};
  const uint32_t both = f.rel("public", "people_adult");
  f.R(both).parents = {f.adult(), f.people()};
  // A plain table the protected table inherits from: reading it reads people.
  const uint32_t base = f.rel("public", "base");
  f.R(f.people()).parents = {base};
  const auto cat = f.build();
  CHECK(cat.relation(child)->cls == RelationClass::kChild);
  CHECK(cat.relation(child)->protected_parent == "public.people");
  CHECK(cat.relation(child)->read.tables == Tables{"public.people"});
  CHECK(cat.relation(grandchild)->cls == RelationClass::kChild);
  CHECK(cat.relation(grandchild)->protected_parent == "public.people");
  CHECK(cat.relation(grandchild)->read.via == "public.people");
  CHECK(cat.relation(both)->cls == RelationClass::kChild);
  CHECK(cat.relation(both)->protected_parent == "public.adult");
  CHECK(cat.relation(both)->read.tables == Tables{"public.adult", "public.people"});
  CHECK(cat.relation(base)->cls == RelationClass::kDerived);
  CHECK(cat.relation(base)->read.tables == Tables{"public.people"});
  CHECK(cat.relation(base)->read.via == "public.people");
  CHECK(cat.relation(f.people())->cls == RelationClass::kProtected);
}

TEST_CASE(
    "kanon's own tables and the internal ones it is given: opaque, internal, and so is "
    "what reads or writes them") {
  Facts f;
  const uint32_t releases = f.rel("kanon", "releases");
  const uint32_t generation = f.rel("kanon", "catalog_generation", 'S');
  const uint32_t version = f.rel("kanon", "schema_version");
  const uint32_t trail = f.rel("audit", "trail");
  const uint32_t other_trail = f.rel("public", "trail");  // another table of that name
  const uint32_t mine = f.view("public", "my_trail", {trail});
  const uint32_t over = f.view("public", "over_mine", {mine});
  const uint32_t counts = f.sql("public", "trail_count", "SELECT count(*) FROM audit.trail");
  const uint32_t bare = f.sql("public", "trail_bare", "SELECT count(*) FROM trail");
  const uint32_t history = f.atomic("public", "history", {releases});
  const uint32_t plain = f.sql("public", "notes", "SELECT count(*) FROM public.people");
  const auto without = f.build();
  CHECK(without.relation(releases)->internal);
  CHECK(without.relation(releases)->read.internal);
  CHECK(without.relation(releases)->read.opaque);
  CHECK(without.relation(releases)->read.via == "kanon.releases");
  CHECK_FALSE(without.relation(generation)->internal);  // every guard reads it
  CHECK_FALSE(without.relation(generation)->read.any());
  CHECK_FALSE(without.relation(version)->internal);
  CHECK_FALSE(without.relation(version)->read.any());
  CHECK(without.function(history)->reach.internal);
  CHECK(without.function(history)->reach.via == "kanon.releases");
  // Without the audit table as an input it is an ordinary table.
  CHECK_FALSE(without.relation(trail)->internal);
  CHECK_FALSE(without.relation(mine)->read.any());

  const auto cat = f.build({"audit.trail"});
  CHECK(cat.relation(trail)->internal);
  CHECK(cat.relation(trail)->cls == RelationClass::kOpaque);
  CHECK(cat.relation(trail)->write.internal);
  CHECK_FALSE(cat.relation(other_trail)->internal);
  CHECK_FALSE(cat.relation(other_trail)->read.any());
  CHECK_FALSE(cat.relation(mine)->internal);  // named: the view is not kanon's
  CHECK(cat.relation(mine)->read.internal);
  CHECK(cat.relation(mine)->read.via == "audit.trail");
  CHECK(cat.relation(mine)->cls == RelationClass::kOpaque);
  CHECK(cat.relation(over)->read.internal);
  CHECK(cat.relation(over)->read.via == "public.my_trail");
  CHECK(cat.function(counts)->reach.internal);
  CHECK(cat.function(counts)->reach.via == "audit.trail");
  // An unqualified name is every relation of that name.
  CHECK(cat.function(bare)->reach.internal);
  CHECK_FALSE(cat.function(plain)->reach.internal);
  CHECK(cat.function(plain)->reach.tables == Tables{"public.people"});
}

TEST_CASE("SQL functions: string bodies, atomic bodies, calls between them") {
  Facts f;
  const uint32_t s = f.sql("public", "f", "SELECT count(*) FROM people WHERE city = $1");
  const uint32_t a = f.atomic("public", "fa", {f.people()});
  const uint32_t caller = f.sql("app", "g", "SELECT f('x') + 1");
  const uint32_t atomic_caller = f.atomic("app", "ga", {}, {a});
  const uint32_t cte =
      f.sql("public", "with_cte", "WITH people AS (SELECT 1) SELECT * FROM people");
  const uint32_t plain = f.sql("public", "one", "SELECT 1; SELECT count(*) FROM notes");
  f.rel("public", "notes");
  const uint32_t other = f.sql("public", "other", "SELECT * FROM other.people");
  f.rel("other", "people");
  const uint32_t bad = f.sql("public", "bad", "SELEC 1");
  const auto cat = f.build();
  CHECK(cat.function(s)->reach.tables == Tables{"public.people"});
  CHECK(cat.function(s)->reach.via == "public.people");
  CHECK_FALSE(cat.function(s)->reach.opaque);
  CHECK(cat.function(a)->reach.tables == Tables{"public.people"});
  CHECK(cat.function(caller)->reach.tables == Tables{"public.people"});
  CHECK(cat.function(caller)->reach.via == "public.f");
  CHECK(cat.function(atomic_caller)->reach.tables == Tables{"public.people"});
  CHECK(cat.function(atomic_caller)->reach.via == "public.fa");
  CHECK_FALSE(cat.function(cte)->reach.any());  // the CTE, not the table
  CHECK_FALSE(cat.function(plain)->reach.any());
  CHECK_FALSE(cat.function(other)->reach.any());  // qualified: other.people only
  CHECK(cat.function(bad)->reach.opaque);
  CHECK(cat.function(bad)->reach.via == "public.bad");
}

TEST_CASE("unqualified names match every schema; qualified names one") {
  Facts f;
  const uint32_t hidden = f.rel("private", "patients");
  const uint32_t child = f.rel("private", "people_x");
  f.R(child).parents = {f.people()};
  const uint32_t reader = f.sql("public", "r", "SELECT * FROM people_x");
  // A function named like a protected-reaching one in another schema.
  f.sql("private", "lookup", "SELECT count(*) FROM public.people");
  f.sql("public", "lookup", "SELECT 1");
  const uint32_t bare = f.sql("public", "bare", "SELECT lookup()");
  const uint32_t qual = f.sql("public", "qual", "SELECT public.lookup()");
  const auto cat = f.build();
  CHECK(cat.function(reader)->reach.tables == Tables{"public.people"});
  CHECK(cat.function(bare)->reach.tables == Tables{"public.people"});
  CHECK(cat.function(bare)->reach.via == "private.lookup");
  CHECK_FALSE(cat.function(qual)->reach.any());
  CHECK(cat.relations("", "people").size() == 1);
  CHECK(cat.relations("private", "patients").size() == 1);
  CHECK(cat.relations("private", "patients")[0]->facts->oid == hidden);
  CHECK(cat.relations("public", "patients").empty());
  CHECK(cat.functions("", "lookup").size() == 2);
  CHECK(cat.functions("private", "lookup").size() == 1);
  CHECK(cat.functions("private", "lookup")[0]->reach.tables == Tables{"public.people"});
}

TEST_CASE("opaque code: plpgsql, views calling it, C outside extensions, connection functions") {
  Facts f;
  const uint32_t pl = f.fn("public", "secret", "plpgsql");
  const uint32_t v = f.view("public", "v_secret", {f.rel("public", "notes")}, {pl});
  const uint32_t over = f.view("public", "v_over", {v});
  const uint32_t sql_over = f.sql("public", "call_secret", "SELECT secret()");
  const uint32_t c = f.fn("public", "raw_c", "c");
  const uint32_t ext = f.fn("public", "hstore_in", "c");
  f.F(ext).extension = "hstore";
  const uint32_t dblink = f.fn("public", "dblink_exec", "c");
  f.F(dblink).extension = "dblink";
  const uint32_t fdw = f.fn("public", "postgres_fdw_get_connections", "c");
  f.F(fdw).extension = "postgres_fdw";
  const uint32_t py = f.fn("public", "py", "plpython3u");
  const auto cat = f.build();
  CHECK(cat.function(pl)->reach.opaque);
  CHECK(cat.function(pl)->reach.via == "public.secret");
  CHECK(cat.relation(v)->cls == RelationClass::kOpaque);
  CHECK(cat.relation(v)->read.via == "public.secret");
  CHECK(cat.relation(over)->cls == RelationClass::kOpaque);
  CHECK(cat.relation(over)->read.via == "public.v_secret");
  CHECK(cat.function(sql_over)->reach.opaque);
  CHECK(cat.function(c)->reach.opaque);
  CHECK_FALSE(cat.function(ext)->reach.any());
  CHECK(cat.function(dblink)->reach.opaque);
  CHECK(cat.function(fdw)->reach.opaque);
  CHECK(cat.function(py)->reach.opaque);
}

TEST_CASE("built-ins reach nothing, except the denied ones behind views and functions") {
  Facts f;
  const uint32_t v = f.view("public", "v_count", {f.rel("public", "notes")}, {100});
  const uint32_t x = f.view("public", "v_xml", {}, {2923});
  const uint32_t s =
      f.sql("public", "dump", "SELECT query_to_xml('select * from people', true, true, '')");
  // pg_catalog.pg_stats as a view's dependency (facts keep its name aside).
  const uint32_t stats_oid = 12345;
  f.facts().system_relations[stats_oid] = "pg_catalog.pg_stats";
  const uint32_t st = f.view("public", "v_stats", {stats_oid});
  const uint32_t st2 = f.sql("public", "stats", "SELECT * FROM pg_stats");
  const auto cat = f.build();
  CHECK_FALSE(cat.function(100)->reach.any());
  CHECK(cat.relation(v)->cls == RelationClass::kPlain);
  CHECK(cat.function(2923)->reach.opaque);
  CHECK(cat.relation(x)->cls == RelationClass::kOpaque);
  CHECK(cat.relation(x)->read.via == "pg_catalog.query_to_xml");
  CHECK(cat.function(s)->reach.opaque);
  CHECK(cat.function(s)->reach.tables.empty());  // the SQL text in the string is not read
  CHECK(cat.relation(st)->cls == RelationClass::kOpaque);
  CHECK(cat.relation(st)->read.via == "pg_catalog.pg_stats");
  CHECK(cat.function(st2)->reach.opaque);
}

TEST_CASE("a cycle between two SQL functions: both reach what either reaches") {
  Facts f;
  const uint32_t a = f.sql("public", "a", "SELECT b(1)");
  const uint32_t b = f.sql("public", "b", "SELECT a(1) UNION ALL SELECT count(*) FROM people");
  const uint32_t c = f.sql("public", "c", "SELECT c(1)");  // calls itself, reaches nothing
  const uint32_t v = f.view("public", "v_cycle", {}, {a});
  const auto cat = f.build();
  CHECK(cat.function(a)->reach.tables == Tables{"public.people"});
  CHECK(cat.function(a)->reach.via == "public.b");
  CHECK(cat.function(b)->reach.tables == Tables{"public.people"});
  CHECK(cat.function(b)->reach.via == "public.people");  // relations before calls
  CHECK_FALSE(cat.function(c)->reach.any());
  CHECK(cat.relation(v)->cls == RelationClass::kView);
}

TEST_CASE("write reach: triggers, rules, children, foreign keys") {
  Facts f;
  const uint32_t trig = f.fn("public", "audit", "plpgsql");
  const uint32_t logged = f.rel("public", "logged");
  f.R(logged).write_functions = {trig};
  const uint32_t into = f.rel("public", "copy_into_people");
  f.R(into).write_relations = {f.people()};  // ON INSERT DO ALSO INSERT INTO people
  const uint32_t reads = f.rel("public", "rule_reads");
  f.R(reads).write_relations = {f.adult()};  // DO ALSO SELECT FROM adult
  const uint32_t parent = f.rel("public", "parent");
  const uint32_t child = f.rel("public", "child");
  f.R(child).parents = {parent};
  f.R(child).write_functions = {trig};
  const uint32_t cascade = f.rel("public", "cascade");
  f.R(cascade).write_relations = {logged};  // deleting cascades into `logged`
  const auto cat = f.build();
  CHECK(cat.relation(logged)->cls == RelationClass::kPlain);
  CHECK_FALSE(cat.relation(logged)->read.any());
  CHECK(cat.relation(logged)->write.opaque);
  CHECK(cat.relation(logged)->write.via == "public.audit");
  CHECK(cat.relation(into)->cls == RelationClass::kPlain);
  CHECK(cat.relation(into)->write.tables == Tables{"public.people"});
  CHECK(cat.relation(into)->write.via == "public.people");
  CHECK(cat.relation(reads)->write.tables == Tables{"public.adult"});
  CHECK(cat.relation(parent)->write.opaque);
  CHECK(cat.relation(parent)->write.via == "public.child");
  CHECK(cat.relation(cascade)->write.opaque);
  CHECK(cat.relation(cascade)->write.via == "public.logged");
}

TEST_CASE("SQL functions that write run the written relations' triggers") {
  Facts f;
  const uint32_t trig = f.fn("public", "audit", "plpgsql");
  const uint32_t logged = f.rel("public", "logged");
  f.R(logged).write_functions = {trig};
  const uint32_t reader = f.sql("public", "reader", "SELECT count(*) FROM logged");
  const uint32_t writer = f.sql("public", "writer", "INSERT INTO logged VALUES (1)");
  const uint32_t cte_writer =
      f.sql("public", "cte_writer", "WITH x AS (DELETE FROM logged RETURNING 1) SELECT * FROM x");
  const uint32_t stable = f.atomic("public", "stable_reader", {logged}, {}, 's');
  const uint32_t volatile_ = f.atomic("public", "volatile_writer", {logged}, {}, 'v');
  const auto cat = f.build();
  CHECK_FALSE(cat.function(reader)->reach.any());
  CHECK(cat.function(writer)->reach.opaque);
  CHECK(cat.function(cte_writer)->reach.opaque);
  CHECK_FALSE(cat.function(stable)->reach.any());
  CHECK(cat.function(volatile_)->reach.opaque);
}

TEST_CASE("foreign tables, foreign partitions and row security policies") {
  Facts f;
  const uint32_t ft = f.rel("public", "remote_people", 'f');
  f.R(ft).foreign_server = 30000;
  const uint32_t v = f.view("public", "v_remote", {ft});
  const uint32_t parted = f.rel("public", "events", 'p');
  const uint32_t part = f.rel("public", "events_remote", 'f');
  f.R(part).parents = {parted};
  const uint32_t rls = f.rel("public", "tenant_rows");
  f.R(rls).policy_relations = {f.people()};
  const uint32_t rls_fn = f.rel("public", "tenant_fn");
  f.R(rls_fn).policy_functions = {f.fn("public", "current_tenant", "plpgsql")};
  const auto cat = f.build();
  CHECK(cat.relation(ft)->cls == RelationClass::kOpaque);
  CHECK(cat.relation(ft)->read.opaque);
  CHECK(cat.relation(ft)->read.via == "public.remote_people");
  CHECK(cat.relation(v)->cls == RelationClass::kOpaque);
  CHECK(cat.relation(parted)->cls == RelationClass::kOpaque);
  CHECK(cat.relation(parted)->read.via == "public.events_remote");
  CHECK(cat.relation(rls)->cls == RelationClass::kDerived);
  CHECK(cat.relation(rls)->read.tables == Tables{"public.people"});
  CHECK(cat.relation(rls_fn)->cls == RelationClass::kOpaque);
}

TEST_CASE("aggregates reach what their support functions reach") {
  Facts f;
  const uint32_t step = f.fn("public", "leaky_step", "plpgsql");
  const uint32_t agg = f.fn("public", "leaky_agg", "internal", 'a');
  f.F(agg).support_functions = {step};
  const uint32_t sql_step = f.sql("public", "sum_step", "SELECT $1 + $2");
  const uint32_t agg2 = f.fn("public", "plain_agg", "internal", 'a');
  f.F(agg2).support_functions = {sql_step};
  const uint32_t v = f.view("public", "v_agg", {f.rel("public", "notes")}, {agg});
  const auto cat = f.build();
  CHECK(cat.function(agg)->reach.opaque);
  CHECK(cat.function(agg)->reach.via == "public.leaky_step");
  CHECK_FALSE(cat.function(agg2)->reach.any());
  CHECK(cat.relation(v)->cls == RelationClass::kOpaque);
}

TEST_CASE("user-defined operators and casts: implicit reach") {
  Facts f;
  const uint32_t op = f.sql("public", "people_eq", "SELECT EXISTS (SELECT 1 FROM people)");
  const uint32_t plain_sql = f.sql("public", "uses_ops", "SELECT $1 === $2");
  {
    const auto cat = f.build();
    CHECK_FALSE(cat.implicit_reach().any());
    CHECK_FALSE(cat.function(plain_sql)->reach.any());
  }
  const uint32_t other_sql = f.sql("public", "no_ops", "SELECT $1 + $2");
  f.facts().operators.push_back({30001, "public", "===", op});
  {
    const auto cat = f.build();
    CHECK(cat.implicit_reach().tables == Tables{"public.people"});
    CHECK(cat.implicit_reach().via == "public.people_eq");
    CHECK(cat.function(plain_sql)->reach.tables == Tables{"public.people"});
    CHECK(cat.function(plain_sql)->reach.via == "public.people_eq");
    CHECK_FALSE(cat.function(other_sql)->reach.any());
  }
  // A user-defined = runs for IN, CASE, GROUP BY without its symbol.
  f.facts().operators.push_back({30002, "public", "=", op});
  const uint32_t in_list = f.sql("public", "in_list", "SELECT $1 IN (1, 2)");
  {
    const auto cat = f.build();
    CHECK(cat.function(in_list)->reach.tables == Tables{"public.people"});
    CHECK(cat.function(other_sql)->reach.tables == Tables{"public.people"});
  }
  // Casts: any of them may run implicitly.
  f.facts().operators.clear();
  f.facts().cast_functions = {op};
  const auto cat = f.build();
  CHECK(cat.function(other_sql)->reach.tables == Tables{"public.people"});
  CHECK(cat.function(other_sql)->reach.via == "public.people_eq");
  CHECK(cat.implicit_reach().tables == Tables{"public.people"});
}

TEST_CASE("facts that were never indexed are indexed on a copy") {
  auto facts = std::make_shared<CatalogFacts>();
  RelationFacts people;
  people.oid = 20000;
  people.schema = "public";
  people.name = "people";
  facts->relations.push_back(people);
  FunctionFacts f;
  f.oid = 20001;
  f.schema = "public";
  f.name = "f";
  f.language = "sql";
  f.body = "SELECT * FROM people";
  facts->functions.push_back(f);
  const ObjectCatalog cat(facts, kProtected);
  REQUIRE(cat.function(20001) != nullptr);
  CHECK(cat.function(20001)->reach.tables == Tables{"public.people"});
  CHECK(cat.relation(20000)->cls == RelationClass::kProtected);
}

TEST_CASE("empty facts") {
  const ObjectCatalog cat(nullptr, kProtected);
  CHECK(cat.relations("", "people").empty());
  CHECK(cat.facts().relations.empty());
}

TEST_CASE("late code: functions whose body PostgreSQL reads when it calls them") {
  Facts f;
  const uint32_t sql = f.sql("public", "s", "SELECT 1");
  const uint32_t pl = f.fn("public", "p", "plpgsql");
  const uint32_t c = f.fn("public", "c", "c");
  f.F(c).extension = "ext";
  const uint32_t calls = f.sql("public", "calls", "SELECT public.s()");
  const uint32_t view = f.view("public", "v", {}, {sql});
  const uint32_t logged = f.rel("public", "logged");
  f.R(logged).write_functions = {pl};
  const auto cat = f.build();
  CHECK(cat.function(sql)->reach.late_code);
  CHECK(cat.function(pl)->reach.late_code);
  CHECK(cat.function(calls)->reach.late_code);
  CHECK_FALSE(cat.function(c)->reach.late_code);
  CHECK_FALSE(cat.function(2923)->reach.late_code);  // query_to_xml: built in
  CHECK(cat.relation(view)->read.late_code);
  CHECK_FALSE(cat.relation(logged)->read.late_code);
  CHECK(cat.relation(logged)->write.late_code);
  CHECK_FALSE(cat.relation(f.people())->read.late_code);
}
