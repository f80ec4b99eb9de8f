// ServerConfig: the proxy's settings, read from config/kanon.yaml.
//
// Loading validates every key: an unknown key, a wrong type or a value out of
// range throws ConfigError whose message names the file, the line and the
// key, e.g. "config/kanon.yaml:7: limits.max_clients: expected an integer".
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace kanon::policy {

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Endpoint {
  std::string host;
  uint16_t port = 0;
};

enum class LogLevel { kDebug, kInfo, kWarning, kError };

struct Limits {
  uint32_t max_clients = 1000;
  // Largest message accepted from a client or the backend, in bytes.
  uint32_t max_message_size = 64u << 20;
};

struct ServerConfig {
  std::string path;  // the file it was loaded from
  Endpoint listen{"127.0.0.1", 6432};
  Endpoint backend{"127.0.0.1", 5432};
  Limits limits;
  LogLevel log_level = LogLevel::kInfo;
  // I/O threads; 0 means one per core.
  uint32_t threads = 0;
};

// Throws ConfigError.
ServerConfig load_server_config(const std::string& path);

// Parses "HOST:PORT" (or "[v6]:PORT"); `what` names the flag in errors.
// Throws ConfigError.
Endpoint parse_endpoint(const std::string& text, const std::string& what);

const char* to_string(LogLevel level);
// "debug", "info", "warning" or "error"; nullopt for anything else.
std::optional<LogLevel> log_level_from_string(std::string_view text);

}  // namespace kanon::policy
