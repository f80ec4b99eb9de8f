// Snapshots older than the release that masks them. A refresh builds its
// tree on the rows as they are then; a transaction whose snapshot is older
// sees other rows (a row deleted since, alone among those rows in a leaf of
// the new tree). Here Gus (id 7), the only Lawyer of Columbus, OH, is
// deleted and two other Lawyers of Columbus arrive: the new tree releases
// "Lawyer" for that leaf, which in the old rows holds Gus alone.
//
// - mode: view: PostgreSQL gives every reader the newest view definition,
//   so the view itself refuses a snapshot older than its replacement, for
//   sessions through kanon and for direct readers alike.
// - mode: inline: a transaction keeps the release of its first statement,
//   and a restricted session may not import a snapshot.
// - mode: materialized: the copy is rows written by the refresh, so an older
//   snapshot leaks nothing, but it finds the new copy by name and cannot see
//   its rows: the read is refused rather than answered with no rows.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <pqxx/pqxx>

#include "tests/support/demo_data.h"
#include "tests/support/kanon_proxy.h"
#include "tests/support/pg_sandbox.h"
#include "tests/support/process.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/statement_outcome.h"

using namespace kanon::testing;

namespace {

// A keyed copy of public.people named `table`.
void make_table(PgSandbox& pg, const std::string& table) {
  pg.psql("DROP TABLE IF EXISTS public." + table + " CASCADE; CREATE TABLE public." + table +
          " AS SELECT * FROM public.people; ALTER TABLE public." + table +
          " ADD PRIMARY KEY (id); GRANT SELECT ON public." + table + " TO analyst;");
}

void refresh(KanonProxy& proxy, const std::string& table) {
  const auto r = run_command(
      {"psql", "-X", "-At", "-d", proxy.conninfo("postgres", "kanon"), "-c", "REFRESH " + table});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
}

// Gus leaves and two Lawyers of Columbus arrive; after a refresh, a Farmer
// of Dayton arrives and another refresh splits Columbus's Lawyers off (each
// release history-aware: public.people has a key).
void change_rows(PgSandbox& pg, KanonProxy& proxy, const std::string& table) {
  pg.psql("INSERT INTO public." + table +
          " VALUES (12, 'Lee Ames', '100-00-0012', 'Lawyer', 'Columbus', 'OH', 'cold'), "
          "(13, 'Mo Bell', '100-00-0013', 'Lawyer', 'Columbus', 'OH', 'cold'); "
          "DELETE FROM public." +
          table + " WHERE id = 7;");
  refresh(proxy, table);
  pg.psql("INSERT INTO public." + table +
          " VALUES (14, 'Nia Cole', '100-00-0014', 'Farmer', 'Dayton', 'OH', 'cold')");
  refresh(proxy, table);
}

std::unique_ptr<KanonProxy> start_proxy(PgSandbox& pg, const std::string& table,
                                        const std::string& mode) {
  const std::string path = scratch_path("kanon-snapshot-age-" + table + ".yaml");
  std::ofstream(path) << people_policy_yaml(table, mode);
  return std::make_unique<KanonProxy>(pg.port(),
                                      "admin: {database: kanon, users: [postgres]}\n"
                                      "policies: [" +
                                          path + "]\n");
}

// The guards in C (maskfn/install.sql) in place, or two of them dropped
// (and what a previous case built on them), so that kanon writes the SQL
// forms (CatalogFacts::c_guard).
void guards_in_c(PgSandbox& pg, bool on) {
  if (on) return pg.install_mask_function();
  pg.psql(
      "DO $$BEGIN IF to_regnamespace('kanon_mask') IS NOT NULL THEN "
      "DROP FUNCTION IF EXISTS kanon_mask.snapshot_sees(xid8, text) CASCADE; "
      "DROP FUNCTION IF EXISTS kanon_mask.copy_current(regclass, text) CASCADE; END IF; END$$");
}

// A keyed copy of public.people named `table`, protected by kanon in `mode`,
// with the guards in C or in SQL.
std::unique_ptr<KanonProxy> protect(PgSandbox& pg, const std::string& table,
                                    const std::string& mode, bool c_guard) {
  make_table(pg, table);
  guards_in_c(pg, c_guard);
  return start_proxy(pg, table, mode);
}

// The analyst's own schema with guards of its own that let every snapshot
// through, first on the search_path `session` sets: kanon writes its guards
// schema-qualified, so these are never called.
void rival_guards(PgSandbox& pg, pqxx::connection& session) {
  pg.psql(
      "DROP SCHEMA IF EXISTS rival CASCADE; CREATE SCHEMA rival AUTHORIZATION analyst; "
      "CREATE FUNCTION rival.copy_current(regclass, text) RETURNS boolean LANGUAGE sql "
      "AS 'SELECT true'; "
      "CREATE FUNCTION rival.snapshot_sees(xid8, text) RETURNS boolean LANGUAGE sql "
      "AS 'SELECT true'; "
      "ALTER FUNCTION rival.copy_current(regclass, text) OWNER TO analyst; "
      "ALTER FUNCTION rival.snapshot_sees(xid8, text) OWNER TO analyst;");
  const Outcome set = run(session, "SET search_path = rival, kanon_mask, public");
  REQUIRE_MESSAGE(set.sqlstate.empty(), set.message);
}

// Opens a repeatable-read transaction and takes its snapshot.
void begin_old(pqxx::connection& c) {
  REQUIRE(run(c, "BEGIN ISOLATION LEVEL REPEATABLE READ").sqlstate.empty());
  REQUIRE(run(c, "SELECT 1").rows == "1|\n");
}

}  // namespace

