// Adversarial suite, DDL during a transaction block: PostgreSQL refreshes
// its catalog caches when a transaction begins and when it takes a lock
// anew, not before each statement of a block, so a block may still hold a
// function body, an operator or a cast an administrator replaced or dropped
// after it began, while kanon's catalog already has the change and the
// statement's guard passes. kanon sends rewriter::kReadInvalidations before
// a statement decided with a catalog newer than the one the backend's caches
// are known to reach (Session::read_before): before a Query or a Parse, a
// Bind or an Execute, also when it is pipelined behind other messages.
// Every answer is masked, the new definition's, or an error; never a raw
// value.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <pqxx/pqxx>
#include <thread>
#include <vector>

#include "tests/support/ddl_suite.h"
#include "tests/support/kanon_proxy.h"
#include "tests/support/pg_sandbox.h"
#include "tests/support/statement_outcome.h"
#include "tests/support/watchers_paused.h"
#include "tests/support/wire_session.h"

using namespace kanon::testing;
namespace wire = kanon::wire;

namespace {

const std::string& call = kCallFlipCities;
const std::string& to_people = kFlipCitiesToPeople;
const std::string& to_open = kFlipCitiesToOpen;

struct Fixture {
  std::unique_ptr<KanonProxy> proxy = people_proxy(
      "CREATE TABLE public.open_people AS SELECT id, 'Opentown'::text AS city "
      "FROM public.people; " +
      to_open);
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

// The backend of a session caches people's body: the function reads people
// while it runs an attempt kanon allowed on its older catalog (whose guard
// fails). A block begun after this holds that body until it reads the
// invalidations. `run_call` runs kCallFlipCities in the session.
template <typename RunCall>
void cache_people_body_with(RunCall&& run_call) {
  admin(to_open);
  for (int i = 0; i < 200 && !run_call().sqlstate.empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  WatchersPaused paused;
  admin(to_people);
  const Outcome o = run_call();
  check_answer(o, true);
  CHECK_MESSAGE(o.sqlstate == "42501", o.sqlstate << " " << o.message);
}

void cache_people_body(pqxx::connection& analyst, bool extended) {
  cache_people_body_with([&] { return run(analyst, call, extended); });
}

// A Query on a wire session: its answers' bytes as the rows (cities appear
// in them as text), the first error's SQLSTATE.
Outcome wire_run(WireSession& session, const std::string& sql) {
  session.send(wire::Query{sql});
  Outcome o;
  o.rows = session.until('Z', 60);
  for (const auto& answer : message_summary(o.rows))
    if (answer.starts_with("E:")) {
      o.sqlstate = answer.substr(2);
      break;
    }
  return o;
}

// Waits until kanon's catalog has the open body: another session's call is
// allowed (kanon asks the generation before it denies on an older catalog,
// and the catalog it then reads is every session's).
void until_kanon_has_open_body() {
  pqxx::connection other(fixture().proxy->conninfo("analyst"));
  Outcome o = run(other, call, true);
  for (int i = 0; i < 200 && !o.sqlstate.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    o = run(other, call, true);
  }
  REQUIRE_MESSAGE(o.rows.find("Opentown") != std::string::npos, o.sqlstate << " " << o.message);
}

}  // namespace

TEST_CASE("DDL in a block: a function replaced during the block runs its new body") {
  auto& f = fixture();
  pqxx::connection analyst(f.proxy->conninfo("analyst"));
  // In a transaction block (drivers that do not autocommit run every
  // statement in one), begun before the DDL: PostgreSQL may still run the
  // body it cached. The backend caches people's body while the function
  // reads people (an attempt kanon allowed on its older catalog, whose guard
  // failed); in the block begun then, after the function is replaced by the
  // open one, the call was allowed and ran the cached body: people's raw
  // cities (without the rule). The Query, or the Parse, is sent after the
  // statement that makes PostgreSQL read the invalidations (rewriter::
  // kReadInvalidations): the new body runs, open cities.
  for (bool extended : {false, true}) {
    CAPTURE(extended);
    cache_people_body(analyst, extended);
    pqxx::nontransaction(analyst).exec("BEGIN");
    CHECK(run(analyst, "SELECT 1", extended).rows == "1|\n");
    {
      WatchersPaused paused;
      admin(to_open);
      const Outcome o = run(analyst, call, extended);
      check_answer(o, true);
      // Not denied on the old catalog's reach either: decided again with
      // the new catalog also when the watcher (resumed after
      // cache_people_body) read it between the decision and the recheck
      // (seen on two busy cores; CatalogReader::refresh_if_moved).
      CHECK_MESSAGE(o.sqlstate.empty(), o.sqlstate << " " << o.message);
      CHECK(o.rows.find("Opentown") != std::string::npos);
      // The block goes on, reading the new body from here on.
      CHECK(run(analyst, call, extended).rows.find("Opentown") != std::string::npos);
    }
    pqxx::nontransaction(analyst).exec("ROLLBACK");
    const Outcome after = run(analyst, call, extended);
    CHECK_MESSAGE(after.sqlstate.empty(), after.sqlstate << " " << after.message);
    CHECK(after.rows.find("Opentown") != std::string::npos);
  }
  // A PREPARE sent after kReadInvalidations: the first CommandComplete is
  // kanon's statement's, and the prepared-statement registry must not take
  // it for the PREPARE's (Session::note_sent). One that fails is not
  // tracked: its EXECUTE is answered as for any name never prepared.
  const auto execute_unknown = [&] { return run(analyst, "EXECUTE never_prepared", false); };
  const Outcome unknown = execute_unknown();
  REQUIRE_FALSE(unknown.sqlstate.empty());
  cache_people_body(analyst, false);
  pqxx::nontransaction(analyst).exec("BEGIN");
  CHECK(run(analyst, "SELECT 1", false).rows == "1|\n");
  {
    WatchersPaused paused;
    admin(to_open);
    const Outcome bad =
        run(analyst, "PREPARE bad_in_block AS SELECT no_such_column FROM flip_cities()", false);
    CHECK_MESSAGE(bad.sqlstate == "42703", bad.sqlstate << " " << bad.message);
  }
  pqxx::nontransaction(analyst).exec("ROLLBACK");
  const Outcome after_bad = run(analyst, "EXECUTE bad_in_block", false);
  CHECK_MESSAGE(after_bad.sqlstate == unknown.sqlstate,
                after_bad.sqlstate << " " << after_bad.message << " / " << unknown.message);
  cache_people_body(analyst, false);
  pqxx::nontransaction(analyst).exec("BEGIN");
  CHECK(run(analyst, "SELECT 1", false).rows == "1|\n");
  {
    WatchersPaused paused;
    admin(to_open);
    const Outcome good = run(analyst, "PREPARE in_block AS SELECT * FROM flip_cities()", false);
    CHECK_MESSAGE(good.sqlstate.empty(), good.sqlstate << " " << good.message);
    const Outcome executed = run(analyst, "EXECUTE in_block", false);
    check_answer(executed, false);
    CHECK(executed.rows.find("Opentown") != std::string::npos);
  }
  pqxx::nontransaction(analyst).exec("ROLLBACK");
  // An error's position in a Query sent after kReadInvalidations points
  // into the client's text.
  cache_people_body(analyst, false);
  pqxx::nontransaction(analyst).exec("BEGIN");
  CHECK(run(analyst, "SELECT 1", false).rows == "1|\n");
  {
    WatchersPaused paused;
    admin(to_open);
    pqxx::nontransaction tx(analyst);
    try {
      tx.exec("SELECT no_such_column FROM flip_cities()");
      FAIL("no error");
    } catch (const pqxx::sql_error& e) {
      CHECK(std::string(e.sqlstate()) == "42703");
      CHECK_MESSAGE(std::string(e.what()).find("^") != std::string::npos, e.what());
      const std::string text = e.what();
      // psql-style: "LINE 1: SELECT no_such_column ..." with the caret under
      // column 8 of the client's own text.
      CHECK_MESSAGE(text.find("LINE 1: SELECT no_such_column") != std::string::npos, text);
    }
  }
  pqxx::nontransaction(analyst).exec("ROLLBACK");
  // The same with kanon's watchers running: kanon knows the new body by
  // the time the call comes (or asks the generation before it denies on
  // its older catalog), PostgreSQL's block may not: the statement goes
  // after kReadInvalidations, and the new body runs.
  for (bool extended : {false, true}) {
    CAPTURE(extended);
    cache_people_body(analyst, extended);
    pqxx::nontransaction(analyst).exec("BEGIN");
    CHECK(run(analyst, "SELECT 1", extended).rows == "1|\n");
    admin(to_open);
    const Outcome o = run(analyst, call, extended);
    check_answer(o, true);
    if (o.sqlstate.empty()) CHECK(o.rows.find("Opentown") != std::string::npos);
    pqxx::nontransaction(analyst).exec("ROLLBACK");
  }
  admin(to_open);
}

TEST_CASE("DDL in a block: an operator dropped during the block is gone, also when pipelined") {
  // An operator an administrator dropped during the block is in no catalog
  // of kanon's, yet the block's caches may still hold it: the session made
  // PostgreSQL look it up while it existed (to_regoperator of a name built
  // at run time, so the text never shows the symbol kanon would deny). Its
  // function reads people: after the drop, `'a'::text === 'b'::text`
  // (typed: PostgreSQL looks it up as to_regoperator did) passes kanon
  // (it knows no such operator), and without kReadInvalidations first
  // PostgreSQL ran the cached operator: people's raw cities. With it,
  // PostgreSQL no longer finds the operator (42883). Also when the
  // statement is pipelined behind a SAVEPOINT (transaction control, which
  // gets no kReadInvalidations of its own): sent while the SAVEPOINT is
  // unanswered, it went as it was, and the cached operator ran.
  auto& f = fixture();
  const std::string lookup =
      "SELECT pg_catalog.to_regoperator(pg_catalog.repeat('=', 3) || '(text,text)')";
  const std::string peek = "SELECT 'a'::pg_catalog.text === 'b'::pg_catalog.text";
  admin(
      "CREATE FUNCTION public.people_peek(text, text) RETURNS text LANGUAGE sql STABLE "
      "AS 'SELECT pg_catalog.string_agg(city, '','') FROM public.people'");
  enum class How { kSimple, kExtended, kPipelinedSimple, kPipelinedExtended };
  for (How how : {How::kSimple, How::kExtended, How::kPipelinedSimple, How::kPipelinedExtended}) {
    CAPTURE(static_cast<int>(how));
    admin(
        "CREATE OPERATOR public.=== (LEFTARG = text, RIGHTARG = text, "
        "FUNCTION = public.people_peek)");
    if (how == How::kSimple || how == How::kExtended) {
      const bool extended = how == How::kExtended;
      pqxx::connection analyst(f.proxy->conninfo("analyst"));
      pqxx::nontransaction(analyst).exec("BEGIN");
      CHECK(run(analyst, "SELECT 1", extended).rows == "1|\n");
      const Outcome looked_up = run(analyst, lookup, extended);
      CHECK_MESSAGE(looked_up.sqlstate.empty(), looked_up.sqlstate << " " << looked_up.message);
      CHECK(looked_up.rows.find("(text,text)") != std::string::npos);
      WatchersPaused paused;
      admin("DROP OPERATOR public.=== (text, text)");
      const Outcome o = run(analyst, peek, extended);
      check_no_raw_value(o.rows);
      CHECK_MESSAGE(o.sqlstate == "42883", o.sqlstate << " " << o.message << " " << o.rows);
      continue;
    }
    WireSession session(f.proxy->port());
    session.send(wire::Query{"BEGIN"});
    REQUIRE(message_summary(session.until('Z', 60)).back() == "Z:T");
    session.send(wire::Query{lookup});
    REQUIRE(session.until('Z', 60).find("(text,text)") != std::string::npos);
    WatchersPaused paused;
    admin("DROP OPERATOR public.=== (text, text)");
    if (how == How::kPipelinedSimple) {
      session.send(wire::Query{"SAVEPOINT a"}, wire::Query{peek});
    } else {
      session.send(wire::Parse{"", "SAVEPOINT a", {}}, wire::Bind{"", "", {}, {}, {}},
                   wire::Execute{"", 0}, wire::Sync{}, wire::Parse{"", peek, {}},
                   wire::Bind{"", "", {}, {}, {}}, wire::Execute{"", 0}, wire::Sync{});
    }
    std::string bytes = session.until('Z', 60);
    bytes += session.until('Z', 60);
    check_no_raw_value(bytes);
    const auto answers = message_summary(bytes);
    CHECK_MESSAGE(std::find(answers.begin(), answers.end(), "E:42883") != answers.end(), bytes);
    CHECK(answers.back() == "Z:E");
  }
  admin("DROP FUNCTION public.people_peek(text, text)");
}

TEST_CASE("DDL in a block: a statement prepared before the block's DDL") {
  auto& f = fixture();
  pqxx::connection analyst(f.proxy->conninfo("analyst"));
  // PREPARE'd while the function read an open table, executed in a block
  // after it was replaced twice (its backend holding people's body from the
  // failed attempt in between): denied (stale-prepared-statement: its
  // guard's generation changed, and kanon cannot prepare a PREPARE again).
  admin(to_open);
  for (int i = 0; i < 200 && !run(analyst, call, false).sqlstate.empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  REQUIRE(run(analyst, "PREPARE late_call AS " + call, false).sqlstate.empty());
  CHECK(run(analyst, "EXECUTE late_call", false).rows.find("Opentown") != std::string::npos);
  {
    WatchersPaused paused;
    admin(to_people);
    const Outcome o = run(analyst, "EXECUTE late_call", false);
    check_answer(o, true);
    CHECK_FALSE(o.sqlstate.empty());
  }
  pqxx::nontransaction(analyst).exec("BEGIN");
  CHECK(run(analyst, "SELECT 1", false).rows == "1|\n");
  {
    WatchersPaused paused;
    admin(to_open);
    const Outcome o = run(analyst, "EXECUTE late_call", false);
    check_answer(o, true);
    CHECK_MESSAGE(o.sqlstate == "42501", o.sqlstate << " " << o.message << " " << o.rows);
  }
  pqxx::nontransaction(analyst).exec("ROLLBACK");
  // A Parse'd statement prepared while the function read an open table,
  // bound in a block after it was replaced by people's body and back, which
  // kanon knows (its backend holding people's body): kanon prepares it
  // again at the Bind (its guard's generation changed), after
  // kReadInvalidations, and the new body runs. (It was denied before
  // kReadInvalidations went before a Bind; sent without it, PostgreSQL
  // parses it again with people's body: raw cities.)
  admin(to_open);
  until_kanon_has_open_body();
  analyst.prepare("bound_late", call);
  CHECK(render(pqxx::nontransaction(analyst).exec_prepared("bound_late")).find("Opentown") !=
        std::string::npos);
  cache_people_body(analyst, true);
  pqxx::nontransaction(analyst).exec("BEGIN");
  CHECK(run(analyst, "SELECT 1", true).rows == "1|\n");
  admin(to_open);
  until_kanon_has_open_body();
  Outcome bound;
  try {
    bound.rows = render(pqxx::nontransaction(analyst).exec_prepared("bound_late"));
  } catch (const pqxx::sql_error& e) {
    bound.sqlstate = e.sqlstate();
    bound.message = e.what();
  }
  check_no_raw_value(bound.rows);
  CHECK_MESSAGE(bound.sqlstate.empty(), bound.sqlstate << " " << bound.message);
  CHECK(bound.rows.find("Opentown") != std::string::npos);
  // The block goes on with the new body, bound again.
  CHECK(render(pqxx::nontransaction(analyst).exec_prepared("bound_late")).find("Opentown") !=
        std::string::npos);
  pqxx::nontransaction(analyst).exec("ROLLBACK");
}

TEST_CASE("DDL in a block: a block an error aborted, left with ROLLBACK TO SAVEPOINT") {
  // In a block an error aborted, kReadInvalidations fails with 25P02 as any
  // statement would, and reads nothing: the next statement reads again. In
  // a Query that leaves the block's error with ROLLBACK TO SAVEPOINT and
  // then calls the function, it goes after the ROLLBACK TO (first, it
  // failed with 25P02 too), and the new body runs.
  auto& f = fixture();
  pqxx::connection analyst(f.proxy->conninfo("analyst"));
  cache_people_body(analyst, false);
  pqxx::nontransaction(analyst).exec("BEGIN");
  CHECK(run(analyst, "SAVEPOINT a").sqlstate.empty());
  CHECK(run(analyst, "SELECT 1 / 0").sqlstate == "22012");
  admin(to_open);
  until_kanon_has_open_body();
  const Outcome failed = run(analyst, call);
  check_no_raw_value(failed.rows);
  CHECK_MESSAGE(failed.sqlstate == "25P02", failed.sqlstate << " " << failed.message);
  // Without the failed read taken for one, or with the read first: people's
  // body, or 25P02.
  const Outcome both = run(analyst, "ROLLBACK TO SAVEPOINT a; " + call);
  check_no_raw_value(both.rows);
  CHECK_MESSAGE(both.sqlstate.empty(), both.sqlstate << " " << both.message << " " << both.rows);
  CHECK(both.rows.find("Opentown") != std::string::npos);
  // The block goes on, read: no read before the next call, the same body.
  const Outcome again = run(analyst, call);
  CHECK_MESSAGE(again.sqlstate.empty(), again.sqlstate << " " << again.message);
  CHECK(again.rows.find("Opentown") != std::string::npos);
  pqxx::nontransaction(analyst).exec("ROLLBACK");
}

TEST_CASE(
    "DDL in a block: an aborted block left with ROLLBACK TO SAVEPOINT in one extended cycle") {
  // The case above in the extended protocol: ROLLBACK TO SAVEPOINT and the
  // call as Parse, Bind and Execute each, then one Sync. The call's Parse
  // is more than transaction control: kReadInvalidations goes before it,
  // after the ROLLBACK TO, and the new body runs (without the reads before
  // a Parse and a Bind: people's raw cities).
  auto& f = fixture();
  WireSession session(f.proxy->port());
  cache_people_body_with([&] { return wire_run(session, call); });
  CHECK(wire_run(session, "BEGIN").sqlstate.empty());
  CHECK(wire_run(session, "SAVEPOINT a").sqlstate.empty());
  CHECK(wire_run(session, "SELECT 1 / 0").sqlstate == "22012");
  admin(to_open);
  until_kanon_has_open_body();
  session.send(wire::Parse{"", "ROLLBACK TO SAVEPOINT a", {}}, wire::Bind{"", "", {}, {}, {}},
               wire::Execute{"", 0}, wire::Parse{"", call, {}}, wire::Bind{"", "", {}, {}, {}},
               wire::Execute{"", 0}, wire::Sync{});
  const std::string bytes = session.until('Z', 60);
  check_no_raw_value(bytes);
  const auto answers = message_summary(bytes);
  CHECK_MESSAGE(std::none_of(answers.begin(), answers.end(),
                             [](const std::string& a) { return a.starts_with("E:"); }),
                bytes);
  CHECK(bytes.find("Opentown") != std::string::npos);
  CHECK(answers.back() == "Z:T");
  CHECK(wire_run(session, "ROLLBACK").sqlstate.empty());
}
