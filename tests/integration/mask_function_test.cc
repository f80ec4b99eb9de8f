// evaluator: function through kanon (policy/predicate_code.h,
// maskfn/kanon_mask.c): two copies of ADULT, one protected with the SQL
// masks, one with kanon_mask.released; a restricted login must read exactly
// the same values from both, with both protocols, and PostgreSQL may plan
// workers for the function's masks only (SHOW POLICIES says what each
// calls). A third copy, in mode: view with evaluator: auto, reads
// the function's masks through its masked view; every masked read is
// fenced, the fence listing only the columns named unless a whole row or a
// positional alias could read the others, and answers stay the SQL masks'. Then the catalog changes
// under kanon: a role granted CREATE on schema kanon_mask adds a function of the same name (which
// PostgreSQL could prefer to kanon's): every statement on the table is denied (mask-function),
// statements prepared before too, until it is gone. Before that, the analyst plants functions of
// the masks' names in a schema of its own, puts it first on its search_path three ways, and reads
// through views of its own: nothing changes what is released.
#include <doctest/doctest.h>

#include <fstream>
#include <pqxx/pqxx>
#include <thread>

#include "tests/support/kanon_proxy.h"
#include "tests/support/libpq_connection.h"
#include "tests/support/pg_sandbox.h"
#include "tests/support/process.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/statement_outcome.h"
#include "tests/support/wait.h"
#include "tests/support/wire_session.h"

using namespace kanon::testing;
namespace wire = kanon::wire;

namespace {

// Executes a statement prepared on `c`: its rows, or its error (libpqxx 6
// gives no SQLSTATE for errors of prepared statements: the message only).
Outcome run_prepared(pqxx::connection& c, const std::string& name) {
  Outcome o;
  try {
    pqxx::nontransaction tx(c);
    o.rows = render(tx.exec_prepared(name));
  } catch (const pqxx::sql_error& e) {
    o.sqlstate = e.sqlstate();
    o.message = e.what();
  }
  return o;
}

}  // namespace

