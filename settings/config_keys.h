// The keys of config/kanon.yaml as one table: each key's dotted path, what
// it means, its default and how it is read into ServerConfig.
// load_server_config (server_config.h) walks the table: the keys a section
// allows (an unknown key is an error naming the ones allowed) are the
// table's, each present key is read by its row, then the checks across keys
// run. docs/proxy.md's table of keys is config_keys_markdown(), and a test
// keeps the two equal.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/yaml_reader.h"
#include "settings/server_config.h"

namespace kanon::settings {

// What a key's reader gets: the file's reader (errors name file, line and
// key), the key's node and dotted path, and the file's directory to resolve
// relative paths against.
struct KeyInput {
  const base::YamlReader& reader;
  const YAML::Node& node;
  const std::string& key;
  const std::function<std::string(const std::string&)>& resolve;
};

struct ConfigKey {
  std::string_view path;     // "listen.port", "backend.sslmode", "web.tls.cert"
  std::string_view meaning;  // one line, as docs/proxy.md shows it
  std::string_view default_value;
  // Reads the key into `config`; throws ConfigError naming file, line, key.
  void (*read)(const KeyInput& in, ServerConfig& config);
};

// Every key, in the order they are read and documented.
const std::vector<ConfigKey>& config_keys();

// The keys a section allows ("" for the top level): the next path component
// of every key under it, in table order, without repeats.
std::vector<std::string> keys_of_section(std::string_view section);

// docs/proxy.md's "Configuration keys" table (header included).
std::string config_keys_markdown();

// Reads every key present under `root` into `config`: the top level and
// every section present must hold only the table's keys (else ConfigError
// naming the allowed ones). The checks across keys are load_server_config's.
void read_config_keys(const base::YamlReader& reader, const YAML::Node& root,
                      const std::function<std::string(const std::string&)>& resolve,
                      ServerConfig& config);

}  // namespace kanon::settings
