// Policies per database (`database:`): one kanon in front of a cluster whose
// databases `postgres` and `shop` each hold a table public.items with its own
// data and its own policy. Each database's sessions are decided with its own
// trees and catalog; the same table name never shares a tree; exemption is per
// database; a listed database without policies is served with the statement
// rules only and becomes protected, also for open sessions, when RELOAD gives
// it policies; the console and `kanon check` address every database.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <pqxx/pqxx>

#include "tests/support/kanon_proxy.h"
#include "tests/support/pg_sandbox.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/statement_outcome.h"

using namespace kanon::testing;

namespace {

// postgres: X x5, Y x1 with k = 2: X cannot be released (the rest would keep
// one row), so every city is masked. shop: X x3, Y x3 with k = 3: X is
// released (both sides keep 3 rows), Y is not (nothing would be left beside
// it). Either tree applied to the other database's rows is wrong: shop's
// would show postgres's X, postgres's would hide shop's.
const char* const kItems = R"(
CREATE TABLE public.items (id int PRIMARY KEY, city text, note text);
GRANT SELECT ON public.items TO analyst, auditor;
)";

std::string write_file(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
  return path;
}

struct Fixture {
  Fixture() {
    auto& pg = PgSandbox::shared();
    pg.psql("CREATE ROLE auditor LOGIN; CREATE ROLE plain LOGIN");
    for (const char* db : {"shop", "archive", "third"})  // one per psql: no transaction block
      pg.psql(std::string("CREATE DATABASE ") + db);
    pg.psql(std::string(kItems) +
            "INSERT INTO items SELECT g, CASE WHEN g < 6 THEN 'X' ELSE 'Y' END, 'n' || g "
            "FROM generate_series(1, 6) g");
    pg.psql(std::string(kItems) +
                "INSERT INTO items SELECT g, CASE WHEN g < 4 THEN 'X' ELSE 'Y' END, 's' || g "
                "FROM generate_series(1, 6) g;"
                "CREATE VIEW v_items AS SELECT city, note FROM items;"
                "GRANT SELECT ON v_items TO analyst, auditor",
            "shop");
    pg.psql(std::string(kItems) +
                "INSERT INTO items SELECT g, CASE WHEN g < 5 THEN 'Z' ELSE 'W' END, 'a' || g "
                "FROM generate_series(1, 5) g",
            "archive");
    dir = scratch_path("databases");
    std::filesystem::create_directories(dir);
    write_file(dir + "/main.yaml",
               "tables:\n  - table: public.items\n    k: 2\n    quasi_identifiers: [city]\n"
               "    refresh: 1h\n");
    write_file(dir + "/shop.yaml",
               "database: shop\ntables:\n  - table: public.items\n    k: 3\n"
               "    quasi_identifiers: [city]\n    exempt: [auditor]\n    refresh: 1h\n");
    proxy = std::make_unique<KanonProxy>(pg.port(), "policies: [" + dir + "/main.yaml, " + dir +
                                                        "/shop.yaml]\ndatabases: [archive]\n"
                                                        "admin: {users: [postgres]}\n");
  }
  ~Fixture() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }

  CommandResult console(const std::string& command) {
    return run_command(
        {"psql", "-X", "-At", "-d", proxy->conninfo("postgres", "kanon"), "-c", command});
  }

  std::string dir;
  std::unique_ptr<KanonProxy> proxy;
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

const std::string kByCity = "SELECT city, count(*) FROM items GROUP BY 1 ORDER BY 1";

}  // namespace

