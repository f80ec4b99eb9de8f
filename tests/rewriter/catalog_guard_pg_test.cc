// The catalog guard (rewriter/catalog_guard.h) on a real PostgreSQL 15: every
// guarded form returns what the statement returns without it while the
// generation is the one decided with, fails with KN001 once the generation
// moved, and a DDL moves it before it commits (catalog/catalog_watch.h).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <pqxx/pqxx>
#include <regex>
#include <thread>

#include "catalog/catalog_facts.h"
#include "catalog/catalog_watch.h"
#include "rewriter/catalog_guard.h"
#include "tests/rewriter/catalog_guard_cases.h"
#include "tests/support/pg_sandbox.h"

using namespace kanon::rewriter;
using kanon::testing::PgSandbox;

namespace {

using Rows = std::vector<std::vector<std::string>>;

std::string conninfo() {
  return PgSandbox::shared().conninfo("postgres", "postgres");
}

std::string guarded(const std::string& sql, int64_t generation, bool hold = false,
                    const std::string& values_cast = "", bool at_offset = false,
                    bool c_function = false) {
  const ParseOutcome parsed = parse_sql(sql);
  REQUIRE(parsed.ok);
  std::vector<SqlToken> tokens;
  REQUIRE(scan_tokens(sql, tokens));
  std::vector<Edit> edits;
  for (const auto& st : parsed.statements)
    REQUIRE(place_catalog_guard(
                tokens, st, GuardCall{generation, hold, false, values_cast, at_offset, c_function},
                edits) == GuardPlacement::kPlaced);
  return apply_edits(sql, edits);
}

// What the statement shows: its rows, or what a follow-up reads (EXECUTE,
// FETCH, the created table).
Rows run(pqxx::connection& conn, const std::string& sql) {
  pqxx::nontransaction(conn).exec("DEALLOCATE ALL");
  pqxx::work tx(conn);
  pqxx::result r = tx.exec(sql);
  if (sql.rfind("PREPARE", 0) == 0) r = tx.exec("EXECUTE p(1)");
  if (sql.rfind("DECLARE", 0) == 0) r = tx.exec("FETCH ALL FROM c");
  if (sql.find("INTO TEMP v") != std::string::npos) r = tx.exec("SELECT * FROM v ORDER BY 1");
  Rows rows;
  for (const auto& row : r) {
    std::vector<std::string> values;
    for (const auto& f : row) values.emplace_back(f.is_null() ? "NULL" : f.c_str());
    rows.push_back(std::move(values));
  }
  tx.abort();
  pqxx::nontransaction(conn).exec("DEALLOCATE ALL");  // PREPARE outlives the transaction
  return rows;
}

int64_t generation(pqxx::connection& conn) {
  pqxx::nontransaction tx(conn);
  return tx.exec1("SELECT last_value FROM kanon.catalog_generation")[0].as<int64_t>();
}

// With the catalog guard in C too (maskfn/install.sql), so that both forms
// are there to be called.
void set_up(pqxx::connection& conn) {
  std::string error;
  REQUIRE_MESSAGE(kanon::catalog::install_catalog_event_trigger(conn, &error), error);
  PgSandbox::shared().install_mask_function();
  pqxx::nontransaction tx(conn);
  tx.exec(
      "DROP TABLE IF EXISTS t, u, v CASCADE; CREATE TABLE t (a int); CREATE TABLE u (b int); "
      "CREATE TABLE v (d date, n numeric(5, 2)); "
      "INSERT INTO t VALUES (1), (2), (3); INSERT INTO u VALUES (1), (2), (2)");
}

}  // namespace

