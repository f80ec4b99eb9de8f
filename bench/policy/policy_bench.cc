// Policy benchmark (issue 4): tree build on ADULT and ADULT x 32 including the
// COPY, and the masked-scan overhead of each compiled form against raw
// queries measured in the same run. Starts its own throwaway PostgreSQL with
// scripts/pg-sandbox.sh. Prints figures and ratios; never fails.
//
//   policy_bench [--reps N] [--quick]
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <pqxx/pqxx>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/policy/bench_sandbox.h"
#include "policy/form_choice.h"
#include "policy/materializer.h"
#include "policy/predicate_sql.h"
#include "policy/table_loader.h"
#include "policy/table_snapshot.h"

using namespace kanon::policy;
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

}  // namespace

int main(int argc, char** argv) {
  int reps = 5;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) reps = std::atoi(argv[++i]);
    if (!std::strcmp(argv[i], "--quick")) quick = true;
  }
  try {
    fmt::print("starting a PostgreSQL sandbox...\n");
    Sandbox sb;
    pqxx::connection admin(sb.conninfo());
    {
      pqxx::nontransaction tx(admin);
      tx.exec(
          "DROP TABLE IF EXISTS adult32; CREATE TABLE adult32 AS SELECT a.* FROM adult a, "
          "generate_series(1, 32); ANALYZE adult32;"
          "CREATE TABLE workclass_sector AS SELECT DISTINCT workclass, "
          "CASE WHEN workclass LIKE '%gov%' THEN 'public' ELSE 'private' END AS sector "
          "FROM adult; ANALYZE workclass_sector");
    }

    // 1. Tree build.
    fmt::print("\n== Tree build (median of {} runs) ==\n", reps);
    fmt::print("{:<34} {:>9} {:>9} {:>9} {:>7} {:>6} {:>9}\n", "case", "load ms", "tree ms",
               "total ms", "nodes", "depth", "distinct");
    struct BuildCase {
      std::string name, table;
      uint32_t k;
      bool aggregate;
    };
    const std::vector<BuildCase> builds = {
        {"ADULT k=5 (COPY GROUP BY)", "adult", 5, true},
        {"ADULT k=5 (COPY rows)", "adult", 5, false},
        {"ADULTx32 k=160 (COPY GROUP BY)", "adult32", 160, true},
        {"ADULTx32 k=160 (COPY rows)", "adult32", 160, false},
    };
    for (const auto& b : builds) {
      std::vector<double> load, tree, total;
      size_t nodes = 0, distinct = 0;
      int depth = 0;
      for (int i = 0; i < reps; ++i) {
        pqxx::connection conn(sb.conninfo());
        BuildOptions o;
        o.load.aggregate = b.aggregate;
        const auto t0 = Clock::now();
        const auto snap = build_table_snapshot(conn, adult_policy(b.table, b.k), o);
        total.push_back(ms_since(t0));
        load.push_back(snap->stats.load_ms);
        tree.push_back(snap->stats.tree_ms);
        nodes = snap->tree.size();
        depth = snap->tree.depth();
        distinct = snap->stats.distinct_rows;
      }
      fmt::print("{:<34} {:>9.1f} {:>9.1f} {:>9.1f} {:>7} {:>6} {:>9}\n", b.name, median(load),
                 median(tree), median(total), nodes, depth, distinct);
    }

    // 2. Masked-scan overhead on ADULT x 32 with k=320 (the tree of k=10 on ADULT).
    pqxx::connection conn(sb.conninfo());
    const auto base = build_table_snapshot(conn, adult_policy("adult32", 320));
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
      BuildOptions o;
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
