// The exposure report on a real PostgreSQL: a scratch schema with a
// protected table and one exposure of each kind (a direct grant, a view and
// a materialized view granted to restricted logins, a SECURITY DEFINER SQL
// function with the default PUBLIC EXECUTE, a member of an exempt role, a superuser login
// nobody exempted), found by `kanon check` (the real executable, text and
// JSON) and by SHOW EXPOSURE on the admin console, each with its fix; then
// the fixes are applied and the report is clean for those logins (exit 0).
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <pqxx/pqxx>
#include <sstream>
#include <thread>

#include "access/direct_access.h"
#include "base/text.h"
#include "catalog/catalog_facts.h"
#include "proxy/role_directory.h"
#include "tests/support/kanon_proxy.h"
#include "tests/support/pg_sandbox.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/statement_outcome.h"
#include "tests/support/wait.h"

using namespace kanon::testing;

namespace {

const std::vector<std::string> kLogins = {"expo_reader", "expo_viewer", "expo_mv", "expo_member",
                                          "expo_root"};

struct Fixture {
  std::string policy_path;
  std::unique_ptr<KanonProxy> proxy;

  Fixture() {
    auto& pg = PgSandbox::shared();
    pg.psql(R"SQL(
DROP SCHEMA IF EXISTS expo CASCADE;
CREATE SCHEMA expo;
CREATE TABLE expo.patients AS SELECT * FROM public.people;
CREATE ROLE expo_auditors NOLOGIN;
CREATE ROLE expo_reader LOGIN;
CREATE ROLE expo_viewer LOGIN;
CREATE ROLE expo_mv LOGIN;
CREATE ROLE expo_member LOGIN IN ROLE expo_auditors;
CREATE ROLE expo_root LOGIN SUPERUSER;
GRANT USAGE ON SCHEMA expo TO expo_reader, expo_viewer, expo_mv, expo_member;
GRANT SELECT ON expo.patients TO expo_reader;
CREATE VIEW expo.v_patients AS SELECT occupation, city FROM expo.patients;
GRANT SELECT ON expo.v_patients TO expo_viewer;
CREATE MATERIALIZED VIEW expo.mv_cities AS SELECT city, count(*) AS n FROM expo.patients GROUP BY city;
GRANT SELECT ON expo.mv_cities TO expo_mv;
CREATE FUNCTION expo.patient_count() RETURNS bigint LANGUAGE sql SECURITY DEFINER
  AS 'SELECT count(*) FROM expo.patients';
)SQL");
    policy_path = scratch_path("kanon-exposure-policy.yaml");
    std::ofstream(policy_path) << "tables:\n"
                                  "  - table: expo.patients\n"
                                  "    k: 2\n"
                                  "    quasi_identifiers: [occupation, city, state]\n"
                                  "    exempt: [postgres, expo_auditors]\n";
    proxy = std::make_unique<KanonProxy>(
        pg.port(),
        "admin: {database: kanon, users: [postgres]}\npolicies: [" + policy_path + "]\n");
  }
  ~Fixture() { std::filesystem::remove(policy_path); }

  CommandResult check(std::vector<std::string> extra = {}, bool only_scratch = true) {
    std::vector<std::string> argv = {kanon_executable(), "check", "--config", proxy->config_path()};
    if (only_scratch)
      for (const auto& r : kLogins) {
        argv.push_back("--role");
        argv.push_back(r);
      }
    argv.insert(argv.end(), extra.begin(), extra.end());
    return run_command(argv);
  }

  CommandResult console(const std::string& command) {
    return run_command(
        {"psql", "-X", "-At", "-d", proxy->conninfo("postgres", "kanon"), "-c", command});
  }
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The lines of psql -At output that start with `prefix`.
std::vector<std::string> lines_starting(const std::string& text, const std::string& prefix) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(prefix, 0) == 0) out.push_back(line);
  return out;
}

}  // namespace

