// A table stored in an order that follows a quasi-identifier (a sorted load)
// tells the values its release hides to whoever reads its rows in stored
// order, as mode: inline and view hand them out: the build fails naming the
// column (store/row_order.h). The same rows stored in another order
// build, and so does mode: materialized (its copy is written in random
// order). Found by an adversarial probe (docs/security.md, "the physical
// layout an administrator chose").
#include <doctest/doctest.h>

#include <pqxx/pqxx>

#include "policy/table_snapshot.h"
#include "store/policy_store.h"
#include "store/row_order.h"
#include "store/snapshot_build.h"
#include "tests/support/pg_sandbox.h"

using namespace kanon::policy;
using namespace kanon::store;
using kanon::testing::PgSandbox;

namespace {

TablePolicy ordered_policy(const std::string& table, int k, EnforcementMode mode) {
  TablePolicy p;
  p.schema = "public";
  p.table = table;
  p.k = k;
  p.mode = mode;
  p.where = {"t.yaml", 3, "table"};
  p.quasi_identifiers = {"city", "grade"};
  p.quasi_identifier_refs.resize(2);
  return p;
}

// How many of `table`'s rows the snapshot's city mask hides, and shows.
std::pair<int, int> city_counts(pqxx::connection& conn, const TableSnapshot& snap,
                                const std::string& table) {
  const auto m = std::find_if(snap.masks.columns.begin(), snap.masks.columns.end(),
                              [](const auto& c) { return c.column == "city"; });
  pqxx::nontransaction tx(conn);
  const auto r = tx.exec1("SELECT count(*) FILTER (WHERE (" + m->expression +
                          ") IS NULL), count(*) FILTER (WHERE (" + m->expression +
                          ") IS NOT NULL) FROM public." + table);
  return {r[0].as<int>(), r[1].as<int>()};
}

// The message of the RowOrderLeak building `policy` fails with ("" if it
// builds).
std::string leak_of(pqxx::connection& conn, const TablePolicy& policy) {
  try {
    build_table_snapshot(conn, policy);
  } catch (const RowOrderLeak& e) {
    return e.what();
  }
  return {};
}

// public.order_src: six cities of different sizes, two grades, 1,200 rows.
void make_source(PgSandbox& pg) {
  pg.psql(
      "CREATE TABLE IF NOT EXISTS public.order_src AS SELECT i AS id, 'c' || (CASE WHEN i % 10 "
      "< 4 THEN 0 WHEN i % 10 < 7 THEN 1 ELSE i % 10 - 5 END) || '-' || (i % 17 / 9) AS city, "
      "'g' || (i * 7 % 3) AS grade FROM generate_series(1, 1200) i");
}

// The first k whose release hides the city of some of `table`'s rows and
// shows others' (0: none up to 200).
int first_k(pqxx::connection& conn, const std::string& table) {
  for (int k = 5; k <= 200; k += 5) {
    const auto snap =
        build_table_snapshot(conn, ordered_policy(table, k, EnforcementMode::kMaterialized));
    const auto [hidden, shown] = city_counts(conn, *snap, table);
    if (hidden >= 50 && shown >= 50) return k;
  }
  return 0;
}

}  // namespace

TEST_CASE("a table stored in a quasi-identifier's order fails the build in inline and view mode") {
  auto& pg = PgSandbox::shared();
  // The rows stored in a pseudo-random order (md5 of the id), and sorted
  // by city.
  make_source(pg);
  pg.psql(
      "CREATE TABLE public.order_mixed AS SELECT * FROM public.order_src ORDER BY md5(id::text);"
      "CREATE TABLE public.order_sorted AS SELECT * FROM public.order_src ORDER BY city, id");
  pqxx::connection conn(pg.conninfo());
  const int k = first_k(conn, "order_mixed");
  MESSAGE("k " << k);
  REQUIRE(k > 0);
  for (const auto mode : {EnforcementMode::kInline, EnforcementMode::kView}) {
    CAPTURE(static_cast<int>(mode));
    CHECK_NOTHROW(build_table_snapshot(conn, ordered_policy("order_mixed", k, mode)));
    const std::string message = leak_of(conn, ordered_policy("order_sorted", k, mode));
    CAPTURE(message);
    CHECK(message.rfind("t.yaml:3: table: mode: ", 0) == 0);
    CHECK(message.find("in the order they are stored, and that order tells the values of 'city' "
                       "the release hides") != std::string::npos);
    CHECK(message.find("Use mode: materialized") != std::string::npos);
  }
  // The copy of mode: materialized is written in random order.
  CHECK_NOTHROW(build_table_snapshot(
      conn, ordered_policy("order_sorted", k, EnforcementMode::kMaterialized)));
  // Stored again in another order (what the message advises), it builds.
  pg.psql(
      "CREATE TABLE public.order_again AS SELECT * FROM public.order_sorted ORDER BY md5(id::text "
      "|| 'x'); DROP TABLE public.order_sorted; ALTER TABLE public.order_again RENAME TO "
      "order_sorted");
  CHECK_NOTHROW(
      build_table_snapshot(conn, ordered_policy("order_sorted", k, EnforcementMode::kInline)));
}

