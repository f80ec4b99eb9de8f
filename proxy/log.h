// A small thread-safe logger writing one line per event to stderr:
//   2026-11-22T03:25:46.123Z info  listening on 127.0.0.1:6432
// The level is process-wide and set once at start-up. Control characters in
// a message (bytes below 0x20 and 0x7F) are written as \n, \r, \t or \xHH,
// so text a client sent can neither forge a line nor steer a terminal.
#pragma once

#include <fmt/format.h>

#include <string_view>

#include "settings/server_config.h"

namespace kanon::proxy {

using settings::LogLevel;

void set_log_level(LogLevel level);
bool log_enabled(LogLevel level);
void log_line(LogLevel level, std::string_view message);

template <class... Args>
void log(LogLevel level, fmt::format_string<Args...> format, Args&&... args) {
  if (log_enabled(level)) log_line(level, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace kanon::proxy