TEST_CASE("kanon check and SHOW EXPOSURE report every seeded exposure with its fix") {
  auto& f = fixture();
  const auto r = f.check();
  INFO(r.out << r.err);
  CHECK(r.exit_code == 2);
  const std::string& out = r.out;
  CHECK(has(out, "kanon check: database postgres, 1 protected table, 5 logins checked\n"));
  // A direct grant on the protected table.
  CHECK(has(out, "\nexpo_reader  select-table"));
  CHECK(has(out,
            "expo_reader can SELECT the protected table expo.patients without kanon "
            "(granted to it)"));
  CHECK(has(out,
            "fix: REVOKE SELECT ON expo.patients FROM expo_reader — or, if expo_reader "
            "reads expo.patients through kanon"));
  // The sandbox's pg_hba.conf starts with `local all all trust`: a way in
  // without kanon (kanon connects from 127.0.0.1).
  CHECK(has(out, "\nexpo_reader  connect"));
  CHECK(has(out,
            "pg_hba.conf line 1 (local all all trust) admits expo_reader to postgres over "
            "the Unix socket, without kanon"));
  CHECK(has(out, "fix: pg_hba.conf: add `local postgres expo_reader reject` above line 1"));
  // A view over it.
  CHECK(has(out,
            "expo_viewer can SELECT the view expo.v_patients (granted to it), which reads "
            "expo.patients (via expo.patients) with its owner's rights"));
  CHECK(has(out,
            "fix: REVOKE SELECT ON expo.v_patients FROM expo_viewer (sessions through kanon "
            "do not need it"));
  // A materialized view.
  CHECK(has(out,
            "expo_mv can SELECT the materialized view expo.mv_cities (granted to it), a "
            "stored copy of rows of expo.patients"));
  CHECK(has(out,
            "fix: REVOKE SELECT ON expo.mv_cities FROM expo_mv; or give it a policy of its "
            "own"));
  // The function every login may execute (PUBLIC) that has USAGE on expo.
  for (const char* login : {"expo_reader", "expo_viewer", "expo_mv"}) {
    CAPTURE(login);
    CHECK(has(out, std::string(login) + " can EXECUTE expo.patient_count() (granted to PUBLIC) "
                                        "without kanon: it reads expo.patients"));
  }
  CHECK(has(out, "fix: REVOKE EXECUTE ON FUNCTION expo.patient_count() FROM PUBLIC"));
  // A member of an exempt role: informational.
  CHECK(has(out, "\nexpo_member  exempt-through-role  expo_auditors"));
  CHECK(
      has(out, "fix: nothing if it is meant to; otherwise REVOKE expo_auditors FROM expo_member"));
  CHECK_FALSE(has(out, "expo_member can"));
  // A superuser nobody exempted.
  CHECK(has(out, "\nexpo_root    superuser"));
  CHECK(has(out,
            "expo_root is a superuser: it reads every table without kanon; through kanon "
            "it is exempt too"));
  CHECK(has(out, "fix: ALTER ROLE expo_root NOSUPERUSER"));
  CHECK(has(out, "informational row (exempt through a role)"));

  // JSON.
  const auto j = f.check({"--format", "json"});
  CHECK(j.exit_code == 2);
  CHECK(has(j.out, "\"database\": \"postgres\""));
  CHECK(has(j.out,
            "{\"role\": \"expo_mv\", \"path\": \"select-relation\", \"object\": "
            "\"expo.mv_cities\", \"reaches\": [\"expo.patients\"]"));
  CHECK(has(j.out, "\"informational\": true"));

  // The demo's own exposure: analyst reads everything through pg_read_all_data.
  const auto all = f.check({}, false);
  CHECK(all.exit_code == 2);
  CHECK(has(all.out,
            "analyst can SELECT the protected table expo.patients without kanon "
            "(through pg_read_all_data)"));
  CHECK(has(all.out,
            "fix: REVOKE pg_read_all_data FROM analyst — or, if analyst reads "
            "expo.patients through kanon (kanon reads it as analyst), keep the grant and "
            "admit analyst to PostgreSQL only from kanon's address (pg_hba.conf)"));
  CHECK(has(all.out, "note: postgres is kanon's service account"));

  // The admin console: the same rows.
  const auto c = f.console("SHOW EXPOSURE");
  REQUIRE_MESSAGE(c.exit_code == 0, c.err);
  CHECK(has(c.out,
            "postgres|expo_reader|select-table|expo.patients|expo.patients|expo_reader "
            "can SELECT the protected table expo.patients without kanon (granted to it)|"
            "REVOKE SELECT ON expo.patients FROM expo_reader — "));
  CHECK(has(c.out, "postgres|expo_reader|connect|pg_hba.conf:1|expo.patients|"));
  CHECK(has(c.out, "postgres|expo_viewer|select-relation|expo.v_patients|expo.patients|"));
  CHECK(has(c.out, "postgres|expo_mv|select-relation|expo.mv_cities|expo.patients|"));
  CHECK(has(c.out, "postgres|expo_viewer|execute-function|expo.patient_count()|expo.patients|"));
  CHECK(has(c.out, "postgres|expo_member|exempt-through-role|expo_auditors|expo.patients|"));
  CHECK(has(c.out, "postgres|expo_root|superuser|expo_root|expo.patients|"));
  CHECK(has(c.out, "postgres|analyst|select-table|expo.patients|"));
  CHECK(has(c.err, "kanon connects from 127.0.0.1"));  // the notes, as notices
  const auto one = f.console("SHOW EXPOSURE expo_mv");
  REQUIRE_MESSAGE(one.exit_code == 0, one.err);
  CHECK(lines_starting(one.out, "postgres|").size() == 3);  // connect, mv, function
  CHECK(lines_starting(one.out, "postgres|expo_mv|").size() == 3);
  const auto help = f.console("SHOW HELP");
  CHECK(has(help.out, "SHOW EXPOSURE [<role>]"));

  // The fixes, as the report gives them.
  PgSandbox::shared().psql(R"SQL(
REVOKE SELECT ON expo.patients FROM expo_reader;
REVOKE SELECT ON expo.v_patients FROM expo_viewer;
REVOKE SELECT ON expo.mv_cities FROM expo_mv;
REVOKE EXECUTE ON FUNCTION expo.patient_count() FROM PUBLIC;
ALTER ROLE expo_root NOSUPERUSER;
)SQL");
  const auto after = f.check();
  INFO(after.out << after.err);
  CHECK(after.exit_code == 0);
  CHECK(has(after.out,
            "no exposures: no restricted login has a path to a protected table "
            "outside kanon; 1 informational row (exempt through a role)"));
  CHECK(lines_starting(f.console("SHOW EXPOSURE expo_reader").out, "postgres|").empty());
  PgSandbox::shared().psql("REVOKE expo_auditors FROM expo_member");
  const auto clean = f.check({"--format", "json"});
  CHECK(clean.exit_code == 0);
  CHECK(has(clean.out, "\"exposures\": 0,\n  \"rows\": [],"));
  // expo_member is now restricted like any other login, and has no path.
  CHECK(f.console("SHOW EXPOSURE expo_member").out.find("expo_member") == std::string::npos);
}

