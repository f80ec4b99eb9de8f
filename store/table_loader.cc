#include "store/table_loader.h"

#include <fmt/format.h>

#include <charconv>
#include <pqxx/pqxx>

#include "base/text.h"
#include "policy/sql_text.h"

namespace kanon::store {

using base::ConfigError;

std::string loaded_expression(const policy::ColumnInfo& c) {
  return c.released(policy::quote_identifier(c.name));
}

std::string person_expression(const policy::TablePolicy& policy) {
  if (policy.person.size() == 1)
    return policy::quote_identifier(policy.person[0]) + "::pg_catalog.text";
  std::string cols;
  for (const auto& c : policy.person)
    cols += (cols.empty() ? "" : ", ") + policy::quote_identifier(c);
  return "ROW(" + cols + ")::pg_catalog.text";
}

void pin_session_settings(pqxx::connection_base& conn) {
  pqxx::nontransaction tx(conn);
  tx.exec(
      "SET DateStyle = 'ISO, YMD'; SET IntervalStyle = 'postgres'; SET TimeZone = 'UTC'; "
      "SET extra_float_digits = 3; SET bytea_output = 'hex'; SET client_encoding = 'UTF8'; "
      "SET standard_conforming_strings = on; SET search_path = pg_catalog");
}

std::string load_query(const policy::TablePolicy& policy, const policy::TableInfo& info,
                       const LoadOptions& options) {
  std::vector<std::string> cols = policy.quasi_identifiers;
  if (policy.sensitive) cols.push_back(policy.sensitive->column);
  std::string list, groups;
  for (size_t i = 0; i < cols.size(); ++i) {
    const policy::ColumnInfo* c = info.find(cols[i]);
    list += (i ? ", " : "") + loaded_expression(*c);
    groups += (i ? ", " : "") + std::to_string(i + 1);
  }
  if (!policy.person.empty()) {
    list += ", " + person_expression(policy);
    groups += ", " + std::to_string(cols.size() + 1);
  }
  const std::string from = policy::qualified_name(policy.schema, policy.table);
  if (!options.aggregate) return fmt::format("SELECT {} FROM {}", list, from);
  return fmt::format("SELECT {}, count(*) FROM {} GROUP BY {}", list, from, groups);
}

std::string aggregate_settings(pqxx::transaction_base& tx, const policy::TablePolicy& policy,
                               const LoadOptions& options) {
  // Hash aggregation over several text columns spills to disk at the default
  // work_mem, which made the aggregated COPY 3x slower than sending the rows.
  std::string sql = "SET LOCAL work_mem = '256MB'";
  if (!options.tuned) return sql;
  sql += "; SET LOCAL enable_sort = off; SET LOCAL jit = off";
  const auto size = tx.exec_params1("SELECT pg_catalog.pg_relation_size($1::pg_catalog.regclass)",
                                    policy::qualified_name_value(policy.schema, policy.table))[0]
                        .as<int64_t>();
  if (size >= 0 && static_cast<uint64_t>(size) >= options.parallel_bytes)
    sql += "; SET LOCAL parallel_tuple_cost = 0";
  return sql;
}

bool parse_copy_line(std::string_view line, std::string& storage,
                     std::vector<std::optional<std::string_view>>& fields) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  storage.clear();
  storage.reserve(line.size());
  std::vector<std::pair<size_t, size_t>> spans;  // into storage; npos start = NULL
  fields.clear();
  size_t start = 0;
  bool is_null = false;
  auto finish = [&] {
    spans.emplace_back(is_null ? std::string::npos : start, storage.size() - start);
    start = storage.size();
    is_null = false;
  };
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '\t') {
      finish();
      continue;
    }
    if (c != '\\') {
      storage += c;
      continue;
    }
    if (++i >= line.size()) return false;
    const char e = line[i];
    switch (e) {
      case 'N':
        if (storage.size() != start) return false;
        is_null = true;
        break;
      case 'b':
        storage += '\b';
        break;
      case 'f':
        storage += '\f';
        break;
      case 'n':
        storage += '\n';
        break;
      case 'r':
        storage += '\r';
        break;
      case 't':
        storage += '\t';
        break;
      case 'v':
        storage += '\v';
        break;
      case 'x': {
        int v = 0, n = 0;
        while (n < 2 && i + 1 < line.size() && base::is_hex_digit(line[i + 1]))
          v = v * 16 + base::hex_value(line[++i]), ++n;
        if (n == 0) return false;
        storage += static_cast<char>(v);
        break;
      }
      default:
        if (e >= '0' && e <= '7') {
          int v = e - '0', n = 1;
          while (n < 3 && i + 1 < line.size() && line[i + 1] >= '0' && line[i + 1] <= '7')
            v = v * 8 + (line[++i] - '0'), ++n;
          storage += static_cast<char>(v);
        } else {
          storage += e;
        }
    }
  }
  finish();
  for (const auto& [s, n] : spans)
    fields.push_back(s == std::string::npos
                         ? std::nullopt
                         : std::optional(std::string_view(storage).substr(s, n)));
  return true;
}

