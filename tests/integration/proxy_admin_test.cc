// The admin console through psql (virtual database `kanon`), SHOW STATS and
// the Prometheus endpoint counting what restricted sessions did, REFRESH
// after rows were deleted (VERIFY reveals the broken k first), and RELOAD —
// by command and by SIGHUP — while clients keep querying.
#include <doctest/doctest.h>
#include <signal.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <pqxx/pqxx>
#include <regex>
#include <sstream>
#include <thread>

#include "tests/support/kanon_proxy.h"
#include "tests/support/pg_sandbox.h"
#include "tests/support/raw_client.h"
#include "tests/support/scratch_dir.h"

using namespace kanon::testing;

namespace {

// A policy file of its own, so RELOAD can change it.
struct Fixture {
  std::string policy_path;
  uint16_t metrics_port = free_port();
  std::unique_ptr<KanonProxy> proxy;

  Fixture() {
    auto& pg = PgSandbox::shared();
    pg.psql(
        "DROP TABLE IF EXISTS public.rtest; CREATE TABLE public.rtest AS "
        "SELECT * FROM public.people; GRANT SELECT ON public.rtest TO analyst;");
    policy_path = scratch_path("kanon-admin-policy.yaml");
    write_policy(2);
    proxy = std::make_unique<KanonProxy>(pg.port(),
                                         "admin: {database: kanon, users: [postgres]}\n"
                                         "metrics: {listen: \"127.0.0.1:" +
                                             std::to_string(metrics_port) +
                                             "\"}\n"
                                             "policies: [" +
                                             source_dir() + "/config/policies/people.yaml, " +
                                             policy_path + "]\n");
  }
  ~Fixture() { std::filesystem::remove(policy_path); }

  void write_policy(int k, const std::string& mode = "inline") {
    std::ofstream(policy_path) << "tables:\n"
                                  "  - table: public.rtest\n"
                                  "    k: "
                               << k
                               << "\n"
                                  "    mode: "
                               << mode
                               << "\n"
                                  "    quasi_identifiers: [occupation, city, state]\n"
                                  "    direct_identifiers: {name: null, ssn: null}\n"
                                  "    exempt: [postgres]\n";
  }

