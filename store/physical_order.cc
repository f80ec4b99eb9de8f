#include "store/physical_order.h"

#include <fmt/format.h>

#include <pqxx/pqxx>

#include "policy/order_inference.h"
#include "policy/sql_text.h"

namespace kanon::store {

namespace {

constexpr uint64_t kSampleRows = 20000;

}  // namespace

void check_physical_order(pqxx::connection_base& conn, const policy::TablePolicy& policy,
                          const policy::TableMasks& masks, uint64_t rows) {
  if (policy.mode == policy::EnforcementMode::kMaterialized) return;
  policy::StoredRows stored;
  // Per quasi-identifier: its raw value as text, and whether its mask shows
  // it unchanged. The block of a child's rows counts apart (tableoid).
  std::string list =
      "pg_catalog.int8(tableoid) * 4294967296 + (ctid::pg_catalog.text::pg_catalog.point)[0]::"
      "pg_catalog.int8";
  for (const auto& m : masks.columns) {
    if (m.role != policy::ColumnMask::Role::kQuasiIdentifier) continue;
    const std::string raw = policy::quote_identifier(m.column) + "::pg_catalog.text";
    list += ", " + raw + ", (" + m.expression + ")::pg_catalog.text IS NOT DISTINCT FROM " + raw;
    stored.columns.push_back({m.column, {}, {}});
  }
  if (stored.columns.empty()) return;
  std::string sample;
  if (rows > kSampleRows)
    sample = fmt::format(" TABLESAMPLE SYSTEM ({:.6f}) REPEATABLE (0)",
                         100.0 * static_cast<double>(kSampleRows) / static_cast<double>(rows));
  pqxx::work tx(conn);
  tx.exec("SET LOCAL jit = off");
  const auto result =
      tx.exec("SELECT " + list + " FROM " + policy::qualified_name(policy.schema, policy.table) +
              sample + " ORDER BY 1, ctid");
  tx.commit();
  for (const auto& row : result) {
    stored.block.push_back(row[0].as<int64_t>());
    for (size_t c = 0; c < stored.columns.size(); ++c) {
      const auto& raw = row[static_cast<int>(1 + 2 * c)];
      stored.columns[c].raw.push_back(raw.is_null() ? std::nullopt
                                                    : std::optional<std::string>(raw.c_str()));
      stored.columns[c].shown.push_back(row[static_cast<int>(2 + 2 * c)].as<bool>());
    }
  }
  for (const auto& g : policy::guess_from_order(stored)) {
    if (!g.leaks()) continue;
    throw StoredOrderLeak(fmt::format(
        "{}:{}: {}: mode: {} hands restricted sessions the rows of {} in the order they are "
        "stored, and that order tells the values of '{}' the release hides: of {} rows read in "
        "stored order whose value it hides, {} ({:.0f}%) hold the value of the nearest row that "
        "shows one ({:.0f}% would by chance); the table was loaded or CLUSTERed in an order "
        "following it. Use mode: materialized (its copy is written in random order), or store "
        "the rows in an order that follows no quasi-identifier (CREATE TABLE ... AS SELECT ... "
        "ORDER BY random()), then refresh",
        policy.where.file, policy.where.line, policy.where.key,
        policy.mode == policy::EnforcementMode::kView ? "view" : "inline", policy.name(), g.column,
        g.hidden, g.guessed, 100 * g.rate(), 100 * g.expected));
  }
}

}  // namespace kanon::store
