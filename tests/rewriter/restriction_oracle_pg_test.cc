// Restrictions with parameters (`WHERE age = $1`, what drivers send) are
// decided on raw values first only where the Parse gives the parameter one
// type in kanon's filter and in the user's conjunct (restriction_filter.h).
// Each statement is rewritten with the parameter types a Parse declares,
// prepared on PostgreSQL with those types (PREPARE types parameters as a
// Parse does) and executed with many values; its rows must equal those of
// the same statement prepared alike over a physically masked copy. Seeded.
#include <doctest/doctest.h>

#include <map>
#include <pqxx/pqxx>
#include <random>

#include "catalog/catalog_facts.h"
#include "policy/table_snapshot.h"
#include "rewriter/rewriter.h"
#include "store/snapshot_build.h"
#include "tests/support/pg_sandbox.h"

using namespace kanon;
using kanon::testing::PgSandbox;

namespace {

constexpr uint32_t kSeed = 20261128;

// Every row of `sql`'s result, in order, fields separated by '|'.
std::string rows_of(pqxx::connection& conn, const std::string& sql) {
  pqxx::nontransaction tx(conn);
  std::string out;
  for (const auto& row : tx.exec(sql)) {
    for (const auto& f : row) out += (f.is_null() ? std::string("<null>") : f.c_str()) + "|";
    out += '\n';
  }
  return out;
}

struct Case {
  const char* sql;                 // `$T` for the table
  std::vector<std::string> types;  // as PREPARE names them; empty: unspecified
  const char* kinds;               // per parameter: i an age, z a zip, c a city
  bool filtered;                   // kanon decides the parameters' restrictions first
};

// A parameter list for `c`: random values of each parameter's kind, some
// of them in no row.
std::string values_for(const Case& c, std::mt19937& rng) {
  auto any = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  const char* const zips[] = {"'10001'", "'10002'", "'20001'", "'20002'", "'30001'", "'x'"};
  const char* const cities[] = {"'Akron'", "'Dayton'", "'Erie'", "'Reno'", "'y'"};
  std::string out;
  for (const char* k = c.kinds; *k; ++k) {
    out += k == c.kinds ? "" : ", ";
    // a: ages, w: zips, l: cities, as arrays.
    if (*k == 'a' || *k == 'w' || *k == 'l') {
      std::string list;
      for (int n = 1 + any(3); n > 0; --n) {
        list += list.empty() ? "" : ",";
        list += *k == 'a'   ? std::to_string(16 + any(64))
                : *k == 'w' ? std::string(zips[any(6)])
                            : std::string(cities[any(5)]);
      }
      std::string bare;  // the strings without their quotes
      for (char ch : list)
        if (ch != '\'') bare += ch;
      out += "'{" + bare + "}'";
      continue;
    }
    out += *k == 'z' ? zips[any(6)] : *k == 'c' ? cities[any(5)] : std::to_string(16 + any(64));
  }
  return out;
}

// `sql` with its `$T` naming `table`.
std::string on_table(std::string sql, const std::string& table) {
  for (size_t at = sql.find("$T"); at != std::string::npos; at = sql.find("$T", at))
    sql.replace(at, 2, table);
  return sql;
}

// public.`table` protected with `k` and `quasi_identifiers` (read through
// `build`), and its masked copy `copy` (schema-qualified) made on `pg`.
std::shared_ptr<const policy::TableSnapshot> protect(PgSandbox& pg, pqxx::connection& build,
                                                     const std::string& table, int k,
                                                     std::vector<std::string> quasi_identifiers,
                                                     const std::string& copy) {
  policy::TablePolicy policy;
  policy.schema = "public";
  policy.table = table;
  policy.k = k;
  policy.quasi_identifier_refs.resize(quasi_identifiers.size());
  policy.quasi_identifiers = std::move(quasi_identifiers);
  auto snapshot = store::build_table_snapshot(build, policy);
  pg.psql("CREATE SCHEMA " + copy.substr(0, copy.find('.')) + "; CREATE TABLE " + copy +
          " AS SELECT " + snapshot->masks.select_list() + " FROM public." + table);
  return snapshot;
}

// A policy snapshot of `table` with the catalog as `conn` reads it now.
store::PolicySnapshot snapshot_with(pqxx::connection& conn, const std::string& table,
                                    std::shared_ptr<const policy::TableSnapshot> snapshot) {
  store::PolicySnapshot snap;
  snap.version = 1;
  snap.catalog = std::make_shared<catalog::CatalogFacts>(catalog::read_catalog_facts(conn));
  snap.tables["public." + table] = std::move(snapshot);
  return snap;
}

// public.`table`: 400 rows of age, zip (`zip4` the fourth of five),
// city (character varying) and sex, protected with k = 4 over all four, its
// masked copy in schema `copy`; the snapshot with the catalog as `conn`
// reads it then.
store::PolicySnapshot visits_table(PgSandbox& pg, pqxx::connection& conn, const std::string& table,
                                   const std::string& zip4, const std::string& copy) {
  pg.psql("CREATE TABLE public." + table +
          " (id integer PRIMARY KEY, age integer, zip text, city character varying, sex text);"
          "INSERT INTO public." +
          table + " SELECT i, 18 + (i * 7919) % 60, (ARRAY['10001', '10002', '20001', '" + zip4 +
          "', '30001'])[1 + (i * 31) % 5], (ARRAY['Akron', 'Akron', 'Dayton', 'Erie', "
          "'Reno'])[1 + (i * 13) % 5], CASE WHEN i % 3 = 0 THEN 'F' ELSE 'M' END FROM "
          "generate_series(1, 400) i");
  pqxx::connection build_conn(pg.conninfo());
  return snapshot_with(
      conn, table,
      protect(pg, build_conn, table, 4, {"age", "zip", "city", "sex"}, copy + "." + table));
}

}  // namespace

