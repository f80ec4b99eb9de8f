// `kanon export --config FILE --table T [--to schema.table | --to-csv PATH]
// [--with "k = 5, suppression = 0.02, ..."]`: the admin console's EXPORT from
// a terminal, with a progress bar on stderr; Ctrl-C cancels cleanly (nothing
// is written).
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <regex>

#include "app/commands.h"
#include "base/sqlstate.h"
#include "policy/policy_file.h"
#include "publish/exporter.h"
#include "store/policy_stores.h"

namespace kanon::app {
namespace {

struct ExportCliOptions {
  std::string config = "config/kanon.yaml";
  std::string table;
  std::string to;
  std::string to_csv;
  std::string with;
  std::string conninfo;
};

std::atomic<bool> g_interrupted{false};

void on_sigint(int) {
  g_interrupted = true;
}

std::string quote_literal(const std::string& v) {
  std::string out = "'";
  for (char c : v) {
    if (c == '\'') out += '\'';
    out += c;
  }
  return out + "'";
}

// "EXPORT public.adult: 120 of 4320 transformations checked, ..." -> a bar.
void progress_line(const std::string& message) {
  static const std::regex checked(
      "([0-9]+) of ([0-9]+) (transformations checked|rows partitioned|rows written)");
  std::smatch m;
  if (std::regex_search(message, m, checked)) {
    const double done = std::stod(m[1]), total = std::stod(m[2]);
    const int width = 30;
    const int filled = total > 0 ? static_cast<int>(width * done / total) : 0;
    fmt::print(stderr, "\r[{}{}] {:5.1f}% {}\x1b[K", std::string(filled, '#'),
               std::string(width - filled, '.'), total > 0 ? 100.0 * done / total : 0.0, message);
  } else {
    fmt::print(stderr, "\r{}\x1b[K\n", message);
  }
}

}  // namespace

void add_export_command(CLI::App& app) {
  auto o = std::make_shared<ExportCliOptions>();
  auto* cmd = app.add_subcommand(
      "export", "Publish an anonymized copy of a protected table (see docs/export.md)");
  cmd->add_option("--config", o->config, "Server config listing the policy files")
      ->capture_default_str();
  cmd->add_option("--table", o->table, "Protected table (schema.table)")->required();
  cmd->add_option("--to", o->to, "Published table (schema.table); default <table>_anonymized");
  cmd->add_option("--to-csv", o->to_csv, "Write a CSV file instead of a table");
  cmd->add_option("--with", o->with,
                  "Options as in EXPORT ... WITH (...), e.g. \"k = 5, algorithm = bfs\"");
  cmd->add_option("--conninfo", o->conninfo,
                  "libpq connection string for the service connection (overrides backend:)");
  cmd->callback([o] {
    std::string command = "EXPORT " + o->table;
    if (!o->to.empty()) command += " TO " + o->to;
    if (!o->to_csv.empty()) command += " TO " + quote_literal(o->to_csv);
    if (!o->with.empty()) command += " WITH (" + o->with + ")";
    struct sigaction sa {};
    sa.sa_handler = on_sigint;
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    try {
      const auto cfg = settings::load_server_config(o->config, o->conninfo);
      const auto policies = store::load_policies(cfg);
      const auto& p = policy::find_policy(policies, o->table);
      publish::ExportHooks hooks;
      hooks.notice = progress_line;
      hooks.cancelled = [] { return g_interrupted.load(); };
      auto request = publish::parse_export_command(command);
      for (const auto& other : policies) request.reserved_targets.push_back(other.name());
      // audit.table is schema.table (the configuration checks it).
      if (!cfg.audit.table.empty()) request.reserved_targets.push_back(cfg.audit.table);
      const auto r =
          publish::run_export(settings::service_conninfo(cfg, p.database), p, request, hooks);
      fmt::print(stderr, "\n");
      const auto& rep = r.report;
      const auto loss = rep.losses.find(rep.metric);
      fmt::print(
          "published {}\nrows {}\nlevels {}\nk achieved {}{}\nclasses {}\nsuppressed {}\n"
          "loss ({}) {:.6f}\nreport {}\nreport {}\n",
          rep.target, rep.rows_out, rep.levels_text(), rep.min_class,
          rep.counts_persons() ? " persons" : "", rep.classes, rep.suppressed, rep.metric,
          loss == rep.losses.end() ? 0.0 : loss->second, r.json_path, r.html_path);
    } catch (const publish::ExportError& e) {
      fmt::print(stderr, "\nkanon export: {} (SQLSTATE {})\n", e.what(), e.sqlstate);
      throw CLI::RuntimeError(e.sqlstate == sqlstate::kQueryCanceled ? 130 : 1);
    } catch (const std::exception& e) {
      fmt::print(stderr, "\nkanon export: {}\n", e.what());
      throw CLI::RuntimeError(1);
    }
  });
}

}  // namespace kanon::app
