// PgSandbox: a throwaway PostgreSQL 15 for one test process, started by
// scripts/pg-sandbox.sh with the demo data. The script's watchdog removes it
// when this process ends, however it ends; normal exit removes it at once.
#pragma once

#include <cstdint>
#include <string>

namespace kanon::testing {

// Environment set by ctest (see kanon_add_test).
std::string source_dir();
std::string binary_dir();

class PgSandbox {
 public:
  // The process-wide sandbox, started on first use. Throws when PostgreSQL
  // cannot be started.
  static PgSandbox& shared();
  ~PgSandbox();

  const std::string& host() const { return host_; }
  uint16_t port() const { return port_; }
  const std::string& dir() const { return dir_; }
  // A libpq connection string for `user` straight to PostgreSQL.
  std::string conninfo(const std::string& user = "postgres", const std::string& dbname = "postgres",
                       const std::string& password = "") const;
  // Runs SQL as the superuser; throws with psql's error on failure.
  std::string psql(const std::string& sql, const std::string& dbname = "postgres") const;
  // Installs kanon_mask.released (maskfn/install.sql) in `dbname` from the
  // build's kanon_mask.so, copied into the sandbox's directory; throws when
  // it was not built (no postgresql-server-dev-15) or psql fails.
  void install_mask_function(const std::string& dbname = "postgres") const;

 private:
  PgSandbox();
  std::string dir_;
  std::string host_ = "127.0.0.1";
  uint16_t port_ = 0;
};

// A TCP port on 127.0.0.1 that was free a moment ago.
uint16_t free_port();

// libpq conninfo for host:port with the given credentials.
std::string make_conninfo(const std::string& host, uint16_t port, const std::string& user,
                          const std::string& dbname, const std::string& password = "");

}  // namespace kanon::testing
