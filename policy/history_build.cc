#include "policy/history_build.h"

#include <fmt/format.h>

#include <algorithm>
#include <pqxx/pqxx>

#include "base/stopwatch.h"
#include "base/text.h"
#include "policy/history_refresh.h"
#include "policy/release_store.h"
#include "policy/server_config.h"
#include "policy/sql_text.h"
#include "policy/table_loader.h"

namespace kanon::policy {
namespace {

using base::join;

// The current rows with their keys: the key's distinct row per history key
// index in `rows` (kNoRow when absent); keys interned into `history`.
EncodedTable load_keyed(pqxx::transaction_base& tx, const TablePolicy& policy,
                        const TableInfo& info, const RowKey& key, ReleaseHistory& history,
                        std::vector<uint32_t>& rows) {
  std::vector<EncodedColumn> attrs;
  std::string select = key_expression(key);
  for (const auto& q : policy.quasi_identifiers) {
    const ColumnInfo* c = info.find(q);
    attrs.push_back({q, c->type, {}});
    select += ", " + loaded_expression(*c);
  }
  std::optional<EncodedColumn> sensitive;
  if (policy.sensitive) {
    const ColumnInfo* c = info.find(policy.sensitive->column);
    sensitive = EncodedColumn{c->name, c->type, {}};
    select += ", " + loaded_expression(*c);
  }
  EncodedTable table(std::move(attrs), std::move(sensitive));
  std::vector<std::pair<uint32_t, uint32_t>> placed;
  const std::string query =
      fmt::format("SELECT {} FROM {}", select, qualified_name(policy.schema, policy.table));
  copy_rows(tx, query, 1 + table.width(), policy.name(), [&](auto& fields) {
    if (!fields[0])
      throw std::runtime_error(fmt::format(
          "{}: a row's key ({}) is NULL; history-aware refresh needs a key on every row",
          policy.name(), join(key.columns)));
    const uint32_t k = history.intern(*fields[0]);
    placed.push_back({k, table.add_row(std::span(fields).subspan(1))});
  });
  rows.assign(history.key_count(), kNoRow);
  for (auto [k, r] : placed) {
    if (rows[k] != kNoRow)
      throw std::runtime_error(fmt::format(
          "{}: two rows share the key {} ({}); history-aware refresh needs a unique key",
          policy.name(), history.key(k), join(key.columns)));
    rows[k] = r;
  }
  return table;
}

// Times the phases of a build one after the other.
class PhaseClock {
 public:
  void end(double& ms, double& cpu_ms) {
    ms = watch_.ms();
    cpu_ms = watch_.cpu_ms();
    watch_.restart();
  }

