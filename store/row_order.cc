#include "store/row_order.h"

#include <fmt/format.h>

#include <algorithm>
#include <pqxx/pqxx>

#include "policy/order_inference.h"
#include "policy/sql_text.h"

namespace kanon::store {

namespace {

constexpr uint64_t kSampleRows = 20000;

// The rows `query` returns: a block number, then per quasi-identifier of
// `columns` its raw value as text and whether its mask shows it.
policy::StoredRows read_rows(pqxx::connection_base& conn, const std::string& query,
                             const std::vector<std::string>& columns) {
  policy::StoredRows stored;
  for (const auto& c : columns) stored.columns.push_back({c, {}, {}});
  pqxx::work tx(conn);
  tx.exec("SET LOCAL jit = off");
  const auto result = tx.exec(query);
  tx.commit();
  for (const auto& row : result) {
    stored.block.push_back(row[0].as<int64_t>());
    for (size_t c = 0; c < columns.size(); ++c) {
      const auto& raw = row[static_cast<int>(1 + 2 * c)];
      stored.columns[c].raw.push_back(raw.is_null() ? std::nullopt
                                                    : std::optional<std::string>(raw.c_str()));
      stored.columns[c].shown.push_back(row[static_cast<int>(2 + 2 * c)].as<bool>());
    }
  }
  return stored;
}

// The first column of `stored` whose hidden values its order tells.
const policy::OrderGuess* leaking(const std::vector<policy::OrderGuess>& guesses) {
  const auto g =
      std::find_if(guesses.begin(), guesses.end(), [](const auto& x) { return x.leaks(); });
  return g == guesses.end() ? nullptr : &*g;
}

std::string rates(const policy::OrderGuess& g) {
  return fmt::format(
      "of {} rows read in that order whose value it hides, {} ({:.0f}%) hold the value of the "
      "nearest row that shows one ({:.0f}% would by chance)",
      g.hidden, g.guessed, 100 * g.rate(), 100 * g.expected);
}

}  // namespace

void check_row_order(pqxx::connection_base& conn, const policy::TablePolicy& policy,
                     const policy::TableMasks& masks, uint64_t rows, const policy::RowKey& key) {
  // Per quasi-identifier: its raw value as text, and whether its mask shows
  // it unchanged.
  std::string list;
  std::vector<std::string> columns;
  for (const auto& m : masks.columns) {
    if (m.role != policy::ColumnMask::Role::kQuasiIdentifier) continue;
    const std::string raw = policy::quote_identifier(m.column) + "::pg_catalog.text";
    list += ", " + raw + ", (" + m.expression + ")::pg_catalog.text IS NOT DISTINCT FROM " + raw;
    columns.push_back(m.column);
  }
  if (columns.empty()) return;
  const std::string table = policy::qualified_name(policy.schema, policy.table);
  const std::string at =
      fmt::format("{}:{}: {}: ", policy.where.file, policy.where.line, policy.where.key);
  if (policy.mode != policy::EnforcementMode::kMaterialized) {
    // The block of a child's rows counts apart (tableoid).
    std::string sample;
    if (rows > kSampleRows)
      sample = fmt::format(" TABLESAMPLE SYSTEM ({:.6f}) REPEATABLE (0)",
                           100.0 * static_cast<double>(kSampleRows) / static_cast<double>(rows));
    const auto guesses = policy::guess_from_order(
        read_rows(conn,
                  "SELECT pg_catalog.int8(tableoid) * 4294967296 + "
                  "(ctid::pg_catalog.text::pg_catalog.point)[0]::pg_catalog.int8" +
                      list + " FROM " + table + sample + " ORDER BY 1, ctid",
                  columns));
    if (const auto* g = leaking(guesses))
      throw RowOrderLeak(fmt::format(
          "{}mode: {} hands restricted sessions the rows of {} in the order they are stored, "
          "and that order tells the values of '{}' the release hides: {}; the table was loaded "
          "or CLUSTERed in an order following it. Use mode: materialized (its copy is written in "
          "random order), or store the rows in an order that follows no quasi-identifier "
          "(CREATE TABLE ... AS SELECT ... ORDER BY random()), then refresh",
          at, policy.mode == policy::EnforcementMode::kView ? "view" : "inline", policy.name(),
          g->column, rates(*g)));
  }
  // The key's order, when restricted sessions see the key as it is.
  if (key.source != policy::RowKey::Source::kPolicy &&
      key.source != policy::RowKey::Source::kPrimaryKey)
    return;
  std::string order;
  for (const auto& k : key.columns) {
    const auto m = std::find_if(masks.columns.begin(), masks.columns.end(),
                                [&](const auto& c) { return c.column == k; });
    if (m == masks.columns.end() || m->role != policy::ColumnMask::Role::kOther) return;
    order += (order.empty() ? "" : ", ") + policy::quote_identifier(k);
  }
  const auto guesses = policy::guess_from_order(
      read_rows(conn,
                "SELECT 0::pg_catalog.int8" + list + " FROM " + table + " ORDER BY " + order +
                    " LIMIT " + std::to_string(kSampleRows),
                columns));
  if (const auto* g = leaking(guesses)) {
    std::string names;
    for (const auto& k : key.columns) names += (names.empty() ? "" : ", ") + k;
    throw RowOrderLeak(fmt::format(
        "{}restricted sessions read the key of {} ({}) as it is, so they can order its rows by "
        "it, and that order tells the values of '{}' the release hides: {}; the keys were "
        "numbered in an order following it (a sorted load). Number the rows again in an order "
        "that follows no quasi-identifier, or hide the key (direct_identifiers), then refresh",
        at, policy.name(), names, g->column, rates(*g)));
  }
}

}  // namespace kanon::store
