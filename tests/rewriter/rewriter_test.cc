// Rewriter behaviour outside the golden files: the cache (hits, misses, what
// the key separates, eviction), exempt sessions, fingerprints, concurrent use.
#include "rewriter/rewriter.h"

#include <doctest/doctest.h>

#include <atomic>
#include <random>
#include <thread>

#include "rewriter/sql_parser.h"
#include "tests/rewriter/golden_env.h"
#include "tests/rewriter/golden_file.h"

using namespace kanon::rewriter;
using kanon::testing::make_unit_env;

TEST_CASE("cache: a repeated statement is a hit with the same result") {
  auto env = make_unit_env("default");
  Rewriter rw(16);
  const PlanContext s{"public", false};
  const auto first = rw.rewrite("SELECT city FROM people", env.snapshot, s);
  CHECK_FALSE(first.cache_hit);
  const auto second = rw.rewrite("SELECT city FROM people", env.snapshot, s);
  CHECK(second.cache_hit);
  CHECK(second.verdict == Verdict::kRewritten);
  CHECK(second.sql == first.sql);
  CHECK(second.fingerprint == first.fingerprint);
  const auto stats = rw.cache_stats();
  CHECK(stats.hits == 1);
  CHECK(stats.misses == 1);
  CHECK(stats.entries == 1);
}

TEST_CASE("cache: policy version, search_path and text are part of the key") {
  auto env = make_unit_env("default");
  Rewriter rw(16);
  rw.rewrite("SELECT 1", env.snapshot, {"public", false});
  CHECK_FALSE(rw.rewrite("SELECT 1", env.snapshot, {"other", false}).cache_hit);
  CHECK_FALSE(rw.rewrite("SELECT  1", env.snapshot, {"public", false}).cache_hit);
  env.snapshot.version = 2;
  CHECK_FALSE(rw.rewrite("SELECT 1", env.snapshot, {"public", false}).cache_hit);
  CHECK(rw.cache_stats().misses == 4);
  CHECK(rw.rewrite("SELECT 1", env.snapshot, {"public", false}).cache_hit);
}

TEST_CASE("plan context: per-table exemption leaves that table raw and keeps the others masked") {
  auto env = make_unit_env("default");
  Rewriter rw(16);
  PlanContext partly{"public", false, {"public.people"}, "auditor", "postgres"};
  const auto raw = rw.rewrite("SELECT * FROM people", env.snapshot, partly);
  CHECK(raw.verdict == Verdict::kPass);
  const auto join = rw.rewrite("SELECT * FROM people JOIN adult ON true", env.snapshot, partly);
  REQUIRE(join.verdict == Verdict::kRewritten);
  CHECK(join.sql.find("FROM people JOIN (SELECT") != std::string::npos);
  CHECK(rw.rewrite("DELETE FROM people", env.snapshot, partly).verdict == Verdict::kPass);
  CHECK(rw.rewrite("DELETE FROM adult", env.snapshot, partly).verdict == Verdict::kDenied);
}

TEST_CASE("plan context: two users with different exemptions never share a cached rewrite") {
  auto env = make_unit_env("default");
  const std::string sql = "SELECT * FROM people";
  const PlanContext exempt_user{"public", false, {"public.people"}, "auditor", "postgres"};
  const PlanContext analyst{"public", false, {}, "analyst", "postgres"};
  const PlanContext analyst_with_auditor_name{"public", false, {}, "auditor", "postgres"};
  for (bool exempt_first : {true, false}) {
    CAPTURE(exempt_first);
    Rewriter rw(16);
    const auto first = rw.rewrite(sql, env.snapshot, exempt_first ? exempt_user : analyst);
    const auto second = rw.rewrite(sql, env.snapshot, exempt_first ? analyst : exempt_user);
    CHECK_FALSE(second.cache_hit);
    const auto& masked = exempt_first ? second : first;
    const auto& raw = exempt_first ? first : second;
    CHECK(masked.verdict == Verdict::kRewritten);
    CHECK(raw.verdict == Verdict::kPass);
    // The same login name with another exemption set is another key too.
    const auto third = rw.rewrite(sql, env.snapshot, analyst_with_auditor_name);
    CHECK_FALSE(third.cache_hit);
    CHECK(third.verdict == Verdict::kRewritten);
    // And the database is part of the key.
    PlanContext other_db = analyst;
    other_db.database = "sales";
    CHECK_FALSE(rw.rewrite(sql, env.snapshot, other_db).cache_hit);
    CHECK(rw.rewrite(sql, env.snapshot, analyst).cache_hit);
  }
}

TEST_CASE("cache: a new policy version changes the answer, not a stale hit") {
  auto env = make_unit_env("default");
  Rewriter rw(16);
  const PlanContext s{"public", false};
  CHECK(rw.rewrite("SELECT * FROM people", env.snapshot, s).verdict == Verdict::kRewritten);
  kanon::store::PolicySnapshot later;
  later.version = env.snapshot.version + 1;
  later.tables["public.adult"] = env.snapshot.tables["public.adult"];
  later.errors["public.people"] = "refresh failed";
  const auto r = rw.rewrite("SELECT * FROM people", later, s);
  CHECK_FALSE(r.cache_hit);
  CHECK(r.verdict == Verdict::kDenied);
  CHECK(r.rule == "policy-not-built");
}

