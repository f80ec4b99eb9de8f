// The web console's login: `user` must be one of admin.users, and
// PostgreSQL must accept `password` for it — checked as the SQL console
// checks it, by logging in to admin.auth_database on the backend (so
// pg_hba.conf, password expiry and NOLOGIN apply as they do for psql).
// Blocking (a connection attempt, at most 10 s): run it on the blocking pool.
#pragma once

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

}  // namespace kanon::web
