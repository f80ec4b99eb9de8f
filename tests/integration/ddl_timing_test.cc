// Adversarial suite, DDL timing: a restricted statement never runs against a
// catalog newer than the one kanon decided it with (rewriter/catalog_guard.h).
// An administrator's DDL commits right before the analyst's statement (kanon's
// catalog watcher has not re-read the catalog yet, or has): a view switched
// from an open table to the protected one, a function replaced the same way,
// an open table made a child of the protected one. A function replaced while
// the statement runs, after its guard passed and before its first call. And a
// thread switching a view back and forth while a session reads it. Every answer is masked or an
// error (40001 when the catalog changed under an extended-protocol statement
// or a transaction block; simple Queries outside one are sent again, so they
// never fail for it); no raw value ever arrives.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <pqxx/pqxx>
#include <thread>

#include "tests/support/kanon_proxy.h"
#include "tests/support/pg_sandbox.h"
#include "tests/support/statement_outcome.h"

using namespace kanon::testing;

namespace {

// Values of public.people its tree never releases (k = 2, demo data), and
// a direct identifier.
const std::vector<std::string> kForbidden = {"Lawyer",  "Washington",   "Columbus", "Withamsville",
                                             "Whately", "College Park", "Bellevue", "Ada Quill"};

const char* const kSetup = R"(
CREATE TABLE public.open_people AS
  SELECT id, 'open'::text AS occupation, 'Opentown'::text AS city, 'OP'::text AS state
  FROM public.people;
CREATE VIEW public.flip AS SELECT id, occupation, city, state FROM public.open_people;
CREATE FUNCTION public.flip_cities() RETURNS SETOF text LANGUAGE sql STABLE
  AS 'SELECT city FROM public.open_people';
CREATE TABLE public.orphan (LIKE public.people);
INSERT INTO public.orphan SELECT * FROM public.people;
)";

const std::string kToPeople =
    "CREATE OR REPLACE VIEW public.flip AS SELECT id, occupation, city, state FROM public.people";
const std::string kToOpen =
    "CREATE OR REPLACE VIEW public.flip AS SELECT id, occupation, city, state FROM "
    "public.open_people";

struct Fixture {
  Fixture() {
    auto& pg = PgSandbox::shared();
    pg.psql(kSetup);
    proxy = std::make_unique<KanonProxy>(
        pg.port(),
        "policies: [" + source_dir() +
            "/config/policies/people.yaml]\nadmin: {database: kanon, users: [postgres]}\n");
  }
  std::unique_ptr<KanonProxy> proxy;
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

void admin(const std::string& sql) {
  pqxx::connection c(PgSandbox::shared().conninfo("postgres"));
  pqxx::nontransaction(c).exec(sql);
}

// Masked, or an error that says so; never a raw value.
void check_answer(const Outcome& o, bool may_fail) {
  for (const auto& v : kForbidden) CHECK_MESSAGE(o.rows.find(v) == std::string::npos, o.rows);
  if (o.sqlstate.empty()) return;
  CHECK_MESSAGE(may_fail, o.sqlstate << " " << o.message);
  CHECK_MESSAGE((o.sqlstate == "40001" || o.sqlstate == "42501"), o.sqlstate << " " << o.message);
}

// The answer once kanon has caught up with a DDL that committed: a 40001
// makes the session re-read the catalog before its next statement; a
// statement decided before the catalog watcher re-read the catalog may be
// denied on the old one (fail closed). Waits on the answer, not on time.
Outcome settled(pqxx::connection& c, const std::string& sql, bool extended) {
  Outcome o = run(c, sql, extended);
  for (int i = 0; i < 200 && !o.sqlstate.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    o = run(c, sql, extended);
  }
  return o;
}

}  // namespace

