// Shared snapshots (docs/operations.md, "Replicas"): two kanon processes on
// one database. Only the builder (the holder of the advisory lock) builds;
// both serve the version it stored, so their masked answers are the same; a
// REFRESH asked of the other replica is built by the builder and reaches both;
// killing the builder lets the other take over; a restarted replica serves
// the stored version at once, without building; a session in a transaction
// keeps the version it started with.
#include <doctest/doctest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <pqxx/pqxx>
#include <regex>
#include <thread>

#include "store/shared_snapshots.h"
#include "tests/support/kanon_proxy.h"
#include "tests/support/pg_sandbox.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/statement_outcome.h"
#include "tests/support/wait.h"

using namespace kanon::testing;

namespace {

// One column, no key: not linkable, so every build is a fresh tree and the
// answers below follow from the rows alone. k = 2. X x5, Y x1: X cannot be
// released (one row would stay beside it), so every city is masked. With
// two more Y rows, X is released and Y is not (nothing would stay beside it).
const std::string kMasked = "<null>|6|\n";
const std::string kReleased = "X|5|\n<null>|3|\n";
const std::string kByCity = "SELECT city, count(*) FROM cities GROUP BY 1 ORDER BY 1";

struct Fixture {
  Fixture() : pg(PgSandbox::shared()) {
    clean();
    pg.psql(
        "CREATE TABLE public.cities (city text); GRANT SELECT ON public.cities TO analyst;"
        "INSERT INTO cities SELECT CASE WHEN g < 6 THEN 'X' ELSE 'Y' END "
        "FROM generate_series(1, 6) g");
    dir = scratch_path("replicas");
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/cities.yaml")
        << "tables:\n  - table: public.cities\n    k: 2\n    quasi_identifiers: [city]\n"
           "    refresh: 1h\n";
  }
  // Also when a case stopped half-way: the next one starts from nothing.
  ~Fixture() {
    try {
      clean();
    } catch (...) {
    }
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }

  void clean() {
    pg.psql(
        "DROP TABLE IF EXISTS public.cities; DO $$ BEGIN "
        "IF pg_catalog.to_regclass('kanon.snapshots') IS NOT NULL THEN "
        "DELETE FROM kanon.snapshots; DELETE FROM kanon.snapshot_servers; END IF; END $$");
  }

  // Returned once it serves: kanon listens before its first builds, and
  // clients wait in the backlog until they are done.
  std::unique_ptr<KanonProxy> start(const std::string& name) {
    auto proxy = std::make_unique<KanonProxy>(pg.port(), "policies: [" + dir +
                                                             "/cities.yaml]\n"
                                                             "admin: {users: [postgres]}\n"
                                                             "snapshots: {replica: " +
                                                             name + "}\n");
    run_command(
        {"psql", "-X", "-At", "-d", proxy->conninfo("postgres", "kanon"), "-c", "SHOW STATS"});
    return proxy;
  }

  std::string stored() {  // version|built_by of every stored snapshot
    return pg.psql(
        "SELECT string_agg(version || ':' || built_by, ' ' ORDER BY version) FROM kanon.snapshots "
        "WHERE table_name = 'public.cities'");
  }

  PgSandbox& pg;
  std::string dir;
};

// INFO captures by reference: a proxy may be gone when a check fails.
std::string log_of(const std::unique_ptr<KanonProxy>& proxy) {
  return proxy ? proxy->log() : "(stopped)";
}

CommandResult console(KanonProxy& proxy, const std::string& command) {
  return run_command(
      {"psql", "-X", "-At", "-F", "|", "-d", proxy.conninfo("postgres", "kanon"), "-c", command});
}

std::string masked(KanonProxy& proxy) {
  pqxx::connection c(proxy.conninfo("analyst", "postgres"));
  return run(c, kByCity, false).rows;
}

// Polls (no timing asserted) until `proxy` answers `want`.
std::string eventually(KanonProxy& proxy, const std::string& want) {
  std::string got;
  until([&] { return (got = masked(proxy)) == want; });
  return got;
}

// Polls (no timing asserted) until `proxy`'s log holds `line`.
bool logged(KanonProxy& proxy, const std::string& line) {
  return until([&] { return proxy.log().find(line) != std::string::npos; });
}

}  // namespace

