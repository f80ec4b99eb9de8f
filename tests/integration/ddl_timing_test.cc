// Adversarial suite, DDL timing: a restricted statement never runs against a
// catalog newer than the one kanon decided it with (rewriter/catalog_guard.h).
// An administrator's DDL commits right before the analyst's statement (kanon's
// catalog watcher has not re-read the catalog yet, or has): a view switched
// from an open table to the protected one, a function replaced the same way,
// an open table made a child of the protected one. And a thread switching a
// view back and forth while a session reads it. Every answer is masked or an
// error (40001 when the catalog changed under an extended-protocol statement
// or a transaction block; simple Queries outside one are sent again, so they
// never fail for it); no raw value ever arrives.
#include <doctest/doctest.h>

#include <atomic>
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
