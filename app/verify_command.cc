#include "app/commands.h"

namespace kanon::app {

void add_verify_command(CLI::App&) {}

}  // namespace kanon::app