  // psql on the console; rows as "a|b|c" lines.
  CommandResult console(const std::string& command, const std::string& user = "postgres") {
    return run_command({"psql", "-X", "-At", "-d", proxy->conninfo(user, "kanon"), "-c", command});
  }
  std::string console_ok(const std::string& command) {
    const auto r = console(command);
    REQUIRE_MESSAGE(r.exit_code == 0, command << ": " << r.err);
    return r.out;
  }
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

// The value of `stat` in SHOW STATS output.
uint64_t stat(const std::string& show_stats, const std::string& name) {
  std::smatch m;
  if (!std::regex_search(show_stats, m, std::regex("(^|\n)" + name + "\\|([0-9]+)")))
    FAIL("no stat " << name << " in:\n" << show_stats);
  return std::stoull(m[2]);
}

std::string http_get(uint16_t port, const std::string& path) {
  RawClient c(port);
  c.send("GET " + path + " HTTP/1.0\r\n\r\n");
  const auto bytes = c.read_until_close(5);
  return std::string(bytes.begin(), bytes.end());
}

}  // namespace

TEST_CASE("console: help, policies, tree, predicates, verify; errors are clear") {
  auto& f = fixture();
  const std::string help = f.console_ok("SHOW HELP");
  for (const char* cmd : {"SHOW POLICIES", "SHOW TREE <table>", "SHOW PREDICATES <table>",
                          "SHOW STATS", "SHOW CLIENTS", "RELOAD", "REFRESH <table>",
                          "VERIFY <table>", "SHOW CLASSES <table>", "SHOW UTILITY <table>"})
    CHECK(help.find(cmd) != std::string::npos);

  const std::string policies = f.console_ok("show policies;");
  CHECK(policies.find("public.people|2||occupation, city, state|inline|postgres|600s|built|") !=
        std::string::npos);
  CHECK(policies.find("public.rtest|2|") != std::string::npos);

  // The seed's five cohorts, with their rows and released attributes.
  const std::string tree = f.console_ok("SHOW TREE people");
  CHECK(tree ==
        "D111|state = 'OH' AND city = 'Hamlet' AND occupation = 'Farmer'|2|occupation, city, "
        "state\n"
        "D112|state = 'OH' AND city = 'Hamlet' AND occupation <> 'Farmer'|2|city, state\n"
        "D12|state = 'OH' AND city <> 'Hamlet'|2|state\n"
        "D21|state <> 'OH' AND occupation = 'Accountant'|3|occupation\n"
        "D22|state <> 'OH' AND occupation <> 'Accountant'|2|\n");

  const std::string predicates = f.console_ok("SHOW PREDICATES public.people");
  CHECK(predicates.find("state|(state = OH)|1|CASE WHEN") != std::string::npos);
  CHECK(predicates.find("city|((state = OH) AND (city = Hamlet))|2|") != std::string::npos);

  // Then the risk columns (tests/integration/risk_test.cc checks them
  // against SQL): classes of 2, 2, 2, 3, 2 rows, threshold 1/k, no population.
  CHECK(f.console_ok("VERIFY people") ==
        "public.people|2|2|5|0|11|0.4545|ok|0.5|8|0.454545|0|0|0.5|||||0.454545\n");

  const auto unknown = f.console("SHOW NONSENSE");
  CHECK(unknown.exit_code != 0);
  CHECK(unknown.err.find("unknown command \"SHOW NONSENSE\"; SHOW HELP lists the commands") !=
        std::string::npos);
  const auto missing = f.console("SHOW TREE nosuchtable");
  CHECK(missing.exit_code != 0);
  CHECK(missing.err.find("nosuchtable") != std::string::npos);

  const auto refused = f.console("SHOW HELP", "analyst");
  CHECK(refused.exit_code != 0);
  CHECK(refused.err.find("may not use the admin console") != std::string::npos);
}

// A statement sent again with other integer constants (as pgbench and ORMs
// write them) is decided once, by its shape (rewriter/literal_shape.h), and
// each text runs with its own constants: every row is the one it asked for.
TEST_CASE("statements that differ only in integer constants: decided once, each with its own") {
  auto& f = fixture();
  const std::string before = f.console_ok("SHOW STATS");
  pqxx::connection c(f.proxy->conninfo("analyst"));
  pqxx::nontransaction tx(c);
  pqxx::connection d(PgSandbox::shared().conninfo("postgres"));
  pqxx::nontransaction direct(d);
  const auto ids = direct.exec("SELECT id FROM public.people ORDER BY id");
  REQUIRE(ids.size() >= 10);
  // The first of each shape is decided in full: with a constant no number
  // in the text sent could equal (the catalog guard's generation, say).
  CHECK(tx.exec("SELECT id, city FROM people WHERE id = 1000001").empty());
  CHECK(tx.exec("SELECT count(*) FROM people WHERE id IN (1000001, 1000002)")[0][0].as<int>() == 0);
  for (const auto& row : ids) {
    const std::string id = row[0].c_str();
    const auto r = tx.exec("SELECT id, city FROM people WHERE id = " + id);
    REQUIRE(r.size() == 1);
    CHECK(std::string(r[0][0].c_str()) == id);
    // The same answer as the text decided on its own (the comment makes
    // each a shape of its own).
    const auto alone =
        tx.exec("SELECT id, city FROM people WHERE id = " + id + " /* alone " + id + " */");
    REQUIRE(alone.size() == 1);
    CHECK(std::string(r[0][1].is_null() ? "(null)" : r[0][1].c_str()) ==
          std::string(alone[0][1].is_null() ? "(null)" : alone[0][1].c_str()));
  }
  // Two constants, an IN list: each row set is its own.
  const auto two = tx.exec("SELECT count(*) FROM people WHERE id IN (" +
                           std::string(ids[0][0].c_str()) + ", " + ids[1][0].c_str() + ")");
  CHECK(two[0][0].as<int>() == 2);
  const auto none = tx.exec("SELECT count(*) FROM people WHERE id IN (987654, 987655)");
  CHECK(none[0][0].as<int>() == 0);
  const std::string after = f.console_ok("SHOW STATS");
  // Every `id = N` of a row and both IN lists, but for the first of each
  // shape after a new snapshot (a catalog notification of an earlier
  // case's DDL may land meanwhile on busy cores): most of them.
  const uint64_t shared = stat(after, "cache_shape_hits") - stat(before, "cache_shape_hits");
  CHECK(shared <= ids.size() + 2);
  CHECK(shared >= ids.size() / 2);
}

TEST_CASE("SHOW STATS, SHOW CLIENTS and /metrics count what restricted sessions do") {
  auto& f = fixture();
  const std::string before = f.console_ok("SHOW STATS");
  {
    pqxx::connection c(f.proxy->conninfo("analyst"));
    pqxx::nontransaction tx(c);
    tx.exec("SELECT city FROM people");                // rewritten
    tx.exec("SELECT city FROM people WHERE id = 3");   // rewritten
    tx.exec("SELECT 1");                               // passed
    CHECK_THROWS(tx.exec("SELECT xmin FROM people"));  // denied: system-column
    tx.exec("SELECT city FROM people");                // rewritten, from the cache
    const std::string clients = f.console_ok("SHOW CLIENTS");
    CHECK(clients.find("|analyst|postgres|127.0.0.1:") != std::string::npos);
    CHECK(clients.find("|restricted|no|") != std::string::npos);
    CHECK(clients.find("|postgres|kanon|") != std::string::npos);
  }
  const std::string after = f.console_ok("SHOW STATS");
  CHECK(stat(after, "statements_rewritten") - stat(before, "statements_rewritten") == 3);
  CHECK(stat(after, "statements_passed") - stat(before, "statements_passed") == 1);
  CHECK(stat(after, "statements_denied") - stat(before, "statements_denied") == 1);
  CHECK(stat(after, "cache_hits") - stat(before, "cache_hits") >= 1);

  const std::string metrics = http_get(f.metrics_port, "/metrics");
  CHECK(metrics.rfind("HTTP/1.1 200 OK", 0) == 0);
  const std::string now = f.console_ok("SHOW STATS");
  CHECK(metrics.find("kanon_statements_rewritten_total " +
                     std::to_string(stat(now, "statements_rewritten"))) != std::string::npos);
  CHECK(metrics.find("kanon_statements_denied_total{rule=\"system-column\"} ") !=
        std::string::npos);
  CHECK(metrics.find("# TYPE kanon_rewrite_seconds histogram") != std::string::npos);
  CHECK(http_get(f.metrics_port, "/other").rfind("HTTP/1.1 404", 0) == 0);

  // The log line of the denial names the rule and holds no literal value.
  const std::string log = f.proxy->log();
  CHECK(log.find("denied: user=analyst") != std::string::npos);
  CHECK(log.find("rule=system-column object=public.people") != std::string::npos);
  // The start-up check of schema kanon said where it stands.
  CHECK((log.find(": schema kanon is at version ") != std::string::npos ||
         log.find(": no schema kanon yet: version ") != std::string::npos));
}

TEST_CASE(
    "io_placement: spread (the default) takes turns; pack keeps an idle server on one thread") {
  auto& pg = PgSandbox::shared();
  const auto sessions_per_thread = [&](const std::string& placement) {
    KanonProxy proxy(pg.port(), "threads: 2\n" + placement +
                                    "admin: {database: kanon, users: [postgres]}\n"
                                    "policies: [" +
                                    source_dir() + "/config/policies/people.yaml]\n");
    pqxx::connection a(proxy.conninfo("analyst"));
    pqxx::connection b(proxy.conninfo("postgres"));
    const auto r = run_command(
        {"psql", "-X", "-At", "-d", proxy.conninfo("postgres", "kanon"), "-c", "SHOW STATS"});
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(std::regex_search(r.out, std::regex("(^|\n)io_thread_load\\|[0-9.]+ [0-9.]+\n")));
    std::smatch m;
    REQUIRE(
        std::regex_search(r.out, m, std::regex("(^|\n)io_thread_sessions\\|([0-9]+) ([0-9]+)\n")));
    return std::pair{std::stoi(m[2]), std::stoi(m[3])};
  };
  // The two sessions and the console's own (and, if it has not ended yet,
  // the start-up probe's), all on the first thread.
  const auto packed = sessions_per_thread("io_placement: pack\n");
  CHECK(packed.first >= 3);
  CHECK(packed.second == 0);
  // In turns: both threads have some.
  for (const char* placement : {"", "io_placement: spread\n"}) {
    const auto spread = sessions_per_thread(placement);
    CHECK(spread.first + spread.second >= 3);
    CHECK(spread.first > 0);
    CHECK(spread.second > 0);
  }
}

TEST_CASE("rows deleted: VERIFY shows k broken, REFRESH rebuilds and masks follow") {
  auto& f = fixture();
  pqxx::connection c(f.proxy->conninfo("analyst"));
  const auto farmers = [&] {
    pqxx::nontransaction tx(c);
    return tx.exec("SELECT count(*) FROM rtest WHERE occupation = 'Farmer'")[0][0].as<int>();
  };
  CHECK(farmers() == 2);  // cohort D111 releases its occupation
  CHECK(f.console_ok("VERIFY rtest") ==
        "public.rtest|2|2|5|0|11|0.4545|ok|0.5|8|0.454545|0|0|0.5|||||0.454545\n");
  PgSandbox::shared().psql("DELETE FROM public.rtest WHERE id = 6");  // a Farmer
  // The old masks now release a class of one.
  const std::string broken = f.console_ok("VERIFY rtest");
  CHECK(broken.find("public.rtest|2|1|") == 0);
  CHECK(broken.find("BELOW k: run REFRESH") != std::string::npos);
  const std::string refreshed = f.console_ok("REFRESH rtest");
  CHECK(refreshed.find("public.rtest|10|") == 0);
  CHECK(f.console_ok("VERIFY rtest").find("|ok|") != std::string::npos);
  CHECK(farmers() == 0);  // the lone Farmer is no longer released
}

TEST_CASE("REANONYMIZE and VERIFY HISTORY: an update a live mode shows is reported apart") {
  auto& f = fixture();
  // rtest (a copy without a primary key) is linked by its other columns.
  const auto re = f.console("REANONYMIZE rtest");
  REQUIRE(re.exit_code == 0);
  CHECK(re.out.find("public.rtest|10|") == 0);
  CHECK(re.err.find("starts a new release baseline") != std::string::npos);
  const std::string prefix = "public.rtest|non-quasi-identifier columns (id, diagnosis)|";
  const std::string clean = f.console_ok("VERIFY HISTORY rtest");
  CHECK(clean.find(prefix) == 0);
  // real k 2, 10 linked rows, none new, none below k for any reason
  CHECK(clean.ends_with("|2|10|0|0|0|0|0|ok\n"));
  // An accountant of Hamlet becomes a lawyer of Washington: the inline masks
  // show it at once, and no earlier release had anyone make that move.
  PgSandbox::shared().psql(
      "UPDATE public.rtest SET occupation = 'Lawyer', city = 'Washington', state = 'DC' "
      "WHERE id = 4");
  const std::string moved = f.console_ok("VERIFY HISTORY rtest");
  CAPTURE(moved);
  CHECK(moved.find(prefix) == 0);
  // Two rows below k, both through the update: the one updated (alone in its
  // move) and the one left alone in its former cohort.
  CHECK(moved.find("|10|0|0|2|0|0|2 rows below k through updates of quasi-identifiers, which a "
                   "live mode shows at once: use mode: materialized\n") != std::string::npos);
  const auto bad = f.console("VERIFY HISTORY rtest SINCE x");
  CHECK(bad.exit_code != 0);
  CHECK(bad.err.find("SINCE needs a release version number") != std::string::npos);
  PgSandbox::shared().psql(
      "UPDATE public.rtest SET occupation = 'Accountant', city = 'Hamlet', state = 'OH' "
      "WHERE id = 4");
}

// The fields of `table`'s line in SHOW POLICIES.
std::vector<std::string> policy_line(Fixture& f, const std::string& table) {
  const std::string all = f.console_ok("SHOW POLICIES");
  std::istringstream lines(all);
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string> fields;
    std::istringstream in(line);
    for (std::string field; std::getline(in, field, '|');) fields.push_back(field);
    if (line.ends_with('|')) fields.emplace_back();
    if (fields.size() > 1 && fields[1] == table) return fields;
  }
  FAIL("no line for " << table << " in:\n" << all);
  return {};
}