TEST_CASE("kanon check: errors exit 1, --help names the flags") {
  const auto h = run_command({kanon_executable(), "check", "--help"});
  CHECK(h.exit_code == 0);
  for (const char* flag : {"--config", "--format", "--role", "--conninfo", "--kanon-address"})
    CHECK(has(h.out, flag));
  const auto missing = run_command({kanon_executable(), "check", "--config", "/nonexistent.yaml"});
  CHECK(missing.exit_code == 1);
  CHECK(has(missing.err, "kanon check: "));
}

TEST_CASE("a service account that is no superuser cannot read pg_hba.conf: every grant counts") {
  auto& f = fixture();
  PgSandbox::shared().psql(
      "DROP ROLE IF EXISTS expo_service; CREATE ROLE expo_service LOGIN; "
      "GRANT pg_read_all_data TO expo_service; "
      "GRANT SELECT ON expo.patients TO expo_reader;");
  const auto r = f.check({"--conninfo", PgSandbox::shared().conninfo("expo_service")});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 2);
  CHECK(has(r.out, "expo_reader can SELECT the protected table expo.patients without kanon"));
  CHECK_FALSE(has(r.out, "expo_reader  connect"));
  CHECK(has(r.out,
            "note: pg_hba.conf was not read (pg_hba_file_rules is readable by superusers "
            "only, and expo_service is none)"));
  PgSandbox::shared().psql("REVOKE SELECT ON expo.patients FROM expo_reader");
}