TEST_CASE("evaluator: function releases what the SQL masks release; a rival name denies") {
  auto& pg = PgSandbox::shared();
  pg.install_mask_function();
  for (const char* t : {"adult_fn", "adult_sql", "adult_vfn"})
    pg.psql(std::string("DROP TABLE IF EXISTS public.") + t + "; CREATE TABLE public." + t +
            " AS SELECT * FROM public.adult; ALTER TABLE public." + t +
            " ADD PRIMARY KEY (id); GRANT SELECT ON public." + t + " TO analyst");
  const std::string policy = scratch_path("kanon-maskfn-policy.yaml");
  {
    std::ofstream out(policy);
    out << "tables:\n";
    for (const char* t : {"adult_fn", "adult_sql", "adult_vfn"})
      out << "  - table: public." << t
          << "\n    k: 25\n    quasi_identifiers: [sex, age, race, education, workclass]\n"
          << "    exempt: [postgres]\n    evaluator: "
          << (t[6] == 's'   ? "sql"
              : t[6] == 'v' ? "auto"
                            : "function")
          << (t[6] == 'v' ? "\n    mode: view" : "") << "\n";
  }
  // Workers for the function's masks below whatever this host's cores
  // (serial_masks_at's default): the analyst is the only one running.
  KanonProxy proxy(pg.port(),
                   "serial_masks_at: 4\nadmin: {database: kanon, users: [postgres]}\n"
                   "policies: [" +
                       policy + "]\n");
  pqxx::connection analyst(proxy.conninfo("analyst"));
  // adult_vfn says evaluator: auto, and gets the function, installed.
  {
    const auto shown = run_command(
        {"psql", "-X", "-At", "-d", proxy.conninfo("postgres", "kanon"), "-c", "SHOW POLICIES"});
    for (const char* row : {"|public.adult_fn|", "|public.adult_sql|", "|public.adult_vfn|"}) {
      const size_t at = shown.out.find(row);
      REQUIRE_MESSAGE(at != std::string::npos, shown.out << shown.err);
      const std::string line = shown.out.substr(at, shown.out.find('\n', at) - at);
      const std::string evaluator = line.substr(line.rfind('|') + 1);
      CHECK_MESSAGE(evaluator == (row[14] == 's'   ? "sql"
                                  : row[14] == 'v' ? "function (auto)"
                                                   : "function"),
                    line);
    }
  }
  const std::string cols = "id, sex, age, race, education, workclass, occupation";
  for (bool extended : {false, true}) {
    CAPTURE(extended);
    const auto fn = run(analyst, "SELECT " + cols + " FROM adult_fn ORDER BY id", extended);
    const auto sql = run(analyst, "SELECT " + cols + " FROM adult_sql ORDER BY id", extended);
    REQUIRE_MESSAGE(fn.sqlstate.empty(), fn.message << "\n" << proxy.log());
    REQUIRE_MESSAGE(sql.sqlstate.empty(), sql.message);
    CHECK(fn.rows == sql.rows);
    CHECK(fn.rows.find("<null>") != std::string::npos);  // something is masked
    const auto groups =
        run(analyst, "SELECT education, count(*) FROM adult_fn GROUP BY 1 ORDER BY 1", extended);
    CHECK(groups.rows ==
          run(analyst, "SELECT education, count(*) FROM adult_sql GROUP BY 1 ORDER BY 1", extended)
              .rows);
  }
  // What the analyst's session may set (its own temporary schema first on
  // search_path, another DateStyle and IntervalStyle, a client encoding)
  // changes nothing the function releases, the age mask's table included:
  // the same rows as the SQL masks, as before.
  for (const char* set : {"SET search_path = pg_temp, public", "SET DateStyle = 'SQL, DMY'",
                          "SET IntervalStyle = 'sql_standard'", "SET client_encoding = 'LATIN1'"}) {
    const auto o = run(analyst, set, false);
    REQUIRE_MESSAGE(o.sqlstate.empty(), set << ": " << o.message);
  }
  {
    const auto fn = run(analyst, "SELECT " + cols + " FROM adult_fn ORDER BY id", true);
    const auto sql = run(analyst, "SELECT " + cols + " FROM adult_sql ORDER BY id", true);
    REQUIRE_MESSAGE(fn.sqlstate.empty(), fn.message);
    CHECK(fn.rows == sql.rows);
    const auto ages =
        run(analyst, "SELECT age, count(*) FROM adult_fn GROUP BY 1 ORDER BY 1", false);
    CHECK(ages.rows ==
          run(analyst, "SELECT age, count(*) FROM adult_sql GROUP BY 1 ORDER BY 1", false).rows);
    CHECK(ages.rows.find("<null>") != std::string::npos);  // some ages are masked
  }
  run(analyst, "RESET ALL", false);

  // Nothing for the interpreter in the function's masks: no serial marker,
  // so PostgreSQL may plan workers (made free here); the SQL masks stay
  // serial.
  const auto plan = [&](const std::string& table) {
    pqxx::nontransaction tx(analyst);
    tx.exec(
        "SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; "
        "SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 2");
    std::string out;
    for (const auto& r : tx.exec("EXPLAIN (COSTS OFF) "
                                 "SELECT education, count(*) FROM " +
                                 table + " GROUP BY 1"))
      out += std::string(r[0].c_str()) + "\n";
    tx.exec("RESET ALL");
    return out;
  };
  const std::string parallel = plan("adult_fn");
  CHECK_MESSAGE(parallel.find("Gather") != std::string::npos, parallel);
  const std::string serial = plan("adult_sql");
  CHECK_MESSAGE(serial.find("Gather") == std::string::npos, serial);

  // Every masked read goes through a subquery PostgreSQL keeps apart (its
  // columns estimated at 200 values, not from the raw columns'
  // statistics), whether the statement names another column (its key) or
  // not (03_columns.sqltest shows the texts). The answers are the same, and
  // through kanon EXPLAIN shows no estimate of either.
  const auto plan_text = [&](const std::string& sql) {
    pqxx::nontransaction tx(analyst);
    std::string out;
    for (const auto& r : tx.exec("EXPLAIN " + sql)) out += std::string(r[0].c_str()) + "\n";
    return out;
  };
  // The same through the masked view of mode: view.
  for (const char* t : {"adult_fn", "adult_vfn"}) {
    CAPTURE(t);
    const std::string grouped =
        std::string("SELECT education, count(*) FROM ") + t + " GROUP BY 1 ORDER BY 1";
    const std::string keyed =
        std::string("SELECT education, count(*) FROM ") + t + " WHERE id > 0 GROUP BY 1 ORDER BY 1";
    CHECK(run(analyst, grouped, false).rows == run(analyst, keyed, false).rows);
    CHECK_MESSAGE(plan_text(grouped).find("rows=") == std::string::npos, plan_text(grouped));
    CHECK_MESSAGE(plan_text(keyed).find("rows=") == std::string::npos, plan_text(keyed));
  }
  // The fenced subquery lists only the columns the statement names (the
  // scan computes nothing else: no column of the key, not even as NULL),
  // and all of them when something may read the columns unnamed: a whole
  // row (of the table or of a join holding it, or in functional notation)
  // or an alias renaming columns by position. A column listed wrongly
  // would give an error or other values, not the SQL masks' rows.
  const auto verbose = [&](const std::string& sql) {
    pqxx::nontransaction tx(analyst);
    std::string out;
    for (const auto& r : tx.exec("EXPLAIN (VERBOSE, COSTS OFF) " + sql))
      out += std::string(r[0].c_str()) + "\n";
    return out;
  };
  // A restriction on a quasi-identifier is decided on the raw value first
  // (docs/rewriter.md, "Restrictions"): inline with either evaluator, not
  // through the masked view. The answers are those of the same conditions
  // wrapped so that they are no restriction, and the same in every table.
  for (const std::string& sql :
       {std::string("SELECT count(*) FROM $ WHERE age = 39"),
        std::string("SELECT sex, count(*) FROM $ WHERE age BETWEEN 30 AND '40' AND race IN "
                    "('White', 'Black') GROUP BY 1 ORDER BY 1"),
        std::string("SELECT count(*) FROM $ a JOIN adult_sql b USING (id) WHERE "
                    "a.education = 'Bachelors' AND 'Male' = b.sex"),
        // A dataset's SQL wrapped as BI tools wrap it.
        std::string("SELECT sex, count(*) FROM (SELECT * FROM $) AS virtual_table WHERE age = 39 "
                    "GROUP BY 1 ORDER BY 1"),
        // A derived table as Looker writes it, a CTE named once.
        std::string("WITH adult_dt AS (SELECT age, sex FROM $) SELECT adult_dt.sex, count(*) "
                    "FROM adult_dt WHERE (adult_dt.age) = 39 GROUP BY 1 ORDER BY 1"),
        // A virtual dataset with a derived column.
        std::string("SELECT decade, count(*) FROM (SELECT *, age / 10 AS decade FROM $) AS "
                    "virtual_table WHERE sex = 'Female' GROUP BY 1 ORDER BY 1"),
        // "Starts with" and "does not contain", as BI filters write them.
        std::string("SELECT race, count(*) FROM $ WHERE occupation LIKE 'Prof%' AND education "
                    "NOT LIKE '%Grad%' GROUP BY 1 ORDER BY 1")}) {
    CAPTURE(sql);
    const auto on = [&](const std::string& table, const std::string& text) {
      std::string out = text;
      out.replace(out.find('$'), 1, table);
      return out;
    };
    std::string wrapped = sql;
    const size_t where = wrapped.find("WHERE ") + 6;
    const size_t end = std::min(wrapped.find(" GROUP"), wrapped.size());
    wrapped = wrapped.substr(0, where) + "(" + wrapped.substr(where, end - where) + ") IS TRUE" +
              wrapped.substr(end);
    for (bool extended : {false, true}) {
      const auto want = run(analyst, on("adult_sql", wrapped), extended);
      REQUIRE_MESSAGE(want.sqlstate.empty(), want.message);
      for (const char* t : {"adult_fn", "adult_sql", "adult_vfn"})
        CHECK_MESSAGE(run(analyst, on(t, sql), extended).rows == want.rows, t);
    }
    // The filter's CASE tests the table's raw column first (the masks of
    // these two tables begin with the function's call).
    const auto filtered = [&](const std::string& table, const std::string& text) {
      const std::string plan = verbose(on(table, text));
      return plan.find("CASE WHEN (" + table + ".") != std::string::npos ||
             plan.find("CASE WHEN ((" + table + ".") != std::string::npos;
    };
    CHECK(filtered("adult_fn", sql));
    CHECK_FALSE(filtered("adult_vfn", sql));
    CHECK_FALSE(filtered("adult_fn", wrapped));
  }
  // With parameters, as drivers send restrictions (a Parse declaring their
  // types, or leaving them unspecified): decided first where the Parse types
  // the parameter as the column (integers for an integer column, text or
  // character varying for text), the same rows everywhere.
  Pq driver(proxy.conninfo("analyst"));
  const auto with_parameters = [&](const std::string& sql, const std::vector<Oid>& types,
                                   const std::vector<const char*>& values) {
    return result_rows(PQexecParams(driver.get(), sql.c_str(), static_cast<int>(types.size()),
                                    types.data(), values.data(), nullptr, nullptr, 0));
  };
  struct Parameterized {
    std::string sql, wrapped;
    std::vector<Oid> types;
    std::vector<const char*> values;
    bool filtered;
  };
  for (const auto& c : std::vector<Parameterized>{
           {"SELECT count(*) FROM $ WHERE age = $1", "(age = $1) IS TRUE", {0}, {"39"}, true},
           {"SELECT sex, count(*) FROM $ WHERE age BETWEEN $1 AND $2 AND race IN ($3, 'Black') "
            "GROUP BY 1 ORDER BY 1",
            "(age BETWEEN $1 AND $2 AND race IN ($3, 'Black')) IS TRUE GROUP BY 1 ORDER BY 1",
            {20, 23, 25},
            {"30", "40", "White"},
            true},
           {"SELECT count(*) FROM $ WHERE education = $1",
            "(education = $1) IS TRUE",
            {1043},
            {"Bachelors"},
            true},
           // numeric's operators are not leakproof: the masks alone decide.
           {"SELECT count(*) FROM $ WHERE age = $1", "(age = $1) IS TRUE", {1700}, {"39"}, false},
           // A list as drivers send it: an array.
           {"SELECT sex, count(*) FROM $ WHERE age = ANY ($1) GROUP BY 1 ORDER BY 1",
            "(age = ANY ($1)) IS TRUE GROUP BY 1 ORDER BY 1",
            {1007},
            {"{39,40}"},
            true},
       }) {
    CAPTURE(c.sql);
    const auto on = [&](const std::string& table, const std::string& text) {
      std::string out = text;
      out.replace(out.find('$'), 1, table);
      return out;
    };
    const std::string wrapped =
        "SELECT " + c.sql.substr(7, c.sql.find(" FROM ") - 7) + " FROM $ WHERE " + c.wrapped;
    const std::string want = with_parameters(on("adult_sql", wrapped), c.types, c.values);
    REQUIRE(want.find("error") == std::string::npos);
    REQUIRE(want.size() > 3);
    for (const char* t : {"adult_fn", "adult_sql", "adult_vfn"})
      CHECK_MESSAGE(with_parameters(on(t, c.sql), c.types, c.values) == want, t);
    const auto plan = [&](const std::string& table) {
      return with_parameters("EXPLAIN (VERBOSE, COSTS OFF) " + on(table, c.sql), c.types, c.values);
    };
    CHECK_MESSAGE(
        (plan("adult_fn").find("CASE WHEN ((adult_fn.") != std::string::npos ||
         plan("adult_fn").find("CASE WHEN (adult_fn.") != std::string::npos) == c.filtered,
        plan("adult_fn"));
    CHECK(plan("adult_vfn").find("CASE WHEN (adult_vfn.") == std::string::npos);
  }
  // Prepared in SQL, the parameter declared integer: decided first as well.
  {
    const std::string want =
        with_parameters("SELECT count(*) FROM adult_sql WHERE (age = $1) IS TRUE", {23}, {"39"});
    REQUIRE(want.find("error") == std::string::npos);
    REQUIRE(want.size() > 3);
    for (const std::string t : {"adult_fn", "adult_sql", "adult_vfn"}) {
      CAPTURE(t);
      result_rows(PQexec(
          driver.get(),
          ("PREPARE counted_" + t + "(integer) AS SELECT count(*) FROM " + t + " WHERE age = $1")
              .c_str()));
      CHECK(result_rows(PQexec(driver.get(), ("EXECUTE counted_" + t + "(39)").c_str())) == want);
    }
    const std::string plan = result_rows(
        PQexec(driver.get(), "EXPLAIN (VERBOSE, COSTS OFF) EXECUTE counted_adult_fn(39)"));
    CHECK_MESSAGE((plan.find("CASE WHEN ((adult_fn.") != std::string::npos ||
                   plan.find("CASE WHEN (adult_fn.") != std::string::npos),
                  plan);
  }
  // A CTE named once around a masked read is inlined, as PostgreSQL inlines
  // it without kanon (the fence holds nothing volatile): its WHERE reaches
  // the scan, no CTE is computed apart.
  for (const std::string t : {"adult_fn", "adult_vfn"}) {
    const std::string plan = verbose("WITH d AS (SELECT age, sex FROM " + t +
                                     ") SELECT d.sex, count(*) FROM d WHERE d.age = 39 GROUP BY 1");
    CHECK_MESSAGE(plan.find("CTE") == std::string::npos, plan);
    CHECK_MESSAGE(plan.find("Seq Scan on public." + t) != std::string::npos, plan);
  }
  // A view that passes the table's rows on (a dbt model, a dataset saved as
  // a view): a restriction on its column is decided first on the table's.
  pg.psql(
      "CREATE VIEW public.adult_fn_dataset AS SELECT age AS years, sex, race FROM public.adult_fn "
      "WHERE race <> 'Other'; GRANT SELECT ON public.adult_fn_dataset TO analyst");
  {
    const std::string sql =
        "SELECT sex, count(*) FROM adult_fn_dataset WHERE years = 39 "
        "GROUP BY 1 ORDER BY 1";
    const std::string plan = verbose(sql);
    CHECK_MESSAGE((plan.find("CASE WHEN ((adult_fn.") != std::string::npos ||
                   plan.find("CASE WHEN (adult_fn.") != std::string::npos),
                  plan);
    const auto want = run(analyst,
                          "SELECT sex, count(*) FROM adult_sql WHERE (age = 39) IS TRUE AND race "
                          "<> 'Other' GROUP BY 1 ORDER BY 1",
                          false);
    REQUIRE_MESSAGE(want.sqlstate.empty(), want.message);
    CHECK(want.rows.size() > 1);
    for (bool extended : {false, true}) CHECK(run(analyst, sql, extended).rows == want.rows);
  }
  const std::string narrow = verbose("SELECT education, count(*) FROM adult_fn GROUP BY 1");
  CHECK_MESSAGE(narrow.find("NULL::integer") == std::string::npos, narrow);
  CHECK_MESSAGE(narrow.find("kanon_mask.released") != std::string::npos, narrow);
  const std::string whole = verbose("SELECT t::text FROM adult_fn t WHERE t.race = 'Black'");
  CHECK_MESSAGE(whole.find("adult_fn.id") != std::string::npos, whole);
  for (const std::string& sql :
       {std::string("SELECT education, count(*) FROM $ GROUP BY 1 ORDER BY 1"),
        std::string("SELECT a.sex, count(*) FROM $ a JOIN adult_sql b USING (id) GROUP BY 1 "
                    "ORDER BY 1"),
        std::string("SELECT count(*) FROM $ NATURAL JOIN (SELECT 1 AS id) one"),
        std::string("SELECT x.race, x.n FROM (SELECT race, count(*) AS n FROM $ GROUP BY race) x "
                    "ORDER BY 1"),
        std::string("SELECT count(*) FROM $"),
        std::string("SELECT t::text FROM $ t WHERE t.race = 'Black' ORDER BY 1 LIMIT 20"),
        std::string("SELECT to_json(t)::text FROM $ AS t WHERE race = 'Black' ORDER BY 1 LIMIT 9"),
        std::string("SELECT education(t), count(*) FROM $ t GROUP BY 1 ORDER BY 1"),
        std::string("SELECT x, count(*) FROM $ AS t(a, b, c, x) GROUP BY 1 ORDER BY 1"),
        std::string("SELECT j::text FROM ($ CROSS JOIN (SELECT 1 AS one) o) AS j "
                    "WHERE j.age = 30 ORDER BY 1 LIMIT 20"),
        std::string("SELECT c4, count(*) FROM ($ CROSS JOIN (SELECT 1) o) AS j(c1, c2, c3, c4) "
                    "GROUP BY 1 ORDER BY 1")}) {
    CAPTURE(sql);
    const auto on = [&](const std::string& t) {
      std::string q = sql;
      q.replace(q.find('$'), 1, t);
      return run(analyst, q);
    };
    const auto sql_side = on("adult_sql");
    REQUIRE_MESSAGE(sql_side.sqlstate.empty(), sql_side.message);
    CHECK(!sql_side.rows.empty());
    for (const char* t : {"adult_fn", "adult_vfn"}) {
      CAPTURE(t);
      const auto fn_side = on(t);
      CHECK_MESSAGE(fn_side.sqlstate.empty(), fn_side.message);
      CHECK(fn_side.rows == sql_side.rows);
    }
  }

  // The raw values differ from what the analyst reads (the check can fail).
  pqxx::connection owner(pg.conninfo());
  CHECK(run(analyst, "SELECT " + cols + " FROM adult_fn ORDER BY id").rows !=
        run(owner, "SELECT " + cols + " FROM public.adult_fn ORDER BY id").rows);

  // What the analyst can change around the masks: functions of the same
  // names (released; clock_timestamp, which the fence called until stop 63)
  // in a schema it owns, put first on its
  // search_path by SET, by set_config and by start-up options; and views of
  // its own over the table. kanon writes every name qualified, so the
  // function's masks release exactly what the SQL masks do.
  pg.psql("DROP SCHEMA IF EXISTS trap CASCADE; CREATE SCHEMA trap AUTHORIZATION analyst");
  {
    pqxx::connection own(pg.conninfo("analyst"));
    pqxx::nontransaction(own).exec(
        "CREATE FUNCTION trap.released(bytea, VARIADIC text[]) RETURNS boolean "
        "  LANGUAGE sql IMMUTABLE AS 'SELECT true'; "
        "CREATE FUNCTION trap.released(bytea, text) RETURNS boolean "
        "  LANGUAGE sql IMMUTABLE AS 'SELECT true'; "
        "CREATE FUNCTION trap.clock_timestamp() RETURNS timestamptz "
        "  LANGUAGE sql VOLATILE AS 'SELECT now()'; "
        "CREATE VIEW trap.v_fn AS SELECT id, sex, education, race FROM public.adult_fn; "
        "CREATE VIEW trap.v_sql AS SELECT id, sex, education, race FROM public.adult_sql");
  }
  const std::vector<std::string> shapes = {
      "SELECT id, sex, education FROM $ ORDER BY id",
      "SELECT education, race, count(*) FROM $ GROUP BY 1, 2 ORDER BY 1, 2",
  };
  const auto same_as_sql = [&](pqxx::connection& c, const std::string& how) {
    CAPTURE(how);
    for (const auto& shape : shapes)
      for (const auto& [fn_rel, sql_rel] :
           {std::pair<std::string, std::string>{"adult_fn", "adult_sql"},
            std::pair<std::string, std::string>{"trap.v_fn", "trap.v_sql"}}) {
        CAPTURE(shape);
        CAPTURE(fn_rel);
        std::string a = shape, b = shape;
        a.replace(a.find('$'), 1, fn_rel);
        b.replace(b.find('$'), 1, sql_rel);
        const auto fn_side = run(c, a, true);
        REQUIRE_MESSAGE(fn_side.sqlstate.empty(), fn_side.message);
        CHECK(fn_side.rows == run(c, b, true).rows);
        CHECK(fn_side.rows.find("<null>") != std::string::npos);
      }
  };
  REQUIRE(run(analyst, "SET search_path = trap, pg_catalog, public").sqlstate.empty());
  same_as_sql(analyst, "SET search_path");
  REQUIRE(run(analyst, "SELECT pg_catalog.set_config('search_path', 'trap, public', false)")
              .sqlstate.empty());
  same_as_sql(analyst, "set_config");
  REQUIRE(run(analyst, "RESET search_path").sqlstate.empty());
  {
    pqxx::connection started(proxy.conninfo("analyst") +
                             " options='-csearch_path=trap,pg_catalog,public'");
    same_as_sql(started, "start-up options");
  }
  pg.psql("DROP SCHEMA trap CASCADE");

  // A rival kanon_mask.released, made by a login an administrator let
  // create in the schema. A statement prepared before it must not run
  // after it either: PostgreSQL could analyse it again and pick the rival.
  analyst.prepare("before", "SELECT sex FROM adult_fn ORDER BY id LIMIT 5");
  REQUIRE(run_prepared(analyst, "before").message.empty());
  // The same on the wire: a named statement parsed before, run after.
  WireSession wire_session(proxy.port());
  wire_session.send(wire::Parse{"before", "SELECT sex FROM adult_fn ORDER BY id LIMIT 5", {}},
                    wire::Sync{});
  REQUIRE(message_summary(wire_session.until('Z', 60)) == std::vector<std::string>{"1", "Z:I"});
  pg.psql("GRANT CREATE ON SCHEMA kanon_mask TO analyst");
  pqxx::connection direct(pg.conninfo("analyst"));
  pqxx::nontransaction(direct).exec(
      "CREATE FUNCTION kanon_mask.released(bytea, text) RETURNS boolean "
      "LANGUAGE sql IMMUTABLE AS 'SELECT true'");
  Outcome denied;
  CHECK(until([&] {
    denied = run(analyst, "SELECT sex FROM adult_fn LIMIT 1");
    return !denied.sqlstate.empty();
  }));
  CHECK(denied.sqlstate == "42501");
  CHECK(denied.message.find("mask-function") != std::string::npos);
  wire_session.send(wire::Bind{"", "before", {}, {}, {}}, wire::Describe{wire::kTargetPortal, ""},
                    wire::Execute{"", 0}, wire::Sync{});
  CHECK(message_summary(wire_session.until('Z', 60)) == std::vector<std::string>{"E:42501", "Z:I"});
  const Outcome stale = run_prepared(analyst, "before");
  const bool named = stale.message.find("stale-prepared-statement") != std::string::npos ||
                     stale.message.find("mask-function") != std::string::npos;
  CHECK_MESSAGE(named, stale.message);
  // Tables with SQL masks are not concerned; the session stays usable.
  CHECK(run(analyst, "SELECT count(*) FROM adult_sql").sqlstate.empty());
  pqxx::nontransaction(direct).exec("DROP FUNCTION kanon_mask.released(bytea, text)");
  pg.psql("REVOKE CREATE ON SCHEMA kanon_mask FROM analyst");
  CHECK(until([&] { return run(analyst, "SELECT sex FROM adult_fn LIMIT 1").sqlstate.empty(); }));
}

