#include "engine/hierarchy.h"

#include <fmt/format.h>

#include <fstream>
#include <unordered_map>

#include "engine/csv.h"

namespace kanon::engine {

namespace {

std::string where(const HierarchyTable& t, size_t row) {
  if (row < t.line_numbers.size() && t.line_numbers[row] > 0) {
    return fmt::format("{}:{}", t.source, t.line_numbers[row]);
  }
  return fmt::format("{} (row {})", t.source, row + 1);
}

}  // namespace

void HierarchyTable::validate() const {
  if (rows.empty()) throw HierarchyError(fmt::format("{}: hierarchy has no rows", source));
  const size_t h = rows.front().size();
  if (h == 0)
    throw HierarchyError(fmt::format("{}: hierarchy row without values", where(*this, 0)));
  if (h > 250) throw HierarchyError(fmt::format("{}: more than 250 levels", where(*this, 0)));
  for (size_t r = 0; r < rows.size(); ++r) {
    if (rows[r].size() != h) {
      throw HierarchyError(fmt::format(
          "{}: value '{}' has {} levels but the first row has {} (heights must be equal)",
          where(*this, r), rows[r].empty() ? "" : rows[r][0], rows[r].size(), h));
    }
  }
  std::unordered_map<std::string, size_t> first_row;
  for (size_t r = 0; r < rows.size(); ++r) {
    auto [it, fresh] = first_row.emplace(rows[r][0], r);
    if (!fresh) {
      throw HierarchyError(fmt::format("{}: duplicate value '{}' (first at {})", where(*this, r),
                                       rows[r][0], where(*this, it->second)));
    }
  }
  // Monotonic: the value at level l determines the value at level l+1.
  for (size_t l = 0; l + 1 < h; ++l) {
    std::unordered_map<std::string, size_t> parent_row;
    for (size_t r = 0; r < rows.size(); ++r) {
      auto [it, fresh] = parent_row.emplace(rows[r][l], r);
      if (!fresh && rows[it->second][l + 1] != rows[r][l + 1]) {
        throw HierarchyError(fmt::format(
            "{}: not monotonic: '{}' at level {} generalizes to '{}' here but to '{}' at {}",
            where(*this, r), rows[r][l], l, rows[r][l + 1], rows[it->second][l + 1],
            where(*this, it->second)));
      }
    }
  }
  for (size_t r = 1; r < rows.size(); ++r) {
    if (rows[r][h - 1] != rows[0][h - 1]) {
      throw HierarchyError(
          fmt::format("{}: top level value '{}' differs from '{}' (a single top "
                      "value is required)",
                      where(*this, r), rows[r][h - 1], rows[0][h - 1]));
    }
  }
}

HierarchyTable read_hierarchy_csv(const std::string& path, char delimiter) {
  CsvTable csv;
  try {
    std::ifstream probe(path);
    if (!probe) throw HierarchyError(fmt::format("{}: cannot open hierarchy file", path));
    csv = parse_csv(probe, delimiter, path, /*has_header=*/false);
  } catch (const CsvError& e) {
    // Ragged rows are a hierarchy error (unequal heights); re-read leniently.
    std::ifstream in(path);
    HierarchyTable t;
    t.source = path;
    std::string line;
    size_t n = 0;
    while (std::getline(in, line)) {
      ++n;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.empty()) continue;
      std::vector<std::string> fields;
      size_t start = 0;
      for (;;) {
        size_t pos = line.find(delimiter, start);
        fields.push_back(line.substr(start, pos - start));
        if (pos == std::string::npos) break;
        start = pos + 1;
      }
      t.rows.push_back(std::move(fields));
      t.line_numbers.push_back(n);
    }
    t.validate();
    throw HierarchyError(e.what());
  }
  HierarchyTable t;
  t.source = path;
  t.rows = std::move(csv.rows);
  t.line_numbers = std::move(csv.line_numbers);
  t.validate();
  return t;
}

}  // namespace kanon::engine
