// History-aware refresh through kanon's own PolicyStore on a keyed copy of
// ADULT in a real PostgreSQL, in mode: inline and mode: materialized: after
// each change and refresh, VERIFY HISTORY's function reports no row below k,
// and so does an independent SQL query over kanon.release_rows (it never sees
// a tree or a leaf id: it compares the stored tuples); in mode: inline rows
// below k through updates of quasi-identifiers are reported apart, and in
// mode: materialized the copy masks every quasi-identifier of the held keys.
// Without rights on schema kanon a refresh fails naming the cause and the
// previous snapshot stays. A history stored by an earlier kanon is reported
// by VERIFY HISTORY and replaced by a new baseline; a refresh of unchanged
// rows writes no key's row.
#include <doctest/doctest.h>

#include <fstream>
#include <future>
#include <iterator>
#include <pqxx/pqxx>
#include <tuple>

#include "exposure/privileges.h"
#include "store/history_build.h"
#include "store/policy_store.h"
#include "store/release_store.h"
#include "tests/policy/history_harness.h"
#include "tests/support/demo_data.h"
#include "tests/support/pg_sandbox.h"
#include "tests/support/wait.h"

using namespace kanon::policy;
using namespace kanon::store;
using kanon::testing::PgSandbox;

namespace {

const char* const kQis[] = {
    "sex",       "age",       "race", "marital_status", "education", "native_country",
    "workclass", "occupation"};
constexpr const char* kTable = "public.adult_keyed";

std::string conninfo() {
  return PgSandbox::shared().conninfo("postgres", "postgres");
}

void load_adult(pqxx::connection& conn) {
  pqxx::work tx(conn);
  tx.exec("DROP TABLE IF EXISTS adult_keyed");
  tx.exec("DELETE FROM kanon.release_rows WHERE table_name = 'public.adult_keyed'");
  tx.exec("DELETE FROM kanon.releases WHERE table_name = 'public.adult_keyed'");
  tx.exec("DELETE FROM kanon.held_keys WHERE table_name = 'public.adult_keyed'");
  tx.exec(
      "CREATE TABLE adult_keyed (id integer PRIMARY KEY, sex text, age integer, race text, "
      "marital_status text, education text, native_country text, workclass text, occupation "
      "text)");
  const auto rows = testing::read_adult(kanon::testing::adult_dir() + "/adult.csv", 8);
  pqxx::stream_to copy(
      tx, "adult_keyed",
      std::vector<std::string>{"id", "sex", "age", "race", "marital_status", "education",
                               "native_country", "workclass", "occupation"});
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    copy << std::make_tuple(static_cast<int>(i + 1), *r[0], *r[1], *r[2], *r[3], *r[4], *r[5],
                            *r[6], *r[7]);
  }
  copy.complete();
  tx.commit();
}

TablePolicy adult_policy(EnforcementMode mode = EnforcementMode::kInline) {
  TablePolicy p;
  p.mode = mode;
  p.schema = "public";
  p.table = "adult_keyed";
  p.k = 5;
  for (const char* q : kQis) {
    p.quasi_identifiers.push_back(q);
    p.quasi_identifier_refs.push_back({"test", 1, q});
  }
  return p;
}

