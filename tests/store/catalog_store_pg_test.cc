// PolicyStore keeps the catalog facts current: read at builds and refreshes,
// refresh_catalog(), and the watcher that LISTENs for the event trigger's
// notifications (real PostgreSQL from the sandbox).
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <pqxx/pqxx>
#include <thread>

#include "catalog/catalog_watch.h"
#include "policy/policy_file.h"
#include "store/policy_store.h"
#include "tests/support/pg_sandbox.h"

using namespace kanon::policy;
using namespace kanon::catalog;
using namespace kanon::store;
using kanon::testing::PgSandbox;
using Clock = std::chrono::steady_clock;

namespace {

std::string conninfo() {
  return PgSandbox::shared().conninfo("postgres", "postgres");
}

TablePolicy people_policy() {
  return load_policy_file(kanon::testing::source_dir() + "/config/policies/people.yaml").at(0);
}

bool has_relation(const PolicySnapshot& snap, const std::string& schema, const std::string& name) {
  if (!snap.catalog) return false;
  for (const auto* r : snap.catalog->relations_named(name))
    if (r->schema == schema) return true;
  return false;
}

// Polls until `pred` holds or `limit` passes; returns the time it took.
template <typename Pred>
std::chrono::milliseconds wait_for(Pred pred, std::chrono::milliseconds limit) {
  const auto t0 = Clock::now();
  while (!pred() && Clock::now() - t0 < limit)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0);
}

void drop_trigger() {
  PgSandbox::shared().psql(
      "DROP EVENT TRIGGER IF EXISTS kanon_catalog_ddl; "
      "DROP EVENT TRIGGER IF EXISTS kanon_catalog_drop; "
      "DROP FUNCTION IF EXISTS kanon.catalog_changed()");
}

}  // namespace

TEST_CASE("builds and refresh_catalog publish the catalog facts") {
  PolicyStore store(conninfo(), {people_policy()});
  CHECK(store.current()->catalog == nullptr);
  REQUIRE(store.refresh_all());
  const auto v1 = store.current();
  REQUIRE(v1->catalog != nullptr);
  CHECK(v1->catalog_error.empty());
  CHECK(has_relation(*v1, "public", "people"));
  CHECK(v1->find("public.people") != nullptr);

  // refresh_catalog: a new version, the same table snapshots, new facts.
  PgSandbox::shared().psql(
      "DROP TABLE IF EXISTS catalog_store_t; CREATE TABLE catalog_store_t (a int)");
  REQUIRE(store.refresh_catalog());
  const auto v2 = store.current();
  CHECK(v2->version == v1->version + 1);
  CHECK(v2->find("public.people") == v1->find("public.people"));
  CHECK(v2->catalog != v1->catalog);
  CHECK(has_relation(*v2, "public", "catalog_store_t"));
  CHECK_FALSE(has_relation(*v1, "public", "catalog_store_t"));
  // Built-ins come from the previous facts on the kept connection.
  CHECK(v2->catalog->functions.size() > 2000);
  CHECK(v2->catalog->builtin_fingerprint == v1->catalog->builtin_fingerprint);
  MESSAGE("refresh_catalog read the facts in " << v2->catalog->read_ms << " ms");

  // A table refresh reads the catalog too, in the same new version.
  PgSandbox::shared().psql("DROP TABLE catalog_store_t");
  REQUIRE(store.refresh("public.people"));
  const auto v3 = store.current();
  CHECK(v3->version == v2->version + 1);
  CHECK_FALSE(has_relation(*v3, "public", "catalog_store_t"));

  // A store with its own builder has no catalog.
  PolicyStore plain({people_policy()},
                    [](const TablePolicy&) -> std::shared_ptr<const TableSnapshot> {
                      throw std::runtime_error("not built");
                    });
  CHECK_FALSE(plain.refresh_catalog());
  plain.refresh_all();
  CHECK(plain.current()->catalog == nullptr);
  CHECK(plain.current()->catalog_error.empty());
}

