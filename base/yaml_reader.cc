#include "base/yaml_reader.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

namespace kanon::base {

YAML::Node YamlReader::load_file(std::string_view what) const {
  try {
    return YAML::LoadFile(source_);
  } catch (const YAML::BadFile&) {
    throw_error(fmt::format("{}: cannot open {}", source_, what));
  } catch (const YAML::Exception& e) {
    throw_error(fmt::format("{}:{}: {}", source_, e.mark.line + 1, e.msg));
  }
}

std::optional<int> YamlReader::line(const YAML::Node& node) {
  if (!node.IsDefined()) return std::nullopt;
  const int l = node.Mark().line;
  if (l < 0) return std::nullopt;
  return l + 1;
}

void YamlReader::throw_error(const std::string& message) const {
  raise(message);
  throw ConfigError(message);
}

void YamlReader::fail(const YAML::Node& node, const std::string& key,
                      const std::string& what) const {
  std::string message = source_;
  if (const auto l = line(node)) message += fmt::format(":{}", *l);
  if (!key.empty()) message += ": " + key;
  throw_error(message + ": " + what);
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

std::vector<std::string> YamlReader::string_list(const YAML::Node& node,
                                                 const std::string& key) const {
  if (!node.IsSequence()) fail(node, key, "expected a list");
  std::vector<std::string> out;
  for (size_t i = 0; i < node.size(); ++i)
    out.push_back(string(node[i], fmt::format("{}[{}]", key, i)));
  return out;
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

double YamlReader::number(const YAML::Node& node, const std::string& key) const {
  if (!node.IsScalar()) fail(node, key, "expected a number");
  double v = 0;
  const std::string& s = node.Scalar();
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty() || !std::isfinite(v))
    fail(node, key, fmt::format("expected a number, got '{}'", s));
  return v;
}

double YamlReader::fraction(const YAML::Node& node, const std::string& key) const {
  const double v = number(node, key);
  if (!(v >= 0.0 && v <= 1.0)) fail(node, key, "must be between 0 and 1");
  return v;
}

bool YamlReader::boolean(const YAML::Node& node, const std::string& key) const {
  bool v = false;
  if (!node.IsScalar() || !YAML::convert<bool>::decode(node, v))
    fail(node, key,
         fmt::format("expected true or false, got '{}'",
                     node.IsScalar() ? node.Scalar() : std::string("a collection")));
  return v;
}

}  // namespace kanon::base
