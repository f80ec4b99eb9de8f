#include "web/password_check.h"

#include <libpq-fe.h>

#include <algorithm>
#include <memory>
#include <pqxx/pqxx>
#include <vector>

namespace kanon::web {

LoginCheck check_login(const settings::ServerConfig& config, const std::string& user,
                       const std::string& password) {
  const auto& admins = config.admin.users;
  if (std::find(admins.begin(), admins.end(), user) == admins.end())
    return {false, "not one of admin.users"};
  if (password.empty()) return {false, "empty password"};
  const std::string port = std::to_string(config.backend.port);
  std::vector<const char*> keys{"host",     "port",
                                "dbname",   "user",
                                "password", "connect_timeout",
                                "sslmode",  "application_name"};
  std::vector<const char*> values{config.backend.host.c_str(),
                                  port.c_str(),
                                  config.admin.auth_database.c_str(),
                                  user.c_str(),
                                  password.c_str(),
                                  "10",
                                  settings::to_string(config.backend_tls.mode),
                                  "kanon web console login"};
  if (!config.backend_tls.rootcert.empty()) {
    keys.push_back("sslrootcert");
    values.push_back(config.backend_tls.rootcert.c_str());
  }
  keys.push_back(nullptr);
  values.push_back(nullptr);
  const std::unique_ptr<PGconn, decltype(&PQfinish)> conn(
      PQconnectdbParams(keys.data(), values.data(), 0), &PQfinish);
  if (conn && PQstatus(conn.get()) == CONNECTION_OK) {
    // A login that needed no password (trust in pg_hba.conf) proves nothing
    // about the one typed: refuse it, so the web console never opens for a
    // wrong password.
    if (!PQconnectionUsedPassword(conn.get()))
      return {false,
              "the backend accepted the login without asking for a password (trust in "
              "pg_hba.conf); the web console needs password authentication"};
    return {true, ""};
  }
  std::string reason = conn ? PQerrorMessage(conn.get()) : "out of memory";
  while (!reason.empty() && (reason.back() == '\n' || reason.back() == ' ')) reason.pop_back();
  return {false, reason};
}

std::optional<std::string> login_state(const settings::ServerConfig& config,
                                       const std::string& user) {
  pqxx::connection conn(settings::service_conninfo(config));
  pqxx::work tx(conn);
  const auto row = tx.exec_params(
      "SELECT r.oid::text || '|' || coalesce(r.rolvaliduntil::text, ''), r.rolcanlogin AND "
      "coalesce(r.rolvaliduntil > pg_catalog.now(), true), "
      "pg_catalog.has_table_privilege('pg_catalog.pg_authid', 'SELECT') "
      "FROM pg_catalog.pg_roles r WHERE r.rolname = $1",
      user);
  if (row.empty() || !row[0][1].as<bool>()) return std::nullopt;
  std::string state = row[0][0].as<std::string>();
  if (row[0][2].as<bool>()) {
    const auto hash = tx.exec_params1(
        "SELECT pg_catalog.md5(coalesce(rolpassword, '')) FROM pg_catalog.pg_authid WHERE "
        "rolname = $1",
        user);
    state.push_back('|');
    state.append(hash[0].c_str());
  }
  return state;
}

}  // namespace kanon::web