TEST_CASE("the demo set-up (scripts/run.sh: pg-sandbox.sh --demo --hardened) has no exposure") {
  // Its own cluster: the shared sandbox keeps pg_read_all_data and a trusted
  // Unix socket for every login, which the other tests rely on (and which
  // kanon check reports, as the first half of this case shows). With
  // kanon_mask installed and preloaded, as scripts/run.sh does (public.adult's
  // policy says evaluator: auto).
  const auto start =
      run_command({source_dir() + "/scripts/pg-sandbox.sh", "start", "--demo", "--hardened",
                   "--mask-function", binary_dir() + "/maskfn/kanon_mask.so", "--preload",
                   "--owner-pid", std::to_string(getpid())});
  REQUIRE_MESSAGE(start.exit_code == 0, start.err);
  std::string dir, port;
  std::istringstream lines(start.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("KANON_PG_DIR=", 0) == 0) dir = line.substr(13);
    if (line.rfind("KANON_PG_PORT=", 0) == 0) port = line.substr(14);
  }
  REQUIRE(!port.empty());
  const std::string conninfo = "host=127.0.0.1 port=" + port + " user=postgres dbname=postgres";
  // The server loaded the library at start (maskfn/README.md, "Preloading").
  const auto preload =
      run_command({"psql", "-X", "-At", "-d", conninfo, "-c", "SHOW shared_preload_libraries"});
  CHECK(has(preload.out, dir + "/kanon_mask.so"));
  const std::string config = source_dir() + "/config/kanon.yaml";
  const auto check = [&] {
    return run_command({kanon_executable(), "check", "--config", config, "--conninfo", conninfo});
  };
  const auto clean = check();
  INFO(clean.out << clean.err);
  CHECK(clean.exit_code == 0);
  CHECK(has(clean.out, "2 protected tables, 4 logins checked"));
  CHECK(has(clean.out, "no exposures"));
  // Were kanon elsewhere, the TCP rules for 127.0.0.1 would admit the logins
  // without it: the same cluster is reported, so the clean result above is
  // the hardening's and kanon's address, not a blind check.
  const auto elsewhere = run_command({kanon_executable(), "check", "--config", config, "--conninfo",
                                      conninfo, "--kanon-address", "10.1.2.3"});
  INFO(elsewhere.out);
  CHECK(elsewhere.exit_code == 2);
  CHECK(has(elsewhere.out, "analyst can SELECT the protected table public.people without kanon"));
  run_command({source_dir() + "/scripts/pg-sandbox.sh", "stop", dir});
}

TEST_CASE("EXECUTE on a function that reads the server's files is a path, as the proxy counts it") {
  auto& f = fixture();
  auto& pg = PgSandbox::shared();
  pg.psql(
      "DROP ROLE IF EXISTS expo_files; CREATE ROLE expo_files LOGIN; "
      "GRANT EXECUTE ON FUNCTION pg_catalog.pg_read_file(text) TO expo_files");
  const auto check = [&] {
    return run_command(
        {kanon_executable(), "check", "--config", f.proxy->config_path(), "--role", "expo_files"});
  };
  const auto r = check();
  INFO(r.out << r.err);
  CHECK(r.exit_code == 2);
  CHECK(has(r.out, "server-files"));
  CHECK(has(r.out, "expo_files can EXECUTE pg_catalog.pg_read_file(text)"));
  CHECK(has(r.out, "reads files on the database server, the table's data files included"));
  CHECK(
      has(r.out, "fix: REVOKE EXECUTE ON FUNCTION pg_catalog.pg_read_file(text) FROM expo_files"));
  // Without the grant: nothing to report for it.
  pg.psql("REVOKE EXECUTE ON FUNCTION pg_catalog.pg_read_file(text) FROM expo_files");
  const auto clean = check();
  INFO(clean.out << clean.err);
  CHECK_FALSE(has(clean.out, "pg_read_file"));
  pg.psql("DROP ROLE expo_files");
}