TEST_CASE("cache: least recently used entries are evicted at capacity") {
  auto env = make_unit_env("default");
  Rewriter rw(2);
  const PlanContext s{"public", false};
  rw.rewrite("SELECT 1", env.snapshot, s);
  rw.rewrite("SELECT 2", env.snapshot, s);
  rw.rewrite("SELECT 1", env.snapshot, s);  // 1 is now the most recent
  rw.rewrite("SELECT 3", env.snapshot, s);  // evicts 2
  CHECK(rw.cache_stats().entries == 2);
  CHECK(rw.rewrite("SELECT 1", env.snapshot, s).cache_hit);
  CHECK_FALSE(rw.rewrite("SELECT 2", env.snapshot, s).cache_hit);
}

TEST_CASE("listed tables: a table listed but never built is denied") {
  auto env = make_unit_env("listed-only");
  Rewriter rw;
  const PlanContext s{"public", false};
  CHECK(rw.rewrite("SELECT * FROM people", env.snapshot, s).verdict == Verdict::kPass);
  rw.set_listed_tables({"public.people"});
  const auto r = rw.rewrite("SELECT * FROM people", env.snapshot, s);
  CHECK(r.verdict == Verdict::kDenied);
  CHECK(r.sqlstate == "42501");
  CHECK(r.object == "public.people");
}

TEST_CASE("listed tables: a snapshot's own list denies what it has not built") {
  auto env = make_unit_env("listed-only");
  Rewriter rw;
  const PlanContext s{"public", false};
  env.snapshot.store = 7;
  env.snapshot.listed = {"public.people"};
  const auto r = rw.rewrite("SELECT * FROM people", env.snapshot, s);
  CHECK(r.verdict == Verdict::kDenied);
  CHECK(r.rule == "policy-not-built");
}

TEST_CASE("stores: two databases' snapshots of one version never share indexes or results") {
  // Two stores (databases) at the same version: one protects people, the
  // other has nothing built and lists nothing. Alternating between them
  // must give each its own answer, cached or not.
  auto env = make_unit_env("default");
  kanon::store::PolicySnapshot protects = env.snapshot;
  protects.store = 1;
  protects.version = 3;
  kanon::store::PolicySnapshot other;
  other.store = 2;
  other.version = 3;
  Rewriter rw(16);
  const PlanContext s{"public", false};
  for (int round = 0; round < 2; ++round) {
    CAPTURE(round);
    CHECK(rw.rewrite("SELECT * FROM people", protects, s).verdict == Verdict::kRewritten);
    CHECK(rw.rewrite("SELECT * FROM people", other, s).verdict == Verdict::kPass);
  }
  // A third store listing people without a build denies it.
  kanon::store::PolicySnapshot unbuilt;
  unbuilt.store = 3;
  unbuilt.version = 3;
  unbuilt.listed = {"public.people"};
  CHECK(rw.rewrite("SELECT * FROM people", unbuilt, s).verdict == Verdict::kDenied);
  CHECK(rw.rewrite("SELECT * FROM people", protects, s).verdict == Verdict::kRewritten);
  // One address, one version, another store's content (a freed snapshot's
  // memory reused by another database's): never the first one's answer.
  kanon::store::PolicySnapshot reused = protects;
  CHECK(rw.rewrite("SELECT * FROM people", reused, s).verdict == Verdict::kRewritten);
  reused = other;
  CHECK(rw.rewrite("SELECT * FROM people", reused, s).verdict == Verdict::kPass);
  reused = unbuilt;
  CHECK(rw.rewrite("SELECT * FROM people", reused, s).verdict == Verdict::kDenied);
}

TEST_CASE("exempt sessions are never rewritten") {
  auto env = make_unit_env("default");
  Rewriter rw;
  const auto r =
      rw.rewrite("SELECT ssn FROM people; DO $$ BEGIN END $$", env.snapshot, {"public", true});
  CHECK(r.verdict == Verdict::kPass);
  CHECK(r.sql.empty());
}

TEST_CASE("leading transaction control: how many statements, and where the next begins") {
  // Where the proxy puts kReadInvalidations (StatementGate::decide_query).
  auto env = make_unit_env("default");
  Rewriter rw;
  const PlanContext s{"public", false};
  const auto one = rw.rewrite("ROLLBACK TO SAVEPOINT a; SELECT 1", env.snapshot, s);
  CHECK_FALSE(one.transaction_control);
  CHECK(one.leading_control == 1);
  CHECK(one.leading_control_bytes == 24);
  const auto masked =
      rw.rewrite("BEGIN;SAVEPOINT b ; SELECT city FROM people; COMMIT", env.snapshot, s);
  REQUIRE(masked.verdict == Verdict::kRewritten);
  CHECK(masked.leading_control == 2);
  REQUIRE(masked.leading_control_bytes == 19);
  CHECK(masked.sql.substr(0, 19) == "BEGIN;SAVEPOINT b ;");
  CHECK(masked.sql.substr(19).starts_with(" SELECT "));
  // None first, all of it, or a byte before the statement that is not ASCII.
  for (const char* sql : {"SELECT 1; COMMIT", "SELECT city FROM people", "BEGIN; COMMIT",
                          "SAVEPOINT \"\xc3\xa9\"; SELECT 1"}) {
    const auto r = rw.rewrite(sql, env.snapshot, s);
    CHECK_MESSAGE(r.leading_control == 0, sql);
    CHECK_MESSAGE(r.leading_control_bytes == 0, sql);
  }
  CHECK(rw.rewrite("BEGIN; COMMIT", env.snapshot, s).transaction_control);
}

