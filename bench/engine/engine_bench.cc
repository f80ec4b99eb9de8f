// Engine benchmark (issue 3): ADULT, all 9 quasi-identifiers, k in {2,5,10} x
// suppression in {0, .02, .05} x {loss, dm}; median of N Flash searches per
// configuration for each optimization level (none, +projection, +roll-up,
// +history, as in the Flash paper's Figure 9; "none" also turns off packed
// keys and deduplication, the later levels keep them on); ARX 3.9.2's
// reference times (main-thread CPU time, measured by the author, same
// kind of machine) and our ratio; peak memory (getrusage); then ADULT
// concatenated 10 times with k x 10 (every row appears 10 times, so k = 2
// would make the untransformed data anonymous). Times are the searching
// thread's CPU time, like ARX's, so that load from other processes counts less.
//
// Usage: engine_bench [--runs N] [--adult DIR] [--levels full|all] [--no-x10]
//                     [--config metric,k,s]   (one search, for profiling)
//                     [--person-per-row]      (with --config: person mode, every row
//                                              its own person: the cost of counting
//                                              persons; the result equals row mode's)
#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "engine/anonymizer.h"
#include "engine/job_config.h"

using namespace kanon::engine;

namespace {

const char* const kAttributes[] = {
    "sex",       "age",        "race",        "marital-status", "education", "native-country",
    "workclass", "occupation", "salary-class"};
const int kK[] = {2, 5, 10};
const double kS[] = {0, 0.02, 0.05};
// ARX 3.9.2 Flash, main-thread CPU ms, from the issue: [metric][k][s].
const double kArx[2][3][3] = {{{138, 2424, 2037}, {127, 1930, 2287}, {86, 1776, 2073}},  // loss
                              {{115, 2808, 4066}, {86, 1226, 2506}, {89, 1045, 1864}}};  // dm

double peak_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024.0;
}

struct Level {
  const char* name;
  CheckerOptions options;
};

