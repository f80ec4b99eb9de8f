#include "settings/config_keys.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>
#include <utility>

#include "base/text.h"

namespace kanon::settings {
namespace {

using Input = KeyInput;

std::string text(const Input& in) {
  return in.reader.string(in.node, in.key);
}

uint32_t integer(const Input& in, uint64_t lo, uint64_t hi) {
  return static_cast<uint32_t>(in.reader.integer(in.node, in.key, lo, hi));
}

Endpoint endpoint(const Input& in) {
  try {
    return parse_endpoint(text(in), in.key);
  } catch (const ConfigError& e) {
    in.reader.fail(in.node, in.key, e.what());
  }
}

// "30s", "500ms", "2m" or 0; at most a day.
std::chrono::milliseconds duration(const Input& in) {
  const std::string t = in.node.IsScalar() ? in.node.Scalar() : std::string();
  const auto parsed = base::parse_duration(t);
  if (!parsed)
    in.reader.fail(in.node, in.key,
                   fmt::format("'{}' is not a duration such as 30s, 500ms or 2m", t));
  if (*parsed > std::chrono::hours(24)) in.reader.fail(in.node, in.key, "must be at most 24h");
  return *parsed;
}

// A path relative to the configuration file's directory.
std::string path(const Input& in) {
  const std::string file = text(in);
  if (file.empty()) in.reader.fail(in.node, in.key, "empty path");
  return in.resolve(file);
}

// A file that must exist (TLS certificates and keys).
std::string existing_file(const Input& in) {
  const std::string file = in.resolve(text(in));
  if (!std::filesystem::exists(file))
    in.reader.fail(in.node, in.key, fmt::format("no such file: {}", file));
  return file;
}

// A list of names: `list` in the error for a non-list, `item` for an empty
// element (items named key[i]).
std::vector<std::string> names(const Input& in, const char* list, const char* item) {
  if (!in.node.IsSequence())
    in.reader.fail(in.node, in.key, fmt::format("expected a list of {}", list));
  std::vector<std::string> out;
  for (size_t i = 0; i < in.node.size(); ++i) {
    const std::string key = fmt::format("{}[{}]", in.key, i);
    out.push_back(in.reader.string(in.node[i], key));
    if (out.back().empty()) in.reader.fail(in.node[i], key, fmt::format("empty {}", item));
  }
  return out;
}

// One of `choices` (name, value); the error lists them.
template <typename T>
T choice(const Input& in, std::initializer_list<std::pair<std::string_view, T>> choices) {
  const std::string t = text(in);
  std::string list;
  for (const auto& [name, value] : choices) {
    if (t == name) return value;
    list += (list.empty() ? "" : ", ") + std::string(name);
  }
  in.reader.fail(in.node, in.key, fmt::format("'{}' is not one of {}", t, list));
}

// One of the enum's `values`, named as to_string() names them (the names
// the configuration is printed with).
template <typename T>
T choice(const Input& in, std::initializer_list<T> values) {
  const std::string t = text(in);
  std::string list;
  for (const T value : values) {
    if (t == to_string(value)) return value;
    list += (list.empty() ? "" : ", ") + std::string(to_string(value));
  }
  in.reader.fail(in.node, in.key, fmt::format("'{}' is not one of {}", t, list));
}

// An identifier the audit table sink can use without quoting.
bool plain_identifier(std::string_view s) {
  if (s.empty() || s.size() > 63 ||
      !(std::islower(static_cast<unsigned char>(s[0])) || s[0] == '_'))
    return false;
  return s.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") == std::string_view::npos;
}

void read_restricted_settings(const Input& in, ServerConfig& c) {
  if (!in.node.IsMap())
    in.reader.fail(in.node, in.key, "expected a mapping of setting names to values");
  c.restricted_settings.clear();
  for (const auto& kv : in.node) {
    const std::string name = kv.first.as<std::string>();
    if (name.empty() ||
        name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_.") != std::string::npos)
      in.reader.fail(kv.first, in.key, fmt::format("'{}' is not a setting name", name));
    c.restricted_settings.emplace_back(name, in.reader.string(kv.second, in.key + "." + name));
  }
}

void read_audit_table(const Input& in, ServerConfig& c) {
  c.audit.table = text(in);
  const auto dot = c.audit.table.find('.');
  if (dot == std::string::npos || !plain_identifier(c.audit.table.substr(0, dot)) ||
      !plain_identifier(c.audit.table.substr(dot + 1)))
    in.reader.fail(
        in.node, in.key,
        fmt::format("'{}' is not schema.table (lower-case letters, digits and _)", c.audit.table));
}

void read_replica(const Input& in, ServerConfig& c) {
  c.snapshots.replica = text(in);
  if (c.snapshots.replica.empty() || c.snapshots.replica.size() > 40)
    in.reader.fail(in.node, in.key, "must be 1 to 40 characters");
}

void read_session_timeout(const Input& in, ServerConfig& c) {
  c.web.session_timeout = duration(in);
  if (c.web.session_timeout < std::chrono::minutes(1))
    in.reader.fail(in.node, in.key, "must be at least 1m");
}

using C = ServerConfig;

// clang-format off
const std::vector<ConfigKey> kKeys = {
  {"listen.host", "where clients connect: address", "127.0.0.1",
   [](const Input& in, C& c) { c.listen.host = text(in); }},
  {"listen.port", "where clients connect: port", "6432",
   [](const Input& in, C& c) { c.listen.port = static_cast<uint16_t>(integer(in, 1, 65535)); }},
  {"backend.host",
   "the PostgreSQL server: an IP address (used as it is), or a host name (resolved for every "
   "session and cancel request)",
   "127.0.0.1",
   [](const Input& in, C& c) { c.backend.host = text(in); }},
  {"backend.port", "the PostgreSQL server: port", "5432",
   [](const Input& in, C& c) { c.backend.port = static_cast<uint16_t>(integer(in, 1, 65535)); }},
  {"backend.user", "kanon's service account (loads tables, reads roles, VERIFY)", "libpq's (PGUSER)",
   [](const Input& in, C& c) { c.service.user = text(in); }},
  {"backend.password", "the service account's password", "libpq's (PGPASSWORD, ~/.pgpass)",
   [](const Input& in, C& c) { c.service.password = text(in); }},
  {"backend.dbname", "kanon's own database, the one the service account lands in", "libpq's (PGDATABASE)",
   [](const Input& in, C& c) { c.service.dbname = text(in); }},
  {"backend.conninfo", "a libpq connection string for the service account, replacing the keys above", "none",
   [](const Input& in, C& c) { c.service.conninfo = text(in); }},
  {"backend.sslmode", "TLS toward the backend: disable, prefer, require, verify-ca, verify-full", "prefer",
   [](const Input& in, C& c) {
     c.backend_tls.mode = choice(in, {SslMode::kDisable, SslMode::kPrefer, SslMode::kRequire,
                                      SslMode::kVerifyCa, SslMode::kVerifyFull});
   }},
  {"backend.sslrootcert", "the CA that signed the backend's certificate (verify-ca, verify-full)", "none",
   [](const Input& in, C& c) { c.backend_tls.rootcert = in.resolve(text(in)); }},
  {"tls.cert", "TLS toward clients: certificate chain (PEM); both or neither; files must exist", "off",
   [](const Input& in, C& c) { c.tls.cert = existing_file(in); }},
  {"tls.key", "TLS toward clients: private key (PEM)", "off",
   [](const Input& in, C& c) { c.tls.key = existing_file(in); }},
  {"admin.database", "the virtual database of the admin console", "kanon",
   [](const Input& in, C& c) { c.admin.database = text(in); }},
  {"admin.users", "logins that get the console (their password checked by PostgreSQL)", "none",
   [](const Input& in, C& c) { c.admin.users = names(in, "user names", "user name"); }},
  {"admin.auth_database", "the database admin logins are checked against", "postgres",
   [](const Input& in, C& c) { c.admin.auth_database = text(in); }},
  {"metrics.listen", "\"HOST:PORT\" of the Prometheus endpoint (GET /metrics, /healthz, /readyz)", "off",
   [](const Input& in, C& c) { c.metrics = endpoint(in); }},
  {"web.listen", "\"HOST:PORT\" of the web console (docs/operations.md#web-console); needed when web: is set", "off",
   [](const Input& in, C& c) { c.web.listen = endpoint(in); }},
  {"web.tls.cert", "the web console's own certificate (else tls:'s)", "tls.cert",
   [](const Input& in, C& c) { c.web.tls.cert = existing_file(in); }},
  {"web.tls.key", "the web console's own private key", "tls.key",
   [](const Input& in, C& c) { c.web.tls.key = existing_file(in); }},
  {"web.session_timeout", "idle time after which a web login ends (at least 1m)", "30m",
   read_session_timeout},
  {"restricted_settings", "mapping of setting names to values every restricted session starts with", "{jit: \"off\"}",
   read_restricted_settings},
  {"limits.max_clients", "clients served at once (53300 beyond)", "1000",
   [](const Input& in, C& c) { c.limits.max_clients = integer(in, 1, 100000); }},
  {"limits.max_message_size", "largest message in bytes (08P01 beyond)", "64 MiB",
   [](const Input& in, C& c) { c.limits.max_message_size = integer(in, 1024, 1u << 30); }},
  {"log_level", "debug, info, warning or error", "info",
   [](const Input& in, C& c) {
     c.log_level = choice(in, {LogLevel::kDebug, LogLevel::kInfo, LogLevel::kWarning, LogLevel::kError});
   }},
  {"threads", "I/O threads, 0 = one per core (how sessions are placed on them: io_placement)", "0",
   [](const Input& in, C& c) { c.threads = integer(in, 0, 256); }},
  {"io_placement", "spread: new sessions take the I/O threads in turn; pack: a new session goes to the first I/O thread that used less than half a core over the last quarter second (less CPU per message on a small host shared with PostgreSQL, less throughput: bench/README.md)", "spread",
   [](const Input& in, C& c) { c.pack_sessions = choice<bool>(in, {{"pack", true}, {"spread", false}}); }},
  {"serial_masks_at", "statements running through kanon at once from which a statement that evaluates the function's masks runs without parallel workers; 0 = one per core of this host (set the database server's cores when kanon runs elsewhere; above limits.max_clients: never)", "0",
   [](const Input& in, C& c) { c.serial_masks_at = integer(in, 0, 1000000); }},
  {"shutdown_lame_duck", "how long SIGTERM / SHUTDOWN keep serving new connections while /readyz answers 503, before the drain (above the load balancer's check interval times its failure count)", "0",
   [](const Input& in, C& c) { c.shutdown_lame_duck = duration(in); }},
  {"shutdown_grace", "how long a drain lets transactions finish (\"30s\", \"500ms\", \"2m\"; at most 24h; 0 ends every session at once)", "30s",
   [](const Input& in, C& c) { c.shutdown_grace = duration(in); }},
  {"policies", "policy files, relative to this file (docs/policy.md)", "none",
   [](const Input& in, C& c) {
     if (!in.node.IsSequence()) in.reader.fail(in.node, in.key, "expected a list of file paths");
     for (const auto& item : in.node) c.policies.push_back(path({in.reader, item, "policies[]", in.resolve}));
   }},
  {"databases", "other databases restricted sessions may use (nothing there is protected)", "none",
   [](const Input& in, C& c) { c.databases = names(in, "database names", "database name"); }},
  {"audit.file", "the audit trail's JSON lines file (docs/proxy.md#audit-trail)", "off",
   [](const Input& in, C& c) { c.audit.file = path(in); }},
  {"audit.table", "the audit trail's table, schema.table in the protected database", "off",
   read_audit_table},
  {"audit.text", "full or none: whether records carry the statement's text", "full",
   [](const Input& in, C& c) { c.audit.text = choice<AuditText>(in, {{"full", AuditText::kFull}, {"none", AuditText::kNone}}); }},
  {"audit.on_failure", "deny or continue restricted statements while no sink takes records", "deny",
   [](const Input& in, C& c) {
     c.audit.on_failure = choice<AuditOnFailure>(in, {{"deny", AuditOnFailure::kDeny}, {"continue", AuditOnFailure::kContinue}});
   }},
  {"audit.queue_size", "records waiting for the writer", "10000",
   [](const Input& in, C& c) { c.audit.queue_size = integer(in, 1, 10000000); }},
  {"audit.exempt", "record exempt sessions' statements too", "false",
   [](const Input& in, C& c) { c.audit.exempt = in.reader.boolean(in.node, in.key); }},
  {"snapshots.shared", "replicas on one database serve the snapshots one builder stores in schema kanon; a restart serves them at once (docs/operations.md)", "true",
   [](const Input& in, C& c) { c.snapshots.enabled = in.reader.boolean(in.node, in.key); }},
  {"snapshots.replica", "this process's name among the replicas (1 to 40 characters)", "<host name>:<listen port>",
   read_replica},
  {"snapshots.keep", "stored snapshot versions per table", "10",
   [](const Input& in, C& c) { c.snapshots.keep = integer(in, 1, 1000); }},
};
// clang-format on

}  // namespace

const std::vector<ConfigKey>& config_keys() {
  return kKeys;
}

std::vector<std::string> keys_of_section(std::string_view section) {
  std::vector<std::string> out;
  for (const auto& k : kKeys) {
    std::string_view rest = k.path;
    if (!section.empty()) {
      if (!rest.starts_with(section) || rest.size() <= section.size() ||
          rest[section.size()] != '.')
        continue;
      rest.remove_prefix(section.size() + 1);
    }
    const std::string next(rest.substr(0, rest.find('.')));
    if (std::find(out.begin(), out.end(), next) == out.end()) out.push_back(next);
  }
  return out;
}

std::string config_keys_markdown() {
  std::string out = "| key | meaning | default |\n|---|---|---|\n";
  for (const auto& k : kKeys)
    out += fmt::format("| `{}` | {} | {} |\n", k.path, k.meaning, k.default_value);
  return out;
}

void read_config_keys(const base::YamlReader& reader, const YAML::Node& root,
                      const std::function<std::string(const std::string&)>& resolve,
                      ServerConfig& config) {
  const auto allowed = [](std::string_view section) {
    const auto keys = keys_of_section(section);
    return std::set<std::string>(keys.begin(), keys.end());
  };
  reader.expect_map(root, "", allowed(""));
  std::vector<std::string> checked;
  for (const auto& k : kKeys) {
    // Walk down the key's sections; an absent one means the key is absent.
    YAML::Node node = root;
    std::string section;
    bool present = true;
    size_t start = 0;
    for (size_t dot; (dot = k.path.find('.', start)) != std::string_view::npos; start = dot + 1) {
      section = std::string(k.path.substr(0, dot));
      const YAML::Node child = std::as_const(node)[std::string(k.path.substr(start, dot - start))];
      if (!child) {
        present = false;
        break;
      }
      node.reset(child);
      if (std::find(checked.begin(), checked.end(), section) == checked.end()) {
        reader.expect_map(node, section, allowed(section));
        checked.push_back(section);
      }
    }
    if (!present) continue;
    const YAML::Node value = std::as_const(node)[std::string(k.path.substr(start))];
    if (!value) continue;
    const std::string key(k.path);
    k.read(KeyInput{reader, value, key, resolve}, config);
  }
}

}  // namespace kanon::settings
