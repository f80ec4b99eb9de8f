// ServerConfig: the proxy's settings, read from config/kanon.yaml.
//
// Loading validates every key: an unknown key, a wrong type or a value out of
// range throws ConfigError whose message names the file, the line and the
// key, e.g. "config/kanon.yaml:7: limits.max_clients: expected an integer".
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/config_error.h"
#include "settings/sharing_options.h"

namespace kanon::settings {

using base::ConfigError;

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

// kanon's own service account on the backend, used to load tables and build
// policies (never a client's credentials). Empty fields fall back to libpq's
// defaults (PGUSER, PGPASSWORD, PGDATABASE, ~/.pgpass); a non-empty
// `conninfo` replaces host, port and the fields below entirely.
struct ServiceAccount {
  std::string user;
  std::string password;
  std::string dbname;
  std::string conninfo;
};

// TLS toward clients: an SSLRequest is answered 'S' when both are set.
struct ClientTls {
  std::string cert;  // PEM certificate chain (resolved path)
  std::string key;   // PEM private key (resolved path)
  bool enabled() const { return !cert.empty(); }
};

// TLS toward the backend, with libpq's sslmode meanings.
enum class SslMode { kDisable, kPrefer, kRequire, kVerifyCa, kVerifyFull };

struct BackendTls {
  SslMode mode = SslMode::kPrefer;
  std::string rootcert;  // CA file for verify-ca/verify-full (resolved path)
};

// The admin console: clients that connect to the virtual database
// `database` as one of `users` get the console. Their password is checked
// by the backend (the login is relayed to `auth_database`).
struct AdminConfig {
  std::string database = "kanon";
  std::vector<std::string> users;
  std::string auth_database = "postgres";
};

// The audit trail of restricted statements (audit:). Off unless a sink is
// set; see docs/proxy.md#audit-trail.
enum class AuditText { kFull, kNone };
enum class AuditOnFailure { kDeny, kContinue };

struct AuditConfig {
  std::string file;   // JSON lines file (resolved path); empty: no file sink
  std::string table;  // "schema.table" in the protected database; empty: no table sink
  AuditText text = AuditText::kFull;
  // deny: restricted statements are denied (audit-unavailable) while a sink
  // cannot take records or the queue is full; continue: they pass and the
  // records are counted lost.
  AuditOnFailure on_failure = AuditOnFailure::kDeny;
  uint32_t queue_size = 10000;  // records waiting for the writer thread
  // Also record the statements of exempt sessions (never denied for the
  // audit trail: they are relayed untouched).
  bool exempt = false;
  bool enabled() const { return !file.empty() || !table.empty(); }
};

// The web console (web:; docs/operations.md#web-console). Off unless
// web.listen is set.
struct WebConfig {
  Endpoint listen{"127.0.0.1", 0};  // port 0 = off
  // web.tls; when absent, the top-level tls: (clients and the web console
  // then share one certificate). Neither: plain HTTP.
  ClientTls tls;
  // A login session ends after this long without a request
  // (web.session_timeout, a duration: "30m").
  std::chrono::milliseconds session_timeout{std::chrono::minutes(30)};
  bool enabled() const { return listen.port != 0; }
};

struct ServerConfig {
  std::string path;  // the file it was loaded from
  Endpoint listen{"127.0.0.1", 6432};
  Endpoint backend{"127.0.0.1", 5432};
  ServiceAccount service;  // backend.user, backend.password, backend.dbname, backend.conninfo
  // Policy files (policies:), resolved against the config file's directory.
  std::vector<std::string> policies;
  Limits limits;
  LogLevel log_level = LogLevel::kInfo;
  // I/O threads; 0 means one per core.
  uint32_t threads = 0;
  // io_placement: take the I/O threads in turn ("spread", the default), or
  // pack new sessions onto the first one until it is busy (true, "pack").
  // proxy/io_placement.h.
  bool pack_sessions = false;
  // Statements running through kanon at once (the one being decided
  // included) from which a restricted statement that evaluates the
  // function's masks runs without parallel workers (serial_masks_at:);
  // 0 means one per core of this host. rewriter::PlanContext::serial_masks.
  uint32_t serial_masks_at = 0;
  ClientTls tls;
  BackendTls backend_tls;  // backend.sslmode, backend.sslrootcert
  AdminConfig admin;
  // Prometheus text endpoint (metrics.listen); port 0 = off.
  Endpoint metrics{"127.0.0.1", 0};
  WebConfig web;
  // Lame duck (first phase of SIGTERM, SIGINT, console SHUTDOWN): how long
  // kanon goes on accepting and serving new connections while /readyz
  // answers 503, so that a load balancer or orchestrator polling it stops
  // sending clients before the listener closes (shutdown_lame_duck: same
  // syntax as shutdown_grace; 0, the default, drains at once).
  std::chrono::milliseconds shutdown_lame_duck{0};
  // Graceful drain (after the lame duck): how long sessions
  // in a transaction may go on before they are ended anyway
  // (shutdown_grace: "30s", "500ms", "2m"; 0 ends every session at once).
  std::chrono::milliseconds shutdown_grace{std::chrono::seconds(30)};
  // Settings every restricted session starts with (restricted_settings:),
  // sent as start-up options; see docs/policy.md for why. Parallel workers
  // are kept off per statement instead, for statements with inline masks
  // only (rewriter/catalog_guard.h, the serial marker).
  std::vector<std::pair<std::string, std::string>> restricted_settings{{"jit", "off"}};
  // Databases other than the protected one (the service account's) where
  // restricted sessions are served (databases:); they hold nothing kanon
  // protects. A restricted session in any other database is refused.
  std::vector<std::string> databases;
  AuditConfig audit;
  // Shared snapshots (snapshots:): several kanon processes on one database
  // serve the snapshots one of them builds (docs/operations.md). On by
  // default; the replica's name defaults to "<host name>:<listen port>".
  SharingOptions snapshots{.enabled = true};
  bool default_replica = false;  // snapshots.replica is the default name
  // What `kanon proxy --listen / --backend / --log-level` set over the file:
  // applied at start and again at every RELOAD, which reads the file anew.
  struct CommandLine {
    std::optional<Endpoint> listen;
    std::optional<Endpoint> backend;
    std::optional<LogLevel> log_level;
  };
  CommandLine command_line;
};

// Applies config.command_line over what the file says (the default replica
// name follows the listen port).
void apply_command_line(ServerConfig& config);

const char* to_string(SslMode mode);
std::optional<SslMode> ssl_mode_from_string(std::string_view text);

// Throws ConfigError.
ServerConfig load_server_config(const std::string& path);
// The same, with the service account's conninfo replaced by `conninfo` when
// it is not empty (the command line's --conninfo).
ServerConfig load_server_config(const std::string& path, const std::string& conninfo);

// The libpq connection string of kanon's service connection to the backend.
std::string service_conninfo(const ServerConfig& config);
// The database the service account lands in: backend.dbname, else the dbname
// of backend.conninfo, else PGDATABASE; "" when only the server can tell
// (libpq then uses the user name).
std::string default_database(const ServerConfig& config);
// The service account's connection string for another database ("" or the
// default database: the one above).
std::string service_conninfo(const ServerConfig& config, const std::string& database);

// Parses "HOST:PORT" (or "[v6]:PORT"); `what` names the flag in errors.
// Throws ConfigError.
Endpoint parse_endpoint(const std::string& text, const std::string& what);

// `value`, or this host's cores when it is 0: what `threads: 0` and
// `serial_masks_at: 0` mean (the cores are read once).
uint32_t or_one_per_core(uint32_t value);

const char* to_string(LogLevel level);
// "debug", "info", "warning" or "error"; nullopt for anything else.
std::optional<LogLevel> log_level_from_string(std::string_view text);

}  // namespace kanon::settings