TEST_CASE("databases: each database's sessions get its own tree, never the other's") {
  auto& f = fixture();
  INFO("kanon's log: " << f.proxy->log());
  for (bool extended : {false, true}) {
    CAPTURE(extended);
    pqxx::connection main(f.proxy->conninfo("analyst", "postgres"));
    pqxx::connection shop(f.proxy->conninfo("analyst", "shop"));
    // Alternate, so that neither database's plans or cache entries serve the
    // other's.
    for (int round = 0; round < 2; ++round) {
      CHECK(run(main, kByCity, extended).rows == "<null>|6|\n");
      CHECK(run(shop, kByCity, extended).rows == "X|3|\n<null>|3|\n");
    }
    // shop's catalog: its view is expanded with shop's masks; postgres has
    // no such view.
    CHECK(run(shop, "SELECT city, count(*) FROM v_items GROUP BY 1 ORDER BY 1", extended).rows ==
          "X|3|\n<null>|3|\n");
    CHECK(run(main, "SELECT * FROM v_items", extended).sqlstate == "42P01");
    // Three-part names: the session's own database is masked with its own
    // tree; another database's name reaches nothing (PostgreSQL refuses
    // cross-database references), whoever decides first.
    CHECK(run(shop, "SELECT city, count(*) FROM shop.public.items GROUP BY 1 ORDER BY 1", extended)
              .rows == "X|3|\n<null>|3|\n");
    const auto cross = run(shop, "SELECT city FROM postgres.public.items", extended);
    CHECK_FALSE(cross.sqlstate.empty());
    CHECK(cross.rows.empty());
  }
}

TEST_CASE("databases: exemption is per database") {
  auto& f = fixture();
  pqxx::connection shop(f.proxy->conninfo("auditor", "shop"));
  CHECK(run(shop, "SELECT count(DISTINCT note) FROM items WHERE city = 'Y'").rows == "3|\n");
  CHECK(run(shop, "SELECT note FROM items WHERE id = 4").rows == "s4|\n");
  // auditor is exempt from shop's table only: in postgres the masks apply,
  // and the statement rules too.
  pqxx::connection main(f.proxy->conninfo("auditor", "postgres"));
  CHECK(run(main, kByCity).rows == "<null>|6|\n");
  CHECK(run(main, "DO $$ BEGIN END $$").sqlstate == "42501");
  // A login without any grant could run DO if all protected tables were in
  // kanon's own database (PostgreSQL itself would keep it out); the proof is
  // read there only, so with policies in shop too it is not taken.
  pqxx::connection plain(f.proxy->conninfo("plain", "postgres"));
  const auto denied = run(plain, "DO $$ BEGIN END $$");
  CHECK(denied.sqlstate == "42501");
  CHECK(denied.message.find("opaque-code") != std::string::npos);
}

TEST_CASE("databases: unlisted databases are refused, listed ones get the statement rules") {
  auto& f = fixture();
  try {
    pqxx::connection c(f.proxy->conninfo("analyst", "third"));
    FAIL("expected the connection to be refused");
  } catch (const std::exception& e) {
    CHECK(std::string(e.what()).find("may only use a database that policies name or one listed "
                                     "under databases:: third (kanon rule "
                                     "database-not-protected)") != std::string::npos);
  }
  pqxx::connection archive(f.proxy->conninfo("analyst", "archive"));
  CHECK(run(archive, kByCity).rows == "W|1|\nZ|4|\n");
  CHECK(run(archive, "SELECT pg_read_file('PG_VERSION')").sqlstate == "42501");
  CHECK(run(archive, "DO $$ BEGIN END $$").sqlstate == "42501");
}

TEST_CASE("databases: the console and kanon check address every database") {
  auto& f = fixture();
  const auto policies = f.console("SHOW POLICIES");
  REQUIRE_MESSAGE(policies.exit_code == 0, policies.err);
  CHECK(policies.out.find("postgres|public.items|2|") != std::string::npos);
  CHECK(policies.out.find("shop|public.items|3|") != std::string::npos);

  const auto ambiguous = f.console("REFRESH public.items");
  CHECK(ambiguous.exit_code != 0);
  CHECK(ambiguous.err.find("ambiguous: qualify it with its database") != std::string::npos);
  CHECK(ambiguous.err.find("public.items, shop.public.items") != std::string::npos);

  const auto refreshed = f.console("REFRESH shop.public.items");
  REQUIRE_MESSAGE(refreshed.exit_code == 0, refreshed.err);
  CHECK(refreshed.out.find("public.items|6|") == 0);
  const auto tree = f.console("SHOW TREE shop.public.items");
  REQUIRE_MESSAGE(tree.exit_code == 0, tree.err);
  CHECK(tree.out.find("city = 'X'") != std::string::npos);
  const auto verify = f.console("VERIFY shop.public.items");
  REQUIRE_MESSAGE(verify.exit_code == 0, verify.err);
  CHECK(verify.out.find("public.items|3|3|2|0|6|") == 0);

  const auto check = run_command(
      {kanon_executable(), "check", "--config", f.proxy->config_path(), "--format", "json"});
  CHECK_MESSAGE(check.exit_code != 1, check.err);
  CHECK(check.out.find("\"database\": \"postgres, shop\"") != std::string::npos);
  CHECK(check.out.find("\"table\": \"shop.public.items\"") != std::string::npos);
}

