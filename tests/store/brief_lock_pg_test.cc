// A refresh replaces the masked copy (mode: materialized) or the masked view
// (mode: view) that restricted sessions read. A session idle in a
// transaction that read it holds a lock the replacement needs; PostgreSQL
// queues every later reader behind the waiting DDL, so without
// store/brief_lock.h one such session stalled the refresh and every other
// reader of the table (tried on the demo: the second analyst's SELECT hung).
#include <doctest/doctest.h>

#include <chrono>
#include <future>
#include <pqxx/pqxx>
#include <thread>

#include "catalog/catalog_watch.h"
#include "catalog/kanon_schema.h"
#include "policy/policy_file.h"
#include "store/materializer.h"
#include "store/snapshot_build.h"
#include "tests/support/pg_sandbox.h"

using namespace kanon::policy;
using namespace kanon::store;
using kanon::testing::PgSandbox;

namespace {

std::string conninfo() {
  return PgSandbox::shared().conninfo("postgres", "postgres");
}

TablePolicy copy_policy(EnforcementMode mode) {
  auto& pg = PgSandbox::shared();
  pg.psql(
      "DROP TABLE IF EXISTS bl_people; CREATE TABLE bl_people AS SELECT * FROM people; "
      "ALTER TABLE bl_people ADD PRIMARY KEY (id)");
  auto p = load_policy_file(kanon::testing::source_dir() + "/config/policies/people.yaml").at(0);
  p.table = "bl_people";
  p.mode = mode;
  return p;
}

// What restricted sessions are pointed at, replaced as the policy store does.
std::string replace(pqxx::connection& conn, const TableSnapshot& snap, const BriefLockWait& wait) {
  if (snap.policy.mode == EnforcementMode::kMaterialized) return materialize(conn, snap, wait);
  return build_masked_view(conn, snap, wait).name;
}

// Whether backend `pid` waits for a lock on the copy or view now.
bool waits_for_copy(pqxx::connection& watcher, int pid) {
  pqxx::nontransaction tx(watcher);
  return tx.exec_params1(
               "SELECT count(*) FROM pg_locks WHERE pid = $1 AND NOT granted AND locktype = "
               "'relation' AND relation = 'kanon_masked.bl_people'::regclass",
               pid)[0]
             .as<int>() > 0;
}

// Changes whenever the copy or view is replaced (a new table; a view's new
// rule).
std::string identity() {
  return PgSandbox::shared().psql(
      "SELECT c.xmin::text || '/' || coalesce((SELECT string_agg(r.xmin::text, ',') FROM "
      "pg_rewrite r WHERE r.ev_class = c.oid), '') FROM pg_class c WHERE c.oid = "
      "'kanon_masked.bl_people'::regclass");
}

// Advisory locks `pid` holds: the catalog watch's event trigger takes two
// in every DDL transaction, and the catalog reader and some restricted
// statements wait for them.
int advisory_locks(pqxx::connection& watcher, int pid) {
  pqxx::nontransaction tx(watcher);
  return tx
      .exec_params1("SELECT count(*) FROM pg_locks WHERE pid = $1 AND locktype = 'advisory'",
                    pid)[0]
      .as<int>();
}

std::string generation(pqxx::connection& watcher) {
  pqxx::nontransaction tx(watcher);
  return tx.exec1("SELECT last_value FROM kanon.catalog_generation")[0].as<std::string>();
}

std::string count_copy(pqxx::connection& reader) {
  pqxx::work tx(reader);
  // Without the brief waits this read queued behind the refresh for as long
  // as the idle transaction lasted: a bound for that failure, not a timing
  // check (the read itself takes milliseconds).
  tx.exec("SET LOCAL statement_timeout = '60s'");
  return tx.exec1("SELECT count(*) FROM kanon_masked.bl_people")[0].as<std::string>();
}

}  // namespace