TEST_CASE("DDL timing: the first statement after a committed DDL is decided on it") {
  auto& f = fixture();
  pqxx::connection analyst(f.proxy->conninfo("analyst"));
  const std::string read = "SELECT occupation, city, state FROM flip ORDER BY id";
  for (bool extended : {false, true}) {
    CAPTURE(extended);
    admin(kToOpen);
    const Outcome open = settled(analyst, read, extended);
    REQUIRE_MESSAGE(open.rows.find("Opentown") != std::string::npos,
                    open.sqlstate << " " << open.message);
    admin(kToPeople);  // committed; the next statement follows at once
    const Outcome o = run(analyst, read, extended);
    check_answer(o, extended);
    if (!extended) CHECK(o.rows.find("Hamlet") != std::string::npos);  // released rows
  }
  // A function replaced the same way: reaching the protected table now, so
  // denied (or retried into the denial); never its raw cities.
  for (bool extended : {false, true}) {
    admin(
        "CREATE OR REPLACE FUNCTION public.flip_cities() RETURNS SETOF text LANGUAGE sql STABLE "
        "AS 'SELECT city FROM public.open_people'");
    const Outcome open = settled(analyst, "SELECT * FROM flip_cities()", extended);
    REQUIRE_MESSAGE(open.sqlstate.empty(), open.sqlstate << " " << open.message);
    admin(
        "CREATE OR REPLACE FUNCTION public.flip_cities() RETURNS SETOF text LANGUAGE sql STABLE "
        "AS 'SELECT city FROM public.people'");
    const Outcome o = run(analyst, "SELECT * FROM flip_cities()", extended);
    check_answer(o, true);
    CHECK(!o.sqlstate.empty());
  }
  // An open table made a child of the protected one: read directly, it now
  // holds people's rows and gets people's masks.
  REQUIRE(run(analyst, "SELECT city FROM orphan", false).rows.find("Washington") !=
          std::string::npos);
  admin("ALTER TABLE public.orphan INHERIT public.people");
  for (bool extended : {false, true}) {
    CAPTURE(extended);
    check_answer(
        run(analyst, "SELECT occupation, city, state, name FROM orphan ORDER BY id", extended),
        extended);
  }
  admin("ALTER TABLE public.orphan NO INHERIT public.people");
}

TEST_CASE("DDL timing: a view switched back and forth while a session reads it") {
  // The flipper switches the view a fixed number of times; the session
  // reads all along (no answer may hold a raw value), and once the flipper
  // is done its reads are answered again. Nothing here depends on how fast
  // either side runs.
  auto& f = fixture();
  constexpr int kFlips = 300;
  std::atomic<int> flips{0};
  std::atomic<bool> flipping{true};
  std::string flipper_error;
  std::thread flipper([&] {
    try {
      pqxx::connection c(PgSandbox::shared().conninfo("postgres"));
      for (int i = 0; i < kFlips; ++i) {
        pqxx::nontransaction(c).exec(i % 2 == 0 ? kToPeople : kToOpen);
        ++flips;
      }
    } catch (const std::exception& e) {
      flipper_error = e.what();
    }
    flipping = false;
  });
  int answered = 0, failed = 0;
  const std::string read = "SELECT occupation, city, state FROM flip";
  try {
    pqxx::connection analyst(f.proxy->conninfo("analyst"));
    for (int i = 0; flipping; ++i) {
      const Outcome o = run(analyst, read, i % 3 == 2);
      check_answer(o, true);
      (o.sqlstate.empty() ? answered : failed)++;
    }
    flipper.join();
    for (bool extended : {false, true}) {
      const Outcome o = settled(analyst, read, extended);
      check_answer(o, false);
      CHECK(o.rows.find("Opentown") != std::string::npos);  // the flipper's last: open
    }
  } catch (const std::exception& e) {
    if (flipper.joinable()) flipper.join();
    FAIL(e.what());
  }
  CHECK_MESSAGE(flipper_error.empty(), flipper_error);
  MESSAGE("while flipping: answered " << answered << ", failed " << failed);
  admin(kToOpen);
}

namespace {

// Whether some session waits for a lock: `what` is a pg_locks condition.
bool someone_waits(pqxx::connection& probe, const std::string& what) {
  pqxx::nontransaction tx(probe);
  return tx.exec1("SELECT pg_catalog.count(*) FROM pg_catalog.pg_locks WHERE NOT granted AND " +
                  what)[0]
             .as<int>() > 0;
}

// Polls `condition` until it holds or `done` is set; whether it held.
template <class F>
bool wait_until(F condition, const std::atomic<bool>& done) {
  for (int i = 0; i < 6000 && !done; ++i) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return condition();
}

const char* const kLateOpen =
    "CREATE OR REPLACE FUNCTION public.late_cities(int) RETURNS text LANGUAGE sql STABLE "
    "AS 'SELECT string_agg(city, '','') FROM public.open_people'";
const char* const kLatePeople =
    "CREATE OR REPLACE FUNCTION public.late_cities(int) RETURNS text LANGUAGE sql STABLE "
    "AS 'SELECT string_agg(city, '','') FROM public.people'";

}  // namespace

