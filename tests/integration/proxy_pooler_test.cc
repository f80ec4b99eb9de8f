// PgBouncer in front of kanon (docs/operations.md "A connection pooler in
// front of kanon"): in session pooling each new client of a login gets a
// kanon session (and its backend) an earlier client of that login used, so
// a tool that connects for every query stops paying for a backend each
// time. Masking holds for every client, and what a client leaves behind
// (prepared statements, settings, temporary tables) is gone before the
// next one: PgBouncer sends DISCARD ALL, which kanon relays and follows.
#include <doctest/doctest.h>

#include <fstream>
#include <pqxx/pqxx>

#include "tests/support/demo_data.h"
#include "tests/support/kanon_proxy.h"
#include "tests/support/pg_sandbox.h"
#include "tests/support/pgbouncer.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/statement_outcome.h"

using namespace kanon::testing;

TEST_CASE("PgBouncer in front of kanon: pooled sessions stay masked and are handed over clean") {
  scratch_dir();
  auto& pg = PgSandbox::shared();
  pg.psql(
      "DROP TABLE IF EXISTS public.pool_people; CREATE TABLE public.pool_people AS "
      "SELECT * FROM public.people; ALTER TABLE public.pool_people ADD PRIMARY KEY (id); "
      "GRANT SELECT ON public.pool_people TO analyst;");
  const std::string policy = scratch_path("kanon-pooler.yaml");
  std::ofstream(policy) << people_policy_yaml("pool_people", "inline");
  KanonProxy kanon(pg.port(), "policies: [" + policy + "]\n");
  INFO("kanon's log: " << kanon.log());
  PgBouncer bouncer(kanon.port(), {"analyst", "postgres"});
  INFO("pgbouncer's log: " << bouncer.log());

  const std::string query = "SELECT id, occupation, city FROM pool_people ORDER BY id";
  std::string masked;
  {
    pqxx::connection direct(kanon.conninfo("analyst"));
    masked = run(direct, query).rows;
  }
  REQUIRE(masked.find("<null>") != std::string::npos);  // some values withheld

  // The first client leaves a prepared statement, a setting and a
  // temporary table behind.
  std::string first_pid;
  {
    pqxx::connection a(bouncer.conninfo("analyst"));
    first_pid = run(a, "SELECT pg_backend_pid()").rows;
    CHECK(run(a, query).rows == masked);
    REQUIRE(run(a, "PREPARE leftover AS SELECT 1").sqlstate.empty());
    REQUIRE(run(a, "SET search_path = pg_catalog").sqlstate.empty());
    const Outcome temp = run(a, "CREATE TEMP TABLE scratch (x int)");
    REQUIRE_MESSAGE(temp.sqlstate.empty(), temp.message);
  }
  // The next client of the same login gets the same kanon session and
  // backend, with nothing of the first one left, and reads masked.
  {
    pqxx::connection b(bouncer.conninfo("analyst"));
    CHECK(run(b, "SELECT pg_backend_pid()").rows == first_pid);
    CHECK(run(b, "SHOW search_path").rows == "\"$user\", public|\n");
    CHECK(run(b, "SELECT count(*) FROM pg_prepared_statements").rows == "0|\n");
    // kanon followed DISCARD ALL: it holds no "leftover" either, and a name
    // it does not hold is refused, not passed, with PostgreSQL's SQLSTATE
    // for a statement that does not exist (a driver prepares it again).
    const Outcome gone = run(b, "EXECUTE leftover");
    CHECK(gone.sqlstate == "26000");
    CHECK(gone.message.find("(kanon rule unknown-prepared-statement)") != std::string::npos);
    CHECK(run(b, "SELECT to_regclass('pg_temp.scratch') IS NULL").rows == "t|\n");
    CHECK(run(b, query).rows == masked);
  }
  // An exempt login has a pool (and a backend) of its own, and reads raw.
  {
    pqxx::connection e(bouncer.conninfo("postgres"));
    CHECK(run(e, "SELECT pg_backend_pid()").rows != first_pid);
    const std::string rows = run(e, query).rows;
    CHECK(rows != masked);
    CHECK(rows.find("<null>") == std::string::npos);
  }
}
