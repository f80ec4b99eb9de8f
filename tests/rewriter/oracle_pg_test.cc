// The oracle: random SELECT statements over protected tables (public.people
// from the demo data, public.patients generated here) and unprotected ones.
// Each statement is rewritten by the Rewriter, and the result must equal, as
// a multiset of rows, the original statement run against physically masked
// copies of the protected tables (CREATE TABLE masked.x AS SELECT <masks>).
// Seeded, so every run checks the same statements.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <pqxx/pqxx>
#include <random>
#include <sstream>

#include "catalog/catalog_facts.h"
#include "policy/policy_file.h"
#include "policy/table_snapshot.h"
#include "rewriter/rewriter.h"
#include "store/snapshot_build.h"
#include "tests/support/pg_sandbox.h"

using namespace kanon;
using kanon::testing::PgSandbox;

namespace {

constexpr int kStatements = 2000;
constexpr uint32_t kSeed = 20261122;

struct Pair {
  std::string rewritten;  // fed to the Rewriter
  std::string oracle;     // run against the masked copies
  Pair& operator+=(const Pair& o) {
    rewritten += o.rewritten;
    oracle += o.oracle;
    return *this;
  }
  Pair& operator+=(const std::string& s) {
    rewritten += s;
    oracle += s;
    return *this;
  }
};

Pair both(const std::string& s) {
  return {s, s};
}

Pair operator+(Pair a, const Pair& b) {
  return a += b;
}
Pair operator+(Pair a, const std::string& b) {
  return a += b;
}
Pair operator+(const std::string& a, const Pair& b) {
  return Pair{a, a} + b;
}

class Generator {
 public:
  explicit Generator(uint32_t seed) : rng_(seed) {}

  Pair statement() {
    switch (pick(22)) {
      case 0:
        return simple();
      case 1:
        return grouped();
      case 2:
        return join();
      case 3:
        return in_subquery();
      case 4:
        return exists_subquery();
      case 5:
        return scalar_subquery();
      case 6:
        return cte();
      case 7:
        return set_operation();
      case 8:
        return window();
      case 9:
        return distinct();
      case 10:
        return limited();
      case 11:
        return three_part();
      case 12:
        return recursive_cte();
      case 13:
        return table_command();
      case 14:
        return lateral();
      case 15:
        return grouping_sets();
      case 16:
        return filtered_aggregates();
      case 17:
        return self_join();
      case 19:
        return visit_log();
      case 20:
        return visit_log_join();
      case 21:
        return wrapped();
      default:
        return nested_set_operations();
    }
  }

 private:
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  template <typename T>
  const T& one(const std::vector<T>& v) {
    return v[static_cast<size_t>(pick(static_cast<int>(v.size())))];
  }

  // A protected table spelled one of the ways PostgreSQL accepts.
  Pair table(const std::string& name) {
    const std::vector<std::string> spellings = {name, "public." + name, "\"" + name + "\"",
                                                "PUBLIC." + name, "public.\"" + name + "\""};
    std::string upper = name;
    for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    std::string s = pick(6) == 0 ? upper : one(spellings);
    return {s, "masked." + name};
  }

  std::string people_pred(const std::string& a) {
    const std::vector<std::string> preds = {
        a + "city = 'Hamlet'",
        a + "state = 'OH'",
        a + "state <> 'MA'",
        a + "occupation IN ('Accountant', 'Lawyer')",
        a + "city IS NULL",
        a + "occupation IS NOT NULL",
        "coalesce(" + a + "state, '?') = '?'",
        a + "id > " + std::to_string(pick(11)),
        a + "diagnosis = 'flu'",
        "(" + a + "state = 'OH' OR " + a + "occupation = 'Farmer')",
        "'Hamlet' = " + a + "city AND " + a + "state NOT IN ('MA', 'TX')",
        a + "occupation IN ('Accountant', 'Lawyer') AND " + a + "occupation <> 'Lawyer'",
        a + "city LIKE 'H%' AND " + a + "occupation NOT LIKE '%er'",
    };
    return one(preds);
  }

