// Adversarial suite, DDL timing: a restricted statement never runs against a
// catalog newer than the one kanon decided it with (rewriter/catalog_guard.h).
// An administrator's DDL commits right before the analyst's statement (kanon's
// catalog watcher has not re-read the catalog yet, or has): a view switched
// from an open table to the protected one, a function replaced the same way,
// an open table made a child of the protected one. A function replaced while
// the statement runs, after its guard passed and before its first call. And a
// thread switching a view back and forth while a session reads it. Every answer is masked or an
// error (40001 when the catalog changed under a statement in a transaction
// block; outside one, kanon sends the statement again, in both protocols, so
// it fails for that only when a second DDL overtakes it too); no raw value
// ever arrives.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <pqxx/pqxx>
#include <thread>
#include <vector>

#include "tests/support/ddl_suite.h"
#include "tests/support/kanon_proxy.h"
#include "tests/support/pg_sandbox.h"
#include "tests/support/process.h"
#include "tests/support/statement_outcome.h"
#include "tests/support/watchers_paused.h"
#include "tests/support/wire_session.h"

using namespace kanon::testing;
namespace wire = kanon::wire;

namespace {

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
  std::unique_ptr<KanonProxy> proxy = people_proxy(kSetup);
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

// The answer once kanon has caught up with a DDL that committed: a 40001
// makes the session re-read the catalog before its next statement; a
// statement decided before the catalog watcher re-read the catalog inside a
// transaction block may be denied on the old one (fail closed; outside one
// kanon asks the generation first). Waits on the answer, not on time.
Outcome settled(pqxx::connection& c, const std::string& sql, bool extended) {
  Outcome o = run(c, sql, extended);
  for (int i = 0; i < 200 && !o.sqlstate.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    o = run(c, sql, extended);
  }
  return o;
}

}  // namespace

TEST_CASE("DDL timing: restricted statements carry the guard the database holds") {
  auto& f = fixture();
  const std::string shown =
      run_command(
          {"psql", "-X", "-At", "-d", f.proxy->conninfo("postgres", "kanon"), "-c", "SHOW CATALOG"})
          .out;
  const std::string form =
      c_guard() ? "\"kanon_mask\".\"catalog_is\"(" : "\"kanon\".\"catalog_is\"(";
  CHECK_MESSAGE(shown.find(c_guard() ? "|on: kanon_mask.catalog_is (C)|"
                                     : "|on: kanon.catalog_is (PL/pgSQL)|") != std::string::npos,
                shown);
  // What the analyst's backend ran last, as PostgreSQL shows it.
  pqxx::connection analyst(f.proxy->conninfo("analyst"));
  const Outcome o = settled(analyst, "SELECT count(*) FROM public.people", false);
  REQUIRE_MESSAGE(o.sqlstate.empty(), o.sqlstate << " " << o.message);
  pqxx::connection admin_conn(PgSandbox::shared().conninfo("postgres"));
  const auto last = pqxx::nontransaction(admin_conn)
                        .exec1(
                            "SELECT pg_catalog.string_agg(query, ' | ') FROM pg_stat_activity "
                            "WHERE usename = 'analyst' AND query LIKE '%count(*)%'")[0]
                        .as<std::string>("");
  CHECK_MESSAGE(last.find(form) != std::string::npos, last);
}

TEST_CASE("DDL timing: the session's settings and objects do not change the guard") {
  auto& f = fixture();
  // search_path by startup option, then by SET and set_config, with a
  // temporary sequence of its own under the generation's name first on it.
  pqxx::connection analyst(f.proxy->conninfo("analyst") + " options='-c search_path=pg_temp'");
  const Outcome seq = run(analyst, "CREATE TEMP SEQUENCE catalog_generation", false);
  CHECK_MESSAGE(seq.sqlstate.empty(), seq.sqlstate << " " << seq.message);  // it may
  run(analyst, "SET search_path = pg_temp, public", false);
  run(analyst, "SELECT pg_catalog.set_config('search_path', 'pg_temp, public', false)", false);
  const std::string read = "SELECT occupation, city, state FROM flip ORDER BY id";
  for (bool extended : {false, true}) {
    CAPTURE(extended);
    admin(kToOpen);
    REQUIRE(settled(analyst, read, extended).rows.find("Opentown") != std::string::npos);
    admin(kToPeople);  // committed; the next statement follows at once
    const Outcome o = run(analyst, read, extended);
    check_answer(o, false);
    CHECK(o.rows.find("Hamlet") != std::string::npos);
  }
}

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
    check_answer(o, false);                             // decided on the new catalog, or sent again
    CHECK(o.rows.find("Hamlet") != std::string::npos);  // released rows
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

