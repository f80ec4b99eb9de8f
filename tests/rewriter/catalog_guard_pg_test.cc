// The catalog guard (rewriter/catalog_guard.h) on a real PostgreSQL 15: every
// guarded form returns what the statement returns without it while the
// generation is the one decided with, fails with KN001 once the generation
// moved, and a DDL moves it before it commits (catalog/catalog_watch.h).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <pqxx/pqxx>
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
                    const std::string& values_cast = "", bool at_offset = false) {
  const ParseOutcome parsed = parse_sql(sql);
  REQUIRE(parsed.ok);
  std::vector<SqlToken> tokens;
  REQUIRE(scan_tokens(sql, tokens));
  std::vector<Edit> edits;
  for (const auto& st : parsed.statements)
    REQUIRE(place_catalog_guard(tokens, st,
                                GuardCall{generation, hold, false, values_cast, at_offset},
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

void set_up(pqxx::connection& conn) {
  std::string error;
  REQUIRE_MESSAGE(kanon::catalog::install_catalog_event_trigger(conn, &error), error);
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
  for (const auto& c : kanon::testing::guard_cases()) {
    if (c.guarded == nullptr || c.guarded == kanon::testing::kNoPlace) continue;
    const std::string sql = c.sql;
    CAPTURE(sql);
    if (sql.rfind("COPY", 0) == 0) continue;  // libpqxx's exec does not take COPY
    const Rows direct = run(conn, sql);
    if (sql.rfind("EXPLAIN", 0) != 0)
      CHECK(run(conn, guarded(sql, g, false, c.values_cast, c.at_offset)) == direct);
    if (sql.find("WITH NO DATA") != std::string::npos) continue;  // runs nothing
    try {
      run(conn, guarded(sql, g + 1, false, c.values_cast, c.at_offset));
      FAIL("a stale guard passed");
    } catch (const pqxx::sql_error& e) {
      CHECK(e.sqlstate() == std::string(kanon::catalog::kGuardSqlState));
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