TEST_CASE("SHOW POLICIES: held, the keys a materialized release masks (kanon.held_keys)") {
  auto& f = fixture();
  auto held_keys = [] {
    return PgSandbox::shared().psql(
        "SELECT count(*) FROM kanon.held_keys WHERE table_name = 'public.rtest'");
  };
  // Inline: no column value.
  auto line = policy_line(f, "public.rtest");
  REQUIRE(line.size() == 20);
  CHECK(line[5] == "inline");
  CHECK(line[17].empty());
  CHECK(line[18].empty());   // no person:
  CHECK(line[19] == "sql");  // the default evaluator
  f.write_policy(2, "materialized");
  REQUIRE(f.console_ok("RELOAD").find("2 built") != std::string::npos);
  line = policy_line(f, "public.rtest");
  CHECK(line[5] == "materialized");
  CHECK(line[17] == "0");
  CHECK(held_keys().find('0') == 0);
  // The accountant of Hamlet becomes a lawyer of Washington: alone in that
  // move, so the refresh holds rows that shared its earlier cohort.
  PgSandbox::shared().psql(
      "UPDATE public.rtest SET occupation = 'Lawyer', city = 'Washington', state = 'DC' "
      "WHERE id = 4");
  f.console_ok("REFRESH rtest");
  line = policy_line(f, "public.rtest");
  const std::string held = line[17];
  CAPTURE(held);
  REQUIRE(!held.empty());
  CHECK(std::stoi(held) >= 1);
  CHECK(held_keys().find(held) == 0);
  CHECK(f.console_ok("VERIFY HISTORY rtest").ends_with("|0|0|ok\n"));
  PgSandbox::shared().psql(
      "UPDATE public.rtest SET occupation = 'Accountant', city = 'Hamlet', state = 'OH' "
      "WHERE id = 4");
  f.write_policy(2);
  REQUIRE(f.console_ok("RELOAD").find("2 built") != std::string::npos);
  CHECK(policy_line(f, "public.rtest")[17].empty());
}

