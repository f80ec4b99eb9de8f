// The web console's login: `user` must be one of admin.users, and
// PostgreSQL must accept `password` for it — checked as the SQL console
// checks it, by logging in to admin.auth_database on the backend (so
// pg_hba.conf, password expiry and NOLOGIN apply as they do for psql).
// Blocking (a connection attempt, at most 10 s): run it on the blocking pool.
#pragma once

#include <optional>
#include <string>

#include "settings/server_config.h"

namespace kanon::web {

struct LoginCheck {
  bool accepted = false;
  // Why not, for the log (never shown to the browser, which only learns
  // "wrong user or password").
  std::string reason;
};

LoginCheck check_login(const settings::ServerConfig& config, const std::string& user,
                       const std::string& password);

// What decides whether `user` may log in, as PostgreSQL has it now, read
// over kanon's service connection: the role's OID, its expiry and (when
// the service role may read pg_authid) a digest of its password hash; a
// web session compares it with the one taken at login, so a password
// changed or set again, or a role dropped and made again, ends the session.
// nullopt when the role cannot log in now (missing, NOLOGIN, expired).
// Throws when the database cannot be asked. Blocking.
std::optional<std::string> login_state(const settings::ServerConfig& config,
                                       const std::string& user);

}  // namespace kanon::web
