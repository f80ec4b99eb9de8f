#include "engine/hierarchy_spec.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <unordered_map>

namespace kanon::engine {

namespace {

[[noreturn]] void fail(const std::string& source, const YAML::Node& node, const std::string& what) {
  const int line = node.IsDefined() ? node.Mark().line + 1 : 0;
  if (line > 0) throw HierarchyError(fmt::format("{}:{}: {}", source, line, what));
  throw HierarchyError(fmt::format("{}: {}", source, what));
}

std::vector<long long> int_list(const YAML::Node& spec, const char* key,
                                const std::string& source) {
  const YAML::Node n = spec[key];
  if (!n || !n.IsSequence() || n.size() == 0) {
    fail(source, spec, fmt::format("'{}' must be a non-empty list of integers", key));
  }
  std::vector<long long> out;
  for (const auto& v : n) {
    try {
      out.push_back(v.as<long long>());
    } catch (const YAML::Exception&) {
      fail(source, v, fmt::format("'{}': '{}' is not an integer", key, v.Scalar()));
    }
  }
  return out;
}

void require_multiples(const std::vector<long long>& w, const YAML::Node& spec, const char* key,
                       const std::string& source) {
  for (size_t i = 0; i < w.size(); ++i) {
    if (w[i] <= 0) fail(source, spec[key], fmt::format("'{}' entries must be positive", key));
    if (i > 0 && w[i] % w[i - 1] != 0) {
      fail(source, spec[key],
           fmt::format("'{}': {} is not a multiple of {} (levels would not be monotonic)", key,
                       w[i], w[i - 1]));
    }
  }
}

std::string floor_label(double lo, double hi) {
  return fmt::format("[{}, {})", lo, hi);
}

void intervals(const YAML::Node& spec, const std::vector<std::string>& values,
               const std::string& source, HierarchyTable& t) {
  const auto widths = int_list(spec, "widths", source);
  require_multiples(widths, spec, "widths", source);
  std::vector<double> nums;
  for (const auto& v : values) {
    double x = 0;
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
    if (ec != std::errc() || p != v.data() + v.size()) {
      fail(source, spec, fmt::format("value '{}' is not a number", v));
    }
    nums.push_back(x);
  }
  double anchor = nums.empty() ? 0 : *std::min_element(nums.begin(), nums.end());
  if (spec["min"]) anchor = spec["min"].as<double>();
  for (size_t i = 0; i < values.size(); ++i) {
    if (nums[i] < anchor) {
      fail(source, spec["min"], fmt::format("value '{}' is below min {}", values[i], anchor));
    }
    auto& row = t.rows[i];
    for (long long w : widths) {
      const double lo = anchor + std::floor((nums[i] - anchor) / w) * w;
      row.push_back(floor_label(lo, lo + w));
    }
  }
}

void dates(const YAML::Node& spec, const std::vector<std::string>& values,
           const std::string& source, HierarchyTable& t) {
  std::vector<std::string> levels{"month", "year", "decade"};
  if (spec["levels"]) levels = spec["levels"].as<std::vector<std::string>>();
  const std::vector<std::string> known{"month", "year", "decade"};
  size_t last = 0;
  for (size_t i = 0; i < levels.size(); ++i) {
    auto it = std::find(known.begin(), known.end(), levels[i]);
    if (it == known.end() || (i > 0 && size_t(it - known.begin()) <= last)) {
      fail(source, spec["levels"],
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
    if (!ok) fail(source, spec, fmt::format("value '{}' is not a YYYY-MM-DD date", v));
    for (const auto& l : levels) {
      if (l == "month") t.rows[i].push_back(v.substr(0, 7));
      if (l == "year") t.rows[i].push_back(v.substr(0, 4));
      if (l == "decade") t.rows[i].push_back(v.substr(0, 3) + "0s");
    }
  }
}

void mask(const YAML::Node& spec, const std::vector<std::string>& values, const std::string& source,
          HierarchyTable& t) {
  const auto counts = int_list(spec, "levels", source);
  for (size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] <= 0 || (i > 0 && counts[i] <= counts[i - 1])) {
      fail(source, spec["levels"], "mask 'levels' must be positive and strictly increasing");
    }
  }
  const std::string from = spec["from"] ? spec["from"].as<std::string>() : "right";
  if (from != "right" && from != "left") {
    fail(source, spec["from"], fmt::format("'from' must be right or left, not '{}'", from));
  }
  const std::string ch = spec["char"] ? spec["char"].as<std::string>() : "*";
  if (ch.size() != 1) fail(source, spec["char"], "'char' must be one character");
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

void ordered(const YAML::Node& spec, const std::vector<std::string>& values,
             const std::string& source, HierarchyTable& t) {
  if (!spec["order"] || !spec["order"].IsSequence()) fail(source, spec, "'order' list is required");
  const auto order = spec["order"].as<std::vector<std::string>>();
  std::unordered_map<std::string, size_t> pos;
  for (size_t i = 0; i < order.size(); ++i) {
    if (!pos.emplace(order[i], i).second) {
      fail(source, spec["order"], fmt::format("duplicate value '{}' in 'order'", order[i]));
    }
  }
  const auto sizes = int_list(spec, "sizes", source);
  require_multiples(sizes, spec, "sizes", source);
  for (size_t i = 0; i < values.size(); ++i) {
    auto it = pos.find(values[i]);
    if (it == pos.end()) {
      fail(source, spec["order"],
           fmt::format("data value '{}' is not listed in 'order'", values[i]));
    }
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
  if (!spec.IsMap()) fail(source, spec, "hierarchy spec must be a mapping with a 'type'");
  if (!spec["type"]) fail(source, spec, "hierarchy spec needs a 'type'");
  const std::string type = spec["type"].as<std::string>();
  HierarchyTable t;
  t.source = source;
  for (const auto& v : values) {
    t.rows.push_back({v});
    t.line_numbers.push_back(0);
  }
  if (type == "intervals") {
    intervals(spec, values, source, t);
  } else if (type == "dates") {
    dates(spec, values, source, t);
  } else if (type == "mask") {
    mask(spec, values, source, t);
  } else if (type == "ordered") {
    ordered(spec, values, source, t);
  } else {
    fail(source, spec["type"],
         fmt::format("unknown hierarchy type '{}' (intervals, dates, mask, ordered)", type));
  }
  for (auto& row : t.rows) row.push_back("*");
  t.validate();
  return t;
}

YAML::Node read_hierarchy_spec_file(const std::string& path) {
  try {
    return YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    throw HierarchyError(fmt::format("{}: cannot open hierarchy spec", path));
  } catch (const YAML::Exception& e) {
    throw HierarchyError(fmt::format("{}:{}: {}", path, e.mark.line + 1, e.msg));
  }
}

}  // namespace kanon::engine
