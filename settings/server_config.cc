#include "settings/server_config.h"

#include <fmt/format.h>
#include <libpq-fe.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>

#include "base/text.h"
#include "base/yaml_reader.h"

namespace kanon::settings {
namespace {

class Reader : public base::YamlReader {
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

Endpoint parse_endpoint_at(const Reader& r, const YAML::Node& node, const std::string& key) {
  try {
    return parse_endpoint(r.string(node, key), key);
  } catch (const ConfigError& e) {
    r.fail(node, key, e.what());
  }
}

LogLevel parse_log_level(const Reader& r, const YAML::Node& node) {
  const std::string s = r.string(node, "log_level");
  if (auto level = log_level_from_string(s)) return *level;
  r.fail(node, "log_level", fmt::format("'{}' is not one of debug, info, warning, error", s));
}

// An identifier the table sink can use without quoting.
bool plain_identifier(std::string_view s) {
  if (s.empty() || s.size() > 63 ||
      !(std::islower(static_cast<unsigned char>(s[0])) || s[0] == '_'))
    return false;
  return s.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") == std::string_view::npos;
}

template <typename Resolve>
void read_audit(const Reader& r, const YAML::Node& node, const Resolve& resolve,
                AuditConfig& audit) {
  r.expect_map(node, "audit", {"file", "table", "text", "on_failure", "queue_size", "exempt"});
  if (node["exempt"]) audit.exempt = r.boolean(node["exempt"], "audit.exempt");
  if (node["file"]) {
    const std::string file = r.string(node["file"], "audit.file");
    if (file.empty()) r.fail(node["file"], "audit.file", "empty path");
    audit.file = resolve(file);
  }
  if (node["table"]) {
    audit.table = r.string(node["table"], "audit.table");
    const auto dot = audit.table.find('.');
    if (dot == std::string::npos || !plain_identifier(audit.table.substr(0, dot)) ||
        !plain_identifier(audit.table.substr(dot + 1)))
      r.fail(
          node["table"], "audit.table",
          fmt::format("'{}' is not schema.table (lower-case letters, digits and _)", audit.table));
  }
  if (const auto text = node["text"]) {
    const std::string t = r.string(text, "audit.text");
    if (t == "full")
      audit.text = AuditText::kFull;
    else if (t == "none")
      audit.text = AuditText::kNone;
    else
      r.fail(text, "audit.text", fmt::format("'{}' is not one of full, none", t));
  }
  if (const auto mode = node["on_failure"]) {
    const std::string m = r.string(mode, "audit.on_failure");
    if (m == "deny")
      audit.on_failure = AuditOnFailure::kDeny;
    else if (m == "continue")
      audit.on_failure = AuditOnFailure::kContinue;
    else
      r.fail(mode, "audit.on_failure", fmt::format("'{}' is not one of deny, continue", m));
  }
  if (node["queue_size"])
    audit.queue_size =
        static_cast<uint32_t>(r.integer(node["queue_size"], "audit.queue_size", 1, 10000000));
  if (!audit.enabled()) r.fail(node, "audit", "needs file, table or both");
}

// "30s", "500ms", "2m" or 0; at most a day.
std::chrono::milliseconds read_duration(const Reader& r, const YAML::Node& node,
                                        const std::string& key) {
  const std::string text = node.IsScalar() ? node.Scalar() : std::string();
  const auto parsed = base::parse_duration(text);
  if (!parsed)
    r.fail(node, key, fmt::format("'{}' is not a duration such as 30s, 500ms or 2m", text));
  if (*parsed > std::chrono::hours(24)) r.fail(node, key, "must be at most 24h");
  return *parsed;
}

}  // namespace

ServerConfig load_server_config(const std::string& path) {
  const Reader r(path);
  const YAML::Node root = r.load_file("the file");
  ServerConfig cfg;
  cfg.path = path;
  if (root.IsNull()) return cfg;
  r.expect_map(root, "",
               {"listen", "backend", "limits", "log_level", "threads", "policies", "tls", "admin",
                "metrics", "restricted_settings", "databases", "shutdown_lame_duck",
                "shutdown_grace", "audit", "snapshots", "web"});
  const auto dir = std::filesystem::path(path).parent_path();
  const auto resolve = [&](const std::string& file) {
    const std::filesystem::path p(file);
    return p.is_absolute() ? file : (dir / p).lexically_normal().string();
  };
  if (root["listen"]) cfg.listen = r.endpoint(root["listen"], "listen", cfg.listen);
  if (const auto backend = root["backend"]) {
    cfg.backend = r.endpoint(backend, "backend", cfg.backend,
                             {"user", "password", "dbname", "conninfo", "sslmode", "sslrootcert"});
    if (const auto mode = backend["sslmode"]) {
      const std::string text = r.string(mode, "backend.sslmode");
      const auto parsed = ssl_mode_from_string(text);
      if (!parsed)
        r.fail(mode, "backend.sslmode",
               fmt::format("'{}' is not one of disable, prefer, require, verify-ca, verify-full",
                           text));
      cfg.backend_tls.mode = *parsed;
    }
    if (backend["sslrootcert"])
      cfg.backend_tls.rootcert = resolve(r.string(backend["sslrootcert"], "backend.sslrootcert"));
    if ((cfg.backend_tls.mode == SslMode::kVerifyCa ||
         cfg.backend_tls.mode == SslMode::kVerifyFull) &&
        cfg.backend_tls.rootcert.empty())
      r.fail(backend, "backend.sslrootcert",
             fmt::format("sslmode {} needs sslrootcert (the CA that signed the server's "
                         "certificate)",
                         to_string(cfg.backend_tls.mode)));
    if (backend["user"]) cfg.service.user = r.string(backend["user"], "backend.user");
    if (backend["password"])
      cfg.service.password = r.string(backend["password"], "backend.password");
    if (backend["dbname"]) cfg.service.dbname = r.string(backend["dbname"], "backend.dbname");
    if (backend["conninfo"])
      cfg.service.conninfo = r.string(backend["conninfo"], "backend.conninfo");
  }
  if (const auto policies = root["policies"]) {
    if (!policies.IsSequence()) r.fail(policies, "policies", "expected a list of file paths");
    for (const auto& item : policies) {
      const std::string file = r.string(item, "policies[]");
      if (file.empty()) r.fail(item, "policies[]", "empty path");
      cfg.policies.push_back(resolve(file));
    }
  }
  if (const auto dbs = root["databases"]) {
    if (!dbs.IsSequence()) r.fail(dbs, "databases", "expected a list of database names");
    for (size_t i = 0; i < dbs.size(); ++i) {
      const std::string key = fmt::format("databases[{}]", i);
      const std::string name = r.string(dbs[i], key);
      if (name.empty()) r.fail(dbs[i], key, "empty database name");
      cfg.databases.push_back(name);
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
  const auto read_tls = [&](const YAML::Node& tls, const std::string& name) {
    r.expect_map(tls, name, {"cert", "key"});
    if (!tls["cert"] || !tls["key"]) r.fail(tls, name, "needs both cert and key");
    ClientTls out{resolve(r.string(tls["cert"], name + ".cert")),
                  resolve(r.string(tls["key"], name + ".key"))};
    for (const auto& [file, key] : {std::pair{out.cert, "cert"}, std::pair{out.key, "key"}})
      if (!std::filesystem::exists(file))
        r.fail(tls[key], name + "." + key, fmt::format("no such file: {}", file));
    return out;
  };
  if (const auto tls = root["tls"]) cfg.tls = read_tls(tls, "tls");
  if (const auto web = root["web"]) {
    r.expect_map(web, "web", {"listen", "tls", "session_timeout"});
    if (!web["listen"]) r.fail(web, "web", "needs listen (\"HOST:PORT\")");
    cfg.web.listen = parse_endpoint_at(r, web["listen"], "web.listen");
    cfg.web.tls = web["tls"] ? read_tls(web["tls"], "web.tls") : cfg.tls;
    if (web["session_timeout"]) {
      cfg.web.session_timeout = read_duration(r, web["session_timeout"], "web.session_timeout");
      if (cfg.web.session_timeout < std::chrono::minutes(1))
        r.fail(web["session_timeout"], "web.session_timeout", "must be at least 1m");
    }
  }
  if (const auto admin = root["admin"]) {
    r.expect_map(admin, "admin", {"database", "users", "auth_database"});
    if (admin["database"]) cfg.admin.database = r.string(admin["database"], "admin.database");
    if (admin["auth_database"])
      cfg.admin.auth_database = r.string(admin["auth_database"], "admin.auth_database");
    if (const auto users = admin["users"]) {
      if (!users.IsSequence()) r.fail(users, "admin.users", "expected a list of user names");
      for (const auto& u : users) cfg.admin.users.push_back(r.string(u, "admin.users[]"));
    }
  }
  if (const auto metrics = root["metrics"]) {
    r.expect_map(metrics, "metrics", {"listen"});
    if (metrics["listen"]) cfg.metrics = parse_endpoint_at(r, metrics["listen"], "metrics.listen");
  }
  if (root["shutdown_lame_duck"])
    cfg.shutdown_lame_duck = read_duration(r, root["shutdown_lame_duck"], "shutdown_lame_duck");
  if (root["shutdown_grace"])
    cfg.shutdown_grace = read_duration(r, root["shutdown_grace"], "shutdown_grace");
  if (const auto audit = root["audit"]) read_audit(r, audit, resolve, cfg.audit);
  if (const auto shared = root["snapshots"]) {
    r.expect_map(shared, "snapshots", {"shared", "replica", "keep"});
    if (shared["shared"]) cfg.snapshots.enabled = r.boolean(shared["shared"], "snapshots.shared");
    if (shared["replica"]) {
      cfg.snapshots.replica = r.string(shared["replica"], "snapshots.replica");
      if (cfg.snapshots.replica.empty() || cfg.snapshots.replica.size() > 40)
        r.fail(shared["replica"], "snapshots.replica", "must be 1 to 40 characters");
    }
    if (shared["keep"])
      cfg.snapshots.keep =
          static_cast<uint32_t>(r.integer(shared["keep"], "snapshots.keep", 1, 1000));
  }
  if (cfg.snapshots.replica.empty()) {
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') std::strcpy(host, "kanon");
    cfg.snapshots.replica = fmt::format("{}:{}", host, cfg.listen.port);
  }
  if (const auto settings = root["restricted_settings"]) {
    if (!settings.IsMap())
      r.fail(settings, "restricted_settings", "expected a mapping of setting names to values");
    cfg.restricted_settings.clear();
    for (const auto& kv : settings) {
      const std::string name = kv.first.as<std::string>();
      if (name.empty() ||
          name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_.") != std::string::npos)
        r.fail(kv.first, "restricted_settings", fmt::format("'{}' is not a setting name", name));
      cfg.restricted_settings.emplace_back(name,
                                           r.string(kv.second, "restricted_settings." + name));
    }
  }
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

}  // namespace kanon::settings