 private:
  base::Stopwatch watch_;
};

void lock_table_history(pqxx::transaction_base& tx, const std::string& name) {
  tx.exec_params("SELECT pg_advisory_xact_lock(hashtext('kanon.releases:' || $1))", name);
}

}  // namespace

std::string key_expression(const RowKey& key) {
  if (key.columns.size() == 1) return quote_identifier(key.columns[0]) + "::text";
  std::string cols;
  for (const auto& c : key.columns) cols += (cols.empty() ? "" : ", ") + quote_identifier(c);
  return "ROW(" + cols + ")::text";
}

std::string RowKey::describe() const {
  switch (source) {
    case Source::kPolicy:
      return "key: " + join(columns);
    case Source::kPrimaryKey:
      return "primary key (" + join(columns) + ")";
    case Source::kOtherColumns:
      return "non-quasi-identifier columns (" + join(columns) + ")";
    case Source::kNone:
      break;
  }
  return "not linkable (every column is a quasi-identifier or direct identifier)";
}

RowKey row_key(pqxx::connection_base& conn, const TablePolicy& policy, const TableInfo& info) {
  RowKey key;
  if (!policy.key.empty()) {
    for (size_t i = 0; i < policy.key.size(); ++i)
      if (!info.find(policy.key[i])) {
        const auto& at = policy.key_refs[i];
        throw ConfigError(fmt::format("{}:{}: {}: column '{}' does not exist in {}", at.file,
                                      at.line, at.key, policy.key[i], policy.name()));
      }
    key.source = RowKey::Source::kPolicy;
    key.columns = policy.key;
    return key;
  }
  pqxx::nontransaction tx(conn);
  const auto pk = tx.exec_params(
      "SELECT a.attname FROM pg_index i CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY "
      "AS u(attnum, n) JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = u.attnum "
      "WHERE i.indisprimary AND i.indrelid = (quote_ident($1) || '.' || quote_ident($2))::regclass "
      "ORDER BY u.n",
      policy.schema, policy.table);
  if (!pk.empty()) {
    key.source = RowKey::Source::kPrimaryKey;
    for (const auto& r : pk) key.columns.push_back(r[0].as<std::string>());
    return key;
  }
  for (const auto& c : info.columns) {
    const bool qi = std::find(policy.quasi_identifiers.begin(), policy.quasi_identifiers.end(),
                              c.name) != policy.quasi_identifiers.end();
    const bool direct =
        std::any_of(policy.direct_identifiers.begin(), policy.direct_identifiers.end(),
                    [&](const auto& d) { return d.column == c.name; });
    if (!qi && !direct) key.columns.push_back(c.name);
  }
  if (!key.columns.empty()) key.source = RowKey::Source::kOtherColumns;
  return key;
}

HistoryBuildResult build_history_release(pqxx::connection_base& conn, const TablePolicy& policy,
                                         const TableInfo& info, const RowKey& key,
                                         const TreeOptions& options, bool baseline, bool live) {
  HistoryBuildResult out;
  out.release.key = key;
  HistoryTimings& time = out.release.timings;
  PhaseClock clock;
  pqxx::work tx(conn);
  ensure_release_tables(tx);
  lock_table_history(tx, policy.name());
  ReleaseHistory history;
  if (!baseline) history = load_release_history(tx, policy.name(), policy.quasi_identifiers);
  clock.end(time.history_ms, time.history_cpu_ms);
  std::vector<uint32_t> rows;
  const EncodedTable table = load_keyed(tx, policy, info, key, history, rows);
  clock.end(time.rows_ms, time.rows_cpu_ms);
  uint64_t version = next_release_version(tx, policy.name());
  if (live && !history.empty()) {
    if (auto leaves = catch_up(history, table, rows)) {
      history.append({version, false, std::chrono::system_clock::now(), history.last().tree,
                      std::move(*leaves)});
      auto columns = history.columns();
      ReleaseFigures f{options.k, table.total_rows(), released_fraction(history.last().tree, table),
                       check_history(columns, options.k, false, history.moved_keys())};
      store_release(tx, policy.name(), history, history.versions().size() - 1, f);
      ++version;
      out.release.catch_up = 1;
    }
  }
  const bool is_baseline = history.empty();
  HistoryRefresh refresh = history_refresh(history, table, rows, options, !live);
  history.append({version, is_baseline, std::chrono::system_clock::now(), refresh.tree,
                  std::move(refresh.leaves)});
  out.release.version = version;
  out.release.baseline = is_baseline;
  out.release.fixup_rounds = refresh.rounds;
  out.release.collapsed = refresh.collapsed;
  out.release.held = refresh.held;
  out.release.released_fraction = refresh.released_fraction;
  out.release.check = refresh.check;
  out.release.check.below.clear();
  out.release.check.below_candidates.clear();
  clock.end(time.compute_ms, time.compute_cpu_ms);
  store_release(tx, policy.name(), history, history.versions().size() - 1,
                {options.k, table.total_rows(), out.release.released_fraction, out.release.check,
                 refresh.held});
  tx.commit();
  clock.end(time.write_ms, time.write_cpu_ms);
  out.tree = std::move(refresh.tree);
  return out;
}

HistoryVerification verify_history(pqxx::connection_base& conn, const TablePolicy& policy,
                                   std::optional<uint64_t> since) {
  pin_session_settings(conn);
  const TableInfo info = read_table_info(conn, policy);
  check_against_catalog(policy, info);
  HistoryVerification out;
  out.key = row_key(conn, policy, info);
  if (!out.key.linkable()) return out;
  pqxx::work tx(conn);
  // Read only: nothing stored yet when the tables are missing.
  if (tx.exec("SELECT to_regclass('kanon.releases') IS NULL OR "
              "to_regclass('kanon.release_rows') IS NULL")[0][0]
          .as<bool>())
    return out;
  ReleaseHistory history = load_release_history(tx, policy.name(), policy.quasi_identifiers);
  std::vector<uint32_t> rows;
  const EncodedTable table = load_keyed(tx, policy, info, out.key, history, rows);
  tx.commit();
  if (history.empty()) return out;
  out.last_version = history.last().version;
  const size_t from = since ? history.index_of(*since) : 0;
  if (from >= history.versions().size()) {
    out.since = since.value_or(0);
    return out;
  }
  out.since = history.versions()[from].version;
  auto columns = history.columns(from);
  for (auto& c : columns) c.resize(rows.size(), kAbsent);
  auto updated = history.moved_keys(from);
  updated.resize(rows.size(), 0);
  if (policy.mode != EnforcementMode::kMaterialized) {
    // What a live mode serves now: the last tree on the current rows (the
    // materialized copy stays as the last release wrote it).
    auto now = leaves_of(history.last().tree, table, rows);
    const auto& last = columns.back();
    for (size_t key = 0; key < rows.size(); ++key)
      if (now[key] != kAbsent && last[key] != kAbsent && true_leaf(last[key]) != now[key])
        updated[key] = 1;
    columns.push_back(std::move(now));
  }
  out.releases = columns.size();
  out.check = check_history(columns, policy.k, false, updated);
  return out;
}

}  // namespace kanon::policy