TEST_CASE("parameter oracle: restrictions on parameters return the masked copy's rows") {
  auto& pg = PgSandbox::shared();
  pqxx::connection conn(pg.conninfo());
  const store::PolicySnapshot snap = visits_table(pg, conn, "visits", "20002", "masked_p");
  rewriter::Rewriter rw;

  const std::vector<Case> cases = {
      {"SELECT count(*) FROM $T WHERE age = $1", {}, "i", true},
      {"SELECT count(*) FROM $T WHERE age = $1", {"int8"}, "i", true},
      {"SELECT count(*) FROM $T WHERE age = $1", {"numeric"}, "i", false},
      {"SELECT zip, count(*) FROM $T WHERE age BETWEEN $1 AND $2 GROUP BY 1 ORDER BY 1",
       {"int2", "int4"},
       "ii",
       true},
      {"SELECT age, count(*) FROM $T WHERE zip IN ($1, $2) AND $3 > age GROUP BY 1 ORDER BY 1",
       {},
       "zzi",
       true},
      {"SELECT age, count(*) FROM $T WHERE zip IN ($1, $2) AND $3 > age GROUP BY 1 ORDER BY 1",
       {"varchar", "text", "int8"},
       "zzi",
       true},
      {"SELECT count(*) FROM $T WHERE city = $1", {"varchar"}, "c", true},
      {"SELECT count(*) FROM $T WHERE city = $1", {}, "c", false},
      {"SELECT count(*) FROM $T WHERE city IN ($1, $2)", {}, "cc", false},
      {"SELECT sex, count(*) FROM $T t WHERE t.age <> $1 AND t.zip >= $2 GROUP BY 1 ORDER BY 1",
       {},
       "iz",
       true},
      {"SELECT sex, count(*) FROM $T t WHERE t.age NOT IN ($1, $2) GROUP BY 1 ORDER BY 1",
       {"int8", "int2"},
       "ii",
       true},
      {"SELECT count(*) FROM $T WHERE age = $1 AND age < $1 + 1", {}, "i", false},
      // Lists as drivers send them: an array parameter.
      {"SELECT sex, count(*) FROM $T WHERE age = ANY ($1) GROUP BY 1 ORDER BY 1", {}, "a", true},
      {"SELECT sex, count(*) FROM $T WHERE age = ANY ($1) AND zip <> ALL ($2) GROUP BY 1 ORDER "
       "BY 1",
       {"int8[]", "text[]"},
       "aw",
       true},
      {"SELECT count(*) FROM $T WHERE city = ANY ($1)", {"varchar[]"}, "l", true},
      {"SELECT count(*) FROM $T WHERE age = ANY ($1)", {"numeric[]"}, "a", false},
      // Wrapped as BI tools wrap a dataset's SQL: through the subquery.
      {"SELECT count(*) FROM (SELECT * FROM $T) AS virtual_table WHERE age = $1", {}, "i", true},
      {"WITH s AS (SELECT * FROM $T) SELECT count(*) FROM s WHERE age = $1", {"int4"}, "i", true},
      {"WITH s AS (SELECT * FROM $T) SELECT count(*) FROM $T UNION ALL SELECT count(*) FROM s "
       "WHERE age = $1",
       {"int2"},
       "i",
       true},
      {"WITH s AS (SELECT * FROM $T) SELECT count(*), (SELECT count(*) FROM s) FROM s WHERE "
       "age = $1",
       {},
       "i",
       false},
      {"SELECT zip, count(*) FROM (SELECT age AS years, zip FROM $T) s WHERE s.years BETWEEN $1 "
       "AND $2 AND zip <> $3 GROUP BY 1 ORDER BY 1",
       {"int4", "int4", "text"},
       "iiz",
       true},
      {"SELECT count(*) FROM (SELECT age + 0 AS age FROM $T) s WHERE s.age = $1", {}, "i", false},
      // Computed columns beside the passed ones, under aliases: the rows
      // stay the table's (a set-returning function repeats each kept row).
      {"SELECT decade, count(*) FROM (SELECT *, age / 10 AS decade FROM $T) v WHERE v.age = $1 "
       "GROUP BY 1 ORDER BY 1",
       {},
       "i",
       true},
      {"SELECT n, s, count(*) FROM (SELECT age, zip, generate_series(1, 2) AS n, lower(sex) AS s "
       "FROM $T) v WHERE zip = $1 AND age > $2 GROUP BY 1, 2 ORDER BY 1, 2",
       {},
       "zi",
       true},
      // A window function is computed over the rows the filter would take
      // out: not through it.
      {"SELECT count(*), max(n) FROM (SELECT age, count(*) OVER () AS n FROM $T) v WHERE age = $1",
       {},
       "i",
       false},
  };
  std::mt19937 rng(kSeed);
  int executions = 0, nonempty = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    CAPTURE(c.sql);
    CAPTURE(c.types.size());
    rewriter::PlanContext session{"\"$user\", public", false};
    session.parse_message = true;
    std::string types;
    for (const auto& t : c.types) {
      types += (types.empty() ? "" : ", ") + t;
      session.parameter_types.push_back(static_cast<uint32_t>(
          std::stoul(rows_of(conn, "SELECT '" + t + "'::regtype::oid").substr(0, 10))));
    }
    const auto r = rw.rewrite(on_table(c.sql, "visits"), snap, session);
    CAPTURE(r.sql);
    REQUIRE(r.verdict == rewriter::Verdict::kRewritten);
    CHECK((r.sql.find("\" WHERE CASE WHEN ") != std::string::npos) == c.filtered);
    const std::string declared = types.empty() ? "" : "(" + types + ")";
    const std::string name = "p" + std::to_string(i);
    rows_of(conn, "PREPARE " + name + declared + " AS " + r.sql);
    rows_of(conn, "PREPARE o" + name + declared + " AS " + on_table(c.sql, "masked_p.visits"));
    for (int v = 0; v < 25; ++v) {
      const std::string values = values_for(c, rng);
      CAPTURE(values);
      const std::string got = rows_of(conn, "EXECUTE " + name + "(" + values + ")");
      CHECK(got == rows_of(conn, "EXECUTE o" + name + "(" + values + ")"));
      ++executions;
      if (got != "0|\n" && !got.empty()) ++nonempty;
    }
  }
  MESSAGE(executions << " executions, " << nonempty << " with rows");
  CHECK(nonempty > executions / 2);

  // The same statements prepared in SQL (`PREPARE q(integer, ...) AS ...`,
  // a simple Query): the list's types are read where the grammar writes
  // them qualified (integer, smallint, bigint, character varying); `text` is
  // written unqualified (a temporary table's row type could be named so) and
  // numeric is not compared as integers: those parameters are not decided first.
  const std::map<std::string, std::string> spelled = {
      {"int2", "smallint"}, {"int4", "integer"},
      {"int8", "bigint"},   {"varchar", "character varying"},
      {"text", "text"},     {"numeric", "numeric"}};
  int prepared_filtered = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    CAPTURE(c.sql);
    std::string types;
    bool read = true;
    for (const auto& t : c.types) {
      const bool array = t.size() > 2 && t.substr(t.size() - 2) == "[]";
      types += (types.empty() ? "" : ", ") + spelled.at(array ? t.substr(0, t.size() - 2) : t) +
               (array ? "[]" : "");
      read = read && t != "text" && t != "numeric" && !array;
    }
    const std::string declared = types.empty() ? "" : "(" + types + ")";
    const std::string name = "s" + std::to_string(i);
    const auto r = rw.rewrite("PREPARE " + name + declared + " AS " + on_table(c.sql, "visits"),
                              snap, rewriter::PlanContext{"\"$user\", public", false});
    CAPTURE(r.sql);
    REQUIRE(r.verdict == rewriter::Verdict::kRewritten);
    const bool filtered = r.sql.find("\" WHERE CASE WHEN ") != std::string::npos;
    if (read) CHECK(filtered == c.filtered);
    if (!c.filtered) CHECK_FALSE(filtered);
    prepared_filtered += filtered;
    rows_of(conn, r.sql);
    for (int v = 0; v < 10; ++v) {
      const std::string values = values_for(c, rng);
      CAPTURE(values);
      CHECK(rows_of(conn, "EXECUTE " + name + "(" + values + ")") ==
            rows_of(conn, "EXECUTE o" + ("p" + std::to_string(i)) + "(" + values + ")"));
    }
  }
  CHECK(prepared_filtered > 5);
}

