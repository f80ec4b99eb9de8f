// history_bench: the history-aware refresh (policy/history_refresh.h) against
// a fresh tree on ADULT replicated `--scale` times (one key per row), after
// successive changes of 0.4 % inserts, 0.3 % deletes and 0.3 % updates:
// time of the tree (fresh build vs regrow + check + collapses + holds), the
// candidate check alone, and the released fractions. In memory, no database;
// reference and subject measured in the same run.
//
//   build-rel/bench/policy/history_bench [--scale 32] [--steps 3] [--live]
#include <fmt/format.h>

#include <cstring>
#include <random>
#include <string>

#include "base/stopwatch.h"
#include "policy/history_refresh.h"
#include "tests/policy/history_harness.h"

using namespace kanon::policy;

int main(int argc, char** argv) {
  size_t scale = 32, steps = 3;
  bool live = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--scale") && i + 1 < argc) {
      scale = std::stoul(argv[++i]);
    } else if (!std::strcmp(argv[i], "--steps") && i + 1 < argc) {
      steps = std::stoul(argv[++i]);
    } else if (!std::strcmp(argv[i], "--live")) {
      live = true;
    } else {
      fmt::print(stderr, "usage: history_bench [--scale N] [--steps N] [--live]\n");
      return 1;
    }
  }
  const std::vector<std::string> qis = {
      "sex",       "age",       "race", "marital-status", "education", "native-country",
      "workclass", "occupation"};
  const auto adult =
      testing::read_adult(std::string(KANON_SOURCE_DIR) + "/data/adult/adult.csv", qis.size());
  testing::KeyedTable table(qis);
  for (size_t c = 0; c < scale; ++c)
    for (size_t i = 0; i < adult.size(); ++i) table.insert(fmt::format("c{}_{}", c, i), adult[i]);
  const TreeOptions options{.k = 5, .l = 0, .max_nodes = 4096};
  fmt::print("ADULT x {}: {} rows, k = {}, {} mode\n", scale, table.rows().size(), options.k,
             live ? "live (inline/view)" : "materialized");

  ReleaseHistory history;
  uint64_t version = 0;
  {
    std::vector<uint32_t> rows;
    const EncodedTable t = table.encode(history, rows);
    kanon::base::Stopwatch clock;
    auto first = history_refresh(history, t, rows, options, !live);
    fmt::print("baseline: fresh tree {:.0f} ms, {} nodes, released fraction {:.4f}\n", clock.ms(),
               first.tree.size(), first.released_fraction);
    history.append({++version, true, {}, first.tree, std::move(first.leaves)});
  }
  std::mt19937_64 rng(11);
  // Rows below k reported apart (policy/history_check.h): through updates
  // (live modes), arrived late (live modes), through deletions; `<k` is
  // the rest, what a release must never allow (0).
  fmt::print(
      "{:>4}  {:>9}  {:>9}  {:>9}  {:>8}  {:>6}  {:>6}  {:>8}  {:>8}  {:>6}  {:>6}  {:>6}  {:>4}\n",
      "step", "fresh_ms", "hist_ms", "check_ms", "ratio", "rounds", "held", "fresh_rf", "hist_rf",
      "upd<k", "late<k", "del<k", "<k");
  for (size_t step = 1; step <= steps; ++step) {
    const size_t n = table.rows().size();
    table.change(rng, n * 4 / 1000, n * 3 / 1000, n * 3 / 1000, fmt::format("s{}_", step));
    std::vector<uint32_t> rows;
    const EncodedTable t = table.encode(history, rows);
    kanon::base::Stopwatch clock;
    const auto fresh = DisclosureTree::build(t, options);
    const double fresh_ms = clock.lap_ms();
    if (live)
      if (auto c = catch_up(history, t, rows))
        history.append({++version, false, {}, history.last().tree, std::move(*c)});
    auto refresh = history_refresh(history, t, rows, options, !live);
    const double hist_ms = clock.lap_ms();
    auto columns = history.columns();
    for (auto& c : columns) c.resize(rows.size(), kAbsent);
    columns.push_back(refresh.leaves);
    clock.lap_ms();
    (void)check_history(columns, options.k);
    const double check_ms = clock.lap_ms();
    const auto& c = refresh.check;
    fmt::print(
        "{:>4}  {:>9.0f}  {:>9.0f}  {:>9.0f}  {:>8.2f}  {:>6}  {:>6}  {:>8.4f}  {:>8.4f}  {:>6}  "
        "{:>6}  {:>6}  {:>4}\n",
        step, fresh_ms, hist_ms, check_ms, hist_ms / fresh_ms, refresh.rounds, refresh.held,
        released_fraction(fresh, t), refresh.released_fraction, c.updated_rows_below_k,
        c.late_rows_below_k, c.deleted_rows_below_k, c.rows_below_k);
    history.append({++version, false, {}, refresh.tree, std::move(refresh.leaves)});
  }
  return 0;
}