  std::string patients_pred(const std::string& a) {
    const int lo = 20 + pick(40);
    const std::vector<std::string> preds = {
        a + "age > " + std::to_string(lo),
        a + "age BETWEEN " + std::to_string(lo) + " AND " + std::to_string(lo + 15),
        a + "zip = '" + one(zips()) + "'",
        a + "sex = 'F'",
        a + "age IS NULL",
        a + "zip IS NOT NULL AND " + a + "sex = 'M'",
        a + "disease = 'flu'",
        a + "age <= " + std::to_string(lo) + " AND " + a + "zip IN ('10001', '20002')",
        std::to_string(lo) + " < " + a + "age AND " + a + "age = '" + std::to_string(lo + 3) + "'",
        a + "zip >= '2' AND " + a + "sex <> 'F'",
        a + "zip LIKE '" + one(zips()).substr(0, 3) + "%'",
        a + "zip NOT LIKE '_000_' AND " + a + "age < " + std::to_string(lo),
    };
    return one(preds);
  }

  static const std::vector<std::string>& zips() {
    static const std::vector<std::string> z = {"10001", "10002", "10003", "20001",
                                               "20002", "30001", "30002", "40001"};
    return z;
  }

  bool people_side() { return pick(2) == 0; }

  std::string where(bool people, const std::string& alias) {
    if (pick(3) == 0) return "";
    const std::string a = alias.empty() ? "" : alias + ".";
    return " WHERE " + (people ? people_pred(a) : patients_pred(a));
  }

  std::string qi(bool people) {
    return people ? one(std::vector<std::string>{"city", "state", "occupation"})
                  : one(std::vector<std::string>{"age", "zip", "sex"});
  }

  Pair simple() {
    const bool p = people_side();
    const std::string alias = pick(2) ? "t" : "";
    const std::string cols =
        p ? "id, name, ssn, occupation, city, state, diagnosis" : "id, age, zip, sex, disease";
    return "SELECT " + (pick(3) == 0 ? std::string("*") : cols) + " FROM " +
           table(p ? "people" : "patients") + (alias.empty() ? "" : " " + alias) + where(p, alias);
  }

  // A dataset's SQL wrapped as BI tools wrap it, the WHERE outside.
  Pair wrapped() {
    const bool p = people_side();
    const std::string cols =
        p ? "id, name, ssn, occupation, city, state, diagnosis" : "id, age, zip, sex, disease";
    const std::string g = qi(p);
    const Pair inner = "SELECT " + (pick(2) ? std::string("*") : cols) + " FROM " +
                       table(p ? "people" : "patients") + (pick(3) == 0 ? where(p, "") : "");
    // As a subquery (Superset, Metabase) or a CTE named once (Looker).
    if (pick(2))
      return "WITH v AS (" + inner + ") SELECT " + g + ", count(*) FROM v" +
             where(p, pick(2) ? "v" : "") + " GROUP BY " + g;
    return "SELECT " + g + ", count(*) FROM (" + inner + ") AS v" + where(p, pick(2) ? "v" : "") +
           " GROUP BY " + g;
  }

  Pair grouped() {
    const bool p = people_side();
    const std::string g = qi(p);
    std::string having = pick(2) ? " HAVING count(*) > " + std::to_string(pick(3)) : "";
    return "SELECT " + g + ", count(*), min(id), max(id) FROM " + table(p ? "people" : "patients") +
           where(p, "") + " GROUP BY " + g + having;
  }

