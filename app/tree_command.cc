// `kanon tree --config FILE --table T [--format text|json|sql]`: builds the
// disclosure tree of one protected table from the live data (over kanon's
// service connection) and prints its cohorts, release rules and SQL masks.
#include <fmt/format.h>

#include <memory>
#include <pqxx/pqxx>

#include "app/commands.h"
#include "policy/policy_file.h"
#include "policy/table_snapshot.h"
#include "policy/tree_report.h"
#include "store/policy_stores.h"
#include "store/snapshot_build.h"

namespace kanon::app {
namespace {

struct TreeOptions {
  std::string config = "config/kanon.yaml";
  std::string table;
  std::string format = "text";
  std::string conninfo;
  std::string form = "cost";
};

}  // namespace

void add_tree_command(CLI::App& app) {
  auto o = std::make_shared<TreeOptions>();
  auto* cmd = app.add_subcommand("tree", "Print a protected table's disclosure tree and masks");
  cmd->add_option("--config", o->config, "Server config listing the policy files")
      ->capture_default_str();
  cmd->add_option("--table", o->table, "Protected table (schema.table)")->required();
  cmd->add_option("--format", o->format, "text, json or sql")
      ->check(CLI::IsMember({"text", "json", "sql"}))
      ->capture_default_str();
  cmd->add_option("--conninfo", o->conninfo,
                  "libpq connection string for the service connection (overrides backend:)");
  cmd->add_option(
         "--form", o->form,
         "Predicate SQL form: cost (per predicate, what the proxy uses), flat (CASE "
         "arms + ANY), switch (CASE on the attribute itself), nested, or function (calls of "
         "kanon_mask.released, maskfn/)")
      ->check(CLI::IsMember({"cost", "flat", "switch", "nested", "function"}))
      ->capture_default_str();
  cmd->callback([o] {
    try {
      const auto cfg = settings::load_server_config(o->config, o->conninfo);
      const auto policies = store::load_policies(cfg);
      const auto& p = policy::find_policy(policies, o->table);
      pqxx::connection conn(settings::service_conninfo(cfg, p.database));
      store::BuildOptions build;
      build.form = o->form == "nested"     ? policy::PredicateForm::kNestedCase
                   : o->form == "flat"     ? policy::PredicateForm::kFlatCase
                   : o->form == "switch"   ? policy::PredicateForm::kSwitchCase
                   : o->form == "function" ? policy::PredicateForm::kFunction
                                           : policy::PredicateForm::kCostBased;
      const auto snap = store::build_table_snapshot(conn, p, build);
      if (o->format == "json") {
        fmt::print("{}", policy::tree_report_json(*snap));
      } else if (o->format == "sql") {
        fmt::print("{}", policy::tree_report_sql(*snap));
      } else {
        fmt::print("{}", policy::tree_report_text(*snap));
      }
    } catch (const std::exception& e) {
      fmt::print(stderr, "kanon tree: {}\n", e.what());
      throw CLI::RuntimeError(1);
    }
  });
}

}  // namespace kanon::app
