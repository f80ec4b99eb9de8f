// What PostgreSQL 15 does with another session's DDL inside a transaction
// block, which the proxy's Session::read_before rests on (docs/security.md,
// "Function bodies a transaction block cached"): a SQL
// function's body, cached before the block, is still the one run after
// another session replaced it, until the block reads the invalidation
// messages; a lock on a database object taken anew reads them
// (LockDatabaseObject), and pg_get_object_address takes one. The second half
// is what the proxy's rewriter::kReadInvalidations relies on: if it stops
// holding, PostgreSQL would run cached code in such blocks again.
#include <doctest/doctest.h>

#include <pqxx/pqxx>
#include <string>

#include "tests/support/pg_sandbox.h"

using kanon::testing::PgSandbox;

namespace {

std::string body_run(pqxx::connection& c) {
  pqxx::nontransaction tx(c);
  return tx.exec1("SELECT * FROM public.invalidation_probe()")[0].as<std::string>();
}

void replace_body(const std::string& word) {
  PgSandbox::shared().psql(
      "CREATE OR REPLACE FUNCTION public.invalidation_probe() RETURNS SETOF text "
      "LANGUAGE sql STABLE AS 'SELECT ''" +
      word + "'''");
}

}  // namespace

TEST_CASE("a transaction block runs a cached SQL body until it reads the invalidations") {
  auto& pg = PgSandbox::shared();
  replace_body("first");
  pqxx::connection session(pg.conninfo("postgres", "postgres"));
  CHECK(body_run(session) == "first");  // cached
  pqxx::nontransaction(session).exec("BEGIN");
  pqxx::nontransaction(session).exec("SELECT 1");

  replace_body("second");
  CHECK(body_run(session) == "first");  // the cached body, in the block
  pqxx::nontransaction(session).exec(
      "SELECT 1 WHERE pg_catalog.pg_get_object_address('schema', '{pg_catalog}', '{}') IS NULL");
  CHECK(body_run(session) == "second");  // read after the object lock

  replace_body("third");
  CHECK(body_run(session) == "second");
  pqxx::nontransaction(session).exec("COMMIT");
  CHECK(body_run(session) == "third");  // a new transaction reads them
  pg.psql("DROP FUNCTION public.invalidation_probe()");
}
