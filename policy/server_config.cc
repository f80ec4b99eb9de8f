#include "policy/server_config.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <charconv>
#include <filesystem>
#include <set>

#include "policy/yaml_reader.h"

namespace kanon::policy {
namespace {

class Reader : public YamlReader {
 public:
  using YamlReader::YamlReader;

  Endpoint endpoint(const YAML::Node& node, const std::string& key, Endpoint def,
                    const std::set<std::string>& extra = {}) const {
    std::set<std::string> allowed = extra;
    allowed.insert({"host", "port"});
    expect_map(node, key, allowed);
    if (node["host"]) def.host = string(node["host"], key + ".host");
    if (node["port"])
      def.port = static_cast<uint16_t>(integer(node["port"], key + ".port", 1, 65535));
    return def;
  }
};

LogLevel parse_log_level(const Reader& r, const YAML::Node& node) {
  const std::string s = r.string(node, "log_level");
  if (auto level = log_level_from_string(s)) return *level;
  r.fail(node, "log_level", fmt::format("'{}' is not one of debug, info, warning, error", s));
}

}  // namespace

ServerConfig load_server_config(const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    throw ConfigError(fmt::format("{}: cannot open the file", path));
  } catch (const YAML::Exception& e) {
    throw ConfigError(fmt::format("{}:{}: {}", path, e.mark.line + 1, e.msg));
  }
  const Reader r(path);
  ServerConfig cfg;
  cfg.path = path;
  if (root.IsNull()) return cfg;
  r.expect_map(root, "", {"listen", "backend", "limits", "log_level", "threads", "policies"});
  if (root["listen"]) cfg.listen = r.endpoint(root["listen"], "listen", cfg.listen);
  if (const auto backend = root["backend"]) {
    cfg.backend =
        r.endpoint(backend, "backend", cfg.backend, {"user", "password", "dbname", "conninfo"});
    if (backend["user"]) cfg.service.user = r.string(backend["user"], "backend.user");
    if (backend["password"])
      cfg.service.password = r.string(backend["password"], "backend.password");
    if (backend["dbname"]) cfg.service.dbname = r.string(backend["dbname"], "backend.dbname");
    if (backend["conninfo"])
      cfg.service.conninfo = r.string(backend["conninfo"], "backend.conninfo");
  }
  if (const auto policies = root["policies"]) {
    if (!policies.IsSequence()) r.fail(policies, "policies", "expected a list of file paths");
    const auto dir = std::filesystem::path(path).parent_path();
    for (const auto& item : policies) {
      const std::string file = r.string(item, "policies[]");
      if (file.empty()) r.fail(item, "policies[]", "empty path");
      const std::filesystem::path p(file);
      cfg.policies.push_back(p.is_absolute() ? file : (dir / p).lexically_normal().string());
    }
  }
  if (const auto limits = root["limits"]) {
    r.expect_map(limits, "limits", {"max_clients", "max_message_size"});
    if (limits["max_clients"])
      cfg.limits.max_clients =
          static_cast<uint32_t>(r.integer(limits["max_clients"], "limits.max_clients", 1, 100000));
    if (limits["max_message_size"])
      cfg.limits.max_message_size = static_cast<uint32_t>(
          r.integer(limits["max_message_size"], "limits.max_message_size", 1024, 1u << 30));
  }
  if (root["log_level"]) cfg.log_level = parse_log_level(r, root["log_level"]);
  if (root["threads"])
    cfg.threads = static_cast<uint32_t>(r.integer(root["threads"], "threads", 0, 256));
  return cfg;
}

namespace {

// A conninfo value: quoted when it is empty or holds spaces, quotes or
// backslashes (libpq's rules).
std::string conninfo_value(const std::string& v) {
  if (!v.empty() && v.find_first_of(" '\\\t") == std::string::npos) return v;
  std::string out = "'";
  for (char c : v) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

}  // namespace

std::string service_conninfo(const ServerConfig& config) {
  if (!config.service.conninfo.empty()) return config.service.conninfo;
  std::string s = "host=" + conninfo_value(config.backend.host) +
                  " port=" + std::to_string(config.backend.port);
  if (!config.service.user.empty()) s += " user=" + conninfo_value(config.service.user);
  if (!config.service.password.empty()) s += " password=" + conninfo_value(config.service.password);
  if (!config.service.dbname.empty()) s += " dbname=" + conninfo_value(config.service.dbname);
  return s + " application_name=kanon";
}

Endpoint parse_endpoint(const std::string& text, const std::string& what) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size())
    throw ConfigError(fmt::format("{}: expected HOST:PORT, got '{}'", what, text));
  std::string host = text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  const std::string port_text = text.substr(colon + 1);
  unsigned port = 0;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port == 0 || port > 65535)
    throw ConfigError(fmt::format("{}: '{}' is not a port number", what, port_text));
  return Endpoint{host, static_cast<uint16_t>(port)};
}

std::optional<LogLevel> log_level_from_string(std::string_view text) {
  for (auto level : {LogLevel::kDebug, LogLevel::kInfo, LogLevel::kWarning, LogLevel::kError})
    if (text == to_string(level)) return level;
  return std::nullopt;
}

const char* to_string(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarning:
      return "warning";
    case LogLevel::kError:
      return "error";
  }
  return "info";
}

}  // namespace kanon::policy
