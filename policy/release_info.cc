#include "policy/release_info.h"

#include <fmt/format.h>

#include "base/text.h"
#include "policy/sql_text.h"

namespace kanon::policy {

using base::join;

std::string key_expression(const RowKey& key) {
  if (key.columns.size() == 1 && key.told_apart_by.empty())
    return quote_identifier(key.columns[0]) + "::pg_catalog.text";
  std::string cols;
  for (const auto& c : key.columns) cols += (cols.empty() ? "" : ", ") + quote_identifier(c);
  if (key.told_apart_by.empty()) return "ROW(" + cols + ")::pg_catalog.text";
  for (const auto& c : key.told_apart_by) cols += ", " + quote_identifier(c);
  return fmt::format(
      "ROW({0}, pg_catalog.row_number() OVER (PARTITION BY ROW({0})::pg_catalog.text))::pg_catalog."
      "text",
      cols);
}

std::string RowKey::describe() const {
  switch (source) {
    case Source::kPolicy:
      return "key: " + join(columns);
    case Source::kPrimaryKey:
      return "primary key (" + join(columns) + ")";
    case Source::kOtherColumns:
      return "non-quasi-identifier columns (" + join(columns) + ")" +
             (told_apart_by.empty() ? "" : ", shared by several rows");
    case Source::kNone:
      break;
  }
  return "not linkable (every column is a quasi-identifier or direct identifier)";
}

}  // namespace kanon::policy