  Pair join() {
    switch (pick(4)) {
      case 0:
        return "SELECT p.id, p.city, p.state, r.region FROM " + table("people") + " p " +
               one(std::vector<std::string>{"JOIN", "LEFT JOIN", "FULL JOIN"}) +
               " regions r ON r.state = p.state" + where(true, "p");
      case 1:
        return "SELECT t.id, t.zip, z.area FROM " + table("patients") +
               " t JOIN zips z USING (zip)" + where(false, "t");
      case 2:
        // People on the nullable side: the WHERE rejects the NULLs it adds.
        return "SELECT r.region, p.city, p.occupation FROM regions r " +
               one(std::vector<std::string>{"LEFT JOIN", "FULL JOIN"}) + " " + table("people") +
               " p ON p.state = r.state" + where(true, "p");
      default: {
        const bool on_people = pick(2);
        return "SELECT p.id, p.occupation, t.age, t.sex FROM " + table("people") + " p JOIN " +
               table("patients") + " t ON t.id = p.id" + where(on_people, on_people ? "p" : "t");
      }
    }
  }

  Pair in_subquery() {
    if (people_side())
      return both("SELECT state, region FROM regions WHERE state " +
                  std::string(pick(2) ? "IN" : "NOT IN") + " (SELECT state FROM ") +
             table("people") + " WHERE state IS NOT NULL" +
             (pick(2) ? " AND " + people_pred("") : std::string()) + ")";
    return both("SELECT zip, area FROM zips WHERE zip IN (SELECT zip FROM ") + table("patients") +
           where(false, "") + ")";
  }

  Pair exists_subquery() {
    return both("SELECT r.state FROM regions r WHERE ") + (pick(2) ? "" : "NOT ") +
           "EXISTS (SELECT 1 FROM " + table("people") + " p WHERE p.state = r.state" +
           (pick(2) ? " AND " + people_pred("p.") : std::string()) + ")";
  }

  Pair scalar_subquery() {
    return both("SELECT z.zip, (SELECT count(*) FROM ") + table("patients") +
           " t WHERE t.zip = z.zip) AS n, (SELECT max(age) FROM " + table("patients") +
           " t2 WHERE t2.zip = z.zip" + (pick(2) ? " AND " + patients_pred("t2.") : std::string()) +
           ") AS oldest FROM zips z";
  }

  Pair cte() {
    const bool p = people_side();
    const std::string g = qi(p);
    return "WITH c AS (SELECT id, " + g + " FROM " + table(p ? "people" : "patients") +
           where(p, "") + ") SELECT " + g + ", count(*) FROM c GROUP BY " + g +
           (pick(2) ? " HAVING count(*) >= 1" : "");
  }

  Pair set_operation() {
    const std::string op = one(std::vector<std::string>{"UNION", "UNION ALL", "INTERSECT", "EXCEPT",
                                                        "INTERSECT ALL", "EXCEPT ALL"});
    if (pick(2))
      return "SELECT state FROM " + table("people") + where(true, "") + " " + op +
             " SELECT state FROM regions";
    return "SELECT zip FROM " + table("patients") + where(false, "") + " " + op +
           " SELECT zip FROM zips";
  }

  Pair window() {
    const bool p = people_side();
    const std::string g = qi(p);
    return "SELECT id, " + g + ", count(*) OVER (PARTITION BY " + g +
           "), row_number() OVER (PARTITION BY " + g + " ORDER BY id), rank() OVER (ORDER BY " + g +
           " NULLS FIRST) FROM " + table(p ? "people" : "patients") + where(p, "");
  }

  Pair distinct() {
    const bool p = people_side();
    return "SELECT DISTINCT " + qi(p) + ", " + qi(p) + " FROM " + table(p ? "people" : "patients") +
           where(p, "");
  }

  Pair limited() {
    const bool p = people_side();
    return "SELECT id, " + qi(p) + " FROM " + table(p ? "people" : "patients") + where(p, "") +
           " ORDER BY id " + (pick(2) ? "DESC " : "") + "LIMIT " + std::to_string(1 + pick(8)) +
           (pick(2) ? " OFFSET " + std::to_string(pick(3)) : "");
  }

  Pair three_part() {
    const bool p = people_side();
    const std::string t = p ? "people" : "patients";
    const Pair q{"public." + t + ".", "masked." + t + "."};
    const Pair from{"public." + t, "masked." + t};
    return "SELECT " + q + "id, " + q + qi(p) + " FROM " + from + " WHERE " + q +
           (p ? "state = 'OH'" : "age > 40");
  }