// A view the statement reads expands to its definition; where the definition
// passes one table's rows on unchanged (plain columns, renamed or not, its
// own WHERE), a restriction on the view's column restricts the table's
// column, through views of views and security_barrier views too. Rows equal
// to the same views' over the masked copy.
TEST_CASE("restriction oracle: through views that pass the table's rows on") {
  auto& pg = PgSandbox::shared();
  pg.psql(
      "CREATE TABLE public.stays (id integer PRIMARY KEY, age integer, zip text, sex text);"
      "INSERT INTO public.stays SELECT i, 18 + (i * 7919) % 60, "
      "(ARRAY['10001', '10002', '20001', '20002', '30001'])[1 + (i * 31) % 5], "
      "CASE WHEN i % 3 = 0 THEN 'F' ELSE 'M' END FROM generate_series(1, 400) i");
  pqxx::connection build_conn(pg.conninfo());
  pqxx::connection conn(pg.conninfo());
  const auto stays = protect(pg, build_conn, "stays", 4, {"age", "zip", "sex"}, "masked_s.stays");
  for (const std::string schema : {"public", "masked_s"})
    pg.psql("CREATE VIEW " + schema + ".stays_v AS SELECT id, age AS years, zip, sex FROM " +
            schema +
            ".stays WHERE sex <> 'x';"
            "CREATE VIEW " +
            schema + ".stays_vv AS SELECT * FROM " + schema +
            ".stays_v;"
            "CREATE VIEW " +
            schema +
            ".stays_sb WITH (security_barrier) AS SELECT id, age, zip "
            "FROM " +
            schema +
            ".stays;"
            "CREATE VIEW " +
            schema + ".stays_g AS SELECT age, count(*) AS n FROM " + schema +
            ".stays GROUP BY age;"
            "CREATE VIEW " +
            schema + ".stays_c AS SELECT age + 0 AS age, zip FROM " + schema +
            ".stays;"
            "CREATE VIEW " +
            schema + ".stays_x AS SELECT id, age, zip || '-' || sex AS label FROM " + schema +
            ".stays");
  const store::PolicySnapshot snap = snapshot_with(conn, "stays", stays);
  rewriter::Rewriter rw;
  struct ViewCase {
    std::string sql;  // $S: the schema
    bool filtered;
  };
  const std::vector<ViewCase> cases = {
      {"SELECT count(*) FROM $S.stays_v WHERE years = $1", true},
      {"SELECT zip, count(*) FROM $S.stays_v v WHERE v.years BETWEEN $1 AND $1 + 9 GROUP BY 1 "
       "ORDER BY 1",
       false},  // $1 used twice: not a restriction
      {"SELECT sex, count(*) FROM $S.stays_vv WHERE years = $1 GROUP BY 1 ORDER BY 1", true},
      {"SELECT count(*) FROM (SELECT * FROM $S.stays_vv) w WHERE w.years > $1", true},
      {"SELECT zip, count(*) FROM $S.stays_sb WHERE age = $1 GROUP BY 1 ORDER BY 1", true},
      {"SELECT n FROM $S.stays_g WHERE age = $1", false},
      {"SELECT count(*) FROM $S.stays_c WHERE age = $1", false},
      {"SELECT label, count(*) FROM $S.stays_x WHERE age = $1 GROUP BY 1 ORDER BY 1", true},
  };
  std::mt19937 rng(kSeed);
  int nonempty = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const ViewCase& c = cases[i];
    CAPTURE(c.sql);
    std::string through = c.sql, oracle = c.sql;
    through.replace(through.find("$S"), 2, "public");
    oracle.replace(oracle.find("$S"), 2, "masked_s");
    const auto r = rw.rewrite("PREPARE v" + std::to_string(i) + "(integer) AS " + through, snap,
                              rewriter::PlanContext{"\"$user\", public", false});
    CAPTURE(r.sql);
    REQUIRE(r.verdict == rewriter::Verdict::kRewritten);
    CHECK((r.sql.find("\" WHERE CASE WHEN ") != std::string::npos) == c.filtered);
    rows_of(conn, r.sql);
    rows_of(conn, "PREPARE ov" + std::to_string(i) + "(integer) AS " + oracle);
    for (int v = 0; v < 12; ++v) {
      const std::string value = std::to_string(16 + std::uniform_int_distribution<int>(0, 63)(rng));
      CAPTURE(value);
      const std::string got = rows_of(conn, "EXECUTE v" + std::to_string(i) + "(" + value + ")");
      CHECK(got == rows_of(conn, "EXECUTE ov" + std::to_string(i) + "(" + value + ")"));
      nonempty += got != "0|\n" && !got.empty();
    }
  }
  CHECK(nonempty > 30);
}