TEST_CASE("a failed catalog read keeps the previous facts") {
  auto& pg = PgSandbox::shared();
  pg.psql("DROP ROLE IF EXISTS catalog_gone; CREATE ROLE catalog_gone LOGIN SUPERUSER");
  auto store_ptr = std::make_unique<PolicyStore>(pg.conninfo("catalog_gone", "postgres"),
                                                 std::vector<TablePolicy>{people_policy()});
  auto& store = *store_ptr;
  REQUIRE(store.refresh_catalog());
  const auto before = store.current()->catalog;
  pg.psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'catalog_gone'");
  // The kept connection broke: one new connection, and it works again.
  CHECK(store.refresh_catalog());
  // Now the role cannot log in any more: the read fails, the facts stay.
  pg.psql(
      "ALTER ROLE catalog_gone NOLOGIN; "
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'catalog_gone'");
  CHECK_FALSE(store.refresh_catalog());
  const auto after = store.current();
  REQUIRE(after->catalog != nullptr);
  CHECK_FALSE(after->catalog_error.empty());
  MESSAGE("catalog_error: " << after->catalog_error);
  pg.psql("ALTER ROLE catalog_gone LOGIN");
  CHECK(store.refresh_catalog());
  CHECK(store.current()->catalog_error.empty());
  store_ptr.reset();
  pg.psql("DROP ROLE catalog_gone");
}

// DDL run before the trigger existed moved no generation: a catalog read
// while its transaction is still open would miss its objects, and nothing
// would ever say so. The first install waits for the transactions open when
// it created the trigger (the limit set far out here, so that only the open
// transaction ends the wait).
TEST_CASE("install_catalog_event_trigger: waits for DDL begun before the trigger existed") {
  auto& pg = PgSandbox::shared();
  drop_trigger();
  pqxx::connection ddl(conninfo());
  pqxx::work open(ddl);
  open.exec("CREATE TABLE public.before_the_trigger (a int)");
  std::atomic<bool> done{false};
  bool ok = false;
  std::string error;
  std::thread install([&] {
    pqxx::connection c(conninfo());
    ok = install_catalog_event_trigger(c, &error, std::chrono::minutes(5));
    done = true;
  });
  const auto trigger_there = [&] {
    return pg.psql("SELECT count(*) FROM pg_event_trigger WHERE evtname LIKE 'kanon_catalog_%'") ==
           "2\n";
  };
  wait_for(trigger_there, std::chrono::minutes(2));
  REQUIRE(trigger_there());
  // Created and committed, and still waiting for the DDL's transaction.
  CHECK_FALSE(done.load());
  open.commit();
  install.join();
  CHECK(done.load());
  CHECK_MESSAGE(ok, error);
  pg.psql("DROP TABLE public.before_the_trigger");
}

TEST_CASE("install_catalog_event_trigger: superuser only, idempotent, never fails DDL") {
  auto& pg = PgSandbox::shared();
  drop_trigger();
  {
    pqxx::connection analyst(pg.conninfo("analyst", "postgres"));
    std::string error;
    CHECK_FALSE(install_catalog_event_trigger(analyst, &error));
    CHECK(error.find("not a superuser") != std::string::npos);
  }
  pqxx::connection conn(conninfo());
  std::string error;
  REQUIRE_MESSAGE(install_catalog_event_trigger(conn, &error), error);
  // A second install is no DDL: the generation (which fails every guard
  // when it moves) stays where it is.
  const auto generation = [&] {
    return pg.psql("SELECT last_value FROM kanon.catalog_generation");
  };
  const std::string before = generation();
  REQUIRE_MESSAGE(install_catalog_event_trigger(conn, &error), error);
  CHECK(generation() == before);
  CHECK(pg.psql("SELECT count(*) FROM pg_event_trigger WHERE evtname LIKE 'kanon_catalog_%' "
                "AND evtenabled = 'O'") == "2\n");
  // The SECURITY DEFINER trigger function is its triggers' alone; the guard
  // is everybody's.
  CHECK(pg.psql("SELECT has_function_privilege('public', 'kanon.catalog_changed()', 'EXECUTE'), "
                "has_function_privilege('public', 'kanon.catalog_is(int8)', 'EXECUTE'), "
                "has_function_privilege('public', 'kanon.catalog_stays(int8)', 'EXECUTE')") ==
        "f|t|t\n");
  // A guard changed (or an older kanon's objects) is put back.
  pg.psql(
      "CREATE OR REPLACE FUNCTION kanon.catalog_stays(decided int8) RETURNS bool "
      "LANGUAGE sql STABLE AS 'SELECT true'");
  REQUIRE_MESSAGE(install_catalog_event_trigger(conn, &error), error);
  CHECK(pg.psql("SELECT prosrc LIKE '%pg_advisory_xact_lock_shared%' FROM pg_proc "
                "WHERE proname = 'catalog_stays'") == "t\n");
  // Anything missing or changed is put back.
  pg.psql("ALTER EVENT TRIGGER kanon_catalog_drop DISABLE");
  REQUIRE_MESSAGE(install_catalog_event_trigger(conn, &error), error);
  CHECK(pg.psql("SELECT count(*) FROM pg_event_trigger WHERE evtname LIKE 'kanon_catalog_%' "
                "AND evtenabled = 'O'") == "2\n");
  pg.psql("GRANT EXECUTE ON FUNCTION kanon.catalog_changed() TO PUBLIC");
  REQUIRE_MESSAGE(install_catalog_event_trigger(conn, &error), error);
  CHECK(pg.psql("SELECT has_function_privilege('public', 'kanon.catalog_changed()', "
                "'EXECUTE')") == "f\n");

  // Notifications: persistent objects yes, temporary ones no.
  pqxx::connection listener(conninfo());
  struct Counter : pqxx::notification_receiver {
    Counter(pqxx::connection_base& c) : pqxx::notification_receiver(c, kCatalogChannel) {}
    void operator()(const std::string& payload, int) override { payloads.push_back(payload); }
    std::vector<std::string> payloads;
  } counter(listener);
  auto drain = [&] {
    counter.payloads.clear();
    listener.await_notification(0, 300000);
    while (listener.get_notifs() > 0) {
    }
    return counter.payloads;
  };
  pg.psql("CREATE TABLE catalog_trigger_t (a int)");
  CHECK(drain() == std::vector<std::string>{"ddl_command_end"});
  pg.psql("DROP TABLE catalog_trigger_t");
  CHECK(drain() == std::vector<std::string>{"sql_drop"});
  pg.psql("CREATE TEMP TABLE catalog_trigger_tmp (a int); DROP TABLE catalog_trigger_tmp");
  CHECK(drain().empty());
  pg.psql("BEGIN; CREATE TABLE catalog_trigger_rb (a int); ROLLBACK");
  CHECK(drain().empty());
  // DDL by a non-superuser works and notifies.
  pg.psql(
      "DROP SCHEMA IF EXISTS catalog_trigger_s CASCADE; CREATE SCHEMA catalog_trigger_s; "
      "GRANT ALL ON SCHEMA catalog_trigger_s TO analyst");
  drain();
  {
    pqxx::connection analyst(pg.conninfo("analyst", "postgres"));
    pqxx::nontransaction tx(analyst);
    tx.exec("CREATE VIEW catalog_trigger_s.v AS SELECT 1 AS one");
  }
  CHECK(drain() == std::vector<std::string>{"ddl_command_end"});
  pg.psql("DROP SCHEMA catalog_trigger_s CASCADE");
}

TEST_CASE("the catalog watcher: a view created after start() is in the catalog soon after") {
  auto& pg = PgSandbox::shared();
  drop_trigger();
  pg.psql("DROP SCHEMA IF EXISTS catalog_watch_s CASCADE; CREATE SCHEMA catalog_watch_s");
  PolicyStore store(conninfo(), {people_policy()});
  REQUIRE(store.refresh_all());
  store.start();
  const auto state = store.catalog_watch_state();
  CHECK(state.running);
  CHECK(state.trigger_installed);
  CHECK(state.trigger_error.empty());
  CHECK(state.listening);

  pg.psql("CREATE VIEW catalog_watch_s.v AS SELECT city FROM public.people");
  const auto took = wait_for([&] { return has_relation(*store.current(), "catalog_watch_s", "v"); },
                             std::chrono::milliseconds(60000));
  MESSAGE("a new view was in current()->catalog after " << took.count() << " ms");
  CHECK(has_relation(*store.current(), "catalog_watch_s", "v"));
  const auto* v = store.current()->catalog->relations_named("v")[0];
  CHECK(v->definition.find("public.people") != std::string::npos);

  // A burst of DDL: every commit notifies (how few refreshes a burst gives
  // depends on how fast the commits come: a figure, not a property; and the
  // refresh of the view above may be counted only after `before` was read).
  const auto before = store.catalog_watch_state();
  std::string burst = "BEGIN;";
  for (int i = 0; i < 20; ++i)
    burst += " CREATE TABLE catalog_watch_s.t" + std::to_string(i) + " (a int); COMMIT; BEGIN;";
  burst += " COMMIT;";
  pg.psql(burst);
  wait_for([&] { return has_relation(*store.current(), "catalog_watch_s", "t19"); },
           std::chrono::milliseconds(60000));
  CHECK(has_relation(*store.current(), "catalog_watch_s", "t19"));
  const auto after = store.catalog_watch_state();
  MESSAGE("20 commits of DDL: " << after.refreshes - before.refreshes << " catalog refreshes");
  CHECK(after.notifications - before.notifications >= 20);

  // Drops are seen too.
  pg.psql("DROP VIEW catalog_watch_s.v");
  wait_for([&] { return !has_relation(*store.current(), "catalog_watch_s", "v"); },
           std::chrono::milliseconds(60000));
  CHECK_FALSE(has_relation(*store.current(), "catalog_watch_s", "v"));

  // A session that finds the served catalog behind the notifications reads
  // it at once (Session::catch_up_catalog); asked again for the same
  // notifications, nothing is read.
  const uint64_t seen = store.catalog_notifications();
  pg.psql("CREATE VIEW catalog_watch_s.covering AS SELECT 2 AS two");
  wait_for([&] { return store.catalog_notifications() > seen; }, std::chrono::milliseconds(60000));
  const uint64_t now = store.catalog_notifications();
  REQUIRE(now > seen);
  CHECK(store.refresh_catalog_covering(now));
  CHECK(store.catalog_notifications_covered() >= now);
  CHECK(has_relation(*store.current(), "catalog_watch_s", "covering"));
  const uint64_t version = store.current()->version;
  CHECK(store.refresh_catalog_covering(now));
  CHECK(store.current()->version == version);

  // Any role may NOTIFY kanon_catalog. Notifications with no DDL behind
  // them (the generation unmoved) are covered without a read: the served
  // version stays, however many an analyst sends.
  const uint64_t heard = store.catalog_notifications();
  {
    pqxx::connection analyst(pg.conninfo("analyst", "postgres"));
    pqxx::nontransaction tx(analyst);
    for (int i = 0; i < 50; ++i) tx.exec("NOTIFY kanon_catalog, 'ddl_command_end'");
  }
  wait_for([&] { return store.catalog_notifications() >= heard + 50; },
           std::chrono::milliseconds(60000));
  const uint64_t spoofed = store.catalog_notifications();
  REQUIRE(spoofed >= heard + 50);
  CHECK(store.refresh_catalog_covering(spoofed));
  CHECK(store.catalog_notifications_covered() >= spoofed);
  // The watcher's own debounced refresh, due 250 ms after the burst at the
  // latest, has been through the same check once it counted a refresh.
  wait_for(
      [&] {
        return store.catalog_watch_state().refreshes > 0 &&
               store.catalog_notifications_covered() >= spoofed;
      },
      std::chrono::milliseconds(60000));
  CHECK(store.current()->version == version);
  // A DDL after them is read as before.
  pg.psql("CREATE VIEW catalog_watch_s.after_spoof AS SELECT 3 AS three");
  wait_for([&] { return has_relation(*store.current(), "catalog_watch_s", "after_spoof"); },
           std::chrono::milliseconds(60000));
  CHECK(has_relation(*store.current(), "catalog_watch_s", "after_spoof"));
  CHECK(store.current()->version > version);

  // The watcher reconnects when its connection is killed.
  pg.psql(
      "SELECT pg_terminate_backend(l.pid) FROM pg_stat_activity l "
      "WHERE l.query ILIKE 'LISTEN%kanon_catalog%'");
  wait_for([&] { return !store.catalog_watch_state().listening; }, std::chrono::milliseconds(2000));
  wait_for([&] { return store.catalog_watch_state().listening; }, std::chrono::milliseconds(60000));
  CHECK(store.catalog_watch_state().listening);
  pg.psql("CREATE VIEW catalog_watch_s.again AS SELECT 1 AS one");
  wait_for([&] { return has_relation(*store.current(), "catalog_watch_s", "again"); },
           std::chrono::milliseconds(60000));
  CHECK(has_relation(*store.current(), "catalog_watch_s", "again"));

  store.stop();
  CHECK_FALSE(store.catalog_watch_state().running);
  pg.psql("DROP SCHEMA catalog_watch_s CASCADE");
  drop_trigger();
}

TEST_CASE("a service account that is no superuser: no trigger, the watcher still listens") {
  auto& pg = PgSandbox::shared();
  drop_trigger();
  PolicyStore store(pg.conninfo("analyst", "postgres"), {});
  store.start();
  const auto state = store.catalog_watch_state();
  CHECK_FALSE(state.trigger_installed);
  CHECK(state.trigger_error.find("not a superuser") != std::string::npos);
  CHECK(state.listening);
  // The watcher reads the facts once it listens.
  wait_for([&] { return store.current()->catalog != nullptr; }, std::chrono::milliseconds(60000));
  CHECK(store.current()->catalog != nullptr);
  store.stop();
}