// Through kanon, a login granted EXECUTE on pg_read_file is refused the
// function (server-file-function) and DO blocks (no proof that PostgreSQL
// keeps it from protected data: opaque-code), as before; kanon check reports
// the grant with its REVOKE. Once revoked, DO runs again.
TEST_CASE("a restricted login granted pg_read_file: the proxy refuses, kanon check reports it") {
  auto& f = fixture();
  auto& pg = PgSandbox::shared();
  pg.psql(
      "DROP ROLE IF EXISTS expo_file_reader; CREATE ROLE expo_file_reader LOGIN; "
      "GRANT EXECUTE ON FUNCTION pg_catalog.pg_read_file(text) TO expo_file_reader");
  // PostgreSQL itself lets it read the file: the denial below is kanon's.
  {
    pqxx::connection direct(pg.conninfo("expo_file_reader"));
    CHECK(run(direct, "SELECT length(pg_read_file('PG_VERSION')) > 0").rows == "t|\n");
  }
  const std::string code = "DO $$ BEGIN PERFORM 1; END $$";
  for (bool extended : {false, true}) {
    CAPTURE(extended);
    pqxx::connection c(f.proxy->conninfo("expo_file_reader"));
    const auto file = run(c, "SELECT pg_read_file('PG_VERSION')", extended);
    CHECK(file.sqlstate == "42501");
    CHECK(has(file.message,
              "restricted sessions may not call functions that read server files or the "
              "write-ahead log: pg_read_file (kanon rule server-file-function)"));
    const auto block = run(c, code, extended);
    CHECK(block.sqlstate == "42501");
    CHECK(has(block.message, "(kanon rule opaque-code)"));
  }
  const auto r = run_command({kanon_executable(), "check", "--config", f.proxy->config_path(),
                              "--role", "expo_file_reader"});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 2);
  CHECK(has(r.out, "\nexpo_file_reader  server-files  pg_catalog.pg_read_file(text)"));
  CHECK(has(r.out,
            "expo_file_reader can EXECUTE pg_catalog.pg_read_file(text) (granted to it): it reads "
            "files on the database server, the table's data files included"));
  CHECK(has(r.out,
            "fix: REVOKE EXECUTE ON FUNCTION pg_catalog.pg_read_file(text) FROM expo_file_reader"));
  pg.psql("REVOKE EXECUTE ON FUNCTION pg_catalog.pg_read_file(text) FROM expo_file_reader");
  // The REVOKE is DDL: a session decided on the catalog that has seen it may
  // run DO (wait for that catalog, not for a time).
  Outcome after;
  until([&] {
    pqxx::connection c(f.proxy->conninfo("expo_file_reader"));
    after = run(c, code);
    return after.sqlstate.empty();
  });
  CHECK_MESSAGE(after.sqlstate.empty(), after.message);
  const auto clean = run_command({kanon_executable(), "check", "--config", f.proxy->config_path(),
                                  "--role", "expo_file_reader"});
  INFO(clean.out << clean.err);
  CHECK(clean.exit_code == 0);
  pg.psql("DROP ROLE expo_file_reader");
}

