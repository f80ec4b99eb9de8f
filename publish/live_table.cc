#include "publish/live_table.h"

#include <fmt/format.h>

#include <pqxx/pqxx>
#include <set>

#include "catalog/table_catalog.h"
#include "policy/sql_text.h"
#include "store/table_loader.h"

namespace kanon::publish {

LiveTable load_live_table(pqxx::connection_base& conn, const policy::TablePolicy& policy) {
  store::pin_session_settings(conn);
  const policy::TableInfo info = catalog::read_table_info(conn, policy);
  std::set<std::string> loaded(policy.quasi_identifiers.begin(), policy.quasi_identifiers.end());
  if (policy.sensitive) loaded.insert(policy.sensitive->column);

  LiveTable out;
  out.table.source = policy.name();
  std::string select;
  for (const auto& c : info.columns) {
    out.table.header.push_back(c.name);
    out.types.push_back(c.full_type);
    select +=
        (select.empty() ? "" : ", ") +
        (loaded.count(c.name) ? store::loaded_expression(c) : policy::quote_identifier(c.name));
  }
  if (!policy.person.empty()) {
    out.person_name = "kanon_person";
    while (out.table.column(out.person_name) >= 0) out.person_name += "_";
    out.person_column = static_cast<int>(out.table.header.size());
    out.table.header.push_back(out.person_name);
    out.types.push_back("text");
    select += ", " + store::person_expression(policy);
  }
  const size_t width = out.table.header.size();
  // PostgreSQL text holds no NUL byte, so no person's text equals this one.
  static const std::string kNullPerson("\0null", 5);
  pqxx::read_transaction tx(conn);
  store::copy_rows(
      tx,
      fmt::format("SELECT {} FROM {}", select, policy::qualified_name(policy.schema, policy.table)),
      width, policy.name(), [&](std::vector<std::optional<std::string_view>>& fields) {
        std::vector<std::string> values(width);
        std::vector<uint8_t> nulls(width, 0);
        for (size_t c = 0; c < width; ++c) {
          if (fields[c]) {
            values[c] = *fields[c];
          } else {
            nulls[c] = 1;
            if (static_cast<int>(c) == out.person_column) values[c] = kNullPerson;
          }
        }
        out.table.rows.push_back(std::move(values));
        out.nulls.push_back(std::move(nulls));
        out.table.line_numbers.push_back(out.table.rows.size());
      });
  tx.commit();
  return out;
}

}  // namespace kanon::publish
