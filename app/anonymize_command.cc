#include "app/commands.h"

namespace kanon::app {

void add_anonymize_command(CLI::App&) {}

}  // namespace kanon::app