// Every entry of access/direct_access.h, held by a login on a real
// PostgreSQL 15: the proxy's query (RoleDirectory::reads_nothing_protected)
// counts it and kanon check reports it with the table's fix; neither does
// before it is held or after the fix. An entry one of them leaves out
// fails here.
TEST_CASE("every path of the direct-access table: the proxy counts it, kanon check reports it") {
  namespace access = kanon::access;
  auto& f = fixture();
  auto& pg = PgSandbox::shared();
  pg.psql("DROP ROLE IF EXISTS expo_holder; CREATE ROLE expo_holder LOGIN");
  // dblink_connect_u is dblink's; the extension goes again at the end.
  pg.psql(
      "DROP SCHEMA IF EXISTS expo_ext CASCADE; CREATE SCHEMA expo_ext; "
      "CREATE EXTENSION dblink SCHEMA expo_ext; "
      "REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA expo_ext FROM PUBLIC; "
      "GRANT USAGE ON SCHEMA expo_ext TO expo_holder");
  kanon::proxy::RoleDirectory roles(pg.conninfo("postgres"), std::chrono::seconds(0));
  uint64_t version = 0;  // a new one for each question: no cached verdict
  const auto reads_nothing = [&] {
    return roles.reads_nothing_protected("expo_holder", {}, ++version);
  };
  const auto check = [&] {
    return run_command(
        {kanon_executable(), "check", "--config", f.proxy->config_path(), "--role", "expo_holder"});
  };
  pqxx::connection direct(pg.conninfo("postgres"));
  size_t checked = 0;
  for (const auto& a : access::direct_access()) {
    if (a.kind == access::Kind::kFunction && !a.execute_is_path) continue;
    CAPTURE(a.name);
    std::string hold, undo, object, path = "server-files";
    if (a.kind == access::Kind::kAttribute) {
      hold = std::string("ALTER ROLE expo_holder ") + a.name;
      undo = std::string("ALTER ROLE expo_holder NO") + a.name;
      object = "expo_holder";
      path = kanon::base::lower(a.name);  // the report's path is the keyword
    } else if (a.kind == access::Kind::kRole) {
      hold = std::string("GRANT ") + a.name + " TO expo_holder";
      undo = std::string("REVOKE ") + a.name + " FROM expo_holder";
      object = a.name;
    } else {
      // The first overload, as the report spells it.
      const auto sig = pqxx::nontransaction(direct).exec_params(
          "SELECT format('%I.%I(%s)', n.nspname, p.proname, "
          "pg_get_function_identity_arguments(p.oid)) FROM pg_proc p "
          "JOIN pg_namespace n ON n.oid = p.pronamespace WHERE p.proname = $1 ORDER BY p.oid "
          "LIMIT 1",
          std::string(a.name));
      REQUIRE_MESSAGE(sig.size() == 1, "no function " << a.name);
      object = sig[0][0].as<std::string>();
      hold = "GRANT EXECUTE ON FUNCTION " + object + " TO expo_holder";
      undo = "REVOKE EXECUTE ON FUNCTION " + object + " FROM expo_holder";
    }
    CHECK(reads_nothing() == true);
    pg.psql(hold);
    CHECK(reads_nothing() == false);
    const auto held = check();
    INFO(held.out << held.err);
    CHECK(held.exit_code == 2);
    CHECK(has(held.out, "\nexpo_holder  " + path));
    CHECK(has(held.out, "  " + object));
    CHECK(has(held.out, a.gives));
    CHECK(has(held.out, "fix: " + access::fix(a, "expo_holder", object)));
    pg.psql(undo);
    CHECK(reads_nothing() == true);
    const auto fixed = check();
    INFO(fixed.out << fixed.err);
    CHECK(fixed.exit_code == 0);
    ++checked;
  }
  CHECK(checked == 14);
  pg.psql("DROP SCHEMA expo_ext CASCADE; DROP OWNED BY expo_holder; DROP ROLE expo_holder");
}