// A user-defined operator of a comparison's name keeps the filter away only
// where the user's unqualified operator could be it: one of the exact types
// the comparison has (PostgreSQL takes an exact match first), not one on
// types of its own, as extensions such as citext and PostGIS define.
TEST_CASE("restriction oracle: user-defined operators of other types leave the filter") {
  auto& pg = PgSandbox::shared();
  pg.psql(
      "CREATE TABLE public.rated (id integer PRIMARY KEY, age integer, grade text);"
      "INSERT INTO public.rated SELECT i, 20 + i % 7, (ARRAY['a', 'b', 'c'])[1 + i % 3] "
      "FROM generate_series(1, 210) i;"
      "CREATE SCHEMA ops;"
      "CREATE FUNCTION ops.same_box(box, box) RETURNS boolean LANGUAGE sql IMMUTABLE "
      "AS 'SELECT $1 ~= $2';"
      "CREATE OPERATOR ops.= (LEFTARG = box, RIGHTARG = box, FUNCTION = ops.same_box)");
  pqxx::connection build_conn(pg.conninfo());
  pqxx::connection conn(pg.conninfo());
  const auto rated = protect(pg, build_conn, "rated", 10, {"age", "grade"}, "masked_r.rated");
  const std::string sql = "SELECT count(*) FROM $T WHERE age = 23 AND grade = 'b'";
  const std::string want = rows_of(conn, on_table(sql, "masked_r.rated"));
  // How many of age's and grade's comparisons the filter holds.
  const auto filtered = [&]() {
    const store::PolicySnapshot snap = snapshot_with(conn, "rated", rated);
    rewriter::Rewriter rw;
    const auto r =
        rw.rewrite(on_table(sql, "rated"), snap, rewriter::PlanContext{"\"$user\", public", false});
    CAPTURE(r.sql);
    REQUIRE(r.verdict == rewriter::Verdict::kRewritten);
    CHECK(rows_of(conn, r.sql) == want);
    return std::string(r.sql.find("\"age\" OPERATOR(pg_catalog.=) 23") != std::string::npos ? "age"
                                                                                            : "") +
           (r.sql.find("\"grade\" OPERATOR(pg_catalog.=) 'b'") != std::string::npos ? " grade"
                                                                                    : "");
  };
  CHECK(filtered() == "age grade");
  // The same name for integers: the user's `=` on integers could be it.
  pg.psql(
      "CREATE FUNCTION ops.same_int(integer, integer) RETURNS boolean LANGUAGE sql IMMUTABLE "
      "AS 'SELECT $1 OPERATOR(pg_catalog.=) $2';"
      "CREATE OPERATOR ops.= (LEFTARG = integer, RIGHTARG = integer, FUNCTION = ops.same_int)");
  CHECK(filtered() == " grade");
  // LIKE alike: a user-defined `~~` of text's types could be the user's
  // LIKE (a schema earlier in search_path than pg_catalog, an adversarial
  // set-up): no filter for it, the rows still the masked copy's.
  const std::string like = "SELECT count(*) FROM $T WHERE grade LIKE 'b%' AND age NOT IN (21)";
  const auto like_filter = [&]() {
    const store::PolicySnapshot snap = snapshot_with(conn, "rated", rated);
    rewriter::Rewriter rw;
    const auto r = rw.rewrite(on_table(like, "rated"), snap,
                              rewriter::PlanContext{"\"$user\", public", false});
    CAPTURE(r.sql);
    REQUIRE(r.verdict == rewriter::Verdict::kRewritten);
    CHECK(rows_of(conn, r.sql) == rows_of(conn, on_table(like, "masked_r.rated")));
    return r.sql.find("OPERATOR(pg_catalog.~~)") != std::string::npos;
  };
  CHECK(like_filter());
  pg.psql(
      "CREATE FUNCTION ops.like_any(text, text) RETURNS boolean LANGUAGE sql IMMUTABLE "
      "AS 'SELECT true';"
      "CREATE OPERATOR ops.~~ (LEFTARG = text, RIGHTARG = text, FUNCTION = ops.like_any)");
  CHECK_FALSE(like_filter());
  // The other cases share the database.
  pg.psql("DROP OPERATOR ops.~~ (text, text); DROP FUNCTION ops.like_any(text, text)");
}

