// Policy benchmark (issues 4 and 17): the fresh tree build on ADULT and
// ADULT x N (--copies, default 32; the table is made inside PostgreSQL)
// including the COPY, with wall time, kanon's and the cluster's CPU time and
// kanon's peak RSS, and where the time goes (the server's GROUP BY under
// several settings, the COPY, the encoding, the tree); the history-aware
// build and refreshes of ADULT x N, keyed and without a key, beside the
// fresh tree; then the masked-scan overhead of
// each compiled form on ADULT x 32 against raw queries measured in the same run. Starts its own
// throwaway PostgreSQL with scripts/pg-sandbox.sh. Prints figures and
// ratios; never fails.
//
//   policy_bench [--reps N] [--copies N] [--tree-only] [--history-only] [--quick]
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <pqxx/pqxx>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/policy/bench_sandbox.h"
#include "bench/policy/cpu_time.h"
#include "policy/form_choice.h"
#include "policy/predicate_sql.h"
#include "policy/table_snapshot.h"
#include "store/materializer.h"
#include "store/snapshot_build.h"
#include "store/table_loader.h"

using namespace kanon::policy;
using namespace kanon::catalog;
using namespace kanon::store;
using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

using kanon::bench::run;
using kanon::bench::Sandbox;

TablePolicy adult_policy(const std::string& table, uint32_t k) {
  TablePolicy p;
  p.schema = "public";
  p.table = table;
  p.k = k;
  p.quasi_identifiers = {
      "sex",       "age",       "race", "marital-status", "education", "native-country",
      "workclass", "occupation"};
  p.quasi_identifier_refs.resize(p.quasi_identifiers.size());
  p.max_nodes = 1u << 20;
  return p;
}

// Session settings a query runs under: the server's defaults, or the settings
// docs/policy.md recommends for restricted sessions (what the proxy sends as
// start-up options).
struct Settings {
  std::string name;
  std::string sql;
};
const Settings kDefault{"default", "RESET jit; RESET max_parallel_workers_per_gather"};
const Settings kRestricted{"restricted", "SET jit = off; SET max_parallel_workers_per_gather = 0"};

// Times one statement (client side: parse + plan + execute + transfer).
double time_query(pqxx::connection& conn, const std::string& sql, const Settings& settings) {
  pqxx::nontransaction tx(conn);
  tx.exec(settings.sql);
  const auto t0 = Clock::now();
  tx.exec(sql);
  return ms_since(t0);
}

double median_query(pqxx::connection& conn, const std::string& sql, const Settings& settings,
                    int reps) {
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    t.push_back(time_query(conn, sql, settings));
    if (t.back() > 8000) break;  // huge expressions under JIT: one run is enough
  }
  return median(t);
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
    s.replace(p, from.size(), to);
}

// ADULT x n as adult<n>, made inside PostgreSQL (INSERT ... SELECT from
// generate_series); ids stay unique, so the table is linkable by its
// non-quasi-identifier columns.
void make_copies(pqxx::connection& admin, int n) {
  const std::string t = fmt::format("adult{}", n);
  pqxx::nontransaction tx(admin);
  tx.exec(fmt::format(
      "DROP TABLE IF EXISTS {0}; CREATE TABLE {0} (id bigint NOT NULL, sex text NOT NULL, age "
      "integer NOT NULL, race text NOT NULL, \"marital-status\" text NOT NULL, education text NOT "
      "NULL, \"native-country\" text NOT NULL, workclass text NOT NULL, occupation text NOT NULL, "
      "\"salary-class\" text NOT NULL); "
      "INSERT INTO {0} SELECT (g - 1) * m.n + a.id, a.sex, a.age, a.race, a.\"marital-status\", "
      "a.education, a.\"native-country\", a.workclass, a.occupation, a.\"salary-class\" "
      "FROM (SELECT max(id) AS n FROM adult) m, generate_series(1, {1}) g, adult a",
      t, n));
  tx.exec("VACUUM ANALYZE " + t);
}

struct Cost {
  double wall_ms = 0, self_cpu_s = 0, cluster_cpu_s = 0;
};

