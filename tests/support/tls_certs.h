// TlsCerts: a throwaway certificate authority and a server certificate for
// 127.0.0.1 and localhost, made with the `openssl` command line in a temp
// directory when a test needs TLS, and removed when the process ends. Keys
// never leave the temp directory.
#pragma once

#include <string>

namespace kanon::testing {

class TlsCerts {
 public:
  // The process-wide set, made on first use. Throws with openssl's message
  // when `openssl` is missing or fails.
  static const TlsCerts& shared();
  ~TlsCerts();

  const std::string& dir() const { return dir_; }
  // PEM files. The server certificate's CN is 127.0.0.1 and its subject
  // alternative names are IP:127.0.0.1 and DNS:localhost; the key is 0600.
  const std::string& ca_cert() const { return ca_cert_; }
  const std::string& server_cert() const { return server_cert_; }
  const std::string& server_key() const { return server_key_; }
  // A second, unrelated CA: verification against it must fail.
  const std::string& other_ca_cert() const { return other_ca_cert_; }

 private:
  TlsCerts();
  std::string dir_, ca_cert_, server_cert_, server_key_, other_ca_cert_;
};

}  // namespace kanon::testing
