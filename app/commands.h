// Subcommands of the `kanon` executable. Each add_*_command registers its
// subcommand, flags and callback on the top-level app.
#pragma once

#include <CLI/CLI.hpp>

namespace kanon::app {

void add_proxy_command(CLI::App& app);
void add_anonymize_command(CLI::App& app);
void add_tree_command(CLI::App& app);
void add_verify_command(CLI::App& app);
void add_export_command(CLI::App& app);
void add_check_command(CLI::App& app);

}  // namespace kanon::app