// Privileges on objects (rewriter/privilege_paths.h), held by a login on a
// real PostgreSQL 15: the proxy counts a privilege exactly when kanon check
// reports it. SELECT on the protected table counts without USAGE on its
// schema (the report says USAGE is all that keeps the login out); EXECUTE
// on a SECURITY DEFINER function that reads it counts; EXECUTE on a
// function that runs with its caller's rights, or on a trigger function,
// counts for neither.
TEST_CASE("every privilege path: the proxy counts it exactly when kanon check reports it") {
  auto& f = fixture();
  auto& pg = PgSandbox::shared();
  pg.psql(R"SQL(
DROP ROLE IF EXISTS expo_holder;
CREATE ROLE expo_holder LOGIN;
DROP SCHEMA IF EXISTS expo_paths CASCADE;
CREATE SCHEMA expo_paths;
GRANT USAGE ON SCHEMA expo_paths TO expo_holder;
CREATE FUNCTION expo_paths.count_definer() RETURNS bigint LANGUAGE sql SECURITY DEFINER
  AS 'SELECT count(*) FROM expo.patients';
CREATE FUNCTION expo_paths.count_invoker() RETURNS bigint LANGUAGE sql
  AS 'SELECT count(*) FROM expo.patients';
CREATE FUNCTION expo_paths.audit() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
  AS 'BEGIN PERFORM count(*) FROM expo.patients; RETURN NEW; END';
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA expo_paths FROM PUBLIC;
)SQL");
  kanon::proxy::RoleDirectory roles(pg.conninfo("postgres"), std::chrono::seconds(0));
  kanon::policy::TablePolicy policy;
  policy.schema = "expo";
  policy.table = "patients";
  uint64_t version = 0;  // a new one for each question: no cached verdict
  // The proxy's question, with the paths of the catalog as it stands now.
  const auto reads_nothing = [&] {
    pqxx::connection conn(pg.conninfo("postgres"));
    const kanon::rewriter::ObjectCatalog catalog(
        std::make_shared<const kanon::catalog::CatalogFacts>(
            kanon::catalog::read_catalog_facts(conn)),
        {policy.name()});
    return roles.reads_nothing_protected(
        "expo_holder", kanon::rewriter::privilege_paths(catalog, {policy}), ++version);
  };
  const auto check = [&] {
    return run_command(
        {kanon_executable(), "check", "--config", f.proxy->config_path(), "--role", "expo_holder"});
  };
  struct Case {
    std::string hold, undo, path, says;  // path "": no path at all
  };
  const std::vector<Case> cases = {
      {"GRANT SELECT ON expo.patients TO expo_holder",
       "REVOKE SELECT ON expo.patients FROM expo_holder", "select-table",
       "expo_holder can SELECT the protected table expo.patients without kanon (granted to it; "
       "it has no USAGE on the schema today, which alone keeps it out)"},
      {"GRANT EXECUTE ON FUNCTION expo_paths.count_definer() TO expo_holder",
       "REVOKE EXECUTE ON FUNCTION expo_paths.count_definer() FROM expo_holder", "execute-function",
       "expo_holder can EXECUTE expo_paths.count_definer() (granted to it) without kanon: it "
       "reads expo.patients"},
      {"GRANT EXECUTE ON FUNCTION expo_paths.count_invoker() TO expo_holder",
       "REVOKE EXECUTE ON FUNCTION expo_paths.count_invoker() FROM expo_holder", "", ""},
      {"GRANT EXECUTE ON FUNCTION expo_paths.audit() TO expo_holder",
       "REVOKE EXECUTE ON FUNCTION expo_paths.audit() FROM expo_holder", "", ""},
  };
  for (const auto& c : cases) {
    CAPTURE(c.hold);
    REQUIRE(reads_nothing() == true);
    pg.psql(c.hold);
    const auto held = check();
    INFO(held.out << held.err);
    if (c.path.empty()) {
      CHECK(reads_nothing() == true);
      CHECK(held.exit_code == 0);
      CHECK_FALSE(has(held.out, "\nexpo_holder  "));
    } else {
      CHECK(reads_nothing() == false);
      CHECK(held.exit_code == 2);
      CHECK(has(held.out, "\nexpo_holder  " + c.path));
      CHECK(has(held.out, c.says));
    }
    pg.psql(c.undo);
  }
  CHECK(reads_nothing() == true);
  pg.psql("DROP SCHEMA expo_paths CASCADE; DROP OWNED BY expo_holder; DROP ROLE expo_holder");
}
