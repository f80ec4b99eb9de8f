// snapshot_bench: what a replica's start costs with shared snapshots
// (store/shared_snapshots.h), against building in the same run.
//
// On a throwaway PostgreSQL with the demo data, for the demo policies
// (config/policies/people.yaml and adult.yaml): a builder store builds and
// stores every table; then, --runs times each, a new store
//   - "build": refresh_all() as the builder (what every start cost before),
//   - "load":  refresh_all(true) as another replica, serving the stored
//              snapshots (what a restart or a second replica costs now),
// each on a fresh store (new connections, as at a process start). Prints the
// medians, the catalog read apart (every start reads it, shared or not), and
// the ratio. Target (issue 18): loading the stored snapshots <= 100 ms.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <pqxx/pqxx>
#include <vector>

#include "bench/policy/bench_sandbox.h"
#include "policy/policy_file.h"
#include "store/policy_store.h"

using namespace kanon;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double time_ms(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 5;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--runs") runs = std::max(1, std::atoi(argv[i + 1]));
  bench::Sandbox pg;
  std::vector<policy::TablePolicy> policies;
  for (const char* file : {"people.yaml", "adult.yaml"})
    for (auto p :
         policy::load_policy_file(std::string(KANON_SOURCE_DIR) + "/config/policies/" + file)) {
      p.database = "postgres";
      policies.push_back(std::move(p));
    }
  const auto store = [&](const std::string& replica) {
    return std::make_unique<store::PolicyStore>(
        pg.conninfo(), policies, store::BuildOptions{}, "postgres",
        settings::SharingOptions{.enabled = true, .replica = replica, .keep = 3});
  };
  // The builder holds the lock for the whole run; it stores version 1.
  auto builder = store("builder");
  if (!builder->refresh_all()) {
    fmt::print(stderr, "the first build failed\n");
    return 1;
  }
  std::vector<double> build, load, catalog;
  for (int r = 0; r < runs; ++r) {
    build.push_back(time_ms([&] { builder->refresh_all(); }));
    auto replica = store(fmt::format("replica{}", r));
    bool served = false;
    load.push_back(time_ms([&] { served = replica->refresh_all(true); }));
    if (!served || replica->current()->tables.size() != policies.size()) {
      fmt::print(stderr, "the replica did not serve every stored snapshot: {}\n",
                 replica->sharing_state().error);
      return 1;
    }
    catalog.push_back(replica->current()->catalog ? replica->current()->catalog->read_ms : 0);
  }
  fmt::print(
      "snapshot_bench: {} tables ({}), {} runs, medians\n", policies.size(),
      [&] {
        std::string s;
        for (const auto& p : policies) s += (s.empty() ? "" : ", ") + p.name();
        return s;
      }(),
      runs);
  fmt::print("  build and store (the builder)    {:8.1f} ms\n", median(build));
  fmt::print("  start of another replica         {:8.1f} ms   (stored snapshots and the catalog)\n",
             median(load));
  fmt::print("    of which the catalog read      {:8.1f} ms   (every start reads it)\n",
             median(catalog));
  std::vector<double> snapshots;
  for (size_t i = 0; i < load.size(); ++i) snapshots.push_back(load[i] - catalog[i]);
  fmt::print("    loading the stored snapshots   {:8.1f} ms   (target <= 100 ms)\n",
             median(snapshots));
  fmt::print("  ratio start / build              {:8.3f}\n", median(load) / median(build));
  return 0;
}
