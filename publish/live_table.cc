#include "publish/live_table.h"

#include <fmt/format.h>

namespace kanon::publish {

std::string qualified_name(pqxx::transaction_base& tx, const std::string& schema,
                           const std::string& table) {
  return tx.quote_name(schema) + "." + tx.quote_name(table);
}

LiveTable load_live_table(pqxx::transaction_base& tx, const std::string& schema,
                          const std::string& table) {
  LiveTable out;
  const std::string name = qualified_name(tx, schema, table);
  out.table.source = schema + "." + table;
  const auto cols = tx.exec_params(
      "SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a "
      "WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped "
      "ORDER BY a.attnum",
      name);
  std::string select;
  for (const auto& row : cols) {
    out.table.header.push_back(row[0].as<std::string>());
    out.types.push_back(row[1].as<std::string>());
    if (!select.empty()) select += ", ";
    select += tx.quote_name(out.table.header.back()) + "::text";
  }
  const auto rows = tx.exec(fmt::format("SELECT {} FROM {}", select, name));
  const size_t width = out.table.header.size();
  out.table.rows.reserve(rows.size());
  out.nulls.reserve(rows.size());
  for (size_t r = 0; r < rows.size(); ++r) {
    std::vector<std::string> values(width);
    std::vector<uint8_t> nulls(width, 0);
    for (size_t c = 0; c < width; ++c) {
      if (rows[r][static_cast<int>(c)].is_null()) {
        nulls[c] = 1;
      } else {
        values[c] = rows[r][static_cast<int>(c)].c_str();
      }
    }
    out.table.rows.push_back(std::move(values));
    out.nulls.push_back(std::move(nulls));
    out.table.line_numbers.push_back(r + 1);
  }
  return out;
}

}  // namespace kanon::publish