  Pair recursive_cte() {
    return both("WITH RECURSIVE r(id, depth) AS (SELECT id, 0 FROM ") + table("people") +
           " WHERE id = " + std::to_string(1 + pick(5)) +
           " UNION ALL SELECT p.id, r.depth + 1 FROM r JOIN " + table("people") +
           " p ON p.id = r.id + 1 WHERE r.depth < 4) SELECT r.id, r.depth, q.city FROM r JOIN " +
           table("people") + " q USING (id)";
  }

  Pair table_command() { return both("TABLE ") + table(people_side() ? "people" : "patients"); }

  Pair lateral() {
    return both(
               "SELECT r.state, x.city, x.n FROM regions r, LATERAL (SELECT city, count(*) AS n "
               "FROM ") +
           table("people") + " p WHERE p.state = r.state GROUP BY city) x";
  }

  Pair grouping_sets() {
    const bool p = people_side();
    const std::string a = qi(p), b = qi(p);
    const std::string sets =
        pick(2) ? "ROLLUP (" + a + ", " + b + ")" : "GROUPING SETS ((" + a + "), (" + b + "), ())";
    return "SELECT " + a + ", " + b + ", count(*), grouping(" + a + ") FROM " +
           table(p ? "people" : "patients") + where(p, "") + " GROUP BY " + sets;
  }

  Pair filtered_aggregates() {
    if (people_side())
      return "SELECT state, count(*) FILTER (WHERE city IS NOT NULL), string_agg(occupation, ',' "
             "ORDER BY occupation, id) FROM " +
             table("people") + " GROUP BY state";
    return "SELECT sex, count(*) FILTER (WHERE age > 40), array_agg(zip ORDER BY zip, id) FROM " +
           table("patients") + where(false, "") + " GROUP BY sex";
  }

  Pair self_join() {
    const std::string g = qi(true);
    return "SELECT a.id, b.id, a." + g + " FROM " + table("people") + " a JOIN " + table("people") +
           " b ON a." + g + " IS NOT DISTINCT FROM b." + g + " AND a.id < b.id";
  }

  Pair nested_set_operations() {
    return "(SELECT city FROM " + table("people") + where(true, "") + " UNION SELECT state FROM " +
           table("people") + ") EXCEPT (SELECT state FROM regions INTERSECT SELECT state FROM " +
           table("people") + where(true, "") + ")";
  }

  // A protected table whose name and columns all need quoting.
  Pair visit_log_table() {
    const std::vector<std::string> spellings = {"\"Visit Log\"", "public.\"Visit Log\"",
                                                "PUBLIC.\"Visit Log\"", "U&\"Visit\\0020Log\""};
    return {one(spellings), "masked.\"Visit Log\""};
  }

  std::string visit_pred(const std::string& a) {
    const std::vector<std::string> preds = {
        a + "\"City Name\" = 'Akron'", a + "\"State\" = 'OH'", a + "\"City Name\" IS NULL",
        a + "\"Patient-ID\" > " + std::to_string(pick(40)), a + "note LIKE 'n1%'"};
    return one(preds);
  }

  Pair visit_log() {
    const std::string alias = pick(2) ? "v" : "";
    const std::string a = alias.empty() ? "" : alias + ".";
    const std::string g = pick(2) ? "\"City Name\"" : "\"State\"";
    if (pick(2))
      return "SELECT " + a + "\"Patient-ID\", " + a + g + " FROM " + visit_log_table() +
             (alias.empty() ? "" : " " + alias) + " WHERE " + visit_pred(a);
    return "SELECT " + g + ", count(*) FROM " + visit_log_table() + " GROUP BY " + g;
  }

  Pair visit_log_join() {
    return "SELECT p.id, p.state, v.\"City Name\" FROM " + table("people") + " p JOIN " +
           visit_log_table() + " v ON v.\"State\" = p.state AND v.\"Patient-ID\" = p.id";
  }