// Wall time, this process's CPU and the cluster's CPU of fn().
Cost measure_cost(long postmaster, const std::function<void()>& fn) {
  const double c0 = kanon::bench::cluster_cpu_seconds(postmaster);
  const double s0 = kanon::bench::self_cpu_seconds();
  const auto t0 = Clock::now();
  fn();
  Cost c;
  c.wall_ms = ms_since(t0);
  c.self_cpu_s = kanon::bench::self_cpu_seconds() - s0;
  usleep(20000);  // let the postmaster reap parallel workers that just ended
  c.cluster_cpu_s = kanon::bench::cluster_cpu_seconds(postmaster) - c0;
  return c;
}

Cost median_cost(std::vector<Cost> v) {
  std::sort(v.begin(), v.end(), [](const Cost& a, const Cost& b) { return a.wall_ms < b.wall_ms; });
  return v.empty() ? Cost{} : v[v.size() / 2];
}

void print_cost_row(const std::string& name, const Cost& c, const std::string& extra) {
  fmt::print("| {} | {:.0f} | {:.2f} | {:.2f} | {} |\n", name, c.wall_ms, c.self_cpu_s,
             c.cluster_cpu_s, extra);
  std::fflush(stdout);  // rows of a long run show as they come
}

// Section 1: the fresh tree (history off, what a table without a row key
// gets) including reading the table, then where the time of ADULT x copies
// goes (the history-aware build: history_section).
void tree_build_section(const Sandbox& sb, long postmaster, int copies, int reps) {
  const std::string big = fmt::format("adult{}", copies);
  const uint32_t big_k = 10u * static_cast<uint32_t>(copies);
  const int big_reps = copies > 64 ? 1 : reps;
  fmt::print(
      "\n== Tree build, fresh tree (history off), incl. reading the table; median of {} runs "
      "({} for ADULTx{}) ==\nload average {}\n\n",
      reps, big_reps, copies, kanon::bench::load_average());
  fmt::print(
      "| case | wall ms | kanon cpu s | cluster cpu s | load ms / tree ms, nodes, depth, "
      "distinct |\n|---|---|---|---|---|\n");
  struct BuildCase {
    std::string name, table;
    uint32_t k;
    bool aggregate, tuned;
    int reps;
    std::vector<Cost> costs;
    std::vector<double> load, tree;
    size_t nodes = 0, distinct = 0;
    int depth = 0;
  };
  const std::string x = fmt::format("ADULTx{} k={}", copies, big_k);
  std::vector<BuildCase> builds = {
      {x + " (COPY GROUP BY, loader now)", big, big_k, true, true, big_reps},
      {x + " (COPY GROUP BY, loader before: work_mem only)", big, big_k, true, false, big_reps},
      {"ADULT k=5 (COPY GROUP BY, loader now)", "adult", 5, true, true, reps},
      {"ADULT k=5 (COPY GROUP BY, loader before)", "adult", 5, true, false, reps},
      {"ADULT k=5 (COPY rows)", "adult", 5, false, true, reps},
  };
  if (copies <= 64) builds.push_back({x + " (COPY rows)", big, big_k, false, true, reps});
  const double rss_before = kanon::bench::peak_rss_mb();
  double rss_after = 0;
  // Round-robin over the cases, so load changes hit them alike.
  for (int i = 0; i < reps; ++i) {
    for (size_t b = 0; b < builds.size(); ++b) {
      auto& c = builds[b];
      if (i >= c.reps) continue;
      auto conn = std::make_unique<pqxx::connection>(sb.conninfo());
      BuildOptions o;
      o.history = false;
      o.load.aggregate = c.aggregate;
      o.load.tuned = c.tuned;
      std::shared_ptr<const TableSnapshot> snap;
      c.costs.push_back(measure_cost(
          postmaster, [&] { snap = build_table_snapshot(*conn, adult_policy(c.table, c.k), o); }));
      if (i == 0 && b == 0) rss_after = kanon::bench::peak_rss_mb();
      // The backend's CPU must be in the postmaster's reaped children before
      // the next measurement starts, not move there during it.
      const long backend = conn->backendpid();
      conn.reset();
      kanon::bench::wait_until_gone(backend);
      c.load.push_back(snap->stats.load_ms);
      c.tree.push_back(snap->stats.tree_ms);
      c.nodes = snap->tree.size();
      c.depth = snap->tree.depth();
      c.distinct = snap->stats.distinct_rows;
    }
  }
  for (const auto& c : builds)
    print_cost_row(c.name, median_cost(c.costs),
                   fmt::format("{:.0f} / {:.1f}, {}, {}, {}", median(c.load), median(c.tree),
                               c.nodes, c.depth, c.distinct));
  fmt::print("| peak RSS before / after the first ADULTx{} build: {:.1f} / {:.1f} MB | | | | |\n",
             copies, rss_before, rss_after);

  // Where the time of ADULT x copies goes.
  fmt::print(
      "\n== Where the time goes, ADULTx{} (median of {}) ==\nload average {}\n\n"
      "| step | wall ms | kanon cpu s | cluster cpu s | plan |\n|---|---|---|---|---|\n",
      copies, big_reps, kanon::bench::load_average());
  pqxx::connection conn(sb.conninfo());
  pin_session_settings(conn);
  const TablePolicy policy = adult_policy(big, big_k);
  const TableInfo info = read_table_info(conn, policy);
  const std::string query = load_query(policy, info, LoadOptions{});
  struct Setting {
    std::string name, sql;
    bool small_only;  // too slow to repeat on ADULT x 1024
  };
  const std::string mem = "SET work_mem = '256MB'; ";
  const std::string cheap_jit =
      "SET jit_inline_above_cost = -1; SET jit_optimize_above_cost = -1; ";
  const std::vector<Setting> settings = {
      {"work_mem 4MB (default), parallel, jit", "RESET work_mem", true},
      {"loader now (LoadOptions::tuned)", "", false},
      {"work_mem 256MB, parallel, jit (loader before)", mem, false},
      {"work_mem 256MB, parallel, jit off", mem + "SET jit = off", false},
      {"work_mem 256MB, parallel, jit without inlining/optimization", mem + cheap_jit, false},
      {"work_mem 256MB, no parallel, jit", mem + "SET max_parallel_workers_per_gather = 0", true},
      {"work_mem 256MB, no parallel, jit off",
       mem + "SET max_parallel_workers_per_gather = 0; SET jit = off", true},
      {"work_mem 256MB, parallel_tuple_cost 0, jit", mem + "SET parallel_tuple_cost = 0", false},
      {"work_mem 256MB, parallel_tuple_cost 0, jit off",
       mem + "SET parallel_tuple_cost = 0; SET jit = off", false},
      {"work_mem 256MB, parallel_tuple_cost 0, jit without inlining/optimization",
       mem + "SET parallel_tuple_cost = 0; " + cheap_jit, false},
      {"work_mem 64MB, parallel_tuple_cost 0, jit off",
       "SET work_mem = '64MB'; SET parallel_tuple_cost = 0; SET jit = off", true},
  };
  for (auto [name, sql, small_only] : settings) {
    if (small_only && copies > 64) continue;
    if (sql.empty()) {
      pqxx::read_transaction tx(conn);
      sql = aggregate_settings(tx, policy, LoadOptions{});
      replace_all(sql, "SET LOCAL", "SET");
    }
    std::string plan;
    std::vector<Cost> costs;
    {
      pqxx::nontransaction tx(conn);
      tx.exec(
          "RESET work_mem; RESET jit; RESET max_parallel_workers_per_gather; RESET "
          "parallel_tuple_cost; RESET jit_inline_above_cost; RESET jit_optimize_above_cost; RESET "
          "enable_sort; " +
          sql);
      for (const auto& row : tx.exec("EXPLAIN (COSTS OFF) " + query)) {
        std::string line = row[0].as<std::string>();
        const auto p = line.find_first_not_of(" ->");
        line = line.substr(p == std::string::npos ? 0 : p);
        if (line.find("Aggregate") != std::string::npos || line.find("Gather") != std::string::npos)
          plan += (plan.empty() ? "" : " / ") + line;
      }
      for (int i = 0; i < big_reps; ++i)
        costs.push_back(measure_cost(
            postmaster, [&] { tx.exec("SELECT count(*) FROM (" + query + ") AS s"); }));
    }
    print_cost_row("server GROUP BY alone: " + name, median_cost(costs), plan);
  }
  {
    pqxx::nontransaction tx(conn);
    tx.exec(
        "RESET work_mem; RESET jit; RESET max_parallel_workers_per_gather; RESET "
        "parallel_tuple_cost; RESET jit_inline_above_cost; RESET jit_optimize_above_cost; RESET "
        "enable_sort");
  }
  {
    std::vector<Cost> costs;
    size_t lines = 0;
    for (int i = 0; i < big_reps; ++i)
      costs.push_back(measure_cost(postmaster, [&] {
        pqxx::read_transaction tx(conn);
        lines = 0;
        tx.exec(aggregate_settings(tx, policy, LoadOptions{}));
        copy_rows(tx, query, policy.quasi_identifiers.size() + 1, policy.name(),
                  [&](auto&) { ++lines; });
        tx.commit();
      }));
    print_cost_row("COPY GROUP BY + decoding lines (loader now, no encoding)", median_cost(costs),
                   fmt::format("{} lines", lines));
  }
  std::optional<EncodedTable> table;
  {
    std::vector<Cost> costs;
    for (int i = 0; i < big_reps; ++i)
      costs.push_back(
          measure_cost(postmaster, [&] { table.emplace(load_table(conn, policy, info)); }));
    print_cost_row("load_table (COPY, decoding, dictionary encoding)", median_cost(costs),
                   fmt::format("{} distinct rows", table->distinct_rows()));
  }
  {
    TreeOptions o;
    o.k = big_k;
    o.max_nodes = policy.max_nodes;
    std::vector<Cost> costs;
    size_t nodes = 0;
    for (int i = 0; i < reps; ++i)
      costs.push_back(
          measure_cost(postmaster, [&] { nodes = DisclosureTree::build(*table, o).size(); }));
    print_cost_row("DisclosureTree::build alone", median_cost(costs),
                   fmt::format("{} nodes", nodes));
  }
}