TEST_CASE("RELOAD and SIGHUP re-read policies while clients keep querying") {
  auto& f = fixture();
  std::atomic<bool> stop{false};
  std::atomic<int> ok{0}, failed{0};
  std::vector<std::thread> clients;
  for (int i = 0; i < 3; ++i)
    clients.emplace_back([&] {
      pqxx::connection c(f.proxy->conninfo("analyst"));
      while (!stop) {
        try {
          pqxx::nontransaction tx(c);
          tx.exec("SELECT occupation, city, state FROM rtest");
          ++ok;
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
        } catch (const std::exception& e) {
          MESSAGE(e.what());
          ++failed;
        }
      }
    });
  f.write_policy(3);
  const std::string reloaded = f.console_ok("RELOAD");
  CHECK(reloaded.find("reloaded: 2 protected tables, 2 built") != std::string::npos);
  CHECK(f.console_ok("SHOW POLICIES").find("public.rtest|3|") != std::string::npos);
  CHECK(f.console_ok("VERIFY rtest").find("public.rtest|3|") == 0);

  f.write_policy(4);
  REQUIRE(kill(f.proxy->process().pid(), SIGHUP) == 0);
  bool seen = false;
  for (int i = 0; i < 1200 && !seen; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    seen = f.console_ok("SHOW POLICIES").find("public.rtest|4|") != std::string::npos;
  }
  CHECK(seen);
  stop = true;
  for (auto& t : clients) t.join();
  CHECK(ok > 0);
  CHECK(failed == 0);

  // A broken policy file: RELOAD fails, says why, and changes nothing.
  std::ofstream(f.policy_path) << "tables:\n  - table: public.rtest\n    k: 1\n";
  const auto bad = f.console("RELOAD");
  CHECK(bad.exit_code != 0);
  CHECK(bad.err.find("RELOAD failed, nothing changed") != std::string::npos);
  CHECK(bad.err.find("k") != std::string::npos);
  CHECK(f.console_ok("SHOW POLICIES").find("public.rtest|4|") != std::string::npos);
}

