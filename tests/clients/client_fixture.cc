#include "tests/clients/client_fixture.h"

#include <pwd.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "tests/support/kanon_proxy.h"
#include "tests/support/pg_sandbox.h"
#include "tests/support/tls_certs.h"
#include "tests/support/wait.h"

namespace kanon::testing {

namespace {

// An unprotected table with the types the clients convert differently
// (numeric scale, dates, NULLs, non-ASCII text); its values must come back
// exactly as PostgreSQL stores them.
const char* const kOpenData = R"sql(
CREATE TABLE public.open_data (id integer PRIMARY KEY, label text, amount numeric(8,2),
                               day date, note text);
INSERT INTO public.open_data VALUES
  (1, 'alpha', 1.50, '2024-01-02', NULL),
  (2, 'beta', -20.00, '1999-12-31', 'plain words'),
  (3, NULL, NULL, NULL, 'ünïcødé ✓'),
  (4, 'Lawyer', 3.25, '2020-02-29', 'same word as a quasi-identifier value');
)sql";

std::string yaml_quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

ClientFixture& ClientFixture::shared(const FixtureOptions& options) {
  static ClientFixture fixture(options);
  return fixture;
}

ClientFixture::ClientFixture(const FixtureOptions& options)
    : pg_(PgSandbox::shared()), options_(options) {
  pg_.psql(kOpenData);
  if (options_.backend_tls) enable_backend_tls();
  char tmpl[] = "/tmp/kanon-clients.XXXXXX";
  if (mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
  config_ = dir_ + "/kanon.yaml";
  port_ = free_port();
  write_config(config_, port_, options_.backend_tls ? "verify-full" : "");
  proxy_ = start_kanon(config_, port_, "kanon.log");
  wait_until_policies_apply(kanon("analyst"));
  if (options_.backend_tls) {
    plain_backend_port_ = free_port();
    write_config(dir_ + "/kanon-plain-backend.yaml", plain_backend_port_, "disable");
    plain_backend_proxy_ = start_kanon(dir_ + "/kanon-plain-backend.yaml", plain_backend_port_,
                                       "kanon-plain-backend.log");
    wait_until_policies_apply(kanon_plain_backend("analyst"));
  }
}

void ClientFixture::write_config(const std::string& path, uint16_t port,
                                 const std::string& backend_sslmode) const {
  const std::string policies = source_dir() + "/config/policies/";
  std::ofstream config(path);
  config << "listen: {host: 127.0.0.1, port: " << port << "}\n"
         << "backend:\n"
         << "  host: 127.0.0.1\n"
         << "  port: " << pg_.port() << "\n"
         << "  user: postgres\n"
         << "  dbname: postgres\n";
  if (!backend_sslmode.empty()) config << "  sslmode: " << backend_sslmode << "\n";
  if (backend_sslmode == "verify-full")
    config << "  sslrootcert: " << yaml_quoted(TlsCerts::shared().ca_cert()) << "\n";
  if (options_.client_tls)
    config << "tls:\n"
           << "  cert: " << yaml_quoted(TlsCerts::shared().server_cert()) << "\n"
           << "  key: " << yaml_quoted(TlsCerts::shared().server_key()) << "\n";
  config << "log_level: info\n"
         << "policies:\n"
         << "  - " << yaml_quoted(policies + "people.yaml") << "\n"
         << "  - " << yaml_quoted(policies + "adult.yaml") << "\n";
}

std::unique_ptr<ChildProcess> ClientFixture::start_kanon(const std::string& config, uint16_t port,
                                                         const std::string& log_name) const {
  auto proxy = std::make_unique<ChildProcess>(
      std::vector<std::string>{kanon_executable(), "proxy", "--config", config},
      dir_ + "/" + log_name);
  if (!wait_for_port(port, 60))
    throw std::runtime_error("kanon proxy did not start listening; its log:\n" +
                             read_file(dir_ + "/" + log_name));
  return proxy;
}

ClientFixture::~ClientFixture() {
  proxy_.reset();
  plain_backend_proxy_.reset();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

// PostgreSQL serves TLS with the test server certificate (ssl can be turned
// on with a reload). As root the server runs as `postgres`, which must own
// the key.
void ClientFixture::enable_backend_tls() {
  namespace fs = std::filesystem;
  const auto& certs = TlsCerts::shared();
  const fs::path dir = fs::path(pg_.dir()) / "backend-tls";
  fs::create_directories(dir);
  fs::copy_file(certs.server_cert(), dir / "server.crt", fs::copy_options::overwrite_existing);
  fs::copy_file(certs.server_key(), dir / "server.key", fs::copy_options::overwrite_existing);
  fs::permissions(dir / "server.key", fs::perms::owner_read | fs::perms::owner_write);
  if (geteuid() == 0) {
    const passwd* pw = getpwnam("postgres");
    if (pw == nullptr) throw std::runtime_error("running as root but there is no postgres user");
    for (const auto& p : {dir, dir / "server.crt", dir / "server.key"})
      if (chown(p.c_str(), pw->pw_uid, pw->pw_gid) != 0)
        throw std::runtime_error("cannot chown " + p.string());
  }
  pg_.psql("ALTER SYSTEM SET ssl_cert_file = '" + (dir / "server.crt").string() + "'");
  pg_.psql("ALTER SYSTEM SET ssl_key_file = '" + (dir / "server.key").string() + "'");
  pg_.psql("ALTER SYSTEM SET ssl = on");
  pg_.psql("SELECT pg_reload_conf()");
  const std::string conninfo = pg_.conninfo() + " sslmode=require";
  if (until([&] {
        return run_command({"psql", "-X", "-At", "-d", conninfo, "-c", "SELECT 1"}).exit_code == 0;
      }))
    return;
  throw std::runtime_error("PostgreSQL did not turn TLS on; its log:\n" +
                           read_file(pg_.dir() + "/server.log"));
}

// kanon builds the disclosure trees when it starts; until a tree exists a
// restricted query on its table is denied (42501). Waits for that to end.
void ClientFixture::wait_until_policies_apply(Endpoint e) {
  if (options_.client_tls) e.sslmode = "require";
  const std::string conninfo = libpq_conninfo(e);
  std::string last;
  bool applied = false;
  until([&] {
    const auto r = run_command({"psql", "-X", "-At", "-d", conninfo, "-c",
                                "SELECT count(*) FROM public.people; "
                                "SELECT count(*) FROM public.adult"});
    applied = r.exit_code == 0;
    last = r.err;
    // Stop waiting on any other error than "not built yet".
    return applied ||
           (last.find("42501") == std::string::npos && last.find("denied") == std::string::npos &&
            last.find("not built") == std::string::npos);
  });
  if (applied) return;
  throw std::runtime_error("restricted queries through kanon fail: " + last + "\nkanon's log:\n" +
                           log());
}

Endpoint ClientFixture::kanon(const std::string& user, const std::string& password) const {
  Endpoint e;
  e.port = port_;
  e.user = user;
  e.password = password;
  return e;
}

Endpoint ClientFixture::kanon_plain_backend(const std::string& user,
                                            const std::string& password) const {
  if (plain_backend_port_ == 0) throw std::runtime_error("no second kanon without backend TLS");
  Endpoint e = kanon(user, password);
  e.port = plain_backend_port_;
  return e;
}

Endpoint ClientFixture::direct(const std::string& user, const std::string& password) const {
  Endpoint e;
  e.port = pg_.port();
  e.user = user;
  e.password = password;
  return e;
}

const std::string& ClientFixture::masked_select(const std::string& table) {
  auto it = masked_select_.find(table);
  if (it != masked_select_.end()) return it->second;
  const auto r = run_command(
      {kanon_executable(), "tree", "--config", config_, "--table", table, "--format", "sql"});
  if (r.exit_code != 0)
    throw std::runtime_error("kanon tree --table " + table + " failed:\n" + r.err);
  std::string sql = r.out;
  while (!sql.empty() && (sql.back() == '\n' || sql.back() == ' ' || sql.back() == ';'))
    sql.pop_back();
  if (sql.rfind("SELECT", 0) != 0)
    throw std::runtime_error("kanon tree --format sql printed no SELECT: " + r.out);
  return masked_select_[table] = sql;
}

std::map<std::string, std::string> ClientFixture::through_kanon() const {
  return {{"people", "public.people"}, {"adult", "public.adult"}};
}

std::map<std::string, std::string> ClientFixture::masked() {
  return {{"people", "(" + masked_select("public.people") + ") AS people"},
          {"adult", "(" + masked_select("public.adult") + ") AS adult"}};
}

std::map<std::string, std::string> ClientFixture::raw() const {
  return through_kanon();
}

Sections ClientFixture::expected(const std::vector<Step>& steps,
                                 const std::map<std::string, std::string>& replacement) {
  const auto expanded = expand(steps, replacement);
  const std::string key = encode_steps(expanded);
  auto it = expected_.find(key);
  if (it == expected_.end())
    it = expected_.emplace(key, run_libpqxx(pg_.conninfo("postgres"), expanded)).first;
  return it->second;
}

}  // namespace kanon::testing