  std::mt19937 rng_;
};

using Rows = std::vector<std::string>;

Rows run(pqxx::connection& conn, const std::string& sql) {
  pqxx::nontransaction tx(conn);
  Rows rows;
  for (const auto& r : tx.exec(sql)) {
    std::string line;
    for (const auto& f : r) line += (f.is_null() ? std::string("<null>") : f.c_str()) + "|";
    rows.push_back(std::move(line));
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

policy::TablePolicy patients_policy() {
  policy::TablePolicy p;
  p.schema = "public";
  p.table = "patients";
  p.k = 3;
  p.quasi_identifiers = {"age", "zip", "sex"};
  p.quasi_identifier_refs.resize(3);
  return p;
}

std::string patients_rows() {
  std::mt19937 rng(kSeed);
  const std::vector<std::string> zips = {"10001", "10002", "10003", "20001",
                                         "20002", "30001", "30002", "40001"};
  const std::vector<std::string> diseases = {"flu", "asthma", "diabetes", "migraine"};
  std::string values;
  for (int id = 1; id <= 240; ++id) {
    auto any = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
    values += (id > 1 ? ", (" : "(") + std::to_string(id) + ", " + std::to_string(20 + any(50)) +
              ", '" + zips[any(zips.size())] + "', '" + (any(2) ? "F" : "M") + "', '" +
              diseases[any(diseases.size())] + "')";
  }
  return values;
}

}  // namespace

TEST_CASE("oracle: rewritten statements return exactly the rows of masked copies") {
  auto& pg = PgSandbox::shared();
  pg.psql(
      "CREATE TABLE public.regions (state text, region text);"
      "INSERT INTO public.regions VALUES ('OH', 'midwest'), ('MA', 'east'), ('DC', 'east'),"
      " ('KY', 'south'), ('TX', 'south');"
      "CREATE TABLE public.zips (zip text, area text);"
      "INSERT INTO public.zips VALUES ('10001', 'a'), ('10002', 'a'), ('20001', 'b'),"
      " ('30001', 'c'), ('99999', 'z');"
      "CREATE TABLE public.patients (id integer, age integer, zip text, sex text, disease text);"
      "INSERT INTO public.patients VALUES " +
      patients_rows() +
      ";"
      "CREATE TABLE public.\"Visit Log\" (\"Patient-ID\" integer, \"City Name\" text, "
      "\"State\" text, note text);"
      "INSERT INTO public.\"Visit Log\" SELECT i, (ARRAY['Akron', 'Akron', 'Dayton', 'Reno', "
      "'Erie'])[1 + i % 5], (ARRAY['OH', 'OH', 'OH', 'NV', 'PA'])[1 + i % 5], 'n' || i "
      "FROM generate_series(1, 40) i");
  pqxx::connection build_conn(pg.conninfo());  // pinned by the builds
  pqxx::connection conn(pg.conninfo());
  const auto people_policy =
      policy::load_policy_file(testing::source_dir() + "/config/policies/people.yaml").at(0);
  const auto people = store::build_table_snapshot(build_conn, people_policy);
  const auto patients = store::build_table_snapshot(build_conn, patients_policy());
  policy::TablePolicy visit_policy;
  visit_policy.schema = "public";
  visit_policy.table = "Visit Log";
  visit_policy.k = 2;
  visit_policy.quasi_identifiers = {"City Name", "State"};
  visit_policy.quasi_identifier_refs.resize(2);
  const auto visit_log = store::build_table_snapshot(build_conn, visit_policy);
  pg.psql("CREATE SCHEMA masked; CREATE TABLE masked.people AS SELECT " +
          people->masks.select_list() +
          " FROM public.people; CREATE TABLE masked.patients AS SELECT " +
          patients->masks.select_list() +
          " FROM public.patients; CREATE TABLE masked.\"Visit Log\" AS SELECT " +
          visit_log->masks.select_list() + " FROM public.\"Visit Log\"");

  store::PolicySnapshot snap;
  snap.version = 1;
  // With the catalog, as the proxy runs: restrictions on quasi-identifiers
  // are then decided on raw values first (restriction_filter.h).
  snap.catalog = std::make_shared<catalog::CatalogFacts>(catalog::read_catalog_facts(conn));
  snap.tables["public.people"] = people;
  snap.tables["public.patients"] = patients;
  snap.tables["public.Visit Log"] = visit_log;
  rewriter::Rewriter rw;
  const rewriter::PlanContext session{"\"$user\", public", false};

  Generator gen(kSeed);
  size_t nonempty = 0;
  size_t filtered = 0;
  size_t through_cte = 0;
  std::map<std::string, int> failures;
  for (int i = 0; i < kStatements; ++i) {
    const Pair q = gen.statement();
    CAPTURE(q.rewritten);
    CAPTURE(q.oracle);
    const auto r = rw.rewrite(q.rewritten, snap, session);
    CAPTURE(r.sql);
    REQUIRE(r.verdict == rewriter::Verdict::kRewritten);
    Rows got, want;
    try {
      got = run(conn, r.sql);
      want = run(conn, q.oracle);
    } catch (const std::exception& e) {
      FAIL_CHECK("statement failed: " << std::string(e.what()));
      continue;
    }
    CHECK(got == want);
    if (!want.empty()) ++nonempty;
    if (r.sql.find("\" WHERE CASE WHEN \"") == std::string::npos) continue;
    ++filtered;
    if (q.rewritten.rfind("WITH v AS (", 0) == 0) ++through_cte;
  }
  MESSAGE(kStatements << " statements, " << nonempty << " with rows, " << filtered
                      << " with restrictions decided on raw values first, " << through_cte
                      << " of them through a CTE");
  CHECK(nonempty > kStatements / 2);  // the generator is not trivially empty
  CHECK(filtered > kStatements / 10);
  CHECK(through_cte > 0);
}

// The filter kanon adds for a restriction (`WHERE age = 39`) is one
// expression, true exactly where the masked value satisfies it. Were it a raw
// comparison of its own, PostgreSQL would evaluate it before a cheaper
// function of the user's in another conjunct, and that function would see
// (and could count, or fail on) exactly the rows whose raw value satisfies
// the restriction, released or not.
TEST_CASE("oracle: a function in another conjunct sees no row chosen by a raw value") {
  auto& pg = PgSandbox::shared();
  pg.psql(
      "CREATE TABLE public.probed (id integer PRIMARY KEY, age integer, zip text);"
      // Half the rows in one zip and three ages, the other half in two zips
      // and twelve ages: the first half's ages are released, the second's
      // (five rows each) are not.
      "INSERT INTO public.probed SELECT i, CASE WHEN i <= 60 THEN 20 + i % 3 ELSE 20 + i % 12 END, "
      "CASE WHEN i <= 60 THEN '10001' WHEN i % 2 = 0 THEN '10002' ELSE '10003' END "
      "FROM generate_series(1, 120) i;"
      "CREATE SEQUENCE public.probe_calls;"
      "CREATE FUNCTION public.probe(text) RETURNS boolean LANGUAGE sql VOLATILE "
      "AS 'SELECT pg_catalog.nextval(''public.probe_calls'') > 0';"
      // The same, dear enough that PostgreSQL evaluates it last (STRICT
      // with its argument unused: not inlined, so its COST counts).
      "CREATE FUNCTION public.dear_probe(text) RETURNS boolean LANGUAGE sql VOLATILE STRICT "
      "COST 1000000 AS 'SELECT pg_catalog.nextval(''public.probe_calls'') > 0';"
      // Views calling them in their WHERE, which a restriction looks through.
      "CREATE VIEW public.probed_by_probe AS SELECT * FROM public.probed WHERE public.probe(zip);"
      "CREATE VIEW public.probed_by_dear_probe AS SELECT * FROM public.probed "
      "WHERE public.dear_probe(zip)");
  pqxx::connection build_conn(pg.conninfo());
  pqxx::connection conn(pg.conninfo());
  policy::TablePolicy policy;
  policy.schema = "public";
  policy.table = "probed";
  policy.quasi_identifiers = {"age", "zip"};
  policy.quasi_identifier_refs.resize(2);
  // The first k whose masks show an age for some rows and hide it for
  // others, so that the raw count, the masked count and the table's differ
  // (the data and the tree are deterministic: always the same k).
  std::shared_ptr<const policy::TableSnapshot> probed;
  int age = 0, raw = 0, masked = 0;
  for (policy.k = 6; policy.k <= 30 && !masked; ++policy.k) {
    probed = store::build_table_snapshot(build_conn, policy);
    const auto m = std::find_if(probed->masks.columns.begin(), probed->masks.columns.end(),
                                [](const auto& c) { return c.column == "age"; });
    if (m->release_test.empty()) continue;
    const std::string shown = "count(*) FILTER (WHERE (" + m->expression + ") = age)";
    const auto counts =
        run(conn, "SELECT pg_catalog.lpad(age::text, 3) || ' ' || count(*) || ' ' || " + shown +
                      " FROM public.probed GROUP BY age HAVING " + shown +
                      " BETWEEN 1 AND count(*) - 1");
    if (counts.empty()) continue;
    std::istringstream in(counts.front().substr(0, counts.front().size() - 1));
    in >> age >> raw >> masked;
  }
  MESSAGE("k " << policy.k - 1 << ": age " << age << ", " << raw << " rows, " << masked
               << " shown");
  REQUIRE(masked > 0);
  REQUIRE(masked < raw);

  store::PolicySnapshot snap;
  snap.version = 1;
  snap.tables["public.probed"] = probed;
  snap.catalog = std::make_shared<catalog::CatalogFacts>(catalog::read_catalog_facts(conn));
  rewriter::Rewriter rw;
  const rewriter::PlanContext session{"\"$user\", public", false};
  const std::string v = std::to_string(age);
  // The function beside the restriction, or inside a subquery, CTE or view
  // the restriction looks through (its own WHERE, or a computed column), as
  // BI tools wrap SQL.
  for (const std::string& form :
       {"SELECT count(*) FROM probed WHERE age = " + v + " AND $(zip)",
        "SELECT count(*) FROM probed_by_$ v WHERE v.age = " + v,
        "SELECT count(*) FROM (SELECT * FROM probed WHERE $(zip)) s WHERE s.age = " + v,
        // In a computed column of the subquery (evaluated for the rows it
        // passes on).
        "SELECT count(*) FILTER (WHERE s.p) FROM (SELECT age, $(zip) AS p FROM probed) s WHERE "
        "s.age = " +
            v,
        "WITH s AS (SELECT * FROM probed WHERE $(zip)) SELECT count(*) FROM s WHERE s.age = " + v,
        "WITH s AS MATERIALIZED (SELECT * FROM probed WHERE $(zip)) SELECT count(*) FROM s "
        "WHERE s.age = " +
            v})
    for (const std::string probe : {"probe", "dear_probe"}) {
      CAPTURE(probe);
      std::string sql = form;
      sql.replace(sql.find('$'), 1, probe);
      CAPTURE(sql);
      const auto r = rw.rewrite(sql, snap, session);
      CAPTURE(r.sql);
      REQUIRE(r.verdict == rewriter::Verdict::kRewritten);
      REQUIRE(r.sql.find("\" WHERE CASE WHEN \"age\" OPERATOR(pg_catalog.=) ") !=
              std::string::npos);
      run(conn, "SELECT pg_catalog.setval('public.probe_calls', 1, false)");
      CHECK(run(conn, r.sql) == Rows{std::to_string(masked) + "|"});
      const int calls =
          std::stoi(run(conn, "SELECT pg_catalog.nextval('public.probe_calls')")[0]) - 1;
      // Every row (the cheap function first) or the masked ones (the dear one,
      // after the filter): never the rows the raw value chose.
      CHECK((calls == 120 || calls == masked));
      CHECK(calls != raw);
      if (probe == "dear_probe") CHECK(calls == masked);
    }
}
