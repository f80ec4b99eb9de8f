#include "engine/mondrian_output.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "base/json.h"
#include "engine/algorithm.h"

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
  using base::json_number;
  base::Json doc;
  doc["found"] = true;
  doc["algorithm"] = algorithm_name(Algorithm::kMondrian);
  doc["choice"] = r.choice;
  doc["privacy"] = r.privacy;
  if (!r.person.empty()) {
    doc["counts"] = "persons";
    doc["person"] = r.person;
  }
  doc["quasi_identifiers"] = r.quasi_identifiers;
  doc["rows"] = r.loss.rows;
  doc["classes"] = r.loss.classes;
  doc["min_class_size"] = r.loss.min_class_size;
  doc["suppressed"] = 0;
  doc["loss"] = {{"dp", json_number(r.loss.dp)},
                 {"gcp", json_number(r.loss.gcp)},
                 {"ncp", json_number(r.loss.ncp_sum)}};
  doc["mondrian_ms"] = json_number(r.ms, 3);
  doc["mondrian_cpu_ms"] = json_number(r.cpu_ms, 3);
  doc["total_ms"] = json_number(r.total_ms, 3);
  auto& phases = doc["phases_ms"] = base::Json::object();
  for (const auto& [name, ms] : r.phases_ms) phases[name] = json_number(ms, 3);
  doc["ranks"] = r.ranks;
  if (r.ranks > 1 || !r.parts.empty()) {
    doc["rows_per_rank"] = r.rows_per_rank;
    doc["parts"] = r.parts;
    doc["split"] = r.split;
    doc["cuts"] = r.cuts;
    doc["sample_fraction"] = json_number(r.sample_fraction);
    doc["sample_rows"] = r.sample_rows;
  }
  return base::json_text(doc);
}

}  // namespace kanon::engine