TEST_CASE("DDL timing: a function replaced between the guard and the function's first call") {
  // PostgreSQL locks no function a statement calls and reads a SQL body at
  // its first call; a backend that takes in invalidations in between (here:
  // when it first locks public.bigt's TOAST table, after waiting for an
  // advisory lock) runs the new body. The statement holds the catalog still,
  // so the replacement waits for it: to the end of its transaction.
  auto& f = fixture();
  admin(
      "CREATE TABLE IF NOT EXISTS public.bigt (v text); "
      "ALTER TABLE public.bigt ALTER v SET STORAGE EXTERNAL; TRUNCATE public.bigt; "
      "INSERT INTO public.bigt VALUES (repeat('x', 100000))");
  const std::string sql =
      "WITH a AS MATERIALIZED (SELECT pg_advisory_xact_lock(4242) AS l), "
      "b AS MATERIALIZED (SELECT length(v) AS n FROM public.bigt, a) "
      "SELECT b.n, public.late_cities(b.n) AS c FROM b";
  pqxx::connection analyst(f.proxy->conninfo("analyst"));
  pqxx::connection probe(PgSandbox::shared().conninfo("postgres"));
  for (const auto& [extended, in_transaction] :
       {std::pair{false, false}, std::pair{true, false}, std::pair{false, true}}) {
    CAPTURE(extended);
    CAPTURE(in_transaction);
    admin(kLateOpen);
    const Outcome open = settled(analyst, sql, extended);
    REQUIRE_MESSAGE(open.rows.find("Opentown") != std::string::npos,
                    open.sqlstate << " " << open.message);
    pqxx::connection locker(PgSandbox::shared().conninfo("postgres"));
    pqxx::nontransaction(locker).exec("SELECT pg_advisory_lock(4242)");
    if (in_transaction) pqxx::nontransaction(analyst).exec("BEGIN");
    std::atomic<bool> answered{false}, replaced{false};
    Outcome during;
    std::thread reader([&] {
      try {
        during = run(analyst, sql, extended);
      } catch (const std::exception& e) {
        during.sqlstate = "client";
        during.message = e.what();
      }
      answered = true;
    });
    // The statement passed its guard and waits in its first CTE.
    CHECK(wait_until([&] { return someone_waits(probe, "locktype = 'advisory' AND objid = 4242"); },
                     answered));
    std::string ddl_error;
    std::thread ddl([&] {
      try {
        admin(kLatePeople);
      } catch (const std::exception& e) {
        ddl_error = e.what();
      }
      replaced = true;
    });
    // The replacement waits for the statement (or, were it not held, commits).
    wait_until(
        [&] {
          return someone_waits(probe, "locktype = 'advisory' AND classid = 7306355 AND objid = 3");
        },
        replaced);
    pqxx::nontransaction(locker).exec("SELECT pg_advisory_unlock(4242)");
    reader.join();
    if (in_transaction) {
      // Answered, and the replacement still waits: until the transaction ends.
      CHECK(wait_until(
          [&] {
            return someone_waits(probe,
                                 "locktype = 'advisory' AND classid = 7306355 AND objid = 3");
          },
          replaced));
      CHECK_FALSE(replaced.load());
      pqxx::nontransaction(analyst).exec("COMMIT");
    }
    ddl.join();
    CHECK_MESSAGE(ddl_error.empty(), ddl_error);
    check_answer(during, false);
    CHECK_MESSAGE(during.rows.find("Opentown") != std::string::npos,
                  during.sqlstate << " " << during.message);
    // From now on the function reaches the protected table: denied.
    Outcome after = run(analyst, sql, extended);
    for (int i = 0; i < 200 && after.sqlstate == "40001"; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      after = run(analyst, sql, extended);
    }
    check_answer(after, true);
    CHECK_MESSAGE(after.sqlstate == "42501", after.sqlstate << " " << after.message);
  }
  admin("DROP FUNCTION public.late_cities(int); DROP TABLE public.bigt");
}
