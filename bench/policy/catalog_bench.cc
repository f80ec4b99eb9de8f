// Catalog benchmark: how long reading the CatalogFacts takes (a new
// connection, the same connection, the same connection reusing the built-in
// functions: what PolicyStore does), building the ObjectCatalog from them,
// PolicyStore::refresh_catalog, and how long after a DDL command the catalog
// watcher has published the change; and what the catalog adds to deciding a
// statement: Rewriter::rewrite, uncached, over the BI corpus
// (bench/rewriter/bi_corpus.h) with the demo policies' real trees, without a
// catalog (as before reachability) and with the facts read here, timed
// alternately so both see the same load. On the demo database, then with a
// larger schema. Starts its own throwaway PostgreSQL with
// scripts/pg-sandbox.sh. Prints figures; never fails.
//
//   catalog_bench [--reps N]
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <pqxx/pqxx>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "base/stopwatch.h"
#include "bench/policy/bench_sandbox.h"
#include "bench/rewriter/bi_corpus.h"
#include "catalog/catalog_facts.h"
#include "policy/policy_file.h"
#include "rewriter/object_catalog.h"
#include "rewriter/rewriter.h"
#include "store/policy_store.h"

using namespace kanon::policy;
using namespace kanon::catalog;
using namespace kanon::store;
using Clock = std::chrono::steady_clock;

namespace {

struct Stats {
  double p50 = 0, min = 0, max = 0;
};

Stats stats(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  if (v.empty()) return {};
  return {v[v.size() / 2], v.front(), v.back()};
}

using kanon::bench::run;
using kanon::bench::Sandbox;

void row(const std::string& what, const Stats& s) {
  fmt::print("| {} | {:.2f} | {:.2f} | {:.2f} |\n", what, s.p50, s.min, s.max);
}

double micros_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

// p50 and p99 in µs.
std::pair<double, double> percentiles(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v[std::min(v.size() - 1, v.size() * 99 / 100)]};
}

// Deciding the BI corpus without and with the catalog, alternately.
void decision_cost(pqxx::connection& conn, const std::shared_ptr<const CatalogFacts>& facts) {
  PolicySnapshot without;
  for (const char* file : {"people.yaml", "adult.yaml"})
    for (const auto& p :
         load_policy_file(fmt::format("{}/config/policies/{}", KANON_SOURCE_DIR, file)))
      without.tables[p.name()] = build_table_snapshot(conn, p);
  PolicySnapshot with = without;
  with.catalog = facts;
  kanon::rewriter::Rewriter before(0);
  kanon::rewriter::Rewriter after(0);
  after.set_require_catalog(true);
  const kanon::rewriter::PlanContext ctx{"\"$user\", public", false};
  const auto corpus = kanon::bench::bi_corpus();
  for (const auto& q : corpus) {
    const auto a = before.rewrite(q, without, ctx), b = after.rewrite(q, with, ctx);
    if (b.verdict != kanon::rewriter::Verdict::kRewritten || a.sql != b.sql)
      fmt::print(stderr, "decided differently with the catalog ({}): {}\n", b.rule,
                 q.substr(0, 80));
  }
  std::vector<double> t_before, t_after;
  const auto end = Clock::now() + std::chrono::seconds(3);
  while (Clock::now() < end)
    for (const auto& q : corpus) {
      auto t0 = Clock::now();
      before.rewrite(q, without, ctx);
      t_before.push_back(micros_since(t0));
      t0 = Clock::now();
      after.rewrite(q, with, ctx);
      t_after.push_back(micros_since(t0));
    }
  const auto [b50, b99] = percentiles(t_before);
  const auto [a50, a99] = percentiles(t_after);
  fmt::print(
      "\nDeciding the BI corpus ({} statements, {} decisions each), Rewriter::rewrite "
      "uncached, µs:\n\n",
      corpus.size(), t_before.size());
  fmt::print("| decision | p50 µs | p99 µs |\n|---|---|---|\n");
  fmt::print("| without a catalog (before reachability) | {:.1f} | {:.1f} |\n", b50, b99);
  fmt::print("| with the catalog | {:.1f} | {:.1f} |\n", a50, a99);
  fmt::print("| ratio with / without | {:.2f} | {:.2f} |\n", a50 / b50, a99 / b99);
}

