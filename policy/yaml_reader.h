// YamlReader: typed access to the nodes of one YAML file, where every
// problem becomes a ConfigError naming the file, the line and the key:
//   "config/kanon.yaml:7: limits.max_clients: expected an integer, got 'many'"
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <set>
#include <string>

#include "policy/server_config.h"

namespace kanon::policy {

class YamlReader {
 public:
  explicit YamlReader(std::string path) : path_(std::move(path)) {}

  const std::string& path() const { return path_; }
  // 1-based line of `node` (1 when yaml-cpp does not know it).
  static int line_of(const YAML::Node& node) {
    return node.Mark().line >= 0 ? node.Mark().line + 1 : 1;
  }

  [[noreturn]] void fail(const YAML::Node& node, const std::string& key,
                         const std::string& what) const;
  // REQUIRES nothing; fails unless `node` is a mapping whose keys are all in
  // `allowed`.
  void expect_map(const YAML::Node& node, const std::string& key,
                  const std::set<std::string>& allowed) const;
  std::string string(const YAML::Node& node, const std::string& key) const;
  // An unsigned integer in [lo, hi]; `range_msg` replaces the default
  // "must be between lo and hi".
  uint64_t integer(const YAML::Node& node, const std::string& key, uint64_t lo, uint64_t hi,
                   const std::string& range_msg = "") const;
  // A number in [0, 1].
  double fraction(const YAML::Node& node, const std::string& key) const;

 private:
  std::string path_;
};

}  // namespace kanon::policy