TEST_CASE("mode: view refuses a snapshot older than the view's refresh") {
  scratch_dir();
  auto& pg = PgSandbox::shared();
  // The view's guard in SQL, then in C (kanon_mask.snapshot_sees): the same
  // refusal, through kanon and reading the view directly; in C with the
  // analyst's own snapshot_sees first on its search_path.
  for (const bool c_guard : {false, true}) {
    CAPTURE(c_guard);
    const std::string table = c_guard ? "svc_people" : "sv_people";
    auto proxy = protect(pg, table, "view", c_guard);
    INFO("kanon's log: " << proxy->log());

    pqxx::connection through(proxy->conninfo("analyst"));
    pqxx::connection direct(pg.conninfo("analyst"));
    const std::string query =
        "SELECT id, occupation, city FROM public." + table + " WHERE state = 'OH' ORDER BY id";
    const std::string direct_query = "SELECT id, occupation, city FROM kanon_masked." + table +
                                     " WHERE state = 'OH' ORDER BY id";
    if (c_guard) {
      rival_guards(pg, through);
      rival_guards(pg, direct);
    }
    // Before: Gus's occupation is not released.
    CHECK(run(through, query).rows.find("7|<null>|") != std::string::npos);
    begin_old(through);
    begin_old(direct);

    change_rows(pg, *proxy, table);
    // The new tree releases Lawyer for the two who arrived (so the old rows,
    // read with it, would show Gus's).
    {
      pqxx::connection fresh(proxy->conninfo("analyst"));
      CHECK(run(fresh, "SELECT count(*) FROM " + table + " WHERE occupation = 'Lawyer'").rows ==
            "2|\n");
    }

    for (auto* c : {&through, &direct}) {
      CAPTURE(c == &through);
      const Outcome old = run(*c, c == &through ? query : direct_query);
      CHECK(old.rows.find("Lawyer") == std::string::npos);
      CHECK(old.sqlstate == "22P02");
      CHECK_MESSAGE(old.message.find("kanon: this transaction's snapshot is older than the masked "
                                     "view of public." +
                                     table) != std::string::npos,
                    old.message);
      CHECK_MESSAGE((old.message.find("invalid input syntax for type boolean") ==
                     std::string::npos) == c_guard,
                    old.message);
      // A new transaction reads the new release; Gus is gone.
      REQUIRE(run(*c, "ROLLBACK").sqlstate.empty());
      const Outcome now = run(*c, c == &through ? query : direct_query);
      CHECK_MESSAGE(now.sqlstate.empty(), now.message);
      CHECK(now.rows.find("7|") == std::string::npos);
      CHECK(now.rows.find("12|Lawyer|") != std::string::npos);
    }
  }
}