// Section 1b: the history-aware build (the default for a table with a row
// key, or rows told apart by their other columns) at ADULT x copies, with a
// primary key and (`keyless`) as published, without one (rows told apart by
// salary-class, the quasi-identifiers and a number among equal rows), against
// the fresh tree, in one run: the fresh tree, the first history-aware build
// (a baseline: every key stored), a refresh of unchanged rows, a refresh
// after inserting 1% new rows, after deleting 1% and after updating 1% of
// rows' quasi-identifiers; for mode: inline (a live mode: catch-up releases)
// and, unless `quick`, mode: materialized (holds; the copy itself is not
// written here). Each with wall ms, kanon's and the cluster's CPU seconds,
// and the build's own phase timings (history_build.h: HistoryTimings).
void history_section(const Sandbox& sb, long postmaster, int copies, bool quick, bool keyless) {
  const std::string big = fmt::format("adult{}", copies);
  const std::string table = big + (keyless ? "_nokey" : "_pk");
  const uint32_t k = 10u * static_cast<uint32_t>(copies);
  const std::string columns =
      "sex, age, race, \"marital-status\", education, \"native-country\", workclass, "
      "occupation, \"salary-class\"";
  pqxx::connection admin(sb.conninfo());
  const auto make = [&] {
    pqxx::nontransaction tx(admin);
    if (keyless)
      tx.exec(fmt::format("DROP TABLE IF EXISTS {0}; CREATE TABLE {0} AS SELECT {1} FROM {2}",
                          table, columns, big));
    else
      tx.exec(
          fmt::format("DROP TABLE IF EXISTS {0}; CREATE TABLE {0} AS TABLE {1}; "
                      "ALTER TABLE {0} ADD PRIMARY KEY (id)",
                      table, big));
    tx.exec("VACUUM ANALYZE " + table);
  };
  make();
  const long rows =
      pqxx::nontransaction(admin).exec("SELECT count(*) FROM " + table)[0][0].as<long>();
  fmt::print(
      "\n== History-aware build and refresh, ADULTx{} {} ({} rows, k={}) ==\n"
      "load average {}\n"
      "phases (ms wall / kanon cpu): history = reading kanon.releases/release_rows, rows = the "
      "current rows with their keys, compute = catch-up + history_refresh, write = storing the "
      "release\n\n"
      "| mode | step | wall ms | kanon cpu s | cluster cpu s | history | rows | compute | write | "
      "version, held, linked rows, min candidates, rows below k (through updates), released |\n"
      "|---|---|---|---|---|---|---|---|---|---|\n",
      copies, keyless ? "without a key" : "with a primary key", rows, k,
      kanon::bench::load_average());
  // 1% of the rows, by physical order (the keyless table has nothing else).
  const std::string one_percent = fmt::format(
      "SELECT ctid FROM {0} ORDER BY ctid OFFSET {{}} LIMIT (SELECT count(*) / 100 FROM {0})",
      table);
  std::vector<EnforcementMode> modes = {EnforcementMode::kInline};
  if (!quick) modes.push_back(EnforcementMode::kMaterialized);
  for (const EnforcementMode mode : modes) {
    TablePolicy policy = adult_policy(table, k);
    policy.mode = mode;
    const std::string m = to_string(mode);
    auto step = [&](const std::string& name, const BuildOptions& o) {
      pqxx::connection conn(sb.conninfo());
      std::shared_ptr<const TableSnapshot> snap;
      const Cost c =
          measure_cost(postmaster, [&] { snap = build_table_snapshot(conn, policy, o); });
      const auto& r = snap->release;
      const auto& t = r.timings;
      auto phase = [](double ms, double cpu) { return fmt::format("{:.0f} / {:.0f}", ms, cpu); };
      fmt::print(
          "| {} | {} | {:.0f} | {:.2f} | {:.2f} | {} | {} | {} | {} | {}, {}, {}, {}, {} ({}), "
          "{:.4f} |\n",
          m, name, c.wall_ms, c.self_cpu_s, c.cluster_cpu_s, phase(t.history_ms, t.history_cpu_ms),
          phase(t.rows_ms, t.rows_cpu_ms), phase(t.compute_ms, t.compute_cpu_ms),
          phase(t.write_ms, t.write_cpu_ms), r.version, r.held, r.check.linked_rows,
          r.check.min_candidates, r.check.rows_below_k, r.check.updated_rows_below_k,
          r.released_fraction);
      std::fflush(stdout);
    };
    auto change = [&](const std::string& sql) {
      pqxx::nontransaction tx(admin);
      tx.exec(sql);
      tx.exec("VACUUM ANALYZE " + table);
    };
    BuildOptions fresh;
    fresh.history = false;
    step("fresh tree (history off)", fresh);
    BuildOptions first;
    first.baseline = true;
    step("history-aware first build (baseline)", first);
    step("refresh, rows unchanged", BuildOptions{});
    step("refresh, rows unchanged (again)", BuildOptions{});
    if (keyless)
      change(fmt::format("INSERT INTO {0} SELECT {1} FROM {0} WHERE ctid IN ({2})", table, columns,
                         fmt::format(fmt::runtime(one_percent), 700)));
    else
      change(
          fmt::format("INSERT INTO {0} SELECT id + (SELECT max(id) FROM {0}), {1} FROM {0} "
                      "WHERE id % 100 = 7",
                      table, columns));
    step("refresh after inserting 1%", BuildOptions{});
    change(keyless ? fmt::format("DELETE FROM {} WHERE ctid IN ({})", table,
                                 fmt::format(fmt::runtime(one_percent), 1100))
                   : fmt::format("DELETE FROM {} WHERE id % 100 = 11", table));
    step("refresh after deleting 1%", BuildOptions{});
    change(keyless ? fmt::format("UPDATE {} SET age = age + 1 WHERE ctid IN ({})", table,
                                 fmt::format(fmt::runtime(one_percent), 1300))
                   : fmt::format("UPDATE {} SET age = age + 1 WHERE id % 100 = 13", table));
    step("refresh after updating 1% (age + 1)", BuildOptions{});
    step("fresh tree (history off), after the changes", fresh);
    make();  // the rows back for the next mode
  }
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 5;
  int copies = 32;
  bool quick = false, tree_only = false, history_only = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) reps = std::atoi(argv[++i]);
    if (!std::strcmp(argv[i], "--copies") && i + 1 < argc) copies = std::atoi(argv[++i]);
    if (!std::strcmp(argv[i], "--quick")) quick = true;
    if (!std::strcmp(argv[i], "--tree-only")) tree_only = true;
    if (!std::strcmp(argv[i], "--history-only")) history_only = true;
  }
  if (copies < 1) copies = 1;
  try {
    fmt::print("starting a PostgreSQL sandbox... (load average {})\n",
               kanon::bench::load_average());
    Sandbox sb;
    const long postmaster = kanon::bench::postmaster_pid(sb.dir + "/data");
    pqxx::connection admin(sb.conninfo());
    {
      // Autovacuum's workers would count in the cluster's CPU time.
      pqxx::nontransaction tx(admin);
      tx.exec("ALTER SYSTEM SET autovacuum = off");
      tx.exec("SELECT pg_reload_conf()");
    }
    {
      const auto t0 = Clock::now();
      make_copies(admin, 32);
      if (copies != 32) make_copies(admin, copies);
      pqxx::nontransaction tx(admin);
      tx.exec(
          "CREATE TABLE workclass_sector AS SELECT DISTINCT workclass, "
          "CASE WHEN workclass LIKE '%gov%' THEN 'public' ELSE 'private' END AS sector "
          "FROM adult; ANALYZE workclass_sector");
      fmt::print("tables made in {:.1f} s\n", ms_since(t0) / 1000);
    }

    // 1. Tree build, fresh (history off), including reading the table, and
    // the history-aware build beside it.
    if (!history_only) tree_build_section(sb, postmaster, copies, reps);
    history_section(sb, postmaster, copies, quick, false);
    history_section(sb, postmaster, copies, quick, true);
    if (tree_only || history_only) return 0;

    // 2. Masked-scan overhead on ADULT x 32 with k=320 (the tree of k=10 on ADULT).
    pqxx::connection conn(sb.conninfo());
    BuildOptions fresh;
    fresh.history = false;  // the masks of a fresh tree; history costs are in section 1
    const auto base = build_table_snapshot(conn, adult_policy("adult32", 320), fresh);
    fmt::print("\nADULTx32 k=320: {} nodes, depth {}\n", base->tree.size(), base->tree.depth());
    {
      pin_session_settings(conn);
      const auto table = load_table(conn, base->policy, base->info);
      const auto chosen = choose_forms(base->predicates, table);
      for (size_t a = 0; a < base->predicates.size(); ++a) {
        const FormCost c = form_cost(base->predicates[a], table);
        fmt::print(
            "  {:<15} predicate: {:>5} tests; expected comparisons per row: flat {:.2f}, "
            "switch {:.2f} -> cost-based uses {}\n",
            base->tree.attributes()[a], base->predicates[a].size(), c.flat, c.switch_,
            chosen[a] == PredicateForm::kSwitchCase ? "switch" : "flat");
      }
    }
    struct Form {
      std::string name;
      std::string relation;  // what replaces "adult32"
      const Settings* settings;
    };
    std::vector<Form> forms = {{"raw", "public.adult32", &kDefault},
                               {"raw", "public.adult32", &kRestricted}};
    for (auto [form, fname] : {std::pair{PredicateForm::kNestedCase, "nested CASE"},
                               std::pair{PredicateForm::kFlatCase, "flat CASE + ANY"},
                               std::pair{PredicateForm::kFlatValue, "flat, value in arms"},
                               std::pair{PredicateForm::kSwitchCase, "switch + flat"}}) {
      const auto masks = build_masks(base->policy, base->info, base->predicates, form);
      const std::string rel = masks.masked_relation("public", "adult32");
      fmt::print("  {} mask SQL: {} KB\n", fname, rel.size() / 1024);
      if (!quick || form == PredicateForm::kFlatCase) forms.push_back({fname, rel, &kDefault});
      forms.push_back({fname, rel, &kRestricted});
    }
    {
      BuildOptions o = fresh;
      o.form = PredicateForm::kCostBased;
      const auto cost_based = build_table_snapshot(conn, adult_policy("adult32", 320), o);
      const std::string rel = cost_based->masks.masked_relation("public", "adult32");
      fmt::print("  cost-based mask SQL: {} KB\n", rel.size() / 1024);
      forms.push_back({"cost-based", rel, &kDefault});
      forms.push_back({"cost-based", rel, &kRestricted});
    }
    {
      const auto t0 = Clock::now();
      const std::string name = materialize(admin, *base);
      fmt::print("  materialized copy built in {:.0f} ms\n", ms_since(t0));
      forms.push_back({"materialized", name, &kDefault});
      forms.push_back({"materialized", name, &kRestricted});
    }
    const std::vector<std::pair<std::string, std::string>> queries = {
        {"GROUP BY occupation, sex",
         "SELECT occupation, sex, count(*) FROM @T AS t GROUP BY occupation, sex"},
        {"GROUP BY education", "SELECT education, count(*) FROM @T AS t GROUP BY education"},
        {"COUNT(*) WHERE age = 39", "SELECT count(*) FROM @T AS t WHERE age = 39"},
        {"COUNT(DISTINCT native-country)",
         "SELECT count(DISTINCT \"native-country\") FROM @T AS t"},
        {"join: GROUP BY workclass",
         "SELECT t.workclass, count(*) FROM @T AS t JOIN public.workclass_sector s "
         "ON s.workclass = t.workclass GROUP BY t.workclass"},
        {"SELECT * LIMIT 1000", "SELECT * FROM @T AS t LIMIT 1000"},
    };
    // ms[form][query]; every query is timed under every form before the next
    // query, so load changes on a shared machine hit all forms alike.
    std::vector<std::vector<double>> ms(forms.size(), std::vector<double>(queries.size()));
    for (size_t q = 0; q < queries.size(); ++q) {
      for (size_t f = 0; f < forms.size(); ++f) {
        std::string sql = queries[q].second;
        replace_all(sql, "@T", forms[f].relation);
        if (f < 2) time_query(conn, sql, *forms[f].settings);  // warm the cache
        ms[f][q] = median_query(conn, sql, *forms[f].settings, reps);
      }
    }
    const size_t limit = queries.size() - 1;
    fmt::print(
        "\n== Masked-scan overhead, ADULTx32 k=320 (median of {} runs) ==\n"
        "settings: default = server defaults (JIT on, parallel workers); restricted = {}\n"
        "cells: ms, and ratio to raw under the same settings\n\n",
        reps, kRestricted.sql);
    fmt::print("| form | settings |");
    for (size_t q = 0; q < limit; ++q) fmt::print(" {} |", queries[q].first);
    fmt::print(
        " median of the aggregates (vs raw default) | SELECT * LIMIT 1000: ms (added vs raw same "
        "settings) |\n|---|---|");
    for (size_t q = 0; q <= limit + 1; ++q) fmt::print("---|");
    fmt::print("\n");
    for (size_t f = 0; f < forms.size(); ++f) {
      const size_t ref = forms[f].settings == &kDefault ? 0 : 1;
      std::vector<double> ratios, vs_default;
      fmt::print("| {} | {} |", forms[f].name, forms[f].settings->name);
      for (size_t q = 0; q < limit; ++q) {
        ratios.push_back(ms[f][q] / ms[ref][q]);
        vs_default.push_back(ms[f][q] / ms[0][q]);
        fmt::print(" {:.0f} ({:.2f}x) |", ms[f][q], ratios.back());
      }
      fmt::print(" {:.2f}x ({:.2f}x) | {:.1f} ({:+.1f}) |\n", median(ratios), median(vs_default),
                 ms[f][limit], ms[f][limit] - ms[ref][limit]);
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "policy_bench: {}\n", e.what());
    return 0;  // a benchmark never fails a run
  }
  return 0;
}