// Keys of the last release below k, by the stored tuples: {rows below k,
// min candidates, rows of the last release}. A candidate is present in the
// same releases as its target (an analyst sees keys appear and disappear)
// and shows the target's tuple wherever present. A held key's tuple is its
// true one prefixed "H:": as a target it must be matched by that tuple; as
// a candidate it matches any target.
std::tuple<long, long, long> sql_check(pqxx::connection& conn, int k) {
  pqxx::nontransaction tx(conn);
  const auto r = tx.exec_params(R"SQL(
WITH v AS (
  SELECT version, row_number() OVER (ORDER BY version) AS i FROM kanon.releases
  WHERE table_name = $1 AND version >= (SELECT max(version) FROM kanon.releases
                                        WHERE table_name = $1 AND baseline)),
nv AS (SELECT count(*)::int AS n FROM v),
kv AS (
  SELECT k.key, v.i, coalesce((SELECT CASE WHEN r.held THEN 'H:' ELSE '' END || r.released::text
      FROM kanon.release_rows r
      WHERE r.table_name = $1 AND r.key = k.key AND r.since_version <= v.version
      ORDER BY r.since_version DESC LIMIT 1), '') AS t
  FROM (SELECT DISTINCT key FROM kanon.release_rows WHERE table_name = $1) k CROSS JOIN v),
sig AS (SELECT key, array_agg(t ORDER BY i) AS s FROM kv GROUP BY key),
grp AS (SELECT s, count(*) AS n FROM sig GROUP BY s),
target AS (SELECT g.s, g.n FROM grp g, nv WHERE nv.n > 1 AND g.s[nv.n] <> ''),
pairs AS (
  SELECT l.s AS gs, l.n AS gn, h.s AS hs, h.n AS hn FROM target l, nv, grp h
    WHERE h.s[nv.n] = regexp_replace(l.s[nv.n], '^H:', '')
  UNION ALL
  SELECT l.s, l.n, h.s, h.n FROM target l, nv, grp h WHERE h.s[nv.n] LIKE 'H:%'),
cand AS (
  SELECT gs, gn, sum(hn) AS c FROM pairs p
  WHERE NOT EXISTS (SELECT 1 FROM generate_subscripts(p.gs, 1) i
                    WHERE (p.gs[i] <> '') <> (p.hs[i] <> '')
                       OR (p.gs[i] <> '' AND p.hs[i] NOT LIKE 'H:%'
                           AND regexp_replace(p.gs[i], '^H:', '') <> p.hs[i]))
  GROUP BY gs, gn)
SELECT coalesce(sum(gn) FILTER (WHERE c < $2), 0)::bigint, coalesce(min(c), 0)::bigint,
       coalesce(sum(gn), 0)::bigint FROM cand)SQL",
                                std::string(kTable), k);
  return {r[0][0].as<long>(), r[0][1].as<long>(), r[0][2].as<long>()};
}

// What a change did. A live mode shows inserts and updates before the
// refresh: rows may fall below k through them, reported apart; so are rows
// below k through deletions, which no release undoes.
struct Change {
  bool inserts = false;
  bool deletes = false;
  bool updates = false;
};

