#include "engine/hierarchy_spec.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "base/yaml_reader.h"

namespace kanon::engine {

namespace {

// Errors are HierarchyError naming the source, the line and the key.
class SpecReader : public base::YamlReader {
 public:
  using YamlReader::YamlReader;

  // A non-empty list of positive integers, each a multiple of the previous
  // one when `multiples`.
  std::vector<long long> int_list(const YAML::Node& spec, const char* key, bool multiples) const {
    const YAML::Node n = spec[key];
    if (!n || !n.IsSequence() || n.size() == 0)
      fail(n ? n : spec, key, "must be a non-empty list of integers");
    std::vector<long long> out;
    for (size_t i = 0; i < n.size(); ++i) {
      const auto v = static_cast<long long>(
          integer(n[i], fmt::format("{}[{}]", key, i), 0, std::numeric_limits<int32_t>::max()));
      if (v == 0) fail(n[i], key, "entries must be positive");
      if (multiples && i > 0 && v % out.back() != 0)
        fail(n[i], key,
             fmt::format("{} is not a multiple of {} (levels would not be monotonic)", v,
                         out.back()));
      out.push_back(v);
    }
    return out;
  }

 protected:
  void raise(const std::string& message) const override { throw HierarchyError(message); }
};

std::string floor_label(double lo, double hi) {
  return fmt::format("[{}, {})", lo, hi);
}

void intervals(const SpecReader& r, const YAML::Node& spec, const std::vector<std::string>& values,
               HierarchyTable& t) {
  const auto widths = r.int_list(spec, "widths", true);
  std::vector<double> nums;
  for (const auto& v : values) {
    double x = 0;
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
    if (ec != std::errc() || p != v.data() + v.size())
      r.fail(spec, "", fmt::format("value '{}' is not a number", v));
    nums.push_back(x);
  }
  double anchor = nums.empty() ? 0 : *std::min_element(nums.begin(), nums.end());
  if (spec["min"]) anchor = r.number(spec["min"], "min");
  for (size_t i = 0; i < values.size(); ++i) {
    if (nums[i] < anchor)
      r.fail(spec["min"], "min", fmt::format("value '{}' is below min {}", values[i], anchor));
    auto& row = t.rows[i];
    for (long long w : widths) {
      const double lo = anchor + std::floor((nums[i] - anchor) / w) * w;
      row.push_back(floor_label(lo, lo + w));
    }
  }
}

void dates(const SpecReader& r, const YAML::Node& spec, const std::vector<std::string>& values,
           HierarchyTable& t) {
  std::vector<std::string> levels{"month", "year", "decade"};
  if (spec["levels"]) levels = r.string_list(spec["levels"], "levels");
  const std::vector<std::string> known{"month", "year", "decade"};
  size_t last = 0;
  for (size_t i = 0; i < levels.size(); ++i) {
    auto it = std::find(known.begin(), known.end(), levels[i]);
    if (it == known.end() || (i > 0 && size_t(it - known.begin()) <= last)) {
      r.fail(spec["levels"], "levels",
             fmt::format("date level '{}' unknown or out of order (use month, year, decade)",
                         levels[i]));
    }
    last = it - known.begin();
  }
  for (size_t i = 0; i < values.size(); ++i) {
    const std::string& v = values[i];
    const bool ok =
        v.size() == 10 && v[4] == '-' && v[7] == '-' &&
        std::all_of(v.begin(), v.end(), [](char c) { return std::isdigit(c) || c == '-'; });
    if (!ok) r.fail(spec, "", fmt::format("value '{}' is not a YYYY-MM-DD date", v));
    for (const auto& l : levels) {
      if (l == "month") t.rows[i].push_back(v.substr(0, 7));
      if (l == "year") t.rows[i].push_back(v.substr(0, 4));
      if (l == "decade") t.rows[i].push_back(v.substr(0, 3) + "0s");
    }
  }
}

void mask(const SpecReader& r, const YAML::Node& spec, const std::vector<std::string>& values,
          HierarchyTable& t) {
  const auto counts = r.int_list(spec, "levels", false);
  for (size_t i = 1; i < counts.size(); ++i) {
    if (counts[i] <= counts[i - 1])
      r.fail(spec["levels"], "levels", "mask levels must be positive and strictly increasing");
  }
  const std::string from = spec["from"] ? r.string(spec["from"], "from") : "right";
  if (from != "right" && from != "left")
    r.fail(spec["from"], "from", fmt::format("must be right or left, not '{}'", from));
  const std::string ch = spec["char"] ? r.string(spec["char"], "char") : "*";
  if (ch.size() != 1) r.fail(spec["char"], "char", "must be one character");
  for (size_t i = 0; i < values.size(); ++i) {
    for (long long c : counts) {
      std::string v = values[i];
      const size_t n = std::min<size_t>(c, v.size());
      if (from == "right") {
        std::fill(v.end() - n, v.end(), ch[0]);
      } else {
        std::fill(v.begin(), v.begin() + n, ch[0]);
      }
      t.rows[i].push_back(v);
    }
  }
}

void ordered(const SpecReader& r, const YAML::Node& spec, const std::vector<std::string>& values,
             HierarchyTable& t) {
  if (!spec["order"]) r.fail(spec, "order", "required list is missing");
  const auto order = r.string_list(spec["order"], "order");
  std::unordered_map<std::string, size_t> pos;
  for (size_t i = 0; i < order.size(); ++i) {
    if (!pos.emplace(order[i], i).second)
      r.fail(spec["order"], "order", fmt::format("duplicate value '{}'", order[i]));
  }
  const auto sizes = r.int_list(spec, "sizes", true);
  for (size_t i = 0; i < values.size(); ++i) {
    auto it = pos.find(values[i]);
    if (it == pos.end())
      r.fail(spec["order"], "order", fmt::format("data value '{}' is not listed", values[i]));
    for (long long s : sizes) {
      const size_t lo = it->second / s * s;
      const size_t hi = std::min<size_t>(order.size(), lo + s) - 1;
      t.rows[i].push_back(lo == hi ? order[lo] : order[lo] + ".." + order[hi]);
    }
  }
}

}  // namespace

HierarchyTable expand_hierarchy_spec(const YAML::Node& spec, const std::vector<std::string>& values,
                                     const std::string& source) {
  const SpecReader r(source);
  if (!spec.IsMap()) r.fail(spec, "", "hierarchy spec must be a mapping with a 'type'");
  if (!spec["type"]) r.fail(spec, "type", "required key is missing");
  const std::string type = r.string(spec["type"], "type");
  HierarchyTable t;
  t.source = source;
  for (const auto& v : values) {
    t.rows.push_back({v});
    t.line_numbers.push_back(0);
  }
  if (type == "intervals") {
    intervals(r, spec, values, t);
  } else if (type == "dates") {
    dates(r, spec, values, t);
  } else if (type == "mask") {
    mask(r, spec, values, t);
  } else if (type == "ordered") {
    ordered(r, spec, values, t);
  } else {
    r.fail(spec["type"], "type",
           fmt::format("unknown hierarchy type '{}' (intervals, dates, mask, ordered)", type));
  }
  for (auto& row : t.rows) row.push_back("*");
  t.validate();
  return t;
}

YAML::Node read_hierarchy_spec_file(const std::string& path) {
  return SpecReader(path).load_file("hierarchy spec");
}

}  // namespace kanon::engine