TEST_CASE("replicas: one builds, both serve its version; refresh, failover, restart") {
  Fixture f;
  auto a = f.start("alpha");
  auto b = f.start("beta");
  INFO("alpha's log: " << log_of(a));
  INFO("beta's log: " << log_of(b));

  // Only alpha built: one stored version, by alpha, served by both.
  CHECK(f.stored() == "1:alpha\n");
  CHECK(masked(*a) == kMasked);
  CHECK(masked(*b) == kMasked);
  {
    const auto shown = console(*b, "SHOW SNAPSHOTS");
    REQUIRE(shown.exit_code == 0);
    // database|table|version|built_at|built_by|fingerprint|policy_hash|served_by|builder|here
    CHECK(shown.out.find("|public.cities|1|") != std::string::npos);
    CHECK(shown.out.find("|alpha|") != std::string::npos);
    CHECK(shown.out.find("alpha, beta|alpha|beta") != std::string::npos);
  }

  // New rows, REFRESH asked of beta: alpha builds version 2, both serve it.
  f.pg.psql("INSERT INTO cities VALUES ('Y'), ('Y')");
  const auto refreshed = console(*b, "REFRESH public.cities");
  CHECK(refreshed.exit_code == 0);
  CHECK(refreshed.err == "");
  CHECK(f.stored() == "1:alpha 2:alpha\n");
  CHECK(masked(*b) == kReleased);
  CHECK(eventually(*a, kReleased) == kReleased);
  // Both say which version they serve now: the builder after building it,
  // beta after loading it.
  CHECK(logged(*a, "policy public.cities: now serving a tree of"));
  CHECK(logged(*a, "snapshot version 2 built by alpha"));
  CHECK(logged(*b, "snapshot version 2 built by alpha"));
  // Once each: alpha's watcher hears its own NOTIFY, and loading the version
  // it serves already publishes nothing. (A late duplicate could only make
  // this pass wrongly, never fail wrongly.)
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto count = [](const std::string& log, const std::string& line) {
    size_t n = 0;
    for (size_t at = log.find(line); at != std::string::npos; at = log.find(line, at + 1)) ++n;
    return n;
  };
  CHECK(count(a->log(), "snapshot version 2 built by alpha") == 1);
  CHECK(count(b->log(), "snapshot version 2 built by alpha") == 1);

  // The builder is killed: beta's next refresh takes over (version 3 by beta).
  REQUIRE(a->process().signal_and_wait(SIGKILL, 10) == -SIGKILL);
  a.reset();
  f.pg.psql(
      "DELETE FROM cities WHERE city = 'Y' AND ctid IN (SELECT ctid FROM cities WHERE "
      "city = 'Y' LIMIT 2)");
  bool took_over = false;
  for (int i = 0; i < 600 && !took_over; ++i) {  // until PostgreSQL saw alpha's connection end
    const auto r = console(*b, "REFRESH public.cities");
    took_over = r.exit_code == 0 && f.stored().find("beta") != std::string::npos;
    if (!took_over) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK(took_over);
  CHECK(f.stored() == "1:alpha 2:alpha 3:beta\n");
  CHECK(masked(*b) == kMasked);

  // alpha restarts: it serves version 3 at once and builds nothing.
  auto again = f.start("alpha");
  INFO("alpha's second log: " << log_of(again));
  CHECK(masked(*again) == kMasked);
  const auto shown = console(*again, "SHOW SNAPSHOTS");
  CHECK(shown.out.find("|public.cities|3|") != std::string::npos);
  CHECK(shown.out.find("|beta|alpha\n") != std::string::npos);  // builder beta, served here
  CHECK(f.stored() == "1:alpha 2:alpha 3:beta\n");
}

TEST_CASE("replicas: a session keeps one version of each table for its whole transaction") {
  Fixture f;
  auto a = f.start("one");
  auto b = f.start("two");
  INFO("one's log: " << log_of(a));
  INFO("two's log: " << log_of(b));
  pqxx::connection c(b->conninfo("analyst", "postgres"));
  for (bool extended : {false, true}) {
    CAPTURE(extended);
    REQUIRE(run(c, "BEGIN", extended).sqlstate == "");
    CHECK(run(c, kByCity, extended).rows == kMasked);
    // A new version reaches both replicas while the transaction is open.
    f.pg.psql("INSERT INTO cities VALUES ('Y'), ('Y')");
    REQUIRE(console(*a, "REFRESH public.cities").exit_code == 0);
    CHECK(eventually(*b, kReleased) == kReleased);  // other sessions see it
    // Still the first version here (the new rows are counted, their cities
    // masked as that version masks them).
    CHECK(run(c, kByCity, extended).rows == "<null>|8|\n");
    REQUIRE(run(c, "COMMIT", extended).sqlstate == "");
    CHECK(run(c, kByCity, extended).rows == kReleased);
    // Back to the first data for the next round.
    f.pg.psql(
        "DELETE FROM cities WHERE ctid IN (SELECT ctid FROM cities WHERE city = 'Y' "
        "LIMIT 2)");
    REQUIRE(console(*a, "REFRESH public.cities").exit_code == 0);
    CHECK(eventually(*b, kMasked) == kMasked);
  }
}

TEST_CASE("replicas: both serve the builder's history-aware release; one release per refresh") {
  auto& pg = PgSandbox::shared();
  pg.psql(
      "CREATE TABLE public.visits (id int PRIMARY KEY, city text, age int);"
      "GRANT SELECT ON public.visits TO analyst;"
      "INSERT INTO visits SELECT g, (ARRAY['X','Y','Z'])[1 + g % 3], 20 + g % 7 "
      "FROM generate_series(1, 60) g");
  const std::string dir = scratch_path("replicas-h");
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/visits.yaml")
      << "tables:\n  - table: public.visits\n    k: 4\n    quasi_identifiers: [city, age]\n"
         "    refresh: 1h\n";
  const auto start = [&](const std::string& name) {
    auto p = std::make_unique<KanonProxy>(pg.port(), "policies: [" + dir +
                                                         "/visits.yaml]\nadmin: {users: "
                                                         "[postgres]}\nsnapshots: {replica: " +
                                                         name + "}\n");
    run_command({"psql", "-X", "-At", "-d", p->conninfo("postgres", "kanon"), "-c", "SHOW STATS"});
    return p;
  };
  auto a = start("h1");
  auto b = start("h2");
  INFO("h1's log: " << log_of(a));
  INFO("h2's log: " << log_of(b));
  const std::string query = "SELECT city, age, count(*) FROM visits GROUP BY 1, 2 ORDER BY 1, 2";
  const auto answer = [&](KanonProxy& p) {
    pqxx::connection c(p.conninfo("analyst", "postgres"));
    return run(c, query, false).rows;
  };
  const auto releases = [&] {
    return pg.psql("SELECT count(*) FROM kanon.releases WHERE table_name = 'public.visits'");
  };
  CHECK(releases() == "1\n");  // the builder's only
  const std::string first = answer(*a);
  CHECK(first.find("<null>") != std::string::npos);  // something is masked
  CHECK(answer(*b) == first);
  // 10% new rows, REFRESH asked of h2: one new release, built by h1.
  pg.psql(
      "INSERT INTO visits SELECT g, (ARRAY['X','Y','Z'])[1 + g % 3], 20 + g % 5 "
      "FROM generate_series(61, 66) g");
  REQUIRE(console(*b, "REFRESH public.visits").exit_code == 0);
  CHECK(releases() != "1\n");  // (with the catch-up release of rows shown live meanwhile)
  CHECK(pg.psql("SELECT string_agg(built_by, ' ' ORDER BY version) FROM kanon.snapshots WHERE "
                "table_name = 'public.visits'") == "h1 h1\n");  // h2 built (and released) nothing
  std::string second;
  until([&] { return (second = answer(*a)) == answer(*b); });  // until h1 serves what it stored
  CHECK(second == answer(*b));
  // VERIFY HISTORY on either replica: no row below k for no reason, none
  // through updates or deletions (rows_below_k, ..._through_updates,
  // ..._arrived_late, ..._through_deletions, verdict); the new rows, shown
  // at once, may be below k among themselves (reported).
  const auto verified = console(*b, "VERIFY HISTORY public.visits");
  CHECK(verified.exit_code == 0);
  CAPTURE(verified.out);
  CHECK(std::regex_search(verified.out, std::regex("\\|0\\|0\\|[0-9]+\\|0\\|[^|]*\n$")));
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

TEST_CASE("replicas: a restricted role cannot make the builder build, nor fail a refresh") {
  Fixture f;
  auto a = f.start("b1");
  auto b = f.start("b2");
  INFO("b1's log: " << log_of(a));
  INFO("b2's log: " << log_of(b));
  REQUIRE(f.stored() == "1:b1\n");
  // Any role may NOTIFY any channel, and pg_locks shows the builder's group.
  pqxx::connection analyst(f.pg.conninfo("analyst", "postgres"));
  pqxx::nontransaction tx(analyst);
  const auto group =
      tx.exec("SELECT objid FROM pg_locks WHERE locktype = 'advisory' AND classid = " +
              std::to_string(kanon::store::kLeaderLockClass))[0][0]
          .as<std::string>();
  for (const char* verb : {"refresh", "reanonymize"})
    tx.exec_params("SELECT pg_notify('kanon_refresh', $1 || ' ' || $2 || ' public.cities')", verb,
                   group);
  tx.exec("SELECT pg_notify('kanon_refresh', 'refresh public.cities')");
  tx.exec("SELECT pg_notify('kanon_refresh', '')");
  // A forged failure for a table, and a forged announcement.
  tx.exec("SELECT pg_notify('kanon_snapshot', E'public.cities\\tforged failure')");
  tx.exec("SELECT pg_notify('kanon_snapshot', 'public.cities')");
  // The rows it would need are not writable to it.
  CHECK_THROWS(
      tx.exec_params("INSERT INTO kanon.refresh_requests (grp, verb, table_name, asked_by) "
                     "VALUES ($1::int, 'refresh', 'public.cities', 'x')",
                     group));
  std::this_thread::sleep_for(std::chrono::seconds(2));  // what a builder would need to start
  CHECK(f.stored() == "1:b1\n");                         // nothing built
  // A real REFRESH asked of b2 still works: it is not failed by the forged
  // notice, and the builder builds once.
  f.pg.psql("INSERT INTO cities VALUES ('Y'), ('Y')");
  const auto refreshed = console(*b, "REFRESH public.cities");
  CHECK(refreshed.exit_code == 0);
  CHECK(refreshed.err == "");
  CHECK(f.stored() == "1:b1 2:b1\n");
  CHECK(masked(*b) == kReleased);
}