void refresh_and_check(PolicyStore& store, pqxx::connection& conn, EnforcementMode mode,
                       const std::string& what, Change step) {
  const bool updates = step.updates;
  CAPTURE(what);
  const std::string mode_name = to_string(mode);
  CAPTURE(mode_name);
  const bool live = mode != EnforcementMode::kMaterialized;
  REQUIRE(store.refresh(kTable));
  const auto* t = store.current()->find(kTable);
  REQUIRE(t != nullptr);
  CHECK(t->release.key.source == RowKey::Source::kPrimaryKey);
  CHECK(t->release.version > 1);
  CHECK(t->release.check.rows_below_k == 0);
  // verify_history and builds pin the session's settings (search_path
  // included): their own connections.
  pqxx::connection service(conninfo());
  const auto v = verify_history(service, adult_policy(mode), std::nullopt);
  CHECK(v.check.linked_rows > 0);
  CHECK(v.check.rows_below_k == 0);
  const auto [below, min, targets] = sql_check(conn, 5);
  CHECK(targets > 0);
  CHECK(static_cast<uint64_t>(targets) == v.check.linked_rows + v.check.new_rows);
  CHECK(static_cast<uint64_t>(min) == v.check.min_candidates);
  // Every row below k, by either counter, has a reason kanon reports.
  const uint64_t reported =
      v.check.updated_rows_below_k + v.check.late_rows_below_k + v.check.deleted_rows_below_k;
  CHECK(static_cast<uint64_t>(below) == reported);
  // Shown at once by the live masks: updates and new rows.
  if (live && updates) CHECK(v.check.updated_rows_below_k > 0);
  if (live && step.inserts) CHECK(v.check.late_rows_below_k > 0);
  if (!live) {
    CHECK(v.check.updated_rows_below_k == 0);
    CHECK(v.check.late_rows_below_k == 0);  // held until k arrived together
  }
  if (!step.deletes) CHECK(v.check.deleted_rows_below_k == 0);
  if (reported == 0) CHECK(min >= 5);
  // kanon check reports them too, and fails (exit 2) for them.
  pqxx::connection check_conn(conninfo());
  const auto report = kanon::exposure::check_exposure(check_conn, {adult_policy(mode)});
  REQUIRE(report.history.size() == 1);
  const auto& status = report.history[0];
  CHECK(status.releases == v.releases);
  CHECK(status.rows_below_k == 0);
  CHECK(status.updated_rows_below_k == v.check.updated_rows_below_k);
  CHECK(status.late_rows_below_k == v.check.late_rows_below_k);
  CHECK(status.deleted_rows_below_k == v.check.deleted_rows_below_k);
  CHECK(report.history_findings() == (reported > 0 ? 1u : 0u));
  CHECK((status.verdict() == "ok") == (reported == 0));
  const std::string text = kanon::exposure::exposure_report_text(report);
  CHECK(text.find("privacy over time (VERIFY HISTORY):\n  public.adult_keyed (primary key "
                  "(id)): ") != std::string::npos);
  if (v.check.updated_rows_below_k > 0)
    CHECK(text.find("below k through updates of quasi-identifiers, which a live mode shows at "
                    "once: use mode: materialized") != std::string::npos);
  if (v.check.late_rows_below_k > 0)
    CHECK(text.find("below k among rows that arrived after the first release") !=
          std::string::npos);
  if (v.check.deleted_rows_below_k > 0)
    CHECK(text.find("below k through deletions") != std::string::npos);
  pqxx::nontransaction tx(conn);
  const auto held =
      tx.exec("SELECT count(*) FROM kanon.held_keys WHERE table_name = 'public.adult_keyed'")[0][0]
          .as<uint64_t>();
  CHECK(held == t->release.held);
  if (live) CHECK(held == 0);
  if (!live) {
    // The copy: every quasi-identifier NULL for each held key, and the held
    // keys' rows otherwise there.
    const auto copy = tx.exec(
        "SELECT count(*), count(*) FILTER (WHERE coalesce(sex, race, marital_status, education, "
        "native_country, workclass, occupation, age::text) IS NULL) "
        "FROM kanon_masked.adult_keyed c JOIN kanon.held_keys h "
        "ON h.table_name = 'public.adult_keyed' AND h.key = c.id::text")[0];
    CHECK(copy[0].as<uint64_t>() == held);
    CHECK(copy[1].as<uint64_t>() == held);
    if (updates || step.inserts) CHECK(held > 0);
    // Utility: within 5 points of a fresh build of the same rows.
    const auto fresh = build_table_snapshot(service, adult_policy(mode), {.history = false});
    CHECK(t->release.released_fraction > fresh->release.released_fraction - 0.05);
  }
  MESSAGE(what << " (" << mode_name << "): release " << t->release.version << ", released fraction "
               << t->release.released_fraction << ", rows " << targets << ", min candidates " << min
               << ", fix-up rounds " << t->release.fixup_rounds << ", held " << t->release.held
               << ", below k through updates " << v.check.updated_rows_below_k << ", arrived late "
               << v.check.late_rows_below_k << ", through deletions "
               << v.check.deleted_rows_below_k);
}

void ensure_tables(pqxx::connection& conn) {
  pqxx::work tx(conn);
  ensure_release_tables(tx);
  tx.commit();
}

void exec(pqxx::connection& conn, const std::string& sql) {
  pqxx::nontransaction tx(conn);
  tx.exec(sql);
}

// Inserts `n` rows mixing attributes of random rows, with new ids.
std::string insert_sql(int n, int seed) {
  return "INSERT INTO adult_keyed SELECT (SELECT max(id) FROM adult_keyed) + g, "
         "(array_agg(sex))[1], (array_agg(age))[2], (array_agg(race))[3], "
         "(array_agg(marital_status))[1], (array_agg(education))[2], "
         "(array_agg(native_country))[1], (array_agg(workclass))[3], (array_agg(occupation))[2] "
         "FROM generate_series(1, " +
         std::to_string(n) +
         ") g CROSS JOIN LATERAL (SELECT * FROM adult_keyed WHERE id % 997 = (g * 31 + " +
         std::to_string(seed) + ") % 997 AND g > 0 LIMIT 3) s GROUP BY g";
}

}  // namespace