double median_ms(const Dataset& d, const PrivacyModel& p, MetricKind m, const CheckerOptions& o,
                 int runs, Outcome* last) {
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) {
    *last = anonymize(d, p, m, Algorithm::kFlash, o, {});
    t.push_back(last->search.search_cpu_ms);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 5;
  std::string dir = KANON_SOURCE_DIR "/data/adult";
  if (const char* e = std::getenv("KANON_ADULT_DIR")) dir = e;
  bool all_levels = true, x10 = true;
  std::string config;  // "metric,k,s": one search with all optimizations (for profiling)
  bool person_per_row = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) runs = std::atoi(argv[++i]);
    if (!std::strcmp(argv[i], "--adult") && i + 1 < argc) dir = argv[++i];
    if (!std::strcmp(argv[i], "--levels") && i + 1 < argc)
      all_levels = std::string(argv[++i]) == "all";
    if (!std::strcmp(argv[i], "--no-x10")) x10 = false;
    if (!std::strcmp(argv[i], "--config") && i + 1 < argc) config = argv[++i];
    if (!std::strcmp(argv[i], "--person-per-row")) person_per_row = true;
  }
  Dataset adult;
  {
    CsvTable table = read_csv(dir + "/adult.csv", ';');
    std::vector<AttributeSpec> specs;
    for (const char* a : kAttributes) {
      specs.push_back({a, AttributeRole::kQuasiIdentifier,
                       hierarchy_from_file(dir + "/adult_hierarchy_" + std::string(a) + ".csv")});
    }
    if (person_per_row) {
      table.header.push_back("row_id");
      for (size_t r = 0; r < table.rows.size(); ++r) table.rows[r].push_back(std::to_string(r));
    }
    adult = encode_dataset(table, specs, person_per_row ? "row_id" : "");
  }
  if (!config.empty()) {
    char metric[32] = {};
    PrivacyModel p;
    if (std::sscanf(config.c_str(), "%31[^,],%u,%lf", metric, &p.k, &p.suppression) != 3) {
      fmt::print(stderr, "--config wants metric,k,s\n");
      return 1;
    }
    const Outcome o =
        anonymize(adult, p, *parse_metric(metric), Algorithm::kFlash, CheckerOptions{}, {});
    fmt::print("{}{} k={} s={}: {:.1f} ms ({:.1f} CPU), checked {}, value {:.10g}, suppressed {}\n",
               person_per_row ? "persons " : "", metric, p.k, p.suppression, o.search.search_ms,
               o.search.search_cpu_ms, o.search.checked, o.search.value, o.at_optimum.suppressed);
    return 0;
  }
  std::vector<Level> levels;
  if (all_levels) {
    levels.push_back({"none", {false, false, false, {}, false, false, false}});
    levels.push_back({"+proj", {true, false, false, {}, false}});
    levels.push_back({"+rollup", {true, true, false, {}, false}});
  }
  levels.push_back({"+history", {true, true, true, {}, false}});

  fmt::print("ADULT: {} rows, 9 QIs; Flash; median of {} searches (CPU ms)\n\n", adult.rows, runs);
  fmt::print("| metric | k | s |");
  for (const auto& l : levels) fmt::print(" {} |", l.name);
  fmt::print(" ARX | ours/ARX | checked | value | suppressed |\n|---|---|---|");
  for (size_t i = 0; i < levels.size() + 5; ++i) fmt::print("---|");
  fmt::print("\n");
  for (int mi = 0; mi < 2; ++mi) {
    const MetricKind metric = mi == 0 ? MetricKind::kLoss : MetricKind::kDiscernibility;
    for (int ki = 0; ki < 3; ++ki) {
      for (int si = 0; si < 3; ++si) {
        PrivacyModel p;
        p.k = kK[ki];
        p.suppression = kS[si];
        fmt::print("| {} | {} | {} |", metric_name(metric), kK[ki], kS[si]);
        Outcome o;
        double full = 0;
        for (const auto& l : levels) {
          full = median_ms(adult, p, metric, l.options, runs, &o);
          fmt::print(" {:.1f} |", full);
        }
        fmt::print(" {} | {:.3f} | {} | {:.10g} | {} |\n", kArx[mi][ki][si],
                   full / kArx[mi][ki][si], o.search.checked, o.search.value,
                   o.at_optimum.suppressed);
        std::fflush(stdout);
      }
    }
  }
  fmt::print("\npeak memory (ADULT): {:.1f} MiB (ARX JVM: 264-342 MiB)\n", peak_mib());

  if (x10) {
    adult.replicate(10);
    const int x10_runs = std::max(1, runs / 2);
    fmt::print(
        "\nADULT x 10: {} rows (every row 10 times, so k is 10 x ADULT's k); all "
        "optimizations, and without deduplication (full scans then visit all rows); median of {} "
        "(CPU ms)\n\n",
        adult.rows, x10_runs);
    fmt::print(
        "| metric | k | s | ms | ms, no dedup | checked | value | suppressed |\n"
        "|---|---|---|---|---|---|---|---|\n");
    CheckerOptions no_dedup = levels.back().options;
    no_dedup.deduplicate = false;
    for (int mi = 0; mi < 2; ++mi) {
      const MetricKind metric = mi == 0 ? MetricKind::kLoss : MetricKind::kDiscernibility;
      for (int k : {20, 50, 100}) {
        for (double s : kS) {
          PrivacyModel p;
          p.k = k;
          p.suppression = s;
          Outcome o, o2;
          const double ms = median_ms(adult, p, metric, levels.back().options, x10_runs, &o);
          const double ms2 = median_ms(adult, p, metric, no_dedup, x10_runs, &o2);
          fmt::print("| {} | {} | {} | {:.1f} | {:.1f} | {} | {:.10g} | {} |\n",
                     metric_name(metric), k, s, ms, ms2, o.search.checked, o.search.value,
                     o.at_optimum.suppressed);
          std::fflush(stdout);
        }
      }
    }
    fmt::print("\npeak memory (after ADULT x 10): {:.1f} MiB\n", peak_mib());
  }
  return 0;
}
