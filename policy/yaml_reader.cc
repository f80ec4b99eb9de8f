#include "policy/yaml_reader.h"

#include <fmt/format.h>

#include <charconv>

namespace kanon::policy {

void YamlReader::fail(const YAML::Node& node, const std::string& key,
                      const std::string& what) const {
  throw ConfigError(fmt::format("{}:{}: {}: {}", path_, line_of(node), key, what));
}

void YamlReader::expect_map(const YAML::Node& node, const std::string& key,
                            const std::set<std::string>& allowed) const {
  if (!node.IsMap()) fail(node, key, "expected a mapping");
  for (const auto& kv : node) {
    const auto name = kv.first.as<std::string>();
    if (!allowed.contains(name)) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      fail(kv.first, key.empty() ? name : key + "." + name,
           fmt::format("unknown key (expected one of: {})", list));
    }
  }
}

std::string YamlReader::string(const YAML::Node& node, const std::string& key) const {
  if (!node.IsScalar()) fail(node, key, "expected a string");
  return node.Scalar();
}

uint64_t YamlReader::integer(const YAML::Node& node, const std::string& key, uint64_t lo,
                             uint64_t hi, const std::string& range_msg) const {
  if (!node.IsScalar()) fail(node, key, "expected an integer");
  const std::string& s = node.Scalar();
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty())
    fail(node, key, fmt::format("expected an integer, got '{}'", s));
  if (v < lo || v > hi)
    fail(node, key,
         range_msg.empty() ? fmt::format("must be between {} and {}", lo, hi) : range_msg);
  return v;
}

double YamlReader::fraction(const YAML::Node& node, const std::string& key) const {
  if (!node.IsScalar()) fail(node, key, "expected a number");
  double v = 0;
  const std::string& s = node.Scalar();
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty())
    fail(node, key, fmt::format("expected a number, got '{}'", s));
  if (!(v >= 0.0 && v <= 1.0)) fail(node, key, "must be between 0 and 1");
  return v;
}

}  // namespace kanon::policy