TEST_CASE("history-aware REFRESH on keyed ADULT: 0 rows below k after every change") {
  pqxx::connection conn(conninfo());
  ensure_tables(conn);
  struct Step {
    const char* what;
    std::string sql;
    Change change;
  };
  const std::vector<Step> steps = {
      {"insert 0.1%", insert_sql(30, 1), {.inserts = true}},
      {"insert 1%", insert_sql(302, 2), {.inserts = true}},
      {"insert 5%", insert_sql(1508, 3), {.inserts = true}},
      {"delete 1%", "DELETE FROM adult_keyed WHERE id % 100 = 7", {.deletes = true}},
      {"update 1%",
       "UPDATE adult_keyed SET age = age + 1 WHERE id % 200 = 3; "
       "UPDATE adult_keyed SET occupation = 'Sales' WHERE id % 200 = 5",
       {.updates = true}},
      {"mixed 1%",
       insert_sql(120, 4) + "; DELETE FROM adult_keyed WHERE id % 331 = 9; " +
           "UPDATE adult_keyed SET age = age + 1 WHERE id % 331 = 109",
       {.inserts = true, .deletes = true, .updates = true}},
  };
  for (const auto mode : {EnforcementMode::kInline, EnforcementMode::kMaterialized}) {
    for (const auto& step : steps) {
      load_adult(conn);
      PolicyStore store(conninfo(), {adult_policy(mode)});
      REQUIRE(store.refresh(kTable));
      REQUIRE(store.current()->find(kTable)->release.baseline);
      exec(conn, step.sql);
      refresh_and_check(store, conn, mode, step.what, step.change);
    }
  }
  // Ten successive 1% refreshes (inserts, deletes, updates) of the copy, and
  // a restart between two of them (a new store reads the history back).
  const auto mode = EnforcementMode::kMaterialized;
  load_adult(conn);
  auto store = std::make_unique<PolicyStore>(conninfo(), std::vector{adult_policy(mode)});
  REQUIRE(store->refresh(kTable));
  for (int i = 0; i < 10; ++i) {
    exec(conn, insert_sql(120, 10 + i));
    exec(conn, "DELETE FROM adult_keyed WHERE id % 331 = " + std::to_string(i));
    exec(conn, "UPDATE adult_keyed SET age = age + 1 WHERE id % 331 = " + std::to_string(100 + i));
    if (i == 5) store = std::make_unique<PolicyStore>(conninfo(), std::vector{adult_policy(mode)});
    refresh_and_check(*store, conn, mode, "successive 1% #" + std::to_string(i + 1),
                      {.inserts = true, .deletes = true, .updates = true});
  }
  // REANONYMIZE: a new baseline; the earlier release_rows are gone.
  REQUIRE(store->reanonymize(kTable));
  CHECK(store->current()->find(kTable)->release.baseline);
  pqxx::nontransaction tx(conn);
  CHECK(tx.exec("SELECT count(DISTINCT since_version) FROM kanon.release_rows WHERE table_name "
                "= 'public.adult_keyed'")[0][0]
            .as<int>() == 1);
  CHECK(
      tx.exec("SELECT count(*) FROM kanon.held_keys WHERE table_name = 'public.adult_keyed'")[0][0]
          .as<int>() == 0);
}

