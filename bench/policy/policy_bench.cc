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

std::string run(const std::string& cmd) {
  FILE* f = popen(cmd.c_str(), "r");
  if (!f) throw std::runtime_error("popen failed");
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof buf, f)) out += buf;
  if (pclose(f) != 0) throw std::runtime_error(cmd + " failed:\n" + out);
  return out;
}

struct Sandbox {
  std::string dir, port;
  Sandbox() {
    const std::string out = run(fmt::format("{}/scripts/pg-sandbox.sh start --demo --owner-pid {}",
                                            KANON_SOURCE_DIR, getpid()));
    for (size_t p = 0; p < out.size();) {
      const size_t e = out.find('\n', p);
      const std::string line = out.substr(p, e - p);
      if (line.rfind("KANON_PG_DIR=", 0) == 0) dir = line.substr(13);
      if (line.rfind("KANON_PG_PORT=", 0) == 0) port = line.substr(14);
      if (e == std::string::npos) break;
      p = e + 1;
    }
  }
  ~Sandbox() {
    if (!dir.empty())
      std::system((std::string(KANON_SOURCE_DIR) + "/scripts/pg-sandbox.sh stop " + dir).c_str());
  }
  std::string conninfo() const {
    return "host=127.0.0.1 port=" + port + " user=postgres dbname=postgres";
  }
};

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

// Times one statement (client side: parse + plan + execute + transfer).
double time_query(pqxx::connection& conn, const std::string& sql, bool jit) {
  pqxx::nontransaction tx(conn);
  tx.exec(jit ? "SET jit = on" : "SET jit = off");
  const auto t0 = Clock::now();
  tx.exec(sql);
  return ms_since(t0);
}

double median_query(pqxx::connection& conn, const std::string& sql, bool jit, int reps) {
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    t.push_back(time_query(conn, sql, jit));
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
    for (size_t a = 0; a < base->predicates.size(); ++a)
      fmt::print("  {:<15} predicate: {:>5} tests\n", base->tree.attributes()[a],
                 base->predicates[a].size());
    struct Form {
      std::string name;
      std::string relation;  // what replaces "adult32"
      bool jit;
    };
    std::vector<Form> forms;
    for (auto [form, fname] : {std::pair{PredicateForm::kNestedCase, "nested CASE"},
                               std::pair{PredicateForm::kFlatCase, "flat CASE + ANY"},
                               std::pair{PredicateForm::kFlatValue, "flat, value in arms"}}) {
      const auto masks = build_masks(base->policy, base->info, base->predicates, form);
      const std::string rel = masks.masked_relation("public", "adult32");
      fmt::print("  {} mask SQL: {} KB\n", fname, rel.size() / 1024);
      if (!quick || form != PredicateForm::kNestedCase)
        forms.push_back({std::string(fname) + ", JIT on", rel, true});
      forms.push_back({std::string(fname) + ", JIT off", rel, false});
    }
    {
      const auto t0 = Clock::now();
      const std::string name = materialize(admin, *base);
      fmt::print("  materialized copy built in {:.0f} ms\n", ms_since(t0));
      forms.push_back({"materialized", name, true});
    }
    const std::vector<std::pair<std::string, std::string>> queries = {
        {"GROUP BY occupation, sex",
         "SELECT occupation, sex, count(*) FROM @T AS t GROUP BY occupation, sex"},
        {"GROUP BY education", "SELECT education, count(*) FROM @T AS t GROUP BY education"},
        {"COUNT(*) WHERE age = 39", "SELECT count(*) FROM @T AS t WHERE age = 39"},
        {"COUNT(DISTINCT native-country)",
         "SELECT count(DISTINCT \"native-country\") FROM @T AS t"},
        {"SELECT * LIMIT 1000", "SELECT * FROM @T AS t LIMIT 1000"},
        {"join: GROUP BY workclass",
         "SELECT t.workclass, count(*) FROM @T AS t JOIN public.workclass_sector s "
         "ON s.workclass = t.workclass GROUP BY t.workclass"},
    };
    fmt::print(
        "\n== Masked-scan overhead, ADULTx32 k=320 (median of {} runs, ms; ratio = "
        "rewritten / raw with the same JIT setting) ==\n",
        reps);
    fmt::print("{:<32} {:>9} {:>9}", "query", "raw JIT", "raw noJIT");
    for (const auto& f : forms) fmt::print(" | {:>26}", f.name);
    fmt::print("\n");
    std::vector<std::vector<double>> ratios(forms.size());
    for (const auto& [qname, q] : queries) {
      std::string raw = q;
      replace_all(raw, "@T", "public.adult32");
      time_query(conn, raw, true);  // warm the cache
      const double raw_jit = median_query(conn, raw, true, reps);
      const double raw_nojit = median_query(conn, raw, false, reps);
      fmt::print("{:<32} {:>9.1f} {:>9.1f}", qname, raw_jit, raw_nojit);
      for (size_t f = 0; f < forms.size(); ++f) {
        std::string sql = q;
        replace_all(sql, "@T", forms[f].relation);
        const double t = median_query(conn, sql, forms[f].jit, reps);
        const double ref = forms[f].jit ? raw_jit : raw_nojit;
        const double ratio = t / ref;
        if (qname.rfind("SELECT *", 0) != 0) ratios[f].push_back(ratio);
        fmt::print(" | {:>9.1f} {:>5.2f}x {:>+7.1f}", t, ratio, t - ref);
      }
      fmt::print("\n");
    }
    fmt::print("{:<52}", "median ratio over the aggregate queries");
    for (size_t f = 0; f < forms.size(); ++f) fmt::print(" | {:>26.2f}x", median(ratios[f]));
    fmt::print("\n(columns per form: ms, ratio to raw, ms added)\n");
  } catch (const std::exception& e) {
    fmt::print(stderr, "policy_bench: {}\n", e.what());
    return 0;  // a benchmark never fails a run
  }
  return 0;
}