TEST_CASE("SHOW CATALOG: the guard is on with a superuser service account, off and why without") {
  auto& f = fixture();
  auto& pg = PgSandbox::shared();
  // database|relations|functions|generation|read_ms|guard|watcher|notifications|refreshes|error
  const auto generation = [](const std::string& row) {
    std::smatch m;
    REQUIRE_MESSAGE(
        std::regex_search(row, m, std::regex("^postgres\\|[0-9]+\\|[0-9]+\\|([0-9]+)\\|")), row);
    return std::stoll(m[1]);
  };
  std::string out;
  for (int i = 0; i < 1200; ++i) {  // until the watcher listens (no timing asserted)
    out = f.console_ok("SHOW CATALOG");
    if (out.find("|on: kanon.catalog_is (PL/pgSQL)|listening|") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  CHECK_MESSAGE(out.find("|on: kanon.catalog_is (PL/pgSQL)|listening|") != std::string::npos, out);
  const int64_t before = generation(out);
  CHECK(before > 0);
  pg.psql("CREATE TABLE public.show_catalog_t (a int); DROP TABLE public.show_catalog_t");
  int64_t after = before;
  for (int i = 0; i < 1200 && after == before; ++i) {
    after = generation(f.console_ok("SHOW CATALOG"));
    if (after == before) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  CHECK(after > before);
  // A kanon whose service account is no superuser installs no event
  // trigger: its console says so, with the reason.
  pg.psql(
      "DROP ROLE IF EXISTS kanon_plain_service; CREATE ROLE kanon_plain_service LOGIN; "
      "GRANT pg_read_all_data TO kanon_plain_service");
  KanonProxy plain(pg.port(),
                   "admin: {database: kanon, users: [postgres]}\npolicies: [" + source_dir() +
                       "/config/policies/people.yaml]\n",
                   ", user: kanon_plain_service");
  const auto shown = run_command(
      {"psql", "-X", "-At", "-d", plain.conninfo("postgres", "kanon"), "-c", "SHOW CATALOG"});
  REQUIRE_MESSAGE(shown.exit_code == 0, shown.err);
  CHECK_MESSAGE(shown.out.find("|off: the service account is not a superuser") != std::string::npos,
                shown.out);
  CHECK(f.console_ok("SHOW HELP").find("SHOW CATALOG|") != std::string::npos);
}

TEST_CASE("SHOW HELP lists the commands the console runs, and docs/proxy.md lists them all") {
  auto& f = fixture();
  const std::string help = f.console_ok("SHOW HELP");
  std::ifstream in(source_dir() + "/docs/proxy.md");
  std::stringstream docs;
  docs << in.rdbuf();
  size_t commands = 0;
  std::istringstream lines(help);
  for (std::string line; std::getline(lines, line);) {
    const std::string usage = line.substr(0, line.find('|'));
    ++commands;
    CHECK_MESSAGE(docs.str().find("| `" + usage + "` |") != std::string::npos,
                  usage << " is not in docs/proxy.md's table of console commands");
  }
  CHECK(commands >= 20);
  // Each word of a command matches in any case; a wrong number of words is
  // no command.
  CHECK(f.console_ok("show catalog").find("postgres|") == 0);
  const auto wrong = f.console("SHOW TREE");
  CHECK(wrong.exit_code != 0);
  CHECK(wrong.err.find("unknown command \"SHOW TREE\"") != std::string::npos);
}

TEST_CASE("parallel plans: off where inline masks are evaluated, the server's own elsewhere") {
  // Parallel plans made free: PostgreSQL picks them even for these small
  // tables. Where it then plans no worker, the serial marker said so.
  auto& f = fixture();
  auto& pg = PgSandbox::shared();
  pg.psql(
      "DROP TABLE IF EXISTS public.parallel_open; CREATE TABLE public.parallel_open AS "
      "SELECT g FROM generate_series(1, 1000) g; GRANT SELECT ON public.parallel_open TO analyst");
  const std::string free =
      "SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; "
      "SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 2; ";
  const auto plan = [&](const std::string& user, const std::string& query) {
    pqxx::connection c(user == "direct" ? pg.conninfo("postgres") : f.proxy->conninfo(user));
    pqxx::nontransaction tx(c);
    tx.exec(free);
    std::string out;
    for (const auto& r : tx.exec("EXPLAIN (COSTS OFF, VERBOSE) " + query)) {
      out += r[0].c_str();
      out.push_back('\n');
    }
    return out;
  };
  const std::string people = "SELECT occupation, count(*) FROM people GROUP BY 1";
  const std::string direct = plan("direct", people);
  REQUIRE_MESSAGE(direct.find("Gather") != std::string::npos, direct);
  const std::string masked = plan("analyst", people);
  CHECK_MESSAGE(masked.find("Gather") == std::string::npos, masked);
  CHECK(masked.find("kanon.serial") == std::string::npos);  // folded away
  const std::string open = plan("analyst", "SELECT count(*) FROM public.parallel_open");
  CHECK_MESSAGE(open.find("Gather") != std::string::npos, open);
  // A materialized copy holds masked rows: no masks to evaluate.
  f.write_policy(2, "materialized");
  REQUIRE(f.console_ok("RELOAD").find("2 built") != std::string::npos);
  const std::string copy = plan("analyst", "SELECT occupation, count(*) FROM rtest GROUP BY 1");
  CHECK_MESSAGE(copy.find("Gather") != std::string::npos, copy);
  CHECK(copy.find("kanon_masked") != std::string::npos);
  // A view-mode view evaluates its masks as the inline form does.
  f.write_policy(2, "view");
  REQUIRE(f.console_ok("RELOAD").find("2 built") != std::string::npos);
  const std::string view = plan("analyst", "SELECT occupation, count(*) FROM rtest GROUP BY 1");
  CHECK_MESSAGE(view.find("Gather") == std::string::npos, view);
  f.write_policy(2);
  REQUIRE(f.console_ok("RELOAD").find("2 built") != std::string::npos);
  const std::string inline_again =
      plan("analyst", "SELECT occupation, count(*) FROM rtest GROUP BY 1");
  CHECK_MESSAGE(inline_again.find("Gather") == std::string::npos, inline_again);
  pg.psql("DROP TABLE public.parallel_open");
}

// A table whose name needs quotes was shown unquoted (public.Odd Table.v2):
// typed back into a console command it named nothing, and the web
// console's links broke (found by an adversarial probe).
TEST_CASE("names that need quotes are shown quoted, and what is shown can be typed back") {
  auto& pg = PgSandbox::shared();
  pg.psql(
      "DROP TABLE IF EXISTS public.\"Odd Table.v2\"; CREATE TABLE public.\"Odd Table.v2\" AS "
      "SELECT * FROM public.people; GRANT SELECT ON public.\"Odd Table.v2\" TO analyst;");
  const std::string policy = scratch_path("kanon-admin-odd.yaml");
  std::ofstream(policy) << "tables:\n"
                           "  - table: 'public.\"Odd Table.v2\"'\n"
                           "    k: 2\n"
                           "    quasi_identifiers: [occupation, city, state]\n"
                           "    direct_identifiers: {name: null, ssn: null}\n"
                           "    exempt: [postgres]\n";
  const uint16_t metrics_port = free_port();
  KanonProxy proxy(pg.port(),
                   "admin: {database: kanon, users: [postgres]}\n"
                   "metrics: {listen: \"127.0.0.1:" +
                       std::to_string(metrics_port) + "\"}\npolicies: [" + policy + "]\n");
  const auto console = [&](const std::string& command) {
    const auto r = run_command(
        {"psql", "-X", "-At", "-d", proxy.conninfo("postgres", "kanon"), "-c", command});
    REQUIRE_MESSAGE(r.exit_code == 0, command << ": " << r.err);
    return r.out;
  };
  const std::string policies = console("SHOW POLICIES");
  CHECK(policies.find("|public.\"Odd Table.v2\"|2|") != std::string::npos);
  // What SHOW POLICIES shows names the table in other commands.
  CHECK(console("SHOW TREE public.\"Odd Table.v2\"").find("|") != std::string::npos);
  CHECK(console("REFRESH public.\"Odd Table.v2\"").starts_with("public.\"Odd Table.v2\"|11|"));
  CHECK(http_get(metrics_port, "/metrics")
            .find("kanon_policy_built{database=\"postgres\",table=\"public.\\\"Odd "
                  "Table.v2\\\"\"} 1") != std::string::npos);
  // And the analyst reads it masked.
  pqxx::connection analyst(proxy.conninfo("analyst"));
  pqxx::work tx(analyst);
  CHECK(tx.exec1("SELECT count(*) FROM public.\"Odd Table.v2\" WHERE city IS NULL")[0].as<int>() >
        0);
  tx.abort();
  std::filesystem::remove(policy);
  pg.psql("DROP TABLE public.\"Odd Table.v2\"");
}