TEST_CASE("mode: materialized refuses a snapshot older than the copy instead of reading none") {
  scratch_dir();
  auto& pg = PgSandbox::shared();
  // The guard in SQL, then in C (kanon_mask.copy_current, once install.sql
  // has put the C guards in place): the same refusal; the SQL form's comes
  // from its text cast to boolean, the C form's is the message alone. In C
  // with the analyst's own copy_current first on its search_path.
  for (const bool c_guard : {false, true}) {
    CAPTURE(c_guard);
    const std::string table = c_guard ? "smc_people" : "sm_people";
    auto proxy = protect(pg, table, "materialized", c_guard);
    INFO("kanon's log: " << proxy->log());

    pqxx::connection through(proxy->conninfo("analyst"));
    const std::string query = "SELECT count(*), count(occupation) FROM " + table;
    if (c_guard) rival_guards(pg, through);
    CHECK(run(through, query).rows == "11|5|\n");
    begin_old(through);
    change_rows(pg, *proxy, table);
    // A new session reads the new copy (and, idle, catches kanon's catalog
    // up with the refreshes' DDL, so the old transaction below is refused by
    // the copy's guard rather than by the catalog check, which it may meet
    // first).
    {
      pqxx::connection fresh(proxy->conninfo("analyst"));
      CHECK(run(fresh, query).rows.starts_with("13|"));
    }

    const Outcome old = run(through, query);
    CHECK(old.rows.empty());
    CHECK(old.sqlstate == "22P02");
    CHECK_MESSAGE(old.message.find("kanon: this transaction's snapshot is older than the masked "
                                   "copy of public." +
                                   table) != std::string::npos,
                  old.message);
    CHECK_MESSAGE(
        (old.message.find("invalid input syntax for type boolean") == std::string::npos) == c_guard,
        old.message);
    REQUIRE(run(through, "ROLLBACK").sqlstate.empty());
    const Outcome now = run(through, query);
    CHECK_MESSAGE(now.sqlstate.empty(), now.message);
    CHECK(now.rows.starts_with("13|"));
  }
}

TEST_CASE("mode: inline keeps a transaction's release and refuses snapshot imports") {
  scratch_dir();
  auto& pg = PgSandbox::shared();
  make_table(pg, "si_people");
  auto proxy = start_proxy(pg, "si_people", "inline");
  INFO("kanon's log: " << proxy->log());

  const std::string query =
      "SELECT id, occupation, city FROM si_people WHERE state = 'OH' ORDER BY id";
  // The analyst exports the snapshot of a transaction begun before the
  // refresh, and keeps another transaction open.
  pqxx::connection exporter(proxy->conninfo("analyst"));
  REQUIRE(run(exporter, "BEGIN ISOLATION LEVEL REPEATABLE READ").sqlstate.empty());
  const Outcome exported = run(exporter, "SELECT pg_export_snapshot()");
  REQUIRE_MESSAGE(exported.sqlstate.empty(), exported.message);
  const std::string snapshot = exported.rows.substr(0, exported.rows.find('|'));
  pqxx::connection open(proxy->conninfo("analyst"));
  begin_old(open);

  change_rows(pg, *proxy, "si_people");
  {
    pqxx::connection fresh(proxy->conninfo("analyst"));
    CHECK(run(fresh, "SELECT count(*) FROM si_people WHERE occupation = 'Lawyer'").rows == "2|\n");
  }

  // The open transaction reads with the release it began with.
  const Outcome kept = run(open, query);
  CHECK_MESSAGE(kept.sqlstate.empty(), kept.message);
  CHECK(kept.rows.find("7|<null>|") != std::string::npos);
  CHECK(kept.rows.find("Lawyer") == std::string::npos);

  // Importing the old snapshot is denied, and the session stays usable.
  pqxx::connection importer(proxy->conninfo("analyst"));
  REQUIRE(run(importer, "BEGIN ISOLATION LEVEL REPEATABLE READ").sqlstate.empty());
  const Outcome import = run(importer, "SET TRANSACTION SNAPSHOT '" + snapshot + "'");
  CHECK(import.sqlstate == "42501");
  CHECK_MESSAGE(import.message.find("(kanon rule snapshot-import)") != std::string::npos,
                import.message);
  CHECK(run(importer, query).rows.find("7|Lawyer|") == std::string::npos);
  REQUIRE(run(importer, "ROLLBACK").sqlstate.empty());
  CHECK(run(importer, "SELECT 41 + 1").rows == "42|\n");

  // An exempt login's import is relayed: it reads the rows of then, raw.
  pqxx::connection exempt(proxy->conninfo("postgres"));
  REQUIRE(run(exempt, "BEGIN ISOLATION LEVEL REPEATABLE READ").sqlstate.empty());
  const Outcome relayed = run(exempt, "SET TRANSACTION SNAPSHOT '" + snapshot + "'");
  CHECK_MESSAGE(relayed.sqlstate.empty(), relayed.message);
  CHECK(run(exempt, "SELECT occupation FROM si_people WHERE id = 7").rows == "Lawyer|\n");
}