policy::EncodedTable load_table(pqxx::connection_base& conn, const policy::TablePolicy& policy,
                                const policy::TableInfo& info, const LoadOptions& options) {
  std::vector<policy::EncodedColumn> attrs;
  for (const auto& q : policy.quasi_identifiers) attrs.push_back({q, info.find(q)->type, {}});
  std::optional<policy::EncodedColumn> sensitive;
  if (policy.sensitive)
    sensitive = policy::EncodedColumn{
        policy.sensitive->column, info.find(policy.sensitive->column)->type, {}};
  std::optional<policy::EncodedColumn> person;
  if (!policy.person.empty()) person = policy::EncodedColumn{"person", "text", {}};
  policy::EncodedTable table(std::move(attrs), std::move(sensitive), std::move(person));
  const size_t width = table.width();

  pin_session_settings(conn);
  pqxx::read_transaction tx(conn);
  if (options.aggregate) tx.exec(aggregate_settings(tx, policy, options));
  copy_rows(tx, load_query(policy, info, options), width + (options.aggregate ? 1 : 0),
            policy.name(), [&](std::vector<std::optional<std::string_view>>& fields) {
              uint64_t weight = 1;
              if (options.aggregate) {
                const auto w = *fields.back();
                std::from_chars(w.data(), w.data() + w.size(), weight);
                fields.pop_back();
              }
              table.add_row(fields, weight);
            });
  tx.commit();
  return table;
}

void copy_rows(pqxx::transaction_base& tx, const std::string& query, size_t width,
               const std::string& source, const CopyRowHandler& on_row) {
  pqxx::stream_from copy(tx, "(" + query + ")");
  std::string line, storage;
  std::vector<std::optional<std::string_view>> fields;
  while (copy.get_raw_line(line)) {
    if (!parse_copy_line(line, storage, fields) || fields.size() != width)
      throw std::runtime_error(fmt::format("malformed COPY line from {}", source));
    on_row(fields);
  }
  copy.complete();
}

void check_constants(pqxx::connection_base& conn, const policy::TablePolicy& policy,
                     const policy::TableInfo& info) {
  for (const auto& d : policy.direct_identifiers) {
    if (!d.constant) continue;
    const policy::ColumnInfo* c = info.find(d.column);
    try {
      pqxx::read_transaction tx(conn);
      tx.exec("SELECT " + policy::typed_literal(*d.constant, c->full_type));
    } catch (const pqxx::sql_error& e) {
      throw ConfigError(fmt::format("{}:{}: {}: '{}' is not a valid {} value: {}", d.where.file,
                                    d.where.line, d.where.key, *d.constant, c->full_type,
                                    e.what()));
    }
  }
}

}  // namespace kanon::store
