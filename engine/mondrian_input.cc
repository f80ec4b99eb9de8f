#include "engine/mondrian_input.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>
#include <string_view>
#include <unordered_map>

namespace kanon::engine {

namespace {

struct Hash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using CodeMap = std::unordered_map<std::string, int32_t, Hash, std::equal_to<>>;

int find_column(const CsvTable& table, const std::string& name) {
  const int c = table.column(name);
  if (c < 0) throw DataError(fmt::format("{}: no column '{}'", table.source, name));
  return c;
}

void encode_numeric(const CsvTable& table, const MondrianDomain& dom, MondrianAttribute* a) {
  // Parse each distinct text once; codes are the distinct values ascending.
  std::unordered_map<std::string_view, double> parsed;
  std::vector<double> values;
  for (size_t r = 0; r < table.rows.size(); ++r) {
    const std::string& cell = table.rows[r][dom.column];
    if (parsed.count(cell)) continue;
    double v;
    if (!parse_number(cell, &v)) {
      throw DataError(fmt::format("{}:{}: column '{}': '{}' is not a number", table.source,
                                  table.line_numbers[r], dom.name, cell));
    }
    parsed.emplace(cell, v);
    values.push_back(v);
  }
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  a->numbers = values;
  a->domain = static_cast<uint32_t>(values.size());
  a->low = dom.low;
  a->high = dom.high;
  std::unordered_map<std::string_view, int32_t> code_of_text;
  for (const auto& [text, v] : parsed) {
    code_of_text[text] =
        static_cast<int32_t>(std::lower_bound(values.begin(), values.end(), v) - values.begin());
  }
  a->codes.resize(table.rows.size());
  for (size_t r = 0; r < table.rows.size(); ++r) {
    a->codes[r] = code_of_text.find(table.rows[r][dom.column])->second;
  }
}

void encode_set(const CsvTable& table, const MondrianDomain& dom, MondrianAttribute* a) {
  a->labels = dom.values;
  a->domain = static_cast<uint32_t>(dom.values.size());
  CodeMap codes;
  for (size_t i = 0; i < dom.values.size(); ++i) codes[dom.values[i]] = static_cast<int32_t>(i);
  a->codes.resize(table.rows.size());
  for (size_t r = 0; r < table.rows.size(); ++r) {
    const auto it = codes.find(table.rows[r][dom.column]);
    if (it == codes.end()) {
      throw DataError(fmt::format("{}:{}: column '{}': value '{}' is not in the agreed domain",
                                  table.source, table.line_numbers[r], dom.name,
                                  table.rows[r][dom.column]));
    }
    a->codes[r] = it->second;
  }
}

void encode_hierarchy(const CsvTable& table, const MondrianDomain& dom,
                      const HierarchyProvider& provider, MondrianAttribute* a) {
  const HierarchyTable h = provider(dom.values);
  h.validate();
  const size_t height = h.height();
  const size_t n = h.rows.size();
  a->hierarchy_source = h.source;
  // Node ids per level in order of first appearance.
  std::vector<std::unordered_map<std::string_view, int32_t>> ids(height);
  std::vector<std::vector<int32_t>> id_of_row(height, std::vector<int32_t>(n));
  a->node_label.assign(height, {});
  for (size_t level = 0; level < height; ++level) {
    for (size_t i = 0; i < n; ++i) {
      const std::string& label = h.rows[i][level];
      auto [it, added] = ids[level].emplace(label, static_cast<int32_t>(ids[level].size()));
      if (added) a->node_label[level].push_back(label);
      id_of_row[level][i] = it->second;
    }
  }
  // Depth-first leaf order: compare ancestors from the top down, then the row.
  std::vector<uint32_t> leaf(n);
  std::iota(leaf.begin(), leaf.end(), 0);
  std::sort(leaf.begin(), leaf.end(), [&](uint32_t x, uint32_t y) {
    for (size_t level = height; level-- > 1;) {
      if (id_of_row[level][x] != id_of_row[level][y])
        return id_of_row[level][x] < id_of_row[level][y];
    }
    return x < y;
  });
  a->domain = static_cast<uint32_t>(n);
  a->node.assign(height, std::vector<int32_t>(n));
  a->node_leaves.assign(height, {});
  a->labels.resize(n);
  CodeMap codes;
  for (size_t level = 0; level < height; ++level) {
    a->node_leaves[level].assign(a->node_label[level].size(), 0);
  }
  for (uint32_t code = 0; code < n; ++code) {
    const uint32_t row = leaf[code];
    a->labels[code] = h.rows[row][0];
    codes[h.rows[row][0]] = static_cast<int32_t>(code);
    for (size_t level = 0; level < height; ++level) {
      const int32_t id = id_of_row[level][row];
      a->node[level][code] = id;
      ++a->node_leaves[level][id];
    }
  }
  a->codes.resize(table.rows.size());
  for (size_t r = 0; r < table.rows.size(); ++r) {
    const std::string& cell = table.rows[r][dom.column];
    const auto it = codes.find(cell);
    if (it == codes.end()) {
      throw DataError(fmt::format("{}:{}: column '{}': value '{}' is not in the hierarchy {}",
                                  table.source, table.line_numbers[r], dom.name, cell, h.source));
    }
    a->codes[r] = it->second;
  }
}

}  // namespace

bool parse_number(const std::string& text, double* value) {
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, *value);
  return ec == std::errc() && ptr == end && std::isfinite(*value);
}

