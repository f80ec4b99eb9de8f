#include "app/commands.h"

namespace kanon::app {

void add_tree_command(CLI::App&) {}

}  // namespace kanon::app