// A refresh that finds the rows stored in such an order withdraws the
// snapshot served before (its masks read the same rows in the same order):
// the table is served by none, its reads denied, until the rows are stored
// otherwise and a refresh builds it again.
TEST_CASE("a refresh that finds the stored order telling hidden values withdraws the table") {
  auto& pg = PgSandbox::shared();
  make_source(pg);
  pg.psql(
      "CREATE TABLE public.order_live AS SELECT * FROM public.order_src ORDER BY md5(id::text)");
  pqxx::connection conn(pg.conninfo());
  const int k = first_k(conn, "order_live");
  REQUIRE(k > 0);
  PolicyStore store(pg.conninfo(), {ordered_policy("order_live", k, EnforcementMode::kInline)});
  REQUIRE(store.refresh_all());
  REQUIRE(store.current()->find("public.order_live") != nullptr);
  // Stored again sorted by city, under the same name.
  pg.psql(
      "BEGIN; CREATE TABLE public.order_live2 AS SELECT * FROM public.order_live ORDER BY city; "
      "DROP TABLE public.order_live; ALTER TABLE public.order_live2 RENAME TO order_live; COMMIT");
  CHECK_FALSE(store.refresh("public.order_live"));
  const auto served = store.current();
  CHECK(served->find("public.order_live") == nullptr);
  REQUIRE(served->errors.count("public.order_live") == 1);
  CHECK(served->errors.at("public.order_live").find("that order tells the values of 'city'") !=
        std::string::npos);
  // Any other failure keeps the snapshot served before: stored in another
  // order again, it builds and is served.
  pg.psql(
      "BEGIN; CREATE TABLE public.order_live2 AS SELECT * FROM public.order_live ORDER BY "
      "md5(id::text || 'y'); DROP TABLE public.order_live; ALTER TABLE public.order_live2 RENAME "
      "TO order_live; COMMIT");
  CHECK(store.refresh("public.order_live"));
  CHECK(store.current()->find("public.order_live") != nullptr);
}

// A primary key shown raw is an ORDER BY away, in every mode: keys numbered
// during a load sorted by city follow it, wherever the rows are stored (the
// materialized copy's random order does not help). Hidden (a direct
// identifier) or numbered in another order, the table builds.
TEST_CASE("keys numbered in a quasi-identifier's order fail the build in every mode") {
  auto& pg = PgSandbox::shared();
  make_source(pg);
  for (const std::string name : {"order_keyed", "order_rekeyed"})
    pg.psql("CREATE TABLE public." + name +
            " (id integer PRIMARY KEY, city text, grade text); INSERT INTO public." + name +
            " SELECT row_number() OVER (ORDER BY " +
            (name == "order_keyed" ? "city, id" : "md5(id::text)") +
            "), city, grade FROM public.order_src ORDER BY md5(id::text || 'z')");
  pqxx::connection conn(pg.conninfo());
  const int k = first_k(conn, "order_rekeyed");
  REQUIRE(k > 0);
  for (const auto mode :
       {EnforcementMode::kInline, EnforcementMode::kView, EnforcementMode::kMaterialized}) {
    CAPTURE(static_cast<int>(mode));
    CHECK_NOTHROW(build_table_snapshot(conn, ordered_policy("order_rekeyed", k, mode)));
    const std::string message = leak_of(conn, ordered_policy("order_keyed", k, mode));
    CAPTURE(message);
    CHECK(message.find("t.yaml:3: table: restricted sessions read the key of "
                       "public.order_keyed (id) as it is, so they can order its rows by it, "
                       "and that order tells the values of 'city'") != std::string::npos);
  }
  auto hidden = ordered_policy("order_keyed", k, EnforcementMode::kInline);
  hidden.direct_identifiers.push_back({"id", std::nullopt, {"t.yaml", 6, "direct_identifiers"}});
  CHECK_NOTHROW(build_table_snapshot(conn, hidden));
}
