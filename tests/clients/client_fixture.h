// ClientFixture: the process-wide PostgreSQL sandbox (demo data plus the
// unprotected table public.open_data) and one `kanon proxy` in front of it
// with the demo policies (config/policies/people.yaml and adult.yaml), the
// expected values of the matrix, and endpoints to reach both.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tests/clients/client_programs.h"
#include "tests/clients/client_steps.h"
#include "tests/support/process.h"

namespace kanon::testing {

class PgSandbox;

struct FixtureOptions {
  // kanon terminates TLS from clients with TlsCerts::shared()'s server
  // certificate.
  bool client_tls = false;
  // PostgreSQL gets the same certificate and kanon connects to it with
  // backend.sslmode verify-full and the test CA. A second kanon, with the
  // same settings but backend.sslmode disable, is started too.
  bool backend_tls = false;
};

class ClientFixture {
 public:
  // Started on first use with the options of the first call.
  static ClientFixture& shared(const FixtureOptions& options = {});
  ~ClientFixture();

  PgSandbox& pg() { return pg_; }
  const std::string& config_path() const { return config_; }
  std::string log() const { return read_file(dir_ + "/kanon.log"); }

  Endpoint kanon(const std::string& user, const std::string& password = "") const;
  // The second kanon (backend_tls only): client TLS as configured,
  // backend.sslmode disable.
  Endpoint kanon_plain_backend(const std::string& user, const std::string& password = "") const;
  Endpoint direct(const std::string& user, const std::string& password = "") const;

  // `kanon tree --config <config> --table <table> --format sql` without the
  // final semicolon.
  const std::string& masked_select(const std::string& table);
  // {people}/{adult} as the clients send them through kanon, as the masked
  // SELECTs of `kanon tree`, and as the raw tables.
  std::map<std::string, std::string> through_kanon() const;
  std::map<std::string, std::string> masked();
  std::map<std::string, std::string> raw() const;

  // Expected results of `steps`, read directly from PostgreSQL as the
  // superuser with {people}/{adult} expanded by `replacement` (remembered:
  // the data does not change during a run).
  Sections expected(const std::vector<Step>& steps,
                    const std::map<std::string, std::string>& replacement);

 private:
  explicit ClientFixture(const FixtureOptions& options);
  void enable_backend_tls();
  // backend_sslmode "" leaves kanon's default (prefer).
  void write_config(const std::string& path, uint16_t port,
                    const std::string& backend_sslmode) const;
  std::unique_ptr<ChildProcess> start_kanon(const std::string& config, uint16_t port,
                                            const std::string& log_name) const;
  void wait_until_policies_apply(Endpoint e);

  PgSandbox& pg_;
  FixtureOptions options_;
  std::string dir_, config_;
  uint16_t port_ = 0;
  std::unique_ptr<ChildProcess> proxy_;
  uint16_t plain_backend_port_ = 0;
  std::unique_ptr<ChildProcess> plain_backend_proxy_;
  std::map<std::string, std::string> masked_select_;
  std::map<std::string, Sections> expected_;  // by the expanded steps' text
};

}  // namespace kanon::testing
