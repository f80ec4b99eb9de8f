// The `kanon` executable: one subcommand per task, each in its own file.
#include <fmt/format.h>

#include "app/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"kanon: k-anonymity for PostgreSQL (a masking proxy and an anonymization engine)"};
  app.set_version_flag("--version", fmt::format("kanon {}", KANON_VERSION));
  app.require_subcommand(1);
  kanon::app::add_proxy_command(app);
  kanon::app::add_anonymize_command(app);
  kanon::app::add_tree_command(app);
  kanon::app::add_verify_command(app);
  kanon::app::add_export_command(app);
  kanon::app::add_check_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return 0;
}
