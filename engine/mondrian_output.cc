#include "engine/mondrian_output.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "engine/json_string.h"

namespace kanon::engine {

std::string generalized_value(const MondrianInput& in, const MondrianResult& r, size_t c,
                              size_t a) {
  const MondrianAttribute& attr = in.qis[a];
  const AttributeRange& range = r.ranges[c * in.qis.size() + a];
  switch (attr.kind) {
    case MondrianKind::kNumeric:
      if (range.min == range.max) return fmt::format("{}", attr.numbers[range.min]);
      return fmt::format("[{}-{}]", attr.numbers[range.min], attr.numbers[range.max]);
    case MondrianKind::kHierarchy: {
      const int level = common_level(attr, range.min, range.max);
      return attr.node_label[level][attr.node[level][range.min]];
    }
    case MondrianKind::kSet: {
      if (range.min == range.max) return attr.labels[range.min];
      std::vector<int32_t> codes;
      for (uint32_t i = r.class_begin(c); i < r.class_end[c]; ++i) {
        codes.push_back(attr.codes[r.order[i]]);
      }
      std::sort(codes.begin(), codes.end());
      codes.erase(std::unique(codes.begin(), codes.end()), codes.end());
      std::string s = "{";
      for (size_t i = 0; i < codes.size(); ++i) {
        if (i) s += ',';
        s += attr.labels[codes[i]];
      }
      return s + "}";
    }
  }
  return "*";
}

void write_mondrian_csv(const std::string& path, const CsvTable& table,
                        const std::vector<AttributeSpec>& specs, const MondrianInput& in,
                        const MondrianResult& r, char delimiter) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw DataError(fmt::format("{}: cannot write output", path));
  const size_t d = in.qis.size();
  std::vector<int> qi_of_column(table.header.size(), -1);
  std::vector<bool> dropped(table.header.size(), false);
  for (size_t q = 0; q < d; ++q) qi_of_column[in.qis[q].column] = static_cast<int>(q);
  for (const auto& s : specs) {
    if (s.role == AttributeRole::kIdentifying) {
      const int c = table.column(s.name);
      if (c >= 0) dropped[c] = true;
    }
  }
  std::vector<std::string_view> fields;
  for (size_t c = 0; c < table.header.size(); ++c) {
    if (!dropped[c]) fields.push_back(table.header[c]);
  }
  write_csv_row(out, fields, delimiter);
  std::vector<uint32_t> class_of_row(in.rows);
  std::vector<std::string> values(r.classes() * d);
  for (size_t c = 0; c < r.classes(); ++c) {
    for (uint32_t i = r.class_begin(c); i < r.class_end[c]; ++i) {
      class_of_row[r.order[i]] = static_cast<uint32_t>(c);
    }
    for (size_t a = 0; a < d; ++a) values[c * d + a] = generalized_value(in, r, c, a);
  }
  for (size_t row = 0; row < table.rows.size(); ++row) {
    fields.clear();
    for (size_t c = 0; c < table.header.size(); ++c) {
      if (dropped[c]) continue;
      const int q = qi_of_column[c];
      fields.push_back(q < 0 ? std::string_view(table.rows[row][c])
                             : std::string_view(values[class_of_row[row] * d + q]));
    }
    write_csv_row(out, fields, delimiter);
  }
  if (!out) throw DataError(fmt::format("{}: write failed", path));
}

std::string part_path(const std::string& path, int rank) {
  const std::filesystem::path p(path);
  const std::string ext = p.extension().string();
  std::filesystem::path out = p;
  out.replace_filename(p.stem().string() + "." + std::to_string(rank) + ext);
  return out.string();
}

std::string mondrian_report_json(const MondrianReport& r) {
  std::string s = "{\n";
  s += "  \"found\": true,\n";
  s += "  \"algorithm\": \"mondrian\",\n";
  s += fmt::format("  \"choice\": {},\n", json_string(r.choice));
  s += fmt::format("  \"privacy\": {},\n", json_string(r.privacy));
  s += "  \"quasi_identifiers\": [";
  for (size_t i = 0; i < r.quasi_identifiers.size(); ++i) {
    s += fmt::format("{}{}", i ? ", " : "", json_string(r.quasi_identifiers[i]));
  }
  s += "],\n";
  s += fmt::format("  \"rows\": {},\n", r.loss.rows);
  s += fmt::format("  \"classes\": {},\n", r.loss.classes);
  s += fmt::format("  \"min_class_size\": {},\n", r.loss.min_class_size);
  s += "  \"suppressed\": 0,\n";
  s += fmt::format("  \"loss\": {{\"dp\": {:.17g}, \"gcp\": {:.17g}, \"ncp\": {:.17g}}},\n",
                   r.loss.dp, r.loss.gcp, r.loss.ncp_sum);
  s += fmt::format("  \"mondrian_ms\": {:.3f},\n", r.ms);
  s += fmt::format("  \"mondrian_cpu_ms\": {:.3f},\n", r.cpu_ms);
  s += fmt::format("  \"total_ms\": {:.3f},\n", r.total_ms);
  s += "  \"phases_ms\": {";
  for (size_t i = 0; i < r.phases_ms.size(); ++i) {
    s += fmt::format("{}{}: {:.3f}", i ? ", " : "", json_string(r.phases_ms[i].first),
                     r.phases_ms[i].second);
  }
  s += "},\n";
  s += fmt::format("  \"ranks\": {}", r.ranks);
  if (r.ranks > 1 || !r.parts.empty()) {
    s += ",\n  \"rows_per_rank\": [";
    for (size_t i = 0; i < r.rows_per_rank.size(); ++i) {
      s += fmt::format("{}{}", i ? ", " : "", r.rows_per_rank[i]);
    }
    s += "],\n  \"parts\": [";
    for (size_t i = 0; i < r.parts.size(); ++i) {
      s += fmt::format("{}{}", i ? ", " : "", json_string(r.parts[i]));
    }
    s += "],\n";
    s += fmt::format("  \"split\": {},\n", json_string(r.split));
    s += "  \"cuts\": [";
    for (size_t i = 0; i < r.cuts.size(); ++i) {
      s += fmt::format("{}{}", i ? ", " : "", json_string(r.cuts[i]));
    }
    s += "],\n";
    s += fmt::format("  \"sample_fraction\": {:.17g},\n", r.sample_fraction);
    s += fmt::format("  \"sample_rows\": {}", r.sample_rows);
  }
  return s + "\n}\n";
}

}  // namespace kanon::engine