TEST_CASE("a refresh waits for the copy's readers briefly and lets the others read meanwhile") {
  {
    pqxx::connection admin(conninfo());
    kanon::catalog::ensure_kanon_schema(admin);
    std::string error;
    REQUIRE_MESSAGE(kanon::catalog::install_catalog_event_trigger(admin, &error), error);
  }
  for (const auto mode : {EnforcementMode::kMaterialized, EnforcementMode::kView}) {
    CAPTURE(to_string(mode));
    const auto policy = copy_policy(mode);
    pqxx::connection builder(conninfo());
    const auto snap = build_table_snapshot(builder, policy);
    REQUIRE(replace(builder, *snap, {}) == "\"kanon_masked\".\"bl_people\"");
    const std::string before = identity();

    // Declared first, so that a failing check ends the idle transaction
    // (below) before waiting for the refresh.
    std::future<std::string> refresh;
    // A session that read the copy and stays in its transaction.
    pqxx::connection idle(conninfo());
    const int idle_pid = idle.backendpid();
    auto held = std::make_unique<pqxx::work>(idle);
    CHECK(held->exec1("SELECT count(*) FROM kanon_masked.bl_people")[0].as<int>() == 11);

    pqxx::connection watcher(conninfo());
    pqxx::connection reader(conninfo());
    const int builder_pid = builder.backendpid();
    const BriefLockWait patient{std::chrono::milliseconds(100), std::chrono::milliseconds(50),
                                std::chrono::minutes(10)};
    refresh = std::async(std::launch::async, [&] { return replace(builder, *snap, patient); });
    // The refresh is waiting for the idle session's lock...
    while (!waits_for_copy(watcher, builder_pid))
      REQUIRE(refresh.wait_for(std::chrono::milliseconds(5)) == std::future_status::timeout);
    // ...holding none of the catalog watch's locks (taken by any DDL before
    // the wait, they would hold up kanon's catalog reads and so every
    // restricted statement decided under the old generation)...
    const std::string at_wait = generation(watcher);
    CHECK(advisory_locks(watcher, builder_pid) == 0);
    // ...and the other readers read meanwhile, the old copy or view.
    for (int i = 0; i < 5; ++i) REQUIRE(count_copy(reader) == "11");
    CHECK(generation(watcher) == at_wait);
    CHECK(refresh.wait_for(std::chrono::milliseconds(0)) == std::future_status::timeout);
    // Once the idle transaction ends, the next try replaces it.
    held->commit();
    held.reset();
    CHECK(refresh.get() == "\"kanon_masked\".\"bl_people\"");
    CHECK(identity() != before);
    CHECK(count_copy(reader) == "11");

    // Still idle at the deadline: the refresh fails naming the session, and
    // the copy or view it would have replaced stays.
    held = std::make_unique<pqxx::work>(idle);
    held->exec("SELECT count(*) FROM kanon_masked.bl_people");
    const std::string kept = identity();
    std::string error;
    try {
      replace(builder, *snap,
              {std::chrono::milliseconds(50), std::chrono::milliseconds(50),
               std::chrono::milliseconds(500)});
    } catch (const std::runtime_error& e) {
      error = e.what();
    }
    CAPTURE(error);
    CHECK(error.find("the refresh of public.bl_people: \"kanon_masked\".\"bl_people\" is "
                     "read by sessions whose transactions stay open") != std::string::npos);
    CHECK(error.find("pid " + std::to_string(idle_pid) + " (postgres, idle in transaction") !=
          std::string::npos);
    CHECK(identity() == kept);
    CHECK(count_copy(reader) == "11");
    held->commit();
  }
}

// The statements a refresh runs after the brief wait (grants, renames) wait
// under the transaction's own lock_timeout again, not the wait's 100 ms.
TEST_CASE("after the brief wait the transaction's lock_timeout is its own again") {
  pqxx::connection conn(conninfo());
  pqxx::work tx(conn);
  tx.exec("SET LOCAL lock_timeout = '7s'");
  exec_locking_briefly(tx, "SELECT 1", "pg_catalog.pg_class", "a check");
  CHECK(tx.exec1("SHOW lock_timeout")[0].as<std::string>() == "7s");
  // And after a statement that failed for another reason.
  CHECK_THROWS_AS(exec_locking_briefly(tx, "SELECT 1/0", "pg_catalog.pg_class", "a check"),
                  pqxx::sql_error);
  CHECK(tx.exec1("SHOW lock_timeout")[0].as<std::string>() == "7s");
  // And after waiting in vain.
  PgSandbox::shared().psql("DROP TABLE IF EXISTS bl_held; CREATE TABLE bl_held (a int)");
  pqxx::connection holder(conninfo());
  pqxx::work holding(holder);
  holding.exec("LOCK TABLE bl_held IN ACCESS SHARE MODE");
  CHECK_THROWS_AS(
      exec_locking_briefly(tx, "LOCK TABLE bl_held IN ACCESS EXCLUSIVE MODE", "public.bl_held",
                           "a check",
                           {std::chrono::milliseconds(20), std::chrono::milliseconds(20),
                            std::chrono::milliseconds(100)}),
      std::runtime_error);
  CHECK(tx.exec1("SHOW lock_timeout")[0].as<std::string>() == "7s");
}
