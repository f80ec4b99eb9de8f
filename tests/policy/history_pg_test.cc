// History-aware refresh through kanon's own PolicyStore on a keyed copy of
// ADULT in a real PostgreSQL: after each change and refresh, VERIFY
// HISTORY's function reports no row below k, and so does an independent SQL
// query over kanon.release_rows (it never sees a tree or a leaf id: it
// compares the stored tuples).
#include <doctest/doctest.h>

#include <pqxx/pqxx>
#include <tuple>

#include "policy/history_build.h"
#include "policy/policy_store.h"
#include "policy/release_store.h"
#include "tests/policy/history_harness.h"
#include "tests/support/demo_data.h"
#include "tests/support/pg_sandbox.h"

using namespace kanon::policy;
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

TablePolicy adult_policy() {
  TablePolicy p;
  p.schema = "public";
  p.table = "adult_keyed";
  p.k = 5;
  for (const char* q : kQis) {
    p.quasi_identifiers.push_back(q);
    p.quasi_identifier_refs.push_back({"test", 1, q});
  }
  return p;
}

// Keys (ever released since the baseline) below k, by the stored tuples:
// {rows below k, min candidates, linked rows}.
std::tuple<long, long, long> sql_check(pqxx::connection& conn, int k) {
  pqxx::nontransaction tx(conn);
  const auto r = tx.exec_params(R"SQL(
WITH v AS (
  SELECT version, row_number() OVER (ORDER BY version) AS i FROM kanon.releases
  WHERE table_name = $1 AND version >= (SELECT max(version) FROM kanon.releases
                                        WHERE table_name = $1 AND baseline)),
nv AS (SELECT count(*)::int AS n FROM v),
kv AS (
  SELECT k.key, v.i, coalesce((SELECT r.released::text FROM kanon.release_rows r
      WHERE r.table_name = $1 AND r.key = k.key AND r.since_version <= v.version
      ORDER BY r.since_version DESC LIMIT 1), '') AS t
  FROM (SELECT DISTINCT key FROM kanon.release_rows WHERE table_name = $1) k CROSS JOIN v),
sig AS (SELECT key, array_agg(t ORDER BY i) AS s FROM kv GROUP BY key),
grp AS (SELECT s, count(*) AS n FROM sig GROUP BY s),
linked AS (
  SELECT g.s, g.n FROM grp g, nv WHERE g.s[nv.n] <> ''
    AND EXISTS (SELECT 1 FROM generate_subscripts(g.s, 1) i WHERE i < nv.n AND g.s[i] <> '')),
pairs AS (
  SELECT l.s AS gs, l.n AS gn, h.s AS hs, h.n AS hn FROM linked l, nv, grp h
    WHERE h.s[nv.n] = l.s[nv.n]
  UNION ALL
  SELECT l.s, l.n, h.s, h.n FROM linked l, nv, grp h WHERE h.s[nv.n] = ''),
cand AS (
  SELECT gs, gn, sum(hn) AS c FROM pairs p
  WHERE NOT EXISTS (SELECT 1 FROM generate_subscripts(p.gs, 1) i
                    WHERE p.gs[i] <> '' AND p.hs[i] <> '' AND p.gs[i] <> p.hs[i])
  GROUP BY gs, gn)
SELECT coalesce(sum(gn) FILTER (WHERE c < $2), 0)::bigint, coalesce(min(c), 0)::bigint,
       coalesce(sum(gn), 0)::bigint FROM cand)SQL",
                                std::string(kTable), k);
  return {r[0][0].as<long>(), r[0][1].as<long>(), r[0][2].as<long>()};
}

void refresh_and_check(PolicyStore& store, pqxx::connection& conn, const char* what) {
  CAPTURE(what);
  REQUIRE(store.refresh(kTable));
  const auto* t = store.current()->find(kTable);
  REQUIRE(t != nullptr);
  CHECK(t->release.key.source == RowKey::Source::kPrimaryKey);
  CHECK(t->release.version > 1);
  CHECK(t->release.check.rows_below_k == 0);
  const auto v = verify_history(conn, adult_policy(), std::nullopt);
  CHECK(v.check.linked_rows > 0);
  CHECK(v.check.rows_below_k == 0);
  CHECK(v.check.min_candidates >= 5);
  const auto [below, min, linked] = sql_check(conn, 5);
  CHECK(linked > 0);
  CHECK(below == 0);
  CHECK(min >= 5);
  MESSAGE(what << ": release " << t->release.version << ", released fraction "
               << t->release.released_fraction << ", linked " << linked << ", min candidates "
               << min << ", fix-up rounds " << t->release.fixup_rounds);
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
  {
    pqxx::work tx(conn);
    ensure_release_tables(tx);
    tx.commit();
  }
  struct Step {
    const char* what;
    std::string sql;
  };
  const std::vector<Step> steps = {
      {"insert 0.1%", insert_sql(30, 1)},
      {"insert 1%", insert_sql(302, 2)},
      {"insert 5%", insert_sql(1508, 3)},
      {"delete 1%", "DELETE FROM adult_keyed WHERE id % 100 = 7"},
      {"mixed update 1%",
       "UPDATE adult_keyed SET age = age + 1 WHERE id % 200 = 3; "
       "UPDATE adult_keyed SET occupation = 'Sales' WHERE id % 200 = 5"},
  };
  for (const auto& step : steps) {
    load_adult(conn);
    PolicyStore store(conninfo(), {adult_policy()});
    REQUIRE(store.refresh(kTable));
    REQUIRE(store.current()->find(kTable)->release.baseline);
    exec(conn, step.sql);
    refresh_and_check(store, conn, step.what);
  }
  // Ten successive 1% refreshes (inserts, deletes, updates), and a restart
  // between two of them (a new store reads the history back).
  load_adult(conn);
  auto store = std::make_unique<PolicyStore>(conninfo(), std::vector{adult_policy()});
  REQUIRE(store->refresh(kTable));
  for (int i = 0; i < 10; ++i) {
    exec(conn, insert_sql(120, 10 + i));
    exec(conn, "DELETE FROM adult_keyed WHERE id % 331 = " + std::to_string(i));
    exec(conn, "UPDATE adult_keyed SET age = age + 1 WHERE id % 331 = " + std::to_string(100 + i));
    if (i == 5) store = std::make_unique<PolicyStore>(conninfo(), std::vector{adult_policy()});
    refresh_and_check(*store, conn, "successive 1%");
  }
  // REANONYMIZE: a new baseline; the earlier release_rows are gone.
  REQUIRE(store->reanonymize(kTable));
  CHECK(store->current()->find(kTable)->release.baseline);
  pqxx::nontransaction tx(conn);
  CHECK(tx.exec("SELECT count(DISTINCT since_version) FROM kanon.release_rows WHERE table_name "
                "= 'public.adult_keyed'")[0][0]
            .as<int>() == 1);
}
