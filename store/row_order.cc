#include "store/row_order.h"

#include <fmt/format.h>

#include <algorithm>
#include <pqxx/pqxx>

#include "base/text.h"
#include "policy/order_inference.h"
#include "policy/sql_text.h"

namespace kanon::store {

namespace {

constexpr uint64_t kSampleRows = 20000;

// The rows of `query`: a block number, a rank in key order, then per
// quasi-identifier of `columns` its raw value as text and whether its mask
// shows it. Returns the rows in the query's order and their ranks.
policy::StoredRows read_rows(pqxx::connection_base& conn, const std::string& query,
                             const std::vector<std::string>& columns, std::vector<int64_t>& rank) {
  policy::StoredRows stored;
  for (const auto& c : columns) stored.columns.push_back({c, {}, {}});
  pqxx::work tx(conn);
  tx.exec("SET LOCAL jit = off");
  const auto result = tx.exec(query);
  tx.commit();
  for (const auto& row : result) {
    stored.block.push_back(row[0].as<int64_t>());
    rank.push_back(row[1].as<int64_t>());
    for (size_t c = 0; c < columns.size(); ++c) {
      const auto& raw = row[static_cast<int>(2 + 2 * c)];
      stored.columns[c].raw.push_back(raw.is_null() ? std::nullopt
                                                    : std::optional<std::string>(raw.c_str()));
      stored.columns[c].shown.push_back(row[static_cast<int>(3 + 2 * c)].as<bool>());
    }
  }
  return stored;
}

// `stored` in the order of `rank`, all in one run.
policy::StoredRows by_rank(const policy::StoredRows& stored, const std::vector<int64_t>& rank) {
  std::vector<size_t> order(rank.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return rank[a] < rank[b]; });
  policy::StoredRows out;
  out.block.assign(order.size(), 0);
  for (const auto& c : stored.columns) {
    policy::StoredRows::Column sorted{c.name, {}, {}};
    for (size_t i : order) {
      sorted.raw.push_back(c.raw[i]);
      sorted.shown.push_back(c.shown[i]);
    }
    out.columns.push_back(std::move(sorted));
  }
  return out;
}

// The first of `guesses` that leaks (a pointer into it).
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
  // The key's order, when restricted sessions see the key as it is.
  std::string order;
  if (key.source == policy::RowKey::Source::kPolicy ||
      key.source == policy::RowKey::Source::kPrimaryKey)
    for (const auto& k : key.columns) {
      const auto m = std::find_if(masks.columns.begin(), masks.columns.end(),
                                  [&](const auto& c) { return c.column == k; });
      if (m == masks.columns.end() || m->role != policy::ColumnMask::Role::kOther) {
        order.clear();
        break;
      }
      order += (order.empty() ? "" : ", ") + policy::quote_identifier(k);
    }
  const bool stored_order = policy.mode != policy::EnforcementMode::kMaterialized;
  if (columns.empty() || (!stored_order && order.empty())) return;
  // One read: whole blocks (a child's apart: tableoid), in stored order,
  // with each row's rank in key order among them (keys that follow a
  // column's order still do in a sample).
  std::string sample;
  if (rows > kSampleRows)
    sample = fmt::format(" TABLESAMPLE SYSTEM ({:.6f}) REPEATABLE (0)",
                         100.0 * static_cast<double>(kSampleRows) / static_cast<double>(rows));
  std::vector<int64_t> rank;
  const policy::StoredRows stored =
      read_rows(conn,
                "SELECT pg_catalog.int8(tableoid) * 4294967296 + "
                "(ctid::pg_catalog.text::pg_catalog.point)[0]::pg_catalog.int8, " +
                    (order.empty() ? std::string("0::pg_catalog.int8")
                                   : "pg_catalog.row_number() OVER (ORDER BY " + order + ")") +
                    list + " FROM " + policy::qualified_name(policy.schema, policy.table) + sample +
                    " ORDER BY 1, ctid",
                columns, rank);
  const std::string at =
      fmt::format("{}:{}: {}: ", policy.where.file, policy.where.line, policy.where.key);
  const auto in_storage =
      stored_order ? policy::guess_from_order(stored) : std::vector<policy::OrderGuess>{};
  if (const auto* g = leaking(in_storage))
    throw RowOrderLeak(fmt::format(
        "{}mode: {} hands restricted sessions the rows of {} in the order they are stored, "
        "and that order tells the values of '{}' the release hides: {}; the table was loaded "
        "or CLUSTERed in an order following it. Use mode: materialized (its copy is written in "
        "random order), or store the rows in an order that follows no quasi-identifier "
        "(CREATE TABLE ... AS SELECT ... ORDER BY random()), then refresh",
        at, policy.mode == policy::EnforcementMode::kView ? "view" : "inline", policy.name(),
        g->column, rates(*g)));
  if (order.empty()) return;
  const auto by_key = policy::guess_from_order(by_rank(stored, rank));
  if (const auto* g = leaking(by_key)) {
    throw RowOrderLeak(fmt::format(
        "{}restricted sessions read the key of {} ({}) as it is, so they can order its rows by "
        "it, and that order tells the values of '{}' the release hides: {}; the keys were "
        "numbered in an order following it (a sorted load). Number the rows again in an order "
        "that follows no quasi-identifier, or hide the key (direct_identifiers), then refresh",
        at, policy.name(), base::join(key.columns), g->column, rates(*g)));
  }
}

}  // namespace kanon::store