TEST_CASE("guarded statements return what they return without the guard, or KN001") {
  pqxx::connection conn(conninfo());
  set_up(conn);
  const int64_t g = generation(conn);
  for (const bool c_function : {false, true}) {
    CAPTURE(c_function);
    for (const auto& c : kanon::testing::guard_cases()) {
      if (c.guarded == nullptr || c.guarded == kanon::testing::kNoPlace) continue;
      const std::string sql = c.sql;
      CAPTURE(sql);
      if (sql.rfind("COPY", 0) == 0) continue;  // libpqxx's exec does not take COPY
      const Rows direct = run(conn, sql);
      if (sql.rfind("EXPLAIN", 0) != 0)
        CHECK(run(conn, guarded(sql, g, false, c.values_cast, c.at_offset, c_function)) == direct);
      if (sql.find("WITH NO DATA") != std::string::npos) continue;  // runs nothing
      // A plain EXPLAIN runs nothing either: its guard only shapes the plan.
      if (sql.rfind("EXPLAIN", 0) == 0 && sql.find("ANALYZE") == std::string::npos) continue;
      for (const bool hold : {false, true}) {
        try {
          run(conn, guarded(sql, g + 1, hold, c.values_cast, c.at_offset, c_function));
          FAIL("a stale guard passed");
        } catch (const pqxx::sql_error& e) {
          CHECK(e.sqlstate() == std::string(kanon::catalog::kGuardSqlState));
        }
      }
    }
  }
}

TEST_CASE("a gathering statement's guard is the Limit's, not a gating Result over every row") {
  pqxx::connection conn(conninfo());
  set_up(conn);
  const int64_t g = generation(conn);
  const auto plan = [&](const std::string& sql) {
    std::string text;
    for (const auto& row : run(conn, "EXPLAIN (COSTS OFF) " + sql)) text += row[0] + "\n";
    return text;
  };
  const std::string sql = "SELECT a, count(*) FROM t GROUP BY a";
  const std::string where = plan(guarded(sql, g));
  const std::string offset = plan(guarded(sql, g, false, "", true));
  CAPTURE(where);
  CAPTURE(offset);
  // WHERE: a one-time filter in a Result right above the scan.
  CHECK(where.find("One-Time Filter") != std::string::npos);
  CHECK(where.rfind("Limit", 0) != 0);
  // OFFSET: a Limit at the top, nothing between the aggregate and the scan.
  CHECK(offset.rfind("Limit", 0) == 0);
  CHECK(offset.find("One-Time Filter") == std::string::npos);
  CHECK(offset.find("Result") == std::string::npos);
  // The stale form fails at planning already (PostgreSQL estimates the
  // OFFSET), and so at EXPLAIN without ANALYZE too.
  try {
    plan(guarded(sql, g + 1, false, "", true));
    FAIL("a stale guard passed");
  } catch (const pqxx::sql_error& e) {
    CHECK(e.sqlstate() == std::string(kanon::catalog::kGuardSqlState));
  }
}

TEST_CASE("a DDL advances the generation before it commits; temporary objects do not") {
  pqxx::connection conn(conninfo());
  set_up(conn);
  pqxx::connection other(conninfo());
  const int64_t before = generation(conn);
  {
    pqxx::work ddl(conn);
    ddl.exec("CREATE OR REPLACE VIEW guard_v AS SELECT a FROM t");
    // Seen by another session while the DDL is still open.
    CHECK(generation(other) > before);
    ddl.commit();
  }
  const int64_t after_view = generation(other);
  {
    pqxx::nontransaction tx(conn);
    tx.exec("CREATE TEMP TABLE guard_tmp (x int)");
  }
  CHECK(generation(other) == after_view);
  // A guard decided before the DDL fails, one decided after passes.
  CHECK_THROWS_AS(run(other, guarded("SELECT a FROM guard_v", before)), pqxx::sql_error);
  CHECK(run(other, guarded("SELECT a FROM guard_v ORDER BY a", after_view)).size() == 3);
}

