#include "store/history_build.h"

#include <fmt/format.h>

#include <algorithm>
#include <pqxx/pqxx>

#include "base/stopwatch.h"
#include "base/text.h"
#include "catalog/kanon_schema.h"
#include "policy/history_refresh.h"
#include "policy/sql_text.h"
#include "settings/server_config.h"
#include "store/release_store.h"
#include "store/table_loader.h"

namespace kanon::store {

using base::ConfigError;
namespace {

using base::join;

// The table's rows as `t` (`key`, `here`, `null_key`, its current
// quasi-identifiers q0.. and sensitive value s) and the keys' current stored
// rows as `r` (`key`, `history`: its stored history id), `r_filter` an extra
// condition on them.
struct KeyedSql {
  std::string t, r;
  std::string values;  // ", t.q0, ..."
};

KeyedSql keyed_parts(pqxx::transaction_base& tx, const policy::TablePolicy& policy,
                     const policy::TableInfo& info, const policy::RowKey& key) {
  const std::string k = policy::key_expression(key);
  std::string select = k + " AS key, true AS here, (" + k + ") IS NULL AS null_key";
  KeyedSql out;
  for (size_t i = 0; i < policy.quasi_identifiers.size(); ++i) {
    select +=
        fmt::format(", {} AS q{}", loaded_expression(*info.find(policy.quasi_identifiers[i])), i);
    out.values += fmt::format(", t.q{}", i);
  }
  if (policy.sensitive) {
    select += ", " + loaded_expression(*info.find(policy.sensitive->column)) + " AS s";
    out.values += ", t.s";
  }
  if (!policy.person.empty()) {
    select += ", " + person_expression(policy) + " AS p";
    out.values += ", t.p";
  }
  out.t =
      fmt::format("SELECT {} FROM {}", select, policy::qualified_name(policy.schema, policy.table));
  out.r = fmt::format(
      "SELECT key, history, released IS NOT NULL AS live FROM kanon.release_rows WHERE "
      "table_name = {} AND until_version IS NULL",
      tx.quote(policy.name()));
  return out;
}

// Every row key of the table and of its stored release rows: `key`,
// `history`, `live` (its current stored row releases a tuple), `here` (in
// the table now), `null_key`, q0.., s.
std::string keyed_sql(const KeyedSql& k) {
  return fmt::format(
      "SELECT coalesce(t.key, r.key) AS key, r.history, r.live, t.here, t.null_key{} FROM ({}) t "
      "FULL "
      "JOIN ({}) r ON r.key = t.key",
      k.values, k.t, k.r);
}

// The label of a class as SQL over keyed_sql's columns: the text of one
// record of its stored history, presence, quasi-identifiers and sensitive
// value (the same text for the same values wherever it is computed).
std::string class_label(const policy::TablePolicy& policy) {
  std::string label = "ROW(history, here";
  for (size_t i = 0; i < policy.quasi_identifiers.size(); ++i) label += fmt::format(", q{}", i);
  if (policy.sensitive) label += ", s";
  if (!policy.person.empty()) label += ", p";
  return label + ")::text";
}

// The current rows with their release histories, one class per (stored
// history, current quasi-identifiers and sensitive value): interned into
// `stored.history()` with its number of keys as weight and its entries in
// every stored version; `rows` per class its distinct row in the table
// (kNoRow: its keys left the table), `ids` its stored history id (0: none).
struct KeyedClasses {
  policy::EncodedTable table;
  std::vector<uint32_t> rows;
  std::vector<int64_t> ids;
  // Per class of keys new since the last release (no stored history) or
  // that left the table since (not in it, still in the last release), when
  // there is a stored history: its keys (few: what changed).
  std::vector<std::vector<std::string>> new_keys;
  std::string keys_sql, stored_keys_sql;  // as in ReleaseWrite
};

KeyedClasses load_classes(pqxx::transaction_base& tx, const policy::TablePolicy& policy,
                          const policy::TableInfo& info, const policy::RowKey& key,
                          StoredHistory& stored) {
  std::vector<policy::EncodedColumn> attrs;
  for (const auto& q : policy.quasi_identifiers) attrs.push_back({q, info.find(q)->type, {}});
  std::optional<policy::EncodedColumn> sensitive;
  if (policy.sensitive) {
    const policy::ColumnInfo* c = info.find(policy.sensitive->column);
    sensitive = policy::EncodedColumn{c->name, c->type, {}};
  }
  std::optional<policy::EncodedColumn> person;
  if (!policy.person.empty()) person = policy::EncodedColumn{"person", "text", {}};
  KeyedClasses out{policy::EncodedTable(std::move(attrs), std::move(sensitive), std::move(person)),
                   {},
                   {},
                   {},
                   {},
                   {}};
  const size_t width = out.table.width();
  if (key.source != policy::RowKey::Source::kPrimaryKey && key.told_apart_by.empty()) {
    // row_key found the key unique; rows written since may share one.
    // How many keys are shared, never which: the message reaches the log
    // and the admin console, and a key is a row's identifier.
    const auto dup = tx.exec(fmt::format(
        "SELECT count(*) FROM (SELECT {} AS key FROM {}) t GROUP BY key HAVING count(*) > 1",
        policy::key_expression(key), policy::qualified_name(policy.schema, policy.table)));
    if (!dup.empty())
      throw std::runtime_error(fmt::format(
          "{}: {} key value{} of ({}) now belong{} to more than one row; the next build tells "
          "them apart",
          policy.name(), dup.size(), dup.size() == 1 ? "" : "s", join(key.columns),
          dup.size() == 1 ? "s" : ""));
  }
  const KeyedSql parts = keyed_parts(tx, policy, info, key);
  const std::string keyed = keyed_sql(parts);
  const std::string label = class_label(policy);
  out.keys_sql = fmt::format("SELECT key, {} AS cls FROM ({}) x", label, keyed);
  out.stored_keys_sql = fmt::format(
      "SELECT key, {} AS cls FROM (SELECT r.key, r.history, t.here{} FROM ({} AND history = "
      "ANY({{ids}})) r JOIN ({}) t ON t.key = r.key) x",
      label, parts.values, parts.r, parts.t);
  std::string groups = "history, here, null_key";
  for (size_t i = 0; i < policy.quasi_identifiers.size(); ++i) groups += fmt::format(", q{}", i);
  if (policy.sensitive) groups += ", s";
  if (!policy.person.empty()) groups += ", p";
  tx.exec(aggregate_settings(tx, policy, LoadOptions{}));
  policy::ReleaseHistory& history = stored.history();
  const size_t versions = history.versions().size();
  copy_rows(
      tx,
      fmt::format("SELECT {0}, {1}, n{3} FROM (SELECT {1}, count(*) AS n{4} FROM ({2}) x GROUP BY "
                  "{1}) g",
                  label, groups, keyed, history.empty() ? "" : ", new_keys",
                  history.empty() ? ""
                                  : ", array_agg(key) FILTER (WHERE history IS NULL AND here "
                                    "OR here IS NULL AND live) AS new_keys"),
      5 + width + (history.empty() ? 0 : 1), policy.name(), [&](auto& f) {
        if (f[3] && *f[3] == "t")
          throw std::runtime_error(fmt::format(
              "{}: a row's key ({}) is NULL; history-aware refresh needs a key on every row",
              policy.name(), join(key.columns)));
        const uint32_t c = history.intern(*f[0]);
        if (c != out.rows.size())
          throw std::runtime_error(
              fmt::format("{}: the class {} was loaded twice", policy.name(), *f[0]));
        history.set_weight(c, std::stoull(std::string(*f[4 + width])));
        const int64_t id = f[1] ? std::stoll(std::string(*f[1])) : 0;
        out.ids.push_back(id);
        out.rows.push_back(
            f[2] ? out.table.add_row(std::span(f).subspan(4, width), history.weight(c))
                 : policy::kNoRow);
        auto& keys = out.new_keys.emplace_back();
        if (f.size() > 5 + width && f[5 + width])
          for (auto& k : policy::parse_text_array(std::string(*f[5 + width])))
            keys.push_back(std::move(*k));
        const auto& entries = stored.entries(id);
        for (size_t v = 0; v < versions; ++v)
          if (entries[v] != policy::kAbsent) history.set_leaf(v, c, entries[v]);
      });
  return out;
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

// The per-table lock two kanon instances building the same table take in
// turns, held for the session around the build's repeatable-read
// transaction (so its snapshot is taken after the lock, seeing the other's
// release).
class TableLock {
 public:
  TableLock(pqxx::connection_base& conn, const std::string& name) : conn_(conn), name_(name) {
    pqxx::nontransaction tx(conn_);
    tx.exec_params(
        "SELECT pg_catalog.pg_advisory_lock(pg_catalog.hashtext('kanon.releases:' || $1))", name_);
  }
  ~TableLock() {
    try {
      pqxx::nontransaction tx(conn_);
      tx.exec_params(
          "SELECT pg_catalog.pg_advisory_unlock(pg_catalog.hashtext('kanon.releases:' || $1))",
          name_);
    } catch (const std::exception&) {
      // A broken connection has released it.
    }
  }
  TableLock(const TableLock&) = delete;
  TableLock& operator=(const TableLock&) = delete;

 private:
  pqxx::connection_base& conn_;
  std::string name_;
};

}  // namespace

namespace {

// Sets key.told_apart_by when two rows share a key or a row's key is NULL.
void tell_apart(pqxx::transaction_base& tx, const policy::TablePolicy& policy,
                policy::RowKey& key) {
  const auto shared = tx.exec(fmt::format(
      "SELECT pg_catalog.count(*) OPERATOR(pg_catalog.>) pg_catalog.count(DISTINCT key) OR "
      "pg_catalog.count(*) OPERATOR(pg_catalog.>) pg_catalog.count(key) FROM (SELECT {} AS key "
      "FROM {}) t",
      policy::key_expression(key), policy::qualified_name(policy.schema, policy.table)))[0][0];
  if (shared.as<bool>()) key.told_apart_by = policy.quasi_identifiers;
}

}  // namespace

policy::RowKey row_key(pqxx::connection_base& conn, const policy::TablePolicy& policy,
                       const policy::TableInfo& info) {
  policy::RowKey key;
  if (!policy.key.empty()) {
    for (size_t i = 0; i < policy.key.size(); ++i)
      if (!info.find(policy.key[i])) {
        const auto& at = policy.key_refs[i];
        throw ConfigError(fmt::format("{}:{}: {}: column '{}' does not exist in {}", at.file,
                                      at.line, at.key, policy.key[i], policy.name()));
      }
    key.source = policy::RowKey::Source::kPolicy;
    key.columns = policy.key;
  }
  pqxx::nontransaction tx(conn);
  if (key.source == policy::RowKey::Source::kPolicy) {
    tell_apart(tx, policy, key);
    return key;
  }
  const auto pk = tx.exec_params(
      "SELECT a.attname FROM pg_index i CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY "
      "AS u(attnum, n) JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = u.attnum "
      "WHERE i.indisprimary AND i.indrelid = (quote_ident($1) || '.' || quote_ident($2))::regclass "
      "ORDER BY u.n",
      policy.schema, policy.table);
  if (!pk.empty()) {
    key.source = policy::RowKey::Source::kPrimaryKey;
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
  if (!key.columns.empty()) {
    key.source = policy::RowKey::Source::kOtherColumns;
    tell_apart(tx, policy, key);
  }
  return key;
}

HistoryBuildResult build_history_release(pqxx::connection_base& conn,
                                         const policy::TablePolicy& policy,
                                         const policy::TableInfo& info, const policy::RowKey& key,
                                         const policy::TreeOptions& options, bool baseline,
                                         bool live) {
  HistoryBuildResult out;
  out.release.key = key;
  policy::HistoryTimings& time = out.release.timings;
  PhaseClock clock;
  {
    pqxx::work tx(conn);
    ensure_release_tables(tx);
    tx.commit();
  }
  const TableLock lock(conn, policy.name());
  pqxx::transaction<pqxx::repeatable_read> tx(conn);
  StoredHistory stored;
  if (!baseline) stored = StoredHistory::load(tx, policy.name(), policy.quasi_identifiers);
  if (stored.old_format())
    out.release.note = fmt::format(
        "{}: the release history was stored by an earlier kanon (kanon.releases.row_format < "
        "{}); this release starts a new baseline",
        policy.name(), kReleaseRowFormat);
  policy::ReleaseHistory& history = stored.history();
  if (history.empty()) forget_release_rows(tx, policy.name());
  clock.end(time.history_ms, time.history_cpu_ms);
  const KeyedClasses loaded = load_classes(tx, policy, info, key, stored);
  const policy::EncodedTable& table = loaded.table;
  const auto& rows = loaded.rows;
  clock.end(time.rows_ms, time.rows_cpu_ms);
  uint64_t version = next_release_version(tx, policy.name());
  const size_t first = history.versions().size();
  std::vector<ReleaseFigures> figures;
  if (live && !history.empty()) {
    if (auto leaves = policy::catch_up(history, table, rows)) {
      history.append({version, false, std::chrono::system_clock::now(), history.last().tree,
                      std::move(*leaves)});
      auto columns = history.columns();
      figures.push_back(
          {options.k, table.total_rows(), policy::released_fraction(history.last().tree, table),
           policy::check_history(columns, options.k, false, history.moved_keys(), history.weights(),
                                 policy::persons_of(table, rows))});
      ++version;
      out.release.catch_up = 1;
    }
  }
  const bool is_baseline = history.empty();
  policy::HistoryRefresh refresh = policy::history_refresh(history, table, rows, options, !live);
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
  figures.push_back({options.k, table.total_rows(), out.release.released_fraction,
                     out.release.check, refresh.held});
  clock.end(time.compute_ms, time.compute_cpu_ms);
  store_releases(tx, policy.name(), stored,
                 {is_baseline ? 0 : first, std::move(figures), loaded.ids, refresh.held_keys,
                  loaded.keys_sql, loaded.stored_keys_sql, loaded.new_keys});
  tx.commit();
  clock.end(time.write_ms, time.write_cpu_ms);
  out.tree = std::move(refresh.tree);
  return out;
}

HistoryVerification verify_history(pqxx::connection_base& conn, const policy::TablePolicy& policy,
                                   std::optional<uint64_t> since) {
  pin_session_settings(conn);
  const policy::TableInfo info = catalog::read_table_info(conn, policy);
  policy::check_against_catalog(policy, info);
  HistoryVerification out;
  out.key = row_key(conn, policy, info);
  if (!out.key.linkable()) return out;
  pqxx::transaction<pqxx::repeatable_read> tx(conn);
  // Read only: nothing stored yet when the tables are missing.
  const auto tables = tx.exec(
      "SELECT to_regclass('kanon.releases') IS NULL OR "
      "to_regclass('kanon.release_rows') IS NULL, NOT EXISTS (SELECT FROM "
      "pg_catalog.pg_attribute WHERE attrelid = to_regclass('kanon.release_rows') AND "
      "attname = 'until_version' AND NOT attisdropped)")[0];
  if (tables[0].as<bool>()) return out;
  catalog::check_kanon_schema_version(tx);
  StoredHistory stored;
  if (!tables[1].as<bool>())
    stored = StoredHistory::load(tx, policy.name(), policy.quasi_identifiers);
  if (tables[1].as<bool>() || stored.old_format())
    throw std::runtime_error(fmt::format(
        "{}: the release history was stored by an earlier kanon (kanon.releases.row_format < {}) "
        "and is not read; the next refresh starts a new baseline",
        policy.name(), kReleaseRowFormat));
  policy::ReleaseHistory& history = stored.history();
  if (history.empty()) return out;
  const KeyedClasses loaded = load_classes(tx, policy, info, out.key, stored);
  const policy::EncodedTable& table = loaded.table;
  const auto& rows = loaded.rows;
  tx.commit();
  out.last_version = history.last().version;
  const size_t from = since ? history.index_of(*since) : 0;
  if (from >= history.versions().size()) {
    out.since = since.value_or(0);
    return out;
  }
  out.since = history.versions()[from].version;
  auto columns = history.columns(from);
  for (auto& c : columns) c.resize(rows.size(), policy::kAbsent);
  auto updated = history.moved_keys(from);
  updated.resize(rows.size(), 0);
  if (policy.mode != policy::EnforcementMode::kMaterialized) {
    // What a live mode serves now: the last tree on the current rows (the
    // materialized copy stays as the last release wrote it).
    auto now = policy::leaves_of(history.last().tree, table, rows);
    const auto& last = columns.back();
    for (size_t key = 0; key < rows.size(); ++key)
      if (now[key] != policy::kAbsent && last[key] != policy::kAbsent &&
          policy::true_leaf(last[key]) != now[key])
        updated[key] = 1;
    columns.push_back(std::move(now));
  }
  out.releases = columns.size();
  out.check = policy::check_history(columns, policy.k, false, updated, history.weights(),
                                    policy::persons_of(table, rows));
  return out;
}

}  // namespace kanon::store
