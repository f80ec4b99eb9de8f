#include "tests/support/tls_certs.h"

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "tests/support/process.h"

namespace kanon::testing {

namespace {

void openssl(const std::vector<std::string>& args) {
  std::vector<std::string> argv{"openssl"};
  argv.insert(argv.end(), args.begin(), args.end());
  const auto r = run_command(argv);
  if (r.exit_code != 0) {
    std::string line;
    for (const auto& a : argv) line += a + " ";
    throw std::runtime_error("TLS test certificates: `" + line + "` failed (exit " +
                             std::to_string(r.exit_code) + ", is openssl installed?):\n" + r.err);
  }
}

// A self-signed CA certificate and its key (EC P-256: instant to make and
// accepted by OpenSSL, Java and Node alike).
void make_ca(const std::string& dir, const std::string& name, const std::string& cn) {
  openssl({"req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
           "-keyout", dir + "/" + name + ".key", "-out", dir + "/" + name + ".crt", "-days", "2",
           "-subj", "/CN=" + cn, "-addext", "basicConstraints=critical,CA:TRUE", "-addext",
           "keyUsage=critical,keyCertSign,cRLSign"});
}

}  // namespace

const TlsCerts& TlsCerts::shared() {
  static TlsCerts certs;
  return certs;
}

TlsCerts::TlsCerts() {
  char tmpl[] = "/tmp/kanon-tls.XXXXXX";
  if (mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
  // Readable by everyone (PostgreSQL may run as another user and read the
  // certificates); the keys themselves are 0600.
  chmod(dir_.c_str(), 0755);
  make_ca(dir_, "ca", "kanon test CA");
  make_ca(dir_, "other-ca", "unrelated test CA");
  const std::string ext = dir_ + "/server.ext";
  std::ofstream(ext) << "basicConstraints=CA:FALSE\n"
                     << "keyUsage=critical,digitalSignature,keyEncipherment\n"
                     << "extendedKeyUsage=serverAuth\n"
                     << "subjectAltName=IP:127.0.0.1,DNS:localhost\n";
  openssl({"req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
           dir_ + "/server.key", "-out", dir_ + "/server.csr", "-subj", "/CN=127.0.0.1"});
  openssl({"x509", "-req", "-in", dir_ + "/server.csr", "-CA", dir_ + "/ca.crt", "-CAkey",
           dir_ + "/ca.key", "-CAcreateserial", "-out", dir_ + "/server.crt", "-days", "2",
           "-extfile", ext});
  ca_cert_ = dir_ + "/ca.crt";
  other_ca_cert_ = dir_ + "/other-ca.crt";
  server_cert_ = dir_ + "/server.crt";
  server_key_ = dir_ + "/server.key";
  for (const auto& key : {server_key_, dir_ + "/ca.key", dir_ + "/other-ca.key"})
    chmod(key.c_str(), 0600);
}

TlsCerts::~TlsCerts() {
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

}  // namespace kanon::testing
