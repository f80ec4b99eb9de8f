// `kanon check --config FILE [--format text|json] [--role R]...`: the
// exposure report (audit/exposure.h) for the database kanon serves: every
// path a restricted login has to a protected table outside kanon, with its
// fix, and VERIFY HISTORY of every protected table. Exit status 0 when there
// is no exposure and no row below k over a table's releases (informational
// rows do not count), 2 when there is any, 1 when the check itself failed.
#include <fmt/format.h>

#include <memory>
#include <pqxx/pqxx>

#include "app/commands.h"
#include "exposure/privileges.h"
#include "policy/policy_file.h"
#include "store/policy_stores.h"

namespace kanon::app {
namespace {

struct CheckCliOptions {
  std::string config = "config/kanon.yaml";
  std::string format = "text";
  std::vector<std::string> roles;
  std::string conninfo;
  std::string kanon_address;
};

}  // namespace

void add_check_command(CLI::App& app) {
  auto o = std::make_shared<CheckCliOptions>();
  auto* cmd = app.add_subcommand(
      "check",
      "List every path a restricted login has to a protected table outside kanon, with its fix "
      "(exit 2 when there is any)");
  cmd->add_option("--config", o->config, "Server config listing the policy files")
      ->capture_default_str();
  cmd->add_option("--format", o->format, "text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->add_option("--role", o->roles, "Check only this login (repeatable)");
  cmd->add_option("--conninfo", o->conninfo,
                  "libpq connection string for the service connection (overrides backend:); a "
                  "superuser can also check pg_hba.conf");
  cmd->add_option("--kanon-address", o->kanon_address,
                  "The address kanon connects to PostgreSQL from, when kanon check runs on "
                  "another host (default: this connection's own address)");
  cmd->callback([o] {
    exposure::ExposureReport report;
    try {
      const auto cfg = settings::load_server_config(o->config, o->conninfo);
      const auto policies = store::load_policies(cfg);
      exposure::CheckOptions options;
      options.exposure.roles.insert(o->roles.begin(), o->roles.end());
      options.kanon_address = o->kanon_address;
      if (!cfg.audit.table.empty()) options.internal_tables = {cfg.audit.table};
      report = exposure::check_every_database(
          policies, settings::default_database(cfg),
          [&](const std::string& database) { return settings::service_conninfo(cfg, database); },
          options);
    } catch (const std::exception& e) {
      fmt::print(stderr, "kanon check: {}\n", e.what());
      throw CLI::RuntimeError(1);
    }
    fmt::print("{}", o->format == "json" ? exposure::exposure_report_json(report)
                                         : exposure::exposure_report_text(report));
    if (!report.clean()) throw CLI::RuntimeError(2);
  });
}

}  // namespace kanon::app
