#include "publish/table_writer.h"

#include <fmt/format.h>

#include <fstream>
#include <pqxx/pqxx>

#include "base/sqlstate.h"
#include "policy/sql_text.h"
#include "store/copy_row.h"

namespace kanon::publish {

void write_table(pqxx::transaction_base& tx, const ExportSettings& s, const LiveTable& live,
                 const PublishedRows& rows, const std::function<void(uint64_t written)>& progress) {
  const auto& header = live.table.header;
  const std::string name = policy::qualified_name(s.target_schema, s.target_table);
  if (s.replace) tx.exec("DROP TABLE IF EXISTS " + name);
  std::string ddl;
  std::vector<std::string> columns;
  for (size_t c : rows.columns()) {
    columns.push_back(policy::quote_identifier(header[c]));
    ddl += fmt::format("{}{} {}", ddl.empty() ? "" : ", ", columns.back(),
                       rows.is_quasi_identifier(c) ? "text" : live.types[c]);
  }
  tx.exec(fmt::format("CREATE TABLE {} ({})", name, ddl));
  for (const auto& role : s.grant)
    tx.exec(fmt::format("GRANT SELECT ON {} TO {}", name, policy::quote_identifier(role)));
  pqxx::stream_to copy(tx, name, columns);
  uint64_t written = 0;
  rows.for_each([&](const std::vector<const std::string*>& fields) {
    copy << store::CopyRow{fields};
    if (++written % kRowsPerProgress == 0 && progress) progress(written);
  });
  copy.complete();
  if (progress) progress(written);
}

void write_csv(const std::string& path, const LiveTable& live, const PublishedRows& rows) {
  std::ofstream out(path, std::ios::binary);
  std::vector<std::string_view> fields;
  for (size_t c : rows.columns()) fields.push_back(live.table.header[c]);
  engine::write_csv_row(out, fields, ';');
  rows.for_each([&](const std::vector<const std::string*>& values) {
    fields.clear();
    for (const std::string* v : values) fields.push_back(v ? std::string_view(*v) : "");
    engine::write_csv_row(out, fields, ';');
  });
  out.close();
  if (!out)
    throw ExportError(sqlstate::kIoError, fmt::format("kanon export: cannot write {}", path));
}

}  // namespace kanon::publish