// A refresh writes each new key with its class (the row's quasi-identifiers)
// as parameters: the text of its statements holds no row's values. That
// text shows in pg_stat_activity to every role with pg_read_all_stats (cut
// at track_activity_query_size) and in full in the server's log when the
// statement fails (log_min_error_statement; parameters are not logged
// there by default). The test makes the statement wait on a lock, cancels
// it, and reads the server's log.
TEST_CASE("a refresh's statement text holds no key and no row's values") {
  auto& pg = PgSandbox::shared();
  pqxx::connection conn(conninfo());
  ensure_tables(conn);
  load_adult(conn);
  PolicyStore store(conninfo(), {adult_policy()});
  REQUIRE(store.refresh(kTable));
  exec(conn,
       "INSERT INTO adult_keyed SELECT 987654321, sex, age, race, marital_status, education, "
       "'Sentinel-Land', workclass, occupation FROM adult_keyed ORDER BY id LIMIT 1");
  pqxx::connection holder(conninfo());
  pqxx::work lock(holder);
  // Reads go on; the refresh's write of the keys waits.
  lock.exec("LOCK TABLE kanon.release_rows IN SHARE MODE");
  auto refreshed = std::async(std::launch::async, [&] { return store.refresh(kTable); });
  pqxx::connection watcher(conninfo());
  int pid = 0;
  const bool waiting = kanon::testing::until([&] {
    pqxx::nontransaction w(watcher);
    const auto r = w.exec(
        "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE "
        "'%unnest($2::text[], $3::bigint[])%' AND query LIKE '%kanon.release_rows%' AND pid <> "
        "pg_backend_pid()");
    if (r.empty()) return false;
    pid = r[0][0].as<int>();
    return true;
  });
  if (waiting) {
    pqxx::nontransaction w(watcher);
    w.exec("SELECT pg_cancel_backend(" + std::to_string(pid) + ")");
  }
  lock.commit();
  REQUIRE(waiting);
  CHECK_FALSE(refreshed.get());  // cancelled: the previous release stays
  std::ifstream in(pg.dir() + "/server.log");
  const std::string log((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t cancelled = log.rfind("canceling statement due to user request");
  REQUIRE(cancelled != std::string::npos);
  const std::string logged = log.substr(cancelled);
  CHECK(logged.find("STATEMENT:") != std::string::npos);
  CHECK(logged.find("kanon.release_rows") != std::string::npos);
  CHECK(logged.find("Sentinel-Land") == std::string::npos);
  CHECK(logged.find("987654321") == std::string::npos);
  // Without the lock the key is written, with its class.
  REQUIRE(store.refresh(kTable));
  pqxx::nontransaction tx(conn);
  CHECK(tx.exec("SELECT count(*) FROM kanon.release_rows WHERE table_name = "
                "'public.adult_keyed' AND key = '987654321' AND until_version IS NULL")[0][0]
            .as<int>() == 1);
}

TEST_CASE("without rights on schema kanon a refresh fails naming the cause; others unchanged") {
  auto& pg = PgSandbox::shared();
  pqxx::connection conn(conninfo());
  ensure_tables(conn);
  load_adult(conn);
  pg.psql(
      "DROP TABLE IF EXISTS hist_unkeyed; "
      "CREATE TABLE hist_unkeyed AS SELECT sex, race FROM adult_keyed; "
      "DROP ROLE IF EXISTS hist_service; "
      "CREATE ROLE hist_service LOGIN; "
      "GRANT SELECT ON adult_keyed, hist_unkeyed TO hist_service; "
      "GRANT USAGE, CREATE ON SCHEMA kanon TO hist_service; "
      "GRANT ALL ON kanon.releases, kanon.release_rows, kanon.held_keys TO hist_service;");
  TablePolicy unkeyed;
  unkeyed.schema = "public";
  unkeyed.table = "hist_unkeyed";
  unkeyed.k = 5;
  for (const char* q : {"sex", "race"}) {
    unkeyed.quasi_identifiers.push_back(q);
    unkeyed.quasi_identifier_refs.push_back({"test", 1, q});
  }
  PolicyStore store(PgSandbox::shared().conninfo("hist_service"), {adult_policy(), unkeyed});
  REQUIRE(store.refresh_all());
  const auto first = store.current()->find(kTable)->release.version;
  CHECK(first > 0);
  CHECK(store.current()->find("public.hist_unkeyed")->release.version == 0);
  CHECK_FALSE(store.current()->find("public.hist_unkeyed")->release.key.linkable());

  pg.psql(
      "REVOKE ALL ON kanon.releases, kanon.release_rows, kanon.held_keys FROM hist_service; "
      "REVOKE ALL ON SCHEMA kanon FROM hist_service;");
  exec(conn, insert_sql(30, 5));
  CHECK_FALSE(store.refresh(kTable));
  const auto snap = store.current();
  REQUIRE(snap->errors.count(kTable) == 1);
  const std::string error = snap->errors.at(kTable);
  CAPTURE(error);
  CHECK(error.find("public.adult_keyed: the release history in schema kanon") != std::string::npos);
  CHECK(error.find("permission denied") != std::string::npos);
  CHECK(error.find("the service user needs") != std::string::npos);
  // The previous snapshot stays; a table that is not linkable refreshes as
  // before.
  REQUIRE(snap->find(kTable) != nullptr);
  CHECK(snap->find(kTable)->release.version == first);
  CHECK(store.refresh("public.hist_unkeyed"));
  pg.psql("DROP TABLE hist_unkeyed; DROP OWNED BY hist_service; DROP ROLE hist_service;");
}

TEST_CASE(
    "a history stored by an earlier kanon: VERIFY HISTORY says so, the next build is a "
    "baseline") {
  pqxx::connection conn(conninfo());
  ensure_tables(conn);
  load_adult(conn);
  // The tables as kanon made them before row format 2, holding one release
  // of the root alone with every key's (all masked) tuple.
  exec(conn,
       "ALTER TABLE kanon.releases DROP COLUMN row_format, DROP COLUMN histories; "
       "ALTER TABLE kanon.release_rows DROP COLUMN history, DROP COLUMN until_version");
  exec(conn,
       "INSERT INTO kanon.releases (table_name, version, baseline, k, tree, rows, "
       "released_fraction, linked_rows, min_candidates, rows_below_k, updated_rows_below_k, "
       "held_rows) VALUES ('public.adult_keyed', 1, true, 5, '{\"attributes\": [\"sex\", \"age\", "
       "\"race\", \"marital_status\", \"education\", \"native_country\", \"workclass\", "
       "\"occupation\"], \"nodes\": [{\"rows\": 30162}]}', 30162, 0, 0, 0, 0, 0, 0); "
       "INSERT INTO kanon.release_rows (table_name, key, since_version, released) SELECT "
       "'public.adult_keyed', id::text, 1, '{NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL}' FROM "
       "adult_keyed");
  {
    pqxx::connection service(conninfo());
    try {
      verify_history(service, adult_policy(), std::nullopt);
      FAIL("VERIFY HISTORY read a history of the earlier format");
    } catch (const std::runtime_error& e) {
      CHECK(std::string(e.what()).find("public.adult_keyed: the release history was stored by "
                                       "an earlier kanon") != std::string::npos);
    }
  }
  PolicyStore store(conninfo(), {adult_policy()});
  REQUIRE(store.refresh(kTable));
  const auto* t = store.current()->find(kTable);
  REQUIRE(t != nullptr);
  CHECK(t->release.baseline);
  CHECK(t->release.version == 2);
  CHECK(t->release.note.find("stored by an earlier kanon") != std::string::npos);
  CHECK(t->release.note.find("starts a new baseline") != std::string::npos);
  // The old rows are gone; every key has one row of the new baseline, its
  // current one.
  const auto rows = pqxx::nontransaction(conn).exec(
      "SELECT count(*), count(*) FILTER (WHERE since_version = 2 AND until_version IS NULL AND "
      "history IS NOT NULL) FROM kanon.release_rows WHERE table_name = 'public.adult_keyed'")[0];
  CHECK(rows[0].as<long>() == 30162);
  CHECK(rows[1].as<long>() == 30162);
  // A refresh of unchanged rows stores a release and no key's row (delta
  // encoded: nothing changed for any key).
  REQUIRE(store.refresh(kTable));
  CHECK(store.current()->find(kTable)->release.version == 3);
  CHECK(pqxx::nontransaction(conn)
            .exec("SELECT count(*) FROM kanon.release_rows WHERE table_name = "
                  "'public.adult_keyed'")[0][0]
            .as<long>() == 30162);
  // A refresh after an insert continues it; VERIFY HISTORY reads it.
  exec(conn, insert_sql(30, 9));
  REQUIRE(store.refresh(kTable));
  CHECK_FALSE(store.current()->find(kTable)->release.baseline);
  CHECK(store.current()->find(kTable)->release.note.empty());
  pqxx::connection service(conninfo());
  const auto v = verify_history(service, adult_policy(), std::nullopt);
  CHECK(v.since == 2);
  CHECK(v.check.linked_rows > 30000);
  CHECK(v.check.rows_below_k == 0);
  // Shown at once (mode: inline): new rows few of which share a leaf,
  // reported.
  CHECK(v.check.late_rows_below_k > 0);
  CHECK(v.check.late_rows_below_k <= 30);
  CHECK(v.check.deleted_rows_below_k == 0);
  const auto [below, min, targets] = sql_check(conn, 5);
  CHECK(static_cast<uint64_t>(below) == v.check.late_rows_below_k);
  CHECK(static_cast<uint64_t>(targets) == v.check.linked_rows);
}