TEST_CASE("facts read while a DDL transaction is open wait for it, and carry its generation") {
  pqxx::connection conn(conninfo());
  set_up(conn);
  pqxx::connection reader(conninfo());
  pqxx::work ddl(conn);
  ddl.exec("CREATE OR REPLACE VIEW guard_w AS SELECT a FROM t");
  // The DDL holds kanon's lock shared until it ends: a reader cannot take it.
  {
    pqxx::nontransaction probe(reader);
    CHECK_FALSE(probe
                    .exec1(fmt::format("SELECT pg_catalog.pg_try_advisory_lock({}, {})",
                                       kanon::catalog::kGenerationLockKey1,
                                       kanon::catalog::kGenerationLockKey2))[0]
                    .as<bool>());
  }
  ddl.commit();
  const auto facts = kanon::catalog::read_catalog_facts(reader);
  CHECK(facts.generation == generation(reader));
  bool seen = false;
  for (const auto& r : facts.relations) seen = seen || r.name == "guard_w";
  CHECK(seen);
}

namespace {

// Whether a session waits for the lock kanon.catalog_stays takes shared.
bool waits_for_stays_lock(pqxx::connection& probe) {
  pqxx::nontransaction tx(probe);
  return tx.exec1(fmt::format("SELECT pg_catalog.count(*) FROM pg_catalog.pg_locks "
                              "WHERE locktype = 'advisory' AND classid = {} AND objid = {} "
                              "AND objsubid = 2 AND NOT granted",
                              kanon::catalog::kGenerationLockKey1,
                              kanon::catalog::kStaysLockKey2))[0]
             .as<int>() > 0;
}

}  // namespace