TEST_CASE("databases: RELOAD protects a listed database, also for sessions already open") {
  auto& f = fixture();
  pqxx::connection archive(f.proxy->conninfo("analyst", "archive"));
  CHECK(run(archive, kByCity).rows == "W|1|\nZ|4|\n");
  // archive gets a policy: Z cannot be released (W alone is below k).
  write_file(f.dir + "/archive.yaml",
             "database: archive\ntables:\n  - table: public.items\n    k: 2\n"
             "    quasi_identifiers: [city]\n    refresh: 1h\n");
  std::string config;
  {
    std::ifstream in(f.proxy->config_path());
    config.assign(std::istreambuf_iterator<char>(in), {});
  }
  const std::string from = "/shop.yaml]";
  config.replace(config.find(from), from.size(), "/shop.yaml, " + f.dir + "/archive.yaml]");
  write_file(f.proxy->config_path(), config);
  const auto reloaded = f.console("RELOAD");
  REQUIRE_MESSAGE(reloaded.exit_code == 0, reloaded.err);
  CHECK(reloaded.out.find("3 protected tables, 3 built") != std::string::npos);
  CHECK(run(archive, kByCity).rows == "<null>|5|\n");
  pqxx::connection fresh(f.proxy->conninfo("analyst", "archive"));
  CHECK(run(fresh, kByCity).rows == "<null>|5|\n");
  // The statement rules of a protected database: its catalog decides.
  CHECK(run(fresh, "SELECT note FROM items WHERE id = 1").rows == "a1|\n");
}

// An index on a quasi-identifier orders a masked read's rows by the raw
// values (docs/security.md): the rule reads the session's own database's
// catalog, so shop's index denies shop's reads and leaves postgres's alone,
// and the same index name in postgres is not confused with shop's.
TEST_CASE("databases: an index on a quasi-identifier is decided in its own database") {
  auto& f = fixture();
  auto& pg = PgSandbox::shared();
  pg.psql("CREATE INDEX items_city ON public.items (city)", "shop");
  for (bool extended : {false, true}) {
    CAPTURE(extended);
    pqxx::connection shop(f.proxy->conninfo("analyst", "shop"));
    const auto denied = run(shop, "SELECT id FROM items WHERE id > 0", extended);
    CHECK(denied.sqlstate == "42501");
    CHECK_MESSAGE(denied.message.find("public.items_city (kanon rule quasi-identifier-index)") !=
                      std::string::npos,
                  denied.message);
    pqxx::connection main(f.proxy->conninfo("analyst", "postgres"));
    CHECK(run(main, kByCity, extended).rows == "<null>|6|\n");
  }
  pg.psql("DROP INDEX public.items_city", "shop");
  pg.psql("CREATE INDEX items_city ON public.items (city)");
  pqxx::connection shop(f.proxy->conninfo("analyst", "shop"));
  CHECK(run(shop, kByCity).rows == "X|3|\n<null>|3|\n");
  pqxx::connection main(f.proxy->conninfo("analyst", "postgres"));
  const auto denied = run(main, kByCity);
  CHECK(denied.sqlstate == "42501");
  CHECK_MESSAGE(denied.message.find("public.items_city") != std::string::npos, denied.message);
  pg.psql("DROP INDEX public.items_city");
  CHECK(run(main, kByCity).rows == "<null>|6|\n");
}
