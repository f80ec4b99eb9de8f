// A kanon.yaml written for a test: config_dir() is this process's own
// directory (with placeholder cert.pem and key.pem, so tls: keys that name
// them resolve), write_config() writes the text there and returns its path,
// config_error() is load_server_config's ConfigError message ("" when the
// text loads).
#pragma once

#include <fstream>
#include <string>

#include "settings/server_config.h"
#include "tests/support/scratch_dir.h"

namespace kanon::testing {

inline const std::string& config_dir() {
  static const std::string dir = [] {
    const std::string d = scratch_dir().string();
    std::ofstream(d + "/cert.pem") << "not really a certificate\n";
    std::ofstream(d + "/key.pem") << "not really a key\n";
    return d;
  }();
  return dir;
}

inline std::string write_config(const std::string& text) {
  const std::string path = config_dir() + "/kanon.yaml";
  std::ofstream(path) << text;
  return path;
}

inline std::string config_error(const std::string& yaml) {
  try {
    settings::load_server_config(write_config(yaml));
  } catch (const base::ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace kanon::testing