TEST_CASE("denials carry 42501 and a sentence naming the rule and the object") {
  auto env = make_unit_env("default");
  Rewriter rw;
  const auto r = rw.rewrite("DELETE FROM public.people", env.snapshot, {"public", false});
  CHECK(r.verdict == Verdict::kDenied);
  CHECK(r.sqlstate == "42501");
  CHECK(r.rule == "write-protected-table");
  CHECK(r.object == "public.people");
  CHECK(r.message ==
        "restricted sessions may not write to, or write with rows of, a protected table: "
        "public.people (kanon rule write-protected-table)");
}

TEST_CASE("syntax errors are 42601 with PostgreSQL's message") {
  auto env = make_unit_env("default");
  Rewriter rw;
  const auto r = rw.rewrite("SELECT FROM WHERE", env.snapshot, {"public", false});
  CHECK(r.verdict == Verdict::kDenied);
  CHECK(r.sqlstate == "42601");
  CHECK(r.message.find("syntax error") != std::string::npos);
  CHECK(r.position == 13);  // 1-based, at WHERE
}

TEST_CASE("fingerprints ignore literal values and layout but not structure") {
  auto env = make_unit_env("default");
  Rewriter rw(0);
  const PlanContext s{"public", false};
  const auto a = rw.rewrite("SELECT city FROM people WHERE id = 1", env.snapshot, s);
  const auto b = rw.rewrite("select city\n  from people where id = 42", env.snapshot, s);
  const auto c = rw.rewrite("SELECT state FROM people WHERE id = 1", env.snapshot, s);
  CHECK(a.fingerprint != 0);
  CHECK(a.fingerprint == b.fingerprint);
  CHECK(a.fingerprint != c.fingerprint);
}

TEST_CASE("concurrent rewrites agree with a single-threaded run") {
  auto env = make_unit_env("default");
  Rewriter rw(8);
  const PlanContext s{"public", false};
  const std::vector<std::string> stmts = {"SELECT * FROM people",
                                          "SELECT city FROM people p WHERE p.state = 'OH'",
                                          "SELECT 1",
                                          "DELETE FROM people",
                                          "SELECT count(*) FROM adult",
                                          "TABLE people",
                                          "SELECT * FROM regions",
                                          "SELECT public.people.city FROM public.people"};
  std::vector<RewriteResult> want;
  {
    Rewriter single(0);
    for (const auto& q : stmts) want.push_back(single.rewrite(q, env.snapshot, s));
  }
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) {
        const size_t k = static_cast<size_t>(i * 7 + t) % stmts.size();
        const auto r = rw.rewrite(stmts[k], env.snapshot, s);
        if (r.verdict != want[k].verdict || r.sql != want[k].sql || r.rule != want[k].rule)
          ++mismatches;
      }
    });
  for (auto& th : threads) th.join();
  CHECK(mismatches == 0);
  const auto stats = rw.cache_stats();
  CHECK(stats.hits + stats.misses == 2000);
  CHECK(stats.hits > 0);
}

TEST_CASE("robustness: mutated golden inputs never crash, and every rewrite parses") {
  auto env = make_unit_env("default");
  const auto cases = kanon::testing::load_golden_cases(kanon::testing::golden_dir());
  REQUIRE(!cases.empty());
  std::mt19937 rng(7);
  const std::string alphabet = "()\"'.*;, \n/-$&Uu\\0aZ";
  Rewriter rw(0);
  size_t rewritten = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string sql = cases[rng() % cases.size()].input;
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits && !sql.empty(); ++e) {
      const size_t at = rng() % sql.size();
      switch (rng() % 3) {
        case 0:
          sql.erase(at, 1 + rng() % 4);
          break;
        case 1:
          sql.insert(at, 1, alphabet[rng() % alphabet.size()]);
          break;
        default:
          sql.resize(at);
          break;
      }
    }
    CAPTURE(sql);
    const auto r = rw.rewrite(sql, env.snapshot, {"public", false});
    if (r.verdict == Verdict::kRewritten) {
      ++rewritten;
      CHECK(parse_sql(r.sql).ok);
    }
    if (r.verdict == Verdict::kDenied) CHECK((r.sqlstate == "42501" || r.sqlstate == "42601"));
  }
  MESSAGE(rewritten << " of 3000 mutated statements were rewritten");
  CHECK(rewritten > 50);
}
