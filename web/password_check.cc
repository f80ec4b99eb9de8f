#include "web/password_check.h"

#include <libpq-fe.h>

#include <algorithm>
#include <memory>
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

}  // namespace kanon::web