std::vector<std::string> distinct_values(const CsvTable& table, int column) {
  std::unordered_map<std::string_view, bool> seen;
  std::vector<std::string> out;
  for (const auto& row : table.rows) {
    if (seen.emplace(row[column], true).second) out.push_back(row[column]);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<MondrianDomain> table_domains(const CsvTable& table,
                                          const std::vector<AttributeSpec>& specs) {
  std::vector<MondrianDomain> out;
  for (const auto& s : specs) {
    if (s.role != AttributeRole::kQuasiIdentifier) continue;
    MondrianDomain d;
    d.name = s.name;
    d.column = find_column(table, s.name);
    if (s.hierarchy) {
      d.kind = MondrianKind::kHierarchy;
    } else {
      d.kind = MondrianKind::kNumeric;
      d.low = HUGE_VAL;
      d.high = -HUGE_VAL;
      std::unordered_map<std::string_view, bool> seen;
      for (const auto& row : table.rows) {
        const std::string& cell = row[d.column];
        if (!seen.emplace(cell, true).second) continue;
        double v;
        if (!parse_number(cell, &v)) {
          d.kind = MondrianKind::kSet;
          break;
        }
        d.low = std::min(d.low, v);
        d.high = std::max(d.high, v);
      }
    }
    if (d.kind != MondrianKind::kNumeric) d.values = distinct_values(table, d.column);
    out.push_back(std::move(d));
  }
  if (out.empty()) throw DataError("at least one quasi-identifier is required");
  return out;
}

MondrianInput encode_mondrian(const CsvTable& table, const std::vector<AttributeSpec>& specs,
                              const std::vector<MondrianDomain>& domains,
                              const std::string& person) {
  MondrianInput in;
  in.rows = table.rows.size();
  if (!person.empty()) {
    const int column = person_column(table, specs, person);
    CodeMap codes;
    in.person.resize(in.rows);
    for (size_t r = 0; r < in.rows; ++r) {
      auto [it, added] = codes.emplace(table.rows[r][column], static_cast<int32_t>(codes.size()));
      in.person[r] = it->second;
    }
    in.person_domain = std::max<uint32_t>(1, static_cast<uint32_t>(codes.size()));
    in.person_name = person;
  }
  size_t q = 0;
  for (const auto& s : specs) {
    if (s.role == AttributeRole::kSensitive) {
      if (!in.sensitive.empty() || in.sensitive_domain) {
        throw DataError("only one sensitive attribute is supported");
      }
      const int column = find_column(table, s.name);
      CodeMap codes;
      in.sensitive.resize(in.rows);
      for (size_t r = 0; r < in.rows; ++r) {
        auto [it, added] = codes.emplace(table.rows[r][column], static_cast<int32_t>(codes.size()));
        in.sensitive[r] = it->second;
      }
      in.sensitive_domain = std::max<uint32_t>(1, static_cast<uint32_t>(codes.size()));
      continue;
    }
    if (s.role != AttributeRole::kQuasiIdentifier) continue;
    const MondrianDomain& dom = domains.at(q++);
    MondrianAttribute a;
    a.name = dom.name;
    a.column = dom.column;
    a.kind = dom.kind;
    switch (dom.kind) {
      case MondrianKind::kNumeric:
        encode_numeric(table, dom, &a);
        break;
      case MondrianKind::kSet:
        encode_set(table, dom, &a);
        break;
      case MondrianKind::kHierarchy:
        encode_hierarchy(table, dom, s.hierarchy, &a);
        break;
    }
    if (a.domain == 0) a.domain = 1;  // empty table
    in.qis.push_back(std::move(a));
  }
  return in;
}

}  // namespace kanon::engine