void measure(const std::string& label, const std::string& conninfo, int reps) {
  std::vector<double> cold, warm, reuse, build;
  for (int i = 0; i < std::max(3, reps / 3); ++i) {
    pqxx::connection fresh(conninfo);
    cold.push_back(read_catalog_facts(fresh).read_ms);
  }
  pqxx::connection conn(conninfo);
  auto facts = std::make_shared<CatalogFacts>(read_catalog_facts(conn));
  for (int i = 0; i < reps; ++i) warm.push_back(read_catalog_facts(conn).read_ms);
  for (int i = 0; i < reps; ++i) reuse.push_back(read_catalog_facts(conn, facts.get()).read_ms);
  const std::vector<std::string> protected_tables = {"public.people", "public.adult"};
  for (int i = 0; i < reps; ++i) {
    const kanon::base::Stopwatch watch;
    const kanon::rewriter::ObjectCatalog cat(facts, protected_tables);
    build.push_back(watch.ms());
  }
  fmt::print("\n{}: {} relations, {} functions\n\n", label, facts->relations.size(),
             facts->functions.size());
  fmt::print("| measurement | p50 ms | min ms | max ms |\n|---|---|---|---|\n");
  row("read_catalog_facts, new connection", stats(cold));
  row("read_catalog_facts, same connection", stats(warm));
  row("read_catalog_facts, same connection, built-ins reused", stats(reuse));
  row("ObjectCatalog from the facts", stats(build));

  PolicyStore store(conninfo, {});
  store.refresh_catalog();
  std::vector<double> refresh;
  for (int i = 0; i < reps; ++i) {
    const kanon::base::Stopwatch watch;
    store.refresh_catalog();
    refresh.push_back(watch.ms());
  }
  row("PolicyStore::refresh_catalog", stats(refresh));

  store.start();
  std::vector<double> visible;
  pqxx::connection ddl(conninfo);
  for (int i = 0; i < reps; ++i) {
    const std::string name = fmt::format("bench_watch_{}", i);
    const kanon::base::Stopwatch watch;
    {
      pqxx::nontransaction tx(ddl);
      tx.exec(fmt::format("CREATE VIEW public.{} AS SELECT 1 AS one", name));
    }
    while (watch.ms() < 5000) {
      const auto snap = store.current();
      if (snap->catalog && !snap->catalog->relations_named(name).empty()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    visible.push_back(watch.ms());
  }
  row("CREATE VIEW until the watcher published it", stats(visible));
  store.stop();
  decision_cost(conn, facts);
  pqxx::nontransaction tx(ddl);
  for (int i = 0; i < reps; ++i) tx.exec(fmt::format("DROP VIEW public.bench_watch_{}", i));
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 15;
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc) reps = std::atoi(argv[++i]);
  try {
    Sandbox pg;
    fmt::print("catalog_bench: {} repetitions per row; load average at start: {}", reps,
               run("cut -d' ' -f1-3 /proc/loadavg"));
    measure("demo database", pg.conninfo(), reps);

    // A larger schema: 400 tables, 200 views (chains of two), 100 SQL functions.
    pqxx::connection conn(pg.conninfo());
    {
      pqxx::work tx(conn);
      tx.exec("CREATE SCHEMA bench_big");
      for (int i = 0; i < 400; ++i)
        tx.exec(fmt::format(
            "CREATE TABLE bench_big.t{0} (id int PRIMARY KEY, a text, b int DEFAULT 0, c date)",
            i));
      for (int i = 0; i < 100; ++i) {
        tx.exec(fmt::format(
            "CREATE VIEW bench_big.v{0} AS SELECT t.id, t.a, p.city FROM bench_big.t{0} t "
            "JOIN public.people p ON p.id = t.id",
            i));
        tx.exec(fmt::format(
            "CREATE VIEW bench_big.w{0} AS SELECT * FROM bench_big.v{0} WHERE id > 1", i));
        tx.exec(
            fmt::format("CREATE FUNCTION bench_big.f{0}(int) RETURNS bigint LANGUAGE sql STABLE AS "
                        "'SELECT count(*) FROM bench_big.t{0} WHERE id = $1'",
                        i));
      }
      tx.commit();
    }
    measure("demo database + 400 tables, 200 views, 100 SQL functions", pg.conninfo(), reps);
    fmt::print("\nload average at the end: {}", run("cut -d' ' -f1-3 /proc/loadavg"));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "catalog_bench: %s\n", e.what());
    return 0;
  }
  return 0;
}
