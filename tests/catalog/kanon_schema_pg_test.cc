// ensure_kanon_schema against a real PostgreSQL 15, each case in a database
// of its own: a fresh database reaches the current version; an earlier
// kanon's tables (no version, no row format 2 columns) are migrated with
// their rows; a current schema gets reads only (no event trigger fires, the
// catalog generation stays); a newer version is refused; two concurrent
// calls both succeed and one applies; a service account without CREATE gets
// a clear error, or works when the schema is in place.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <pqxx/pqxx>
#include <thread>

#include "catalog/catalog_watch.h"
#include "catalog/kanon_schema.h"
#include "store/release_store.h"
#include "tests/support/pg_sandbox.h"

using namespace kanon::policy;
using namespace kanon::catalog;
using namespace kanon::store;
using kanon::testing::PgSandbox;

namespace {

// A fresh database `name` (dropped first), with an event trigger counting
// every DDL command into public.ddl_seen.
std::string fresh_database(const std::string& name) {
  auto& pg = PgSandbox::shared();
  pg.psql("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
  pg.psql("CREATE DATABASE " + name);
  pg.psql(
      "CREATE TABLE public.ddl_seen (id bigserial, tag text); "
      "CREATE FUNCTION public.count_ddl() RETURNS event_trigger LANGUAGE plpgsql SECURITY DEFINER "
      "AS "
      "$$BEGIN INSERT INTO public.ddl_seen (tag) VALUES (tg_tag); END$$; "
      "CREATE EVENT TRIGGER count_ddl ON ddl_command_start EXECUTE FUNCTION public.count_ddl();",
      name);
  return pg.conninfo("postgres", name);
}

long ddl_seen(pqxx::connection_base& conn) {
  return pqxx::nontransaction(conn).exec1("SELECT count(*) FROM public.ddl_seen")[0].as<long>();
}

long scalar(pqxx::connection_base& conn, const std::string& sql) {
  return pqxx::nontransaction(conn).exec1(sql)[0].as<long>();
}

// The tables as kanon made them before the schema had a version: migration
// 1 without kanon.schema_version.
void make_version_one_tables(pqxx::connection_base& conn) {
  pqxx::work tx(conn);
  tx.exec("CREATE SCHEMA kanon");
  for (const auto& statement : kanon_schema_migrations().front().statements)
    if (statement.sql.find("schema_version") == std::string::npos) tx.exec(statement.sql);
  tx.commit();
}

}  // namespace

TEST_CASE("fresh database: every table of the current version, each version recorded") {
  pqxx::connection conn(fresh_database("schema_fresh"));
  const auto out = ensure_kanon_schema(conn);
  CHECK(out.found == 0);
  CHECK(out.version == kKanonSchemaVersion);
  CHECK(out.applied);
  CHECK(out.note.empty());
  pqxx::work tx(conn);
  const auto state = read_kanon_schema(tx);
  CHECK(state.schema_exists);
  CHECK(state.recorded == kKanonSchemaVersion);
  CHECK(state.tables == kanon_schema_tables());
  CHECK(tx.exec1("SELECT string_agg(version::text, ',' ORDER BY version) FROM "
                 "kanon.schema_version")[0]
            .as<std::string>() == "1,2");
  CHECK(
      tx.exec1("SELECT bool_and(applied_by = 'postgres') FROM kanon.schema_version")[0].as<bool>());
}

TEST_CASE("an earlier kanon's tables with rows: migrated, rows kept, old releases row_format 1") {
  pqxx::connection conn(fresh_database("schema_old"));
  make_version_one_tables(conn);
  // Without kanon.exports: an earlier kanon made only what it used.
  pqxx::nontransaction(conn).exec("DROP TABLE kanon.exports");
  pqxx::nontransaction(conn).exec(
      "INSERT INTO kanon.releases (table_name, version, baseline, k, tree, rows, "
      "released_fraction, linked_rows, min_candidates, rows_below_k, updated_rows_below_k, "
      "held_rows) VALUES ('public.t', 1, true, 5, '{\"attributes\": [], \"nodes\": []}', 7, 0, "
      "0, 0, 0, 0, 0); "
      "INSERT INTO kanon.release_rows (table_name, key, since_version, released) VALUES "
      "('public.t', 'a', 1, '{x}'), ('public.t', 'b', 1, '{NULL}'); "
      "INSERT INTO kanon.snapshots (table_name, version, policy_hash, fingerprint, built_at, "
      "built_by, body) VALUES ('public.t', 3, 'h', 'f', now(), 'r', 'body')");
  {
    pqxx::work tx(conn);
    const auto plan = plan_kanon_schema(read_kanon_schema(tx));
    CHECK(plan.action == SchemaPlan::Action::kMigrate);
    CHECK(std::find(plan.missing.begin(), plan.missing.end(), "kanon.releases.row_format") !=
          plan.missing.end());
  }
  // Through the release history's entry point, as a build calls it.
  {
    pqxx::work tx(conn);
    ensure_release_tables(tx);
    tx.commit();
  }
  pqxx::work tx(conn);
  const auto state = read_kanon_schema(tx);
  CHECK(state.recorded == kKanonSchemaVersion);
  CHECK(state.tables == kanon_schema_tables());
  const auto r = tx.exec1(
      "SELECT (SELECT row_format FROM kanon.releases WHERE version = 1), "
      "(SELECT histories IS NULL FROM kanon.releases WHERE version = 1), "
      "(SELECT count(*) FROM kanon.release_rows WHERE history IS NULL AND until_version IS "
      "NULL), (SELECT string_agg(key || '=' || coalesce(released[1], '-'), ',' ORDER BY key) "
      "FROM kanon.release_rows), (SELECT body FROM kanon.snapshots WHERE version = 3), "
      "(SELECT count(*) FROM kanon.exports)");
  CHECK(r[0].as<int>() == 1);
  CHECK(r[1].as<bool>());
  CHECK(r[2].as<long>() == 2);
  CHECK(r[3].as<std::string>() == "a=x,b=-");
  CHECK(r[4].as<std::string>() == "body");
  CHECK(r[5].as<long>() == 0);
}

TEST_CASE("current schema: reads only (no event trigger fires, the catalog generation stays)") {
  pqxx::connection conn(fresh_database("schema_current"));
  std::string why;
  REQUIRE_MESSAGE(install_catalog_event_trigger(conn, &why), why);
  REQUIRE(ensure_kanon_schema(conn).applied);
  const std::string generation = "SELECT last_value FROM kanon.catalog_generation";
  const long seen = ddl_seen(conn), gen = scalar(conn, generation);
  for (int i = 0; i < 3; ++i) {
    const auto out = ensure_kanon_schema(conn);
    CHECK_FALSE(out.applied);
    CHECK(out.found == kKanonSchemaVersion);
    CHECK(out.version == kKanonSchemaVersion);
  }
  // Every entry point of the tables' users.
  {
    pqxx::work tx(conn);
    ensure_release_tables(tx);
    tx.commit();
  }
  CHECK(ddl_seen(conn) == seen);
  CHECK(scalar(conn, generation) == gen);
  // The counters see DDL: a column dropped by hand is put back.
  pqxx::nontransaction(conn).exec("ALTER TABLE kanon.release_rows DROP COLUMN until_version");
  const long after_drop = ddl_seen(conn), gen_after_drop = scalar(conn, generation);
  CHECK(after_drop > seen);
  CHECK(gen_after_drop > gen);
  const auto out = ensure_kanon_schema(conn);
  CHECK(out.applied);
  CHECK(out.found == kKanonSchemaVersion);
  CHECK(ddl_seen(conn) > after_drop);
  CHECK(scalar(conn, generation) > gen_after_drop);
  pqxx::work tx(conn);
  CHECK(read_kanon_schema(tx).tables == kanon_schema_tables());
}

TEST_CASE("a newer schema version is refused, and nothing is written") {
  pqxx::connection conn(fresh_database("schema_newer"));
  REQUIRE(ensure_kanon_schema(conn).applied);
  pqxx::nontransaction(conn).exec_params(
      "INSERT INTO kanon.schema_version (version, summary) VALUES ($1, 'from the future')",
      kKanonSchemaVersion + 1);
  // Even with a table missing: the newer kanon may have dropped it.
  pqxx::nontransaction(conn).exec("DROP TABLE kanon.held_keys");
  const long seen = ddl_seen(conn);
  const std::string expected = "kanon: schema kanon in this database is at version " +
                               std::to_string(kKanonSchemaVersion + 1) + ", newer than the " +
                               std::to_string(kKanonSchemaVersion) + " this kanon knows";
  try {
    ensure_kanon_schema(conn);
    FAIL("a newer schema was accepted");
  } catch (const KanonSchemaError& e) {
    CHECK(std::string(e.what()).find(expected) != std::string::npos);
  }
  try {
    pqxx::work tx(conn);
    ensure_release_tables(tx);
    FAIL("a newer schema was accepted");
  } catch (const KanonSchemaError& e) {
    CHECK(std::string(e.what()).find(expected) != std::string::npos);
  }
  // Paths that only read refuse too: the newer kanon's tables may mean
  // something else.
  try {
    pqxx::work tx(conn);
    list_releases(tx, "public.adult");
    FAIL("a newer schema was read");
  } catch (const KanonSchemaError& e) {
    CHECK(std::string(e.what()).find(expected) != std::string::npos);
  }
  CHECK(ddl_seen(conn) == seen);
  CHECK(scalar(conn,
               "SELECT count(*) FROM pg_catalog.pg_class WHERE oid = "
               "to_regclass('kanon.held_keys')") == 0);
}

TEST_CASE("two concurrent ensure calls: both succeed, one applies") {
  const std::string conninfo = fresh_database("schema_race");
  // Both calls find the schema missing, then wait for the migration lock
  // this transaction holds until both are waiting.
  pqxx::connection holder(conninfo);
  pqxx::work hold(holder);
  hold.exec("SELECT pg_advisory_xact_lock(7306355, 1)");
  SchemaOutcome outcomes[2];
  std::exception_ptr errors[2];
  std::vector<std::thread> threads;
  for (int i = 0; i < 2; ++i)
    threads.emplace_back([&, i] {
      try {
        pqxx::connection conn(conninfo);
        outcomes[i] = ensure_kanon_schema(conn);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    });
  pqxx::connection watch(conninfo);
  long waiting = 0;
  for (int polls = 0; polls < 60000 && waiting < 2 && !errors[0] && !errors[1]; ++polls) {
    waiting = scalar(watch,
                     "SELECT count(*) FROM pg_catalog.pg_locks WHERE locktype = 'advisory' AND "
                     "NOT granted AND classid = 7306355 AND objid = 1 AND database = (SELECT oid "
                     "FROM pg_catalog.pg_database WHERE datname = current_database())");
    if (waiting < 2) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  CHECK(waiting == 2);
  hold.commit();
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  CHECK(outcomes[0].applied != outcomes[1].applied);
  CHECK(outcomes[0].version == kKanonSchemaVersion);
  CHECK(outcomes[1].version == kKanonSchemaVersion);
  // The one that waited longer found the version the other recorded.
  CHECK((outcomes[0].applied ? outcomes[1] : outcomes[0]).found == kKanonSchemaVersion);
  CHECK(scalar(watch, "SELECT count(*) FROM kanon.schema_version") == kKanonSchemaVersion);
}

TEST_CASE("a service account without CREATE: a clear error, or works when the schema is there") {
  auto& pg = PgSandbox::shared();
  const std::string db = "schema_rights";
  pqxx::connection admin(fresh_database(db));
  pg.psql("DROP ROLE IF EXISTS schema_svc; CREATE ROLE schema_svc LOGIN");
  const std::string svc_conninfo = pg.conninfo("schema_svc", db);

  // No schema, no CREATE on the database: refused naming what to grant.
  {
    pqxx::connection svc(svc_conninfo);
    try {
      ensure_kanon_schema(svc);
      FAIL("created schema kanon without CREATE on the database");
    } catch (const pqxx::insufficient_privilege& e) {
      const std::string what = e.what();
      CAPTURE(what);
      CHECK(what.find("permission denied to create schema kanon") != std::string::npos);
      CHECK(what.find("\"schema_svc\" lacks CREATE on database \"schema_rights\"") !=
            std::string::npos);
    }
  }
  // An earlier kanon's tables, owned by someone else: refused naming what
  // is missing.
  make_version_one_tables(admin);
  pg.psql("GRANT USAGE ON SCHEMA kanon TO schema_svc", db);
  {
    pqxx::connection svc(svc_conninfo);
    try {
      ensure_kanon_schema(svc);
      FAIL("upgraded schema kanon without CREATE on it");
    } catch (const pqxx::insufficient_privilege& e) {
      const std::string what = e.what();
      CAPTURE(what);
      CHECK(what.find("permission denied to upgrade schema kanon from version 0 to") !=
            std::string::npos);
      CHECK(what.find("kanon.releases.row_format") != std::string::npos);
      CHECK(what.find("\"schema_svc\" lacks CREATE on schema kanon") != std::string::npos);
    }
  }
  // Every table there but no version recorded (the previous kanon made
  // them): works without DDL, and says how to record the version.
  REQUIRE(ensure_kanon_schema(admin).applied);
  pqxx::nontransaction(admin).exec("DROP TABLE kanon.schema_version");
  long seen = ddl_seen(admin);
  {
    pqxx::connection svc(svc_conninfo);
    const auto out = ensure_kanon_schema(svc);
    CHECK_FALSE(out.applied);
    CHECK(out.found == 0);
    CHECK(out.note.find("run kanon once as the schema's owner") != std::string::npos);
  }
  CHECK(ddl_seen(admin) == seen);
  // With CREATE on the schema but owning none of the tables: records the
  // version with kanon.schema_version alone (an ALTER TABLE of a column that
  // is there would need ownership).
  pg.psql("GRANT CREATE ON SCHEMA kanon TO schema_svc", db);
  const long last_id = scalar(admin, "SELECT coalesce(max(id), 0) FROM public.ddl_seen");
  {
    pqxx::connection svc(svc_conninfo);
    const auto out = ensure_kanon_schema(svc);
    CHECK(out.applied);
    CHECK(out.found == 0);
    CHECK(out.version == kKanonSchemaVersion);
    CHECK(out.note.empty());
  }
  // CREATE TABLE kanon.schema_version and its GRANT, no ALTER TABLE.
  CHECK(pqxx::nontransaction(admin)
            .exec1("SELECT string_agg(DISTINCT tag, ',') FROM public.ddl_seen WHERE id > " +
                   std::to_string(last_id))[0]
            .as<std::string>() == "CREATE TABLE,GRANT");
  CHECK(scalar(admin, "SELECT max(version) FROM kanon.schema_version") == kKanonSchemaVersion);
  pg.psql("REVOKE CREATE ON SCHEMA kanon FROM schema_svc", db);
  // In place and current: reads only.
  seen = ddl_seen(admin);
  {
    pqxx::connection svc(svc_conninfo);
    const auto out = ensure_kanon_schema(svc);
    CHECK_FALSE(out.applied);
    CHECK(out.version == kKanonSchemaVersion);
    CHECK(out.note.empty());
  }
  CHECK(ddl_seen(admin) == seen);
  admin.disconnect();
  pg.psql("DROP DATABASE " + db + " WITH (FORCE)");
  pg.psql("DROP ROLE schema_svc");
}

// A role with CREATE on the database makes schema kanon before kanon does:
// as its owner it could drop kanon's tables and put its own in their place
// (forged snapshots, the release history, the guard's event triggers).
TEST_CASE("schema kanon that another role owns or may create in is refused") {
  auto& pg = PgSandbox::shared();
  const std::string db = "schema_squat";
  pqxx::connection admin(fresh_database(db));
  pg.psql("DROP ROLE IF EXISTS squatter; CREATE ROLE squatter LOGIN");
  pg.psql("GRANT CREATE ON DATABASE " + db + " TO squatter", db);
  pqxx::connection squatter(pg.conninfo("squatter", db));
  pqxx::nontransaction(squatter).exec("CREATE SCHEMA kanon");

  const auto refused = [&](const std::string& finding) {
    CAPTURE(finding);
    try {
      ensure_kanon_schema(admin);
      FAIL("ensure_kanon_schema used the schema");
    } catch (const KanonSchemaError& e) {
      CHECK(std::string(e.what()).find(finding) != std::string::npos);
      CHECK(std::string(e.what()).find("is not kanon's to trust") != std::string::npos);
    }
    {
      pqxx::work tx(admin);
      try {
        check_kanon_schema_version(tx);
        FAIL("check_kanon_schema_version accepted the schema");
      } catch (const KanonSchemaError& e) {
        CHECK(std::string(e.what()).find(finding) != std::string::npos);
      }
    }
    std::string why;
    CHECK_FALSE(install_catalog_event_trigger(admin, &why));
    CHECK(why.find(finding) != std::string::npos);
    pqxx::work tx(admin);
    const auto state = read_kanon_schema(tx);
    const auto report = describe_kanon_schema(state, plan_kanon_schema(state));
    CHECK(report.too_new);
    CHECK(report.sentence.find(finding) != std::string::npos);
  };
  refused("schema kanon belongs to squatter");
  // Nothing was created in it.
  CHECK(scalar(admin, "SELECT count(*) FROM pg_class WHERE relnamespace = 'kanon'::regnamespace") ==
        0);

  pg.psql("ALTER SCHEMA kanon OWNER TO postgres; GRANT CREATE ON SCHEMA kanon TO squatter", db);
  refused("squatter may create in schema kanon");
  pqxx::nontransaction(squatter).exec("CREATE TABLE kanon.snapshots (x int)");
  pg.psql("REVOKE CREATE ON SCHEMA kanon FROM squatter", db);
  refused("kanon.snapshots belongs to squatter");
  pg.psql("GRANT CREATE ON SCHEMA kanon TO PUBLIC", db);
  refused("PUBLIC may create in schema kanon");

  // Once the schema and everything in it are trusted again, kanon uses it.
  pg.psql("REVOKE CREATE ON SCHEMA kanon FROM PUBLIC; DROP TABLE kanon.snapshots", db);
  CHECK(ensure_kanon_schema(admin).applied);
  std::string why;
  CHECK_MESSAGE(install_catalog_event_trigger(admin, &why), why);
  squatter.disconnect();
  admin.disconnect();
  pg.psql("DROP DATABASE " + db + " WITH (FORCE)");
  pg.psql("DROP ROLE squatter");
}
