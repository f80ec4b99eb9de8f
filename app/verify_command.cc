// `kanon verify --config FILE --table T`: builds the table's masks from the
// live data, runs the masked projection on the backend grouped by the masked
// quasi-identifiers, and reports the real k. Exit status 2 when a group is
// smaller than the policy's k.
#include <fmt/format.h>

#include <memory>
#include <pqxx/pqxx>

#include "app/commands.h"
#include "policy/policy_file.h"
#include "policy/table_snapshot.h"
#include "store/policy_stores.h"
#include "store/snapshot_build.h"
#include "store/verification.h"

namespace kanon::app {
namespace {

struct VerifyOptions {
  std::string config = "config/kanon.yaml";
  std::string table;
  std::string conninfo;
};

}  // namespace

void add_verify_command(CLI::App& app) {
  auto o = std::make_shared<VerifyOptions>();
  auto* cmd =
      app.add_subcommand("verify", "Check on the backend that masked groups have >= k rows");
  cmd->add_option("--config", o->config, "Server config listing the policy files")
      ->capture_default_str();
  cmd->add_option("--table", o->table, "Protected table (schema.table)")->required();
  cmd->add_option("--conninfo", o->conninfo,
                  "libpq connection string for the service connection (overrides backend:)");
  cmd->callback([o] {
    store::VerificationReport rep;
    uint32_t k = 0;
    try {
      const auto cfg = settings::load_server_config(o->config, o->conninfo);
      const auto policies = store::load_policies(cfg);
      const auto& p = policy::find_policy(policies, o->table);
      pqxx::connection conn(settings::service_conninfo(cfg, p.database));
      const auto snap = store::build_table_snapshot(conn, p);
      rep = store::verify_table(conn, *snap);
      k = p.k;
      fmt::print(
          "table {}\nrows {}\ngroups {}\nsmallest group {} (policy k = {})\n"
          "groups below k {}\nquasi-identifier cells released {:.1f}%\n{}\n",
          p.name(), rep.rows, rep.groups, rep.min_group, k, rep.groups_below_k,
          100.0 * rep.released_fraction,
          rep.groups_below_k == 0 ? "OK" : "VIOLATION: some groups are smaller than k");
      // Re-identification risk (docs/risk.md).
      const auto& r = rep.risk;
      fmt::print(
          "prosecutor risk: highest {:.6g} ({} records), average {:.6g}, above {:.6g}: {} "
          "records\n",
          r.prosecutor.highest, r.prosecutor.records_at_highest, r.prosecutor.average, r.threshold,
          r.prosecutor.records_above);
      if (r.journalist)
        fmt::print("journalist risk ({}): highest {:.6g}, average {:.6g}\n", p.risk.population(),
                   r.journalist->highest, r.journalist->average);
      else if (!rep.population_error.empty())
        fmt::print("journalist risk: none: {}\n", rep.population_error);
      fmt::print("marketer risk {:.6g}\n", r.marketer);
    } catch (const std::exception& e) {
      fmt::print(stderr, "kanon verify: {}\n", e.what());
      throw CLI::RuntimeError(1);
    }
    if (rep.groups_below_k > 0) throw CLI::RuntimeError(2);
  });
}

}  // namespace kanon::app
