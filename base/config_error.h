// ConfigError: a mistake in a file a person wrote (server configuration,
// policy, job, hierarchy spec). The message names the file, the line and the
// key, e.g. "config/kanon.yaml:7: limits.max_clients: expected an integer".
#pragma once

#include <stdexcept>

namespace kanon::base {

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace kanon::base