// LIKE and NOT LIKE with constant patterns (BI tools' "starts with",
// "contains"), on text and character varying columns, alone, beside other
// restrictions and through a subquery and a CTE: rows equal to the same
// statement's over the masked copy, for random patterns of '%', '_' and
// pieces of the values. Seeded.
TEST_CASE("restriction oracle: LIKE patterns return the masked copy's rows") {
  auto& pg = PgSandbox::shared();
  pqxx::connection conn(pg.conninfo());
  const store::PolicySnapshot snap = visits_table(pg, conn, "calls", "20012", "masked_l");
  rewriter::Rewriter rw;
  std::mt19937 rng(kSeed);
  auto any = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  const char* const zips[] = {"10001", "10002", "20001", "20012", "30001"};
  const char* const cities[] = {"Akron", "Dayton", "Erie", "Reno", "O'Hare"};
  // A pattern from a value: a piece of it, some characters '_', '%' around.
  auto pattern = [&](const char* value) {
    std::string v = value;
    const size_t from = static_cast<size_t>(any(3)) % v.size();
    v = v.substr(from, 1 + static_cast<size_t>(any(static_cast<int>(v.size() - from))));
    for (char& ch : v)
      if (any(5) == 0) ch = '_';
    std::string out = (from > 0 || any(2) ? "%" : "") + v + (any(2) ? "%" : "");
    std::string quoted;
    for (char ch : out) quoted += ch == '\'' ? std::string("''") : std::string(1, ch);
    return "'" + quoted + "'";
  };
  const std::vector<std::string> shapes = {
      "SELECT count(*) FROM $T WHERE zip LIKE $Z",
      "SELECT sex, count(*) FROM $T WHERE city LIKE $C GROUP BY 1 ORDER BY 1",
      "SELECT age, count(*) FROM $T WHERE zip NOT LIKE $Z AND city LIKE $C GROUP BY 1 ORDER BY 1",
      "SELECT count(*) FROM $T t WHERE t.zip LIKE $Z AND t.age < 50 AND t.city NOT LIKE $C",
      "SELECT count(*) FROM (SELECT * FROM $T) AS virtual_table WHERE zip LIKE $Z",
      "WITH d AS (SELECT city, sex FROM $T) SELECT sex, count(*) FROM d WHERE d.city LIKE $C "
      "GROUP BY 1 ORDER BY 1",
  };
  int executions = 0, nonempty = 0;
  for (int round = 0; round < 20; ++round) {
    for (const auto& shape : shapes) {
      std::string sql = shape;
      for (size_t at = sql.find("$Z"); at != std::string::npos; at = sql.find("$Z"))
        sql.replace(at, 2, pattern(zips[any(5)]));
      for (size_t at = sql.find("$C"); at != std::string::npos; at = sql.find("$C"))
        sql.replace(at, 2, pattern(cities[any(5)]));
      CAPTURE(sql);
      const auto r = rw.rewrite(on_table(sql, "calls"), snap,
                                rewriter::PlanContext{"\"$user\", public", false});
      CAPTURE(r.sql);
      REQUIRE(r.verdict == rewriter::Verdict::kRewritten);
      CHECK(r.sql.find("OPERATOR(pg_catalog.~~)") != std::string::npos);
      const std::string got = rows_of(conn, r.sql);
      CHECK(got == rows_of(conn, on_table(sql, "masked_l.calls")));
      ++executions;
      nonempty += got != "0|\n" && !got.empty();
    }
  }
  MESSAGE(executions << " executions, " << nonempty << " with rows");
  CHECK(nonempty > executions / 3);
}