TEST_CASE("a DDL waits for the statements that hold the catalog still, and only for them") {
  pqxx::connection conn(conninfo());
  set_up(conn);
  pqxx::connection admin(conninfo()), probe(conninfo());
  bool c_function = false;
  SUBCASE("kanon.catalog_stays, PL/pgSQL") {
    c_function = false;
  }
  SUBCASE("kanon_mask.catalog_stays, C") {
    c_function = true;
  }
  const auto guarded = [&](const std::string& sql, int64_t generation, bool hold = false) {
    return ::guarded(sql, generation, hold, "", false, c_function);
  };
  int64_t g = generation(conn);
  {
    // The plain guard holds nothing: a DDL commits while its transaction is open.
    pqxx::work tx(conn);
    tx.exec(guarded("SELECT a FROM t", g));
    pqxx::nontransaction(admin).exec("CREATE OR REPLACE VIEW guard_h AS SELECT 1 AS x");
    CHECK(generation(probe) > g);
    tx.commit();
  }
  g = generation(conn);
  pqxx::work tx(conn);
  CHECK(tx.exec(guarded("SELECT a FROM t ORDER BY a", g, true)).size() == 3);
  std::atomic<bool> done{false};
  std::string error;
  std::thread ddl([&] {
    try {
      pqxx::nontransaction(admin).exec("CREATE OR REPLACE VIEW guard_h AS SELECT 2 AS x");
    } catch (const std::exception& e) {
      error = e.what();
    }
    done = true;
  });
  // The DDL waits for the lock before it advances the generation. A
  // condition, polled: how long the thread takes to get there does not matter.
  bool waiting = false;
  for (int i = 0; i < 6000 && !waiting && !done; ++i) {
    waiting = waits_for_stays_lock(probe);
    if (!waiting) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(waiting);
  CHECK_FALSE(done);
  CHECK(generation(probe) == g);
  tx.commit();
  ddl.join();
  CHECK_MESSAGE(error.empty(), error);
  CHECK(generation(probe) > g);
  // Decided before the DDL: fails now.
  CHECK_THROWS_AS(run(conn, guarded("SELECT a FROM t", g, true)), pqxx::sql_error);
}

TEST_CASE("kanon's own DDL in its schemas moves the generation without waiting for them") {
  pqxx::connection conn(conninfo());
  set_up(conn);
  pqxx::connection admin(conninfo()), probe(conninfo());
  pqxx::nontransaction(admin).exec(
      "CREATE SCHEMA IF NOT EXISTS kanon_masked; DROP TABLE IF EXISTS kanon_masked.guard_own");
  const int64_t g = generation(conn);
  pqxx::work tx(conn);
  tx.exec(guarded("SELECT a FROM t", g, true));
  // Would wait for the transaction above if it took the lock (a bound, not
  // a measurement: it must not wait at all).
  pqxx::nontransaction own(admin);
  own.exec("SET statement_timeout = '60s'");
  own.exec("CREATE TABLE kanon_masked.guard_own (a int)");
  own.exec("DROP TABLE kanon_masked.guard_own");
  own.exec("RESET statement_timeout");
  CHECK(generation(probe) > g);
  CHECK_FALSE(waits_for_stays_lock(probe));
  tx.commit();
}

TEST_CASE("the C guard reads kanon's generation whatever the session set or owns") {
  pqxx::connection conn(conninfo());
  set_up(conn);
  PgSandbox::shared().psql(
      "DROP ROLE IF EXISTS guard_login; CREATE ROLE guard_login LOGIN; "
      "GRANT SELECT ON t TO guard_login; GRANT CREATE ON SCHEMA public TO guard_login");
  pqxx::connection login(PgSandbox::shared().conninfo("guard_login", "postgres"));
  pqxx::nontransaction own(login);
  // Objects of its own under the guard's names, first on its search_path
  // (these DDL move the generation: it is read after them).
  own.exec(
      "DROP SEQUENCE IF EXISTS public.catalog_generation; "
      "CREATE SEQUENCE public.catalog_generation; "
      "CREATE TEMP SEQUENCE catalog_generation; "
      "CREATE OR REPLACE FUNCTION public.catalog_is(int8) RETURNS bool LANGUAGE sql "
      "AS 'SELECT true'; "
      "SET search_path = pg_temp, public");
  const int64_t g = generation(conn);
  // Both of its sequences stand at a generation the guard must refuse.
  own.exec(
      fmt::format("SELECT pg_catalog.setval('pg_temp.catalog_generation', {0}), "
                  "pg_catalog.setval('public.catalog_generation', {0})",
                  g + 1));
  const auto sqlstate_of = [&](const std::string& sql) {
    try {
      own.exec(sql);
      return std::string("passed");
    } catch (const pqxx::sql_error& e) {
      return e.sqlstate();
    }
  };
  CHECK(sqlstate_of(guarded("SELECT count(*) FROM t", g, false, "", true, true)) == "passed");
  CHECK(sqlstate_of(guarded("SELECT a FROM t", g, true, "", false, true)) == "passed");
  CHECK(sqlstate_of(guarded("SELECT count(*) FROM t", g + 1, false, "", true, true)) ==
        kanon::catalog::kGuardSqlState);
  CHECK(sqlstate_of("SELECT kanon_mask.catalog_is(NULL)") == kanon::catalog::kGuardSqlState);
  // In parallel workers too: each evaluates the guard under the leader's lock.
  own.exec(
      "SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; "
      "SET min_parallel_table_scan_size = 0; SET force_parallel_mode = on");
  const std::string where = guarded("SELECT count(*) FROM t", g, false, "", false, true);
  std::string plan;
  for (const auto& row : own.exec("EXPLAIN (COSTS OFF) " + where))
    plan += std::string(row[0].c_str()) + "\n";
  CAPTURE(plan);
  CHECK(plan.find("Gather") != std::string::npos);
  CHECK(sqlstate_of(where) == "passed");
  CHECK(sqlstate_of(guarded("SELECT count(*) FROM t", g + 1, false, "", false, true)) ==
        kanon::catalog::kGuardSqlState);
  own.exec("DROP FUNCTION public.catalog_is(int8); DROP SEQUENCE public.catalog_generation");
}

TEST_CASE("the catalog reader finds the C guard only as install.sql makes it, in a safe schema") {
  pqxx::connection conn(conninfo());
  set_up(conn);
  auto& pg = PgSandbox::shared();
  pg.psql("DROP ROLE IF EXISTS guard_rival; CREATE ROLE guard_rival");
  const auto c_guard = [&] { return kanon::catalog::read_catalog_facts(conn).c_guard; };
  REQUIRE(c_guard());
  for (const auto& f : kanon::catalog::read_catalog_facts(conn).functions)
    if (f.schema == "kanon_mask" && f.name != "released") CHECK(f.kanon_guard);
  // Each change below, and back.
  const std::vector<std::pair<std::string, std::string>> changes = {
      {"GRANT CREATE ON SCHEMA kanon_mask TO guard_rival",
       "REVOKE CREATE ON SCHEMA kanon_mask FROM guard_rival"},
      {"GRANT CREATE ON SCHEMA kanon_mask TO PUBLIC",
       "REVOKE CREATE ON SCHEMA kanon_mask FROM PUBLIC"},
      {"ALTER SCHEMA kanon_mask OWNER TO guard_rival", "ALTER SCHEMA kanon_mask OWNER TO postgres"},
      {"ALTER FUNCTION kanon_mask.catalog_is(int8) OWNER TO guard_rival",
       "ALTER FUNCTION kanon_mask.catalog_is(int8) OWNER TO postgres"},
      {"ALTER FUNCTION kanon_mask.catalog_stays(int8) VOLATILE",
       "ALTER FUNCTION kanon_mask.catalog_stays(int8) STABLE"},
      {"ALTER FUNCTION kanon_mask.catalog_is(int8) SECURITY DEFINER",
       "ALTER FUNCTION kanon_mask.catalog_is(int8) SECURITY INVOKER"},
      {"REVOKE EXECUTE ON FUNCTION kanon_mask.catalog_stays(int8) FROM PUBLIC",
       "GRANT EXECUTE ON FUNCTION kanon_mask.catalog_stays(int8) TO PUBLIC"},
      {"ALTER FUNCTION kanon_mask.catalog_is(int8) SET search_path = public",
       "ALTER FUNCTION kanon_mask.catalog_is(int8) RESET ALL"},
      {"CREATE FUNCTION kanon_mask.rival() RETURNS int LANGUAGE sql AS 'SELECT 1'; "
       "ALTER FUNCTION kanon_mask.rival() OWNER TO guard_rival",
       "DROP FUNCTION kanon_mask.rival()"},
      {"DROP FUNCTION kanon_mask.catalog_stays(int8)", ""},
      {"DROP FUNCTION kanon_mask.copy_current(regclass, text)", ""},
      {"DROP FUNCTION kanon_mask.snapshot_sees(xid8, text)", ""},
      {"ALTER FUNCTION kanon_mask.snapshot_sees(xid8, text) SECURITY DEFINER",
       "ALTER FUNCTION kanon_mask.snapshot_sees(xid8, text) SECURITY INVOKER"},
      {"ALTER FUNCTION kanon_mask.copy_current(regclass, text) PARALLEL UNSAFE",
       "ALTER FUNCTION kanon_mask.copy_current(regclass, text) PARALLEL SAFE"},
  };
  for (const auto& [change, back] : changes) {
    CAPTURE(change);
    pg.psql(change);
    CHECK_FALSE(c_guard());
    if (back.empty()) {
      pg.install_mask_function();
    } else {
      pg.psql(back);
    }
    CHECK(c_guard());
  }
  // A PL/pgSQL function under the C guard's name is no C guard.
  pg.psql(
      "DROP FUNCTION kanon_mask.catalog_is(int8); "
      "CREATE FUNCTION kanon_mask.catalog_is(int8) RETURNS bool LANGUAGE plpgsql STABLE "
      "PARALLEL SAFE AS $$BEGIN RETURN true; END$$");
  CHECK_FALSE(c_guard());
  for (const auto& f : kanon::catalog::read_catalog_facts(conn).functions)
    if (f.schema == "kanon_mask" && f.name == "catalog_is") CHECK_FALSE(f.kanon_guard);
  pg.install_mask_function();
  CHECK(c_guard());
}

// A snapshot guard's refusal: the caller's message, then the snapshot as
// pg_current_snapshot() prints it (xmin:xmax:xip,...).
const std::regex kRefusal("^ERROR:  kanon: old; [0-9]+:[0-9]+:[0-9,]*\\s*$");

TEST_CASE("kanon_mask.copy_current: true where the snapshot sees the table, else 22P02") {
  pqxx::connection conn(conninfo());
  set_up(conn);
  auto& pg = PgSandbox::shared();
  pg.psql("DROP TABLE IF EXISTS public.copy_a, public.copy_b; CREATE TABLE public.copy_a (x int)");
  const auto check = [](pqxx::transaction_base& tx, const std::string& table) {
    return tx
        .exec("SELECT kanon_mask.copy_current('" + table + "'::regclass, 'kanon: old; ')")[0][0]
        .as<bool>();
  };
  pqxx::connection old(conninfo());
  pqxx::transaction<pqxx::isolation_level::repeatable_read> tx(old);
  CHECK(check(tx, "public.copy_a"));  // the transaction's snapshot is taken here
  // A table created after that snapshot: its name resolves (to the newest
  // catalog), its pg_class row is not visible to the snapshot.
  pg.psql("CREATE TABLE public.copy_b (x int)");
  std::string sqlstate;
  std::string message;
  try {
    check(tx, "public.copy_b");
  } catch (const pqxx::sql_error& e) {
    sqlstate = e.sqlstate();
    message = e.what();
  }
  CHECK(sqlstate == "22P02");
  // The message, then the snapshot, as the SQL form's text.
  CHECK_MESSAGE(std::regex_search(message, kRefusal), message);
  tx.abort();
  // A new snapshot sees it; NULL is an error, never a pass.
  pqxx::work fresh(old);
  CHECK(check(fresh, "public.copy_b"));
  CHECK_THROWS_AS(fresh.exec("SELECT kanon_mask.copy_current(NULL, 'm')"), pqxx::sql_error);
  fresh.abort();
  pg.psql("DROP TABLE public.copy_a, public.copy_b");
}

TEST_CASE("kanon_mask.snapshot_sees: true where the snapshot saw the transaction end, else 22P02") {
  pqxx::connection conn(conninfo());
  set_up(conn);
  const auto sees = [](pqxx::transaction_base& tx, const std::string& xid) {
    return tx.exec("SELECT kanon_mask.snapshot_sees('" + xid + "'::xid8, 'kanon: old; ')")[0][0]
        .as<bool>();
  };
  pqxx::connection old(conninfo());
  pqxx::transaction<pqxx::isolation_level::repeatable_read> tx(old);
  tx.exec("SELECT 1");  // the snapshot is taken here
  // A transaction that ends after that snapshot.
  std::string xid;
  {
    pqxx::connection other(conninfo());
    pqxx::work w(other);
    xid = w.exec("SELECT pg_current_xact_id()::text")[0][0].as<std::string>();
    w.commit();
  }
  std::string sqlstate;
  std::string message;
  try {
    sees(tx, xid);
  } catch (const pqxx::sql_error& e) {
    sqlstate = e.sqlstate();
    message = e.what();
  }
  CHECK(sqlstate == "22P02");
  CHECK_MESSAGE(std::regex_search(message, kRefusal), message);
  tx.abort();
  pqxx::work fresh(old);
  CHECK(sees(fresh, xid));
  CHECK_THROWS_AS(fresh.exec("SELECT kanon_mask.snapshot_sees(NULL, 'm')"), pqxx::sql_error);
  fresh.abort();
}