// A denial decided with a catalog a DDL has moved past would refuse what the
// database now allows: kanon asks the catalog generation before it denies,
// and decides again with the catalog read again when it moved. The watchers
// are stopped, so kanon hears nothing of the DDL but what it asks.
TEST_CASE("DDL timing: a denial is decided again when the catalog moved past kanon's") {
  auto& f = fixture();
  pqxx::connection analyst(f.proxy->conninfo("analyst"));
  const std::string& call = kCallFlipCities;
  const std::string& to_people = kFlipCitiesToPeople;
  const std::string& to_open = kFlipCitiesToOpen;
  for (bool extended : {false, true}) {
    CAPTURE(extended);
    admin(to_people);
    // Once kanon's catalog has the function reading people, it is denied.
    Outcome denied = run(analyst, call, extended);
    for (int i = 0; i < 200 && denied.sqlstate != "42501"; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      denied = run(analyst, call, extended);
    }
    REQUIRE_MESSAGE(denied.sqlstate == "42501", denied.sqlstate << " " << denied.message);
    {
      WatchersPaused paused;
      REQUIRE_FALSE(paused.pids.empty());
      admin(to_open);
      const Outcome o = run(analyst, call, extended);
      CHECK_MESSAGE(o.sqlstate.empty(), o.sqlstate << " " << o.message);
      CHECK(o.rows.find("Opentown") != std::string::npos);
      // Back to people: allowed on the old catalog, the guard fails, and the
      // statement is decided again into its denial.
      admin(to_people);
      const Outcome back = run(analyst, call, extended);
      CHECK_MESSAGE(back.sqlstate == "42501", back.sqlstate << " " << back.message);
      check_answer(back, true);
    }
  }
  admin(to_open);
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

uint64_t guard_retries(const KanonProxy& proxy) {
  const auto r = run_command(
      {"psql", "-X", "-At", "-d", proxy.conninfo("postgres", "kanon"), "-c", "SHOW STATS"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const size_t at = r.out.find("guard_retries|");
  REQUIRE(at != std::string::npos);
  return std::stoull(r.out.substr(at + 14));
}

// The messages of `bytes` as message_summary() has them, without rows.
std::vector<std::string> answers(const std::string& bytes) {
  auto out = message_summary(bytes);
  std::erase(out, "D");
  return out;
}

}  // namespace

TEST_CASE("DDL timing: a statement a DDL overtook is sent again, in both protocols") {
  // The DDL holds the view's lock until it commits, so the analyst's
  // statement is decided on the old catalog and parsed on the new one: its
  // guard fails every time. Outside a transaction block kanon decides it
  // again and sends it again; the client sees one masked answer.
  // A statement that gathers rows carries its guard in an OFFSET, which
  // PostgreSQL also evaluates while planning: its guard fails at Bind (or
  // before the first answer of a simple query), not at Execute.
  auto& f = fixture();
  const std::string plain = "SELECT occupation, city, state FROM flip ORDER BY id";
  const std::string gathering =
      "SELECT occupation, city, state, count(*) FROM flip GROUP BY id, occupation, city, state "
      "ORDER BY id";
  pqxx::connection analyst(f.proxy->conninfo("analyst"));
  pqxx::connection probe(PgSandbox::shared().conninfo("postgres"));
  // Parses in cycles of their own, before the DDL.
  analyst.prepare("flip_read_plain", plain);
  analyst.prepare("flip_read_gathering", gathering);
  enum class How { kSimple, kUnnamed, kPrepared, kNamedInCycle, kInTransaction };
  for (const std::string& read : {plain, gathering})
    for (How how :
         {How::kSimple, How::kUnnamed, How::kPrepared, How::kNamedInCycle, How::kInTransaction}) {
      CAPTURE(read);
      CAPTURE(static_cast<int>(how));
      admin(kToOpen);
      REQUIRE(settled(analyst, read, false).rows.find("Opentown") != std::string::npos);
      // The wire session reads the open view once, so its next Parse is decided.
      WireSession session(f.proxy->port());
      session.send(wire::Query{read});
      REQUIRE(session.until('Z', 60).find("Opentown") != std::string::npos);
      const uint64_t retries = guard_retries(*f.proxy);
      pqxx::connection ddl(PgSandbox::shared().conninfo("postgres"));
      pqxx::work change(ddl);
      change.exec(kToPeople);  // the generation moved; the view stays locked until COMMIT
      std::atomic<bool> answered{false};
      Outcome during;
      std::string wire_bytes;
      if (how == How::kInTransaction) pqxx::nontransaction(analyst).exec("BEGIN");
      std::thread reader([&] {
        try {
          if (how == How::kNamedInCycle) {
            // One cycle prepares a named statement and runs it (as node-postgres does).
            session.send(wire::Parse{"named", read, {}}, wire::Bind{"", "named", {}, {}, {}},
                         wire::Describe{wire::kTargetPortal, ""}, wire::Execute{"", 0},
                         wire::Sync{});
            wire_bytes = session.until('Z', 120);
          } else if (how == How::kPrepared) {
            pqxx::nontransaction tx(analyst);
            during.rows =
                render(tx.exec_prepared(read == plain ? "flip_read_plain" : "flip_read_gathering"));
          } else {
            during = run(analyst, read, how != How::kSimple);
          }
        } catch (const pqxx::serialization_failure& e) {
          during.sqlstate = "40001";
          during.message = e.what();
        } catch (const std::exception& e) {
          during.sqlstate = "client";
          during.message = e.what();
        }
        answered = true;
      });
      CHECK(wait_until(
          [&] { return someone_waits(probe, "relation = 'public.flip'::pg_catalog.regclass"); },
          answered));
      change.commit();
      reader.join();
      if (how == How::kNamedInCycle) {
        during.rows = wire_bytes;
        CHECK(answers(wire_bytes) == std::vector<std::string>{"1", "2", "T", "C", "Z:I"});
        // The statement exists once, under the client's name.
        session.send(wire::Bind{"", "named", {}, {}, {}}, wire::Execute{"", 0}, wire::Sync{});
        const std::string again = session.until('Z', 60);
        CHECK(answers(again) == std::vector<std::string>{"2", "C", "Z:I"});
        CHECK(again.find("Hamlet") != std::string::npos);
      }
      check_answer(during, how == How::kInTransaction);
      if (how == How::kInTransaction) {
        CHECK_MESSAGE(during.sqlstate == "40001", during.sqlstate << " " << during.message);
        pqxx::nontransaction(analyst).exec("ROLLBACK");
        CHECK(guard_retries(*f.proxy) == retries);
      } else {
        CHECK_MESSAGE(during.sqlstate.empty(), during.sqlstate << " " << during.message);
        CHECK(during.rows.find("Hamlet") != std::string::npos);  // released rows
        CHECK(guard_retries(*f.proxy) == retries + 1);
      }
    }
  admin(kToOpen);
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
  // when it first locks public.bigt's TOAST table, after waiting for a row
  // the test holds) runs the new body. The statement holds the catalog
  // still, so the replacement waits for it: to the end of its transaction.
  // (A row lock, not an advisory one: restricted sessions take none.)
  auto& f = fixture();
  admin(
      "CREATE TABLE IF NOT EXISTS public.bigt (v text); "
      "ALTER TABLE public.bigt ALTER v SET STORAGE EXTERNAL; TRUNCATE public.bigt; "
      "INSERT INTO public.bigt VALUES (repeat('x', 100000)); "
      "CREATE TABLE IF NOT EXISTS public.waitrow (id int PRIMARY KEY); TRUNCATE public.waitrow; "
      "INSERT INTO public.waitrow VALUES (1); GRANT SELECT, UPDATE ON public.waitrow TO analyst");
  const std::string sql =
      "WITH a AS MATERIALIZED (SELECT id AS l FROM public.waitrow WHERE id = 1 FOR SHARE), "
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
    pqxx::nontransaction(locker).exec("BEGIN");
    pqxx::nontransaction(locker).exec("SELECT id FROM public.waitrow WHERE id = 1 FOR UPDATE");
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
    CHECK(wait_until(
        [&] {
          return someone_waits(probe,
                               "locktype = 'transactionid' AND pid = (SELECT pid FROM "
                               "pg_catalog.pg_stat_activity WHERE usename = 'analyst' "
                               "AND query LIKE '%waitrow%')");
        },
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
    pqxx::nontransaction(locker).exec("COMMIT");
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
  admin("DROP FUNCTION public.late_cities(int); DROP TABLE public.bigt, public.waitrow");
}

// An administrator's DDL transaction left open (a migration that has not
// committed): its DDL moved the generation, and kanon cannot read the
// catalog until it ends (the read would miss what it commits). Restricted
// statements fail their guard meanwhile; the error says which transaction,
// and reads go on once it ends.
TEST_CASE("DDL timing: a DDL transaction left open is named in the error, and reads resume") {
  auto& f = fixture();
  pqxx::connection analyst(f.proxy->conninfo("analyst"));
  const std::string read = "SELECT count(*) FROM public.people";
  REQUIRE(settled(analyst, read, false).sqlstate.empty());
  pqxx::connection ddl(PgSandbox::shared().conninfo("postgres"));
  {
    pqxx::work open(ddl);
    open.exec("CREATE TABLE public.left_open (a int)");
    const Outcome o = run(analyst, read, false);
    check_answer(o, true);
    CHECK(o.sqlstate == "40001");
    CHECK_MESSAGE(
        o.message.find("DDL transactions still open (pid " + std::to_string(ddl.backendpid()) +
                       " (postgres))") != std::string::npos,
        o.message);
    // Only what pg_stat_activity shows the analyst: not the other role's
    // state or transaction start.
    CHECK_MESSAGE(o.message.find("idle in transaction") == std::string::npos, o.message);
    CHECK_MESSAGE(o.message.find("transaction open") == std::string::npos, o.message);
    // A denial meanwhile: the generation moved, the catalog cannot be read
    // (the read waits for the transaction, then gives up), and the denial
    // stands; the second one is not held up for the same generation.
    for (int i = 0; i < 2; ++i) {
      const Outcome denied = run(analyst, "SELECT pg_catalog.pg_read_file('PG_VERSION')", false);
      CHECK_MESSAGE(denied.sqlstate == "42501", denied.sqlstate << " " << denied.message);
    }
    open.abort();
  }
  const Outcome after = settled(analyst, read, false);
  CHECK_MESSAGE(after.sqlstate.empty(), after.sqlstate << " " << after.message);
}