// The function's masks may use parallel workers while the server has cores
// to spare; while the statements running through kanon reach serial_masks_at
// (2 here), a statement that evaluates them runs serially, as SQL masks
// always do. Another session through kanon is kept running by a lock the
// owner holds (a condition, not a clock); what the analyst reads is the
// same either way.
TEST_CASE("evaluator: function: workers while the server is idle, none while it is busy") {
  auto& pg = PgSandbox::shared();
  pg.install_mask_function();
  pg.psql(
      "DROP TABLE IF EXISTS public.adult_busy; CREATE TABLE public.adult_busy AS "
      "SELECT * FROM public.adult; ALTER TABLE public.adult_busy ADD PRIMARY KEY (id); "
      "GRANT SELECT ON public.adult_busy TO analyst; "
      "DROP TABLE IF EXISTS public.busy_lock; CREATE TABLE public.busy_lock (x int)");
  const std::string policy = scratch_path("kanon-maskfn-busy.yaml");
  {
    std::ofstream out(policy);
    out << "tables:\n  - table: public.adult_busy\n    k: 25\n"
        << "    quasi_identifiers: [sex, age, race, education, workclass]\n"
        << "    exempt: [postgres]\n    evaluator: function\n";
  }
  KanonProxy proxy(pg.port(),
                   "serial_masks_at: 2\nadmin: {database: kanon, users: [postgres]}\n"
                   "policies: [" +
                       policy + "]\n");
  pqxx::connection analyst(proxy.conninfo("analyst"));
  const std::string grouped = "SELECT education, count(*) FROM adult_busy GROUP BY 1 ORDER BY 1";
  // Whether the statement ran with workers (made free, so PostgreSQL plans
  // them wherever it may), and its rows.
  const auto gathers = [&](std::string* rows) {
    pqxx::nontransaction tx(analyst);
    tx.exec(
        "SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; "
        "SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 2");
    std::string out;
    for (const auto& r : tx.exec("EXPLAIN (COSTS OFF) " + grouped))
      out += std::string(r[0].c_str()) + "\n";
    *rows = render(tx.exec(grouped));
    tx.exec("RESET ALL");
    CAPTURE(out);
    return out.find("Gather") != std::string::npos;
  };
  std::string idle_rows;
  CHECK(gathers(&idle_rows));
  CHECK(idle_rows.find("<null>") != std::string::npos);  // something is masked

  pqxx::connection owner(pg.conninfo());
  pqxx::work hold(owner);
  hold.exec("LOCK TABLE public.busy_lock IN ACCESS EXCLUSIVE MODE");
  std::string other_error;
  pqxx::connection other_session(proxy.conninfo("postgres"));
  std::thread other([&] {
    try {
      pqxx::nontransaction(other_session).exec("SELECT count(*) FROM public.busy_lock");
    } catch (const std::exception& e) {
      other_error = e.what();
    }
  });
  const bool waiting = until([&] {
    return pg.psql(
                 "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                 "AND query LIKE '%FROM public.busy_lock%' AND pid <> pg_backend_pid()")
               .find('1') == 0;
  });
  // SHOW STATS counts it (the console's own statement is not counted).
  const auto running = [&] {
    const auto r = run_command(
        {"psql", "-X", "-At", "-d", proxy.conninfo("postgres", "kanon"), "-c", "SHOW STATS"});
    const size_t at = r.out.find("statements_running|");
    return at == std::string::npos ? std::string("?") : r.out.substr(at + 19, 1);
  };
  const std::string running_while_busy = waiting ? running() : "";
  std::string busy_rows;
  const bool busy_gathers = waiting && gathers(&busy_rows);
  // Prepared while busy (PREPARE: a statement kanon cannot prepare again
  // itself): decided again later (below) as it was decided.
  const Outcome prepare = run(analyst, "PREPARE while_busy AS " + grouped);
  hold.commit();
  other.join();
  REQUIRE(waiting);
  CHECK(other_error.empty());
  CHECK_FALSE(busy_gathers);
  CHECK(running_while_busy == "1");
  CHECK(busy_rows == idle_rows);

  // The other statement is answered: idle again (its session stays open),
  // workers again.
  std::string again_rows;
  CHECK(gathers(&again_rows));
  CHECK(running() == "0");
  // A new snapshot of the table: the statement prepared while busy is
  // decided again at its next use, with what it was decided with, so it
  // still runs (not stale-prepared-statement) and releases the same rows.
  const auto refresh = run_command({"psql", "-X", "-At", "-d", proxy.conninfo("postgres", "kanon"),
                                    "-c", "REFRESH public.adult_busy"});
  REQUIRE_MESSAGE(refresh.exit_code == 0, refresh.err);
  REQUIRE_MESSAGE(prepare.sqlstate.empty(), prepare.message);
  const Outcome prepared = run(analyst, "EXECUTE while_busy");
  CHECK_MESSAGE(prepared.sqlstate.empty(), prepared.message);
  CHECK(prepared.message.empty());
  CHECK(prepared.rows == idle_rows);
  CHECK(again_rows == idle_rows);
}
