// YamlReader: the one way kanon reads YAML (yaml-cpp). It loads a file and
// gives typed access to its nodes; every problem becomes an error whose
// message names the source, the line and the key:
//   "config/kanon.yaml:7: limits.max_clients: expected an integer, got 'many'"
// The error is ConfigError unless a subclass throws its own type from
// raise() (hierarchy specs throw engine::HierarchyError).
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/config_error.h"

namespace kanon::base {

class YamlReader {
 public:
  // `source` starts every message: a file name, or e.g. "job.yaml:12
  // (hierarchy of 'zip')" for a document inside another file.
  explicit YamlReader(std::string source) : source_(std::move(source)) {}
  virtual ~YamlReader() = default;

  const std::string& source() const { return source_; }

  // Loads the file named by source(). A missing file fails with
  // "<source>: cannot open <what>", a syntax error with "<source>:<line>: ...".
  YAML::Node load_file(std::string_view what) const;

  // 1-based line of `node`; nullopt for a missing key or a node built in code.
  static std::optional<int> line(const YAML::Node& node);
  // line(), or 1 when there is none.
  static int line_of(const YAML::Node& node) { return line(node).value_or(1); }

  // "<source>:<line>: <key>: <what>" (no line part when the node has none, no
  // key part when `key` is empty).
  [[noreturn]] void fail(const YAML::Node& node, const std::string& key,
                         const std::string& what) const;

  // Fails unless `node` is a mapping whose keys are all in `allowed`.
  void expect_map(const YAML::Node& node, const std::string& key,
                  const std::set<std::string>& allowed) const;
  std::string string(const YAML::Node& node, const std::string& key) const;
  std::vector<std::string> string_list(const YAML::Node& node, const std::string& key) const;
  // An unsigned integer in [lo, hi]; `range_msg` replaces the default
  // "must be between lo and hi".
  uint64_t integer(const YAML::Node& node, const std::string& key, uint64_t lo, uint64_t hi,
                   const std::string& range_msg = "") const;
  // A finite number.
  double number(const YAML::Node& node, const std::string& key) const;
  // A number in [0, 1].
  double fraction(const YAML::Node& node, const std::string& key) const;
  // true/false (and YAML's yes/no, on/off).
  bool boolean(const YAML::Node& node, const std::string& key) const;

 protected:
  // Every error passes through here: a subclass that wants its own error type
  // throws it; when this returns, the reader throws ConfigError(message).
  virtual void raise(const std::string& message) const { (void)message; }

 private:
  [[noreturn]] void throw_error(const std::string& message) const;

  std::string source_;
};

}  // namespace kanon::base
