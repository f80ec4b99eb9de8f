#include "settings/server_config.h"

#include <fmt/format.h>
#include <libpq-fe.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <thread>

#include "base/yaml_reader.h"
#include "settings/config_keys.h"

namespace kanon::settings {

ServerConfig load_server_config(const std::string& path) {
  const base::YamlReader r(path);
  const YAML::Node root = r.load_file("the file");
  ServerConfig cfg;
  cfg.path = path;
  const auto dir = std::filesystem::path(path).parent_path();
  const std::function<std::string(const std::string&)> resolve = [&](const std::string& file) {
    const std::filesystem::path p(file);
    return p.is_absolute() ? file : (dir / p).lexically_normal().string();
  };
  if (!root.IsNull()) read_config_keys(r, root, resolve, cfg);
  // The checks across keys.
  if (const auto backend = root.IsMap() ? root["backend"] : YAML::Node();
      backend &&
      (cfg.backend_tls.mode == SslMode::kVerifyCa ||
       cfg.backend_tls.mode == SslMode::kVerifyFull) &&
      cfg.backend_tls.rootcert.empty())
    r.fail(backend, "backend.sslrootcert",
           fmt::format("sslmode {} needs sslrootcert (the CA that signed the server's certificate)",
                       to_string(cfg.backend_tls.mode)));
  const auto both_or_neither = [&](const YAML::Node& tls, const std::string& key,
                                   const ClientTls& t) {
    if (tls && (t.cert.empty() || t.key.empty())) r.fail(tls, key, "needs both cert and key");
  };
  if (root.IsMap()) {
    both_or_neither(root["tls"], "tls", cfg.tls);
    if (const auto web = root["web"]) {
      if (!web["listen"]) r.fail(web, "web", "needs listen (\"HOST:PORT\")");
      if (web["tls"])
        both_or_neither(web["tls"], "web.tls", cfg.web.tls);
      else
        cfg.web.tls = cfg.tls;
    }
    if (const auto audit = root["audit"]; audit && !cfg.audit.enabled())
      r.fail(audit, "audit", "needs file, table or both");
  }
  if (cfg.snapshots.replica.empty()) {
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') std::strcpy(host, "kanon");
    cfg.snapshots.replica = fmt::format("{}:{}", host, cfg.listen.port);
    cfg.default_replica = true;
  }
  return cfg;
}

void apply_command_line(ServerConfig& config) {
  const auto& c = config.command_line;
  if (c.listen) {
    if (config.default_replica) {
      const size_t colon = config.snapshots.replica.rfind(':');
      config.snapshots.replica =
          fmt::format("{}:{}", config.snapshots.replica.substr(0, colon), c.listen->port);
    }
    config.listen = *c.listen;
  }
  if (c.backend) config.backend = *c.backend;
  if (c.log_level) config.log_level = *c.log_level;
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

ServerConfig load_server_config(const std::string& path, const std::string& conninfo) {
  ServerConfig config = load_server_config(path);
  if (!conninfo.empty()) config.service.conninfo = conninfo;
  return config;
}

std::string default_database(const ServerConfig& config) {
  // A conninfo replaces the other service fields (ServiceAccount).
  if (config.service.conninfo.empty() && !config.service.dbname.empty())
    return config.service.dbname;
  if (!config.service.conninfo.empty()) {
    char* error = nullptr;
    PQconninfoOption* options = PQconninfoParse(config.service.conninfo.c_str(), &error);
    PQfreemem(error);
    std::string dbname;
    for (auto* o = options; o && o->keyword; ++o)
      if (std::string_view(o->keyword) == "dbname" && o->val) dbname = o->val;
    PQconninfoFree(options);
    if (!dbname.empty()) return dbname;
  }
  const char* env = std::getenv("PGDATABASE");
  return env ? env : "";
}

std::string service_conninfo(const ServerConfig& config, const std::string& database) {
  const std::string base = service_conninfo(config);
  if (database.empty() || database == default_database(config)) return base;
  // A URI takes the database as a parameter; in a keyword string the last
  // value of a keyword wins.
  if (base.starts_with("postgresql://") || base.starts_with("postgres://")) {
    std::string encoded;
    for (unsigned char c : database) {
      if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~')
        encoded += static_cast<char>(c);
      else
        encoded += fmt::format("%{:02X}", c);
    }
    return base + (base.find('?') == std::string::npos ? "?" : "&") + "dbname=" + encoded;
  }
  return base + " dbname=" + conninfo_value(database);
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

const char* to_string(SslMode mode) {
  switch (mode) {
    case SslMode::kDisable:
      return "disable";
    case SslMode::kPrefer:
      return "prefer";
    case SslMode::kRequire:
      return "require";
    case SslMode::kVerifyCa:
      return "verify-ca";
    case SslMode::kVerifyFull:
      return "verify-full";
  }
  return "prefer";
}

std::optional<SslMode> ssl_mode_from_string(std::string_view text) {
  for (auto mode : {SslMode::kDisable, SslMode::kPrefer, SslMode::kRequire, SslMode::kVerifyCa,
                    SslMode::kVerifyFull})
    if (text == to_string(mode)) return mode;
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

uint32_t or_one_per_core(uint32_t value) {
  static const uint32_t kCores = std::max(1u, std::thread::hardware_concurrency());
  return value != 0 ? value : kCores;
}

}  // namespace kanon::settings
