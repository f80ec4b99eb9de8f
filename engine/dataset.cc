#include "engine/dataset.h"

#include <fmt/format.h>

#include <unordered_set>

namespace kanon::engine {

void Dataset::replicate(int times) {
  const size_t n = rows;
  data.reserve(n * width() * times);
  for (int t = 1; t < times; ++t) {
    data.insert(data.end(), data.begin(), data.begin() + n * width());
    if (!sensitive.empty())
      sensitive.insert(sensitive.end(), sensitive.begin(), sensitive.begin() + n);
    // A copy of a row belongs to the same person.
    if (!person.empty()) person.insert(person.end(), person.begin(), person.begin() + n);
  }
  rows = n * times;
  for (auto& q : qis) {
    for (auto& f : q.data_frequency) f *= times;
  }
}

namespace {

QuasiIdentifier encode_qi(const CsvTable& table, int column, const AttributeSpec& spec,
                          std::vector<int32_t>& codes) {
  QuasiIdentifier q;
  q.name = spec.name;
  q.column = column;
  codes.resize(table.rows.size());
  std::vector<std::string> distinct;
  for (size_t r = 0; r < table.rows.size(); ++r) {
    const auto& v = table.rows[r][column];
    const uint32_t before = q.dictionary.size();
    codes[r] = static_cast<int32_t>(q.dictionary.encode(v));
    if (q.dictionary.size() != before) distinct.push_back(v);
  }
  q.data_values = q.dictionary.size();
  if (!spec.hierarchy) {
    throw DataError(fmt::format("quasi-identifier '{}' has no hierarchy", spec.name));
  }
  HierarchyTable h = spec.hierarchy(distinct);
  h.validate();
  q.height = static_cast<int>(h.height());
  // Level 0: data values keep their codes; values only in the hierarchy follow.
  std::vector<bool> covered(q.data_values, false);
  std::vector<int32_t> row_code(h.rows.size());
  for (size_t r = 0; r < h.rows.size(); ++r) {
    row_code[r] = static_cast<int32_t>(q.dictionary.encode(h.rows[r][0]));
    if (static_cast<uint32_t>(row_code[r]) < q.data_values) covered[row_code[r]] = true;
  }
  for (uint32_t c = 0; c < q.data_values; ++c) {
    if (covered[c]) continue;
    for (size_t r = 0; r < table.rows.size(); ++r) {
      if (codes[r] == static_cast<int32_t>(c)) {
        throw DataError(fmt::format(
            "{}:{}: value '{}' of column '{}' is not covered by its "
            "hierarchy {}",
            table.source, table.line_numbers[r], table.rows[r][column], spec.name, h.source));
      }
    }
  }
  q.domain_size = static_cast<uint32_t>(h.rows.size());
  q.maps.assign(q.height, std::vector<int32_t>(q.domain_size, 0));
  for (int l = 0; l < q.height; ++l) {
    std::unordered_set<int32_t> distinct_level;
    for (size_t r = 0; r < h.rows.size(); ++r) {
      const int32_t g = static_cast<int32_t>(q.dictionary.encode(h.rows[r][l]));
      q.maps[l][row_code[r]] = g;
      distinct_level.insert(g);
    }
    q.distinct_per_level.push_back(static_cast<uint32_t>(distinct_level.size()));
  }
  q.data_frequency.assign(q.domain_size, 0);
  for (int32_t c : codes) ++q.data_frequency[c];
  return q;
}

}  // namespace

int person_column(const CsvTable& table, const std::vector<AttributeSpec>& specs,
                  const std::string& person) {
  const int col = table.column(person);
  if (col < 0) {
    throw DataError(
        fmt::format("{}: person column '{}' is not in the header", table.source, person));
  }
  for (const auto& spec : specs) {
    if (spec.name == person && spec.role == AttributeRole::kQuasiIdentifier) {
      throw DataError(
          fmt::format("person column '{}' is also a quasi-identifier; it identifies persons, so it "
                      "cannot be generalized",
                      person));
    }
  }
  return col;
}

Dataset encode_dataset(const CsvTable& table, const std::vector<AttributeSpec>& specs,
                       const std::string& person) {
  Dataset ds;
  ds.rows = table.rows.size();
  std::vector<std::vector<int32_t>> columns;
  for (const auto& spec : specs) {
    const int col = table.column(spec.name);
    if (col < 0) {
      throw DataError(
          fmt::format("{}: no column named '{}' in the header", table.source, spec.name));
    }
    if (spec.role == AttributeRole::kQuasiIdentifier) {
      columns.emplace_back();
      ds.qis.push_back(encode_qi(table, col, spec, columns.back()));
    } else if (spec.role == AttributeRole::kSensitive) {
      if (!ds.sensitive_name.empty()) {
        throw DataError(fmt::format("only one sensitive attribute is supported ('{}', '{}')",
                                    ds.sensitive_name, spec.name));
      }
      ds.sensitive_name = spec.name;
      ds.sensitive_column = col;
      ds.sensitive.reserve(ds.rows);
      for (const auto& row : table.rows) {
        ds.sensitive.push_back(static_cast<int32_t>(ds.sensitive_dictionary.encode(row[col])));
      }
    }
  }
  if (!person.empty()) {
    ds.person_column = person_column(table, specs, person);
    ds.person_name = person;
    Dictionary persons;
    ds.person.reserve(ds.rows);
    for (const auto& row : table.rows) {
      ds.person.push_back(static_cast<int32_t>(persons.encode(row[ds.person_column])));
    }
    ds.persons = persons.size();
  }
  if (ds.qis.empty()) throw DataError("at least one quasi-identifier is required");
  if (ds.qis.size() > 64) throw DataError("at most 64 quasi-identifiers are supported");
  const size_t w = ds.qis.size();
  ds.data.resize(ds.rows * w);
  for (size_t r = 0; r < ds.rows; ++r) {
    for (size_t c = 0; c < w; ++c) ds.data[r * w + c] = columns[c][r];
  }
  return ds;
}

}  // namespace kanon::engine
