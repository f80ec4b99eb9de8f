#include "store/release_store.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <pqxx/pqxx>
#include <stdexcept>

#include "base/json.h"
#include "catalog/kanon_schema.h"
#include "store/table_loader.h"

namespace kanon::store {
namespace {

std::string qualified(pqxx::transaction_base& tx, const char* table) {
  return tx.quote_name("kanon") + "." + tx.quote_name(table);
}

}  // namespace

namespace {

std::string tuple_key(const std::vector<std::optional<std::string>>& t) {
  std::string s;
  for (const auto& v : t) s += v ? "=" + *v + '\x1f' : std::string("*\x1f");
  return s;
}

// A text[] literal of any strings (every element quoted; nullopt as NULL).
std::string text_array(const std::vector<std::optional<std::string>>& values) {
  return policy::array_literal(values);
}

std::string bigint_array(const std::vector<std::optional<int64_t>>& values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += ',';
    out += values[i] ? std::to_string(*values[i]) : std::string("NULL");
  }
  return out + "}";
}

std::string bool_array(const std::vector<bool>& values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i)
    out += (i ? "," : "") + std::string(values[i] ? "t" : "f");
  return out + "}";
}

}  // namespace

void ensure_release_tables(pqxx::transaction_base& tx) {
  catalog::ensure_kanon_schema(tx);
}

std::vector<ReleaseSummary> list_releases(pqxx::transaction_base& tx, const std::string& table_name,
                                          size_t limit) {
  std::vector<ReleaseSummary> out;
  if (tx.exec1("SELECT to_regclass('kanon.releases') IS NULL")[0].as<bool>()) return out;
  catalog::check_kanon_schema_version(tx);
  const auto rows = tx.exec_params(
      fmt::format("SELECT version, to_char(built_at AT TIME ZONE 'UTC', "
                  "'YYYY-MM-DD HH24:MI:SS\"Z\"'), baseline, k, rows, released_fraction, "
                  "linked_rows, min_candidates, rows_below_k, held_rows FROM (SELECT * FROM {} "
                  "WHERE table_name = $1 ORDER BY version DESC LIMIT $2) latest ORDER BY version",
                  qualified(tx, kReleasesTable)),
      table_name, static_cast<int64_t>(limit));
  for (const auto& r : rows)
    out.push_back({r[0].as<uint64_t>(), r[1].as<std::string>(), r[2].as<bool>(),
                   r[3].as<uint64_t>(), r[4].as<uint64_t>(), r[5].as<double>(), r[6].as<uint64_t>(),
                   r[7].as<uint64_t>(), r[8].as<uint64_t>(), r[9].as<uint64_t>()});
  return out;
}

uint64_t next_release_version(pqxx::transaction_base& tx, const std::string& table_name) {
  return tx
      .exec_params(fmt::format("SELECT coalesce(max(version), 0) + 1 FROM {} WHERE table_name = $1",
                               qualified(tx, kReleasesTable)),
                   table_name)[0][0]
      .as<uint64_t>();
}

StoredHistory StoredHistory::load(pqxx::transaction_base& tx, const std::string& table_name,
                                  const std::vector<std::string>& attributes) {
  StoredHistory out;
  out.table_name_ = table_name;
  const auto releases = tx.exec_params(
      fmt::format("SELECT version, baseline, tree::text, k, "
                  "extract(epoch FROM built_at)::float8, row_format, histories::text FROM {} "
                  "WHERE table_name = $1 AND "
                  "version >= (SELECT coalesce(max(version), 0) FROM {} WHERE table_name = $1 "
                  "AND baseline) ORDER BY version",
                  qualified(tx, kReleasesTable), qualified(tx, kReleasesTable)),
      table_name);
  if (releases.empty()) return out;
  std::vector<policy::ReleasedVersion> versions;
  for (const auto& r : releases) {
    policy::ReleasedVersion v;
    v.version = r[0].as<uint64_t>();
    v.baseline = r[1].as<bool>();
    v.tree = policy::tree_from_json(r[2].as<std::string>(), {.k = r[3].as<uint64_t>()});
    v.built_at = std::chrono::system_clock::time_point(
        std::chrono::duration_cast<std::chrono::system_clock::duration>(
            std::chrono::duration<double>(r[4].as<double>())));
    if (v.tree.attributes() != attributes) return out;
    if (r[5].as<int>() < kReleaseRowFormat) {
      out.old_format_ = true;
      return out;
    }
    if (!r[6].is_null())
      for (const auto& n : nlohmann::json::parse(r[6].as<std::string>())) {
        Node node;
        const int64_t id = n.at(0).get<int64_t>();
        node.parent = n.at(1).get<int64_t>();
        node.since = v.version;
        if (!n.at(2).is_null()) node.released = n.at(2).get<std::string>();
        node.held = n.at(3).get<bool>();
        out.nodes_[id] = std::move(node);
        out.next_id_ = std::max(out.next_id_, id + 1);
      }
    versions.push_back(std::move(v));
  }
  if (!versions.front().baseline) {
    out.nodes_.clear();
    out.next_id_ = 1;
    return out;
  }
  for (auto& v : versions) {
    auto& leaf_of = out.leaf_of_.emplace_back();
    for (int leaf : v.tree.leaves()) leaf_of[tuple_key(policy::leaf_tuple(v.tree, leaf))] = leaf;
    out.history_.append(std::move(v));
  }
  return out;
}

const std::vector<int32_t>& StoredHistory::entries(int64_t id) {
  if (const auto it = entries_.find(id); it != entries_.end()) return it->second;
  const auto& versions = history_.versions();
  // The history's nodes, latest first: each holds from its version up to
  // the next one's.
  std::vector<const Node*> chain;
  for (int64_t n = id; n != 0;) {
    const auto node = nodes_.find(n);
    if (node == nodes_.end() || chain.size() > versions.size())
      throw std::runtime_error(
          fmt::format("kanon.release_rows: {} names release history {}, which no release since the "
                      "baseline stores",
                      table_name_, n));
    chain.push_back(&node->second);
    n = node->second.parent;
  }
  std::vector<int32_t> e(versions.size(), policy::kAbsent);
  size_t at = 0;  // chain[at]: the latest node at or before the version
  for (size_t v = versions.size(); v-- > 0;) {
    while (at < chain.size() && chain[at]->since > versions[v].version) ++at;
    if (at == chain.size()) break;
    const Node& node = *chain[at];
    if (!node.released) continue;
    const auto leaf = leaf_of_[v].find(tuple_key(policy::parse_text_array(*node.released)));
    if (leaf == leaf_of_[v].end())
      throw std::runtime_error(fmt::format(
          "kanon.release_rows: {}: the tuple {} at version {} names no leaf of its tree",
          table_name_, *node.released, versions[v].version));
    e[v] = node.held ? policy::held_leaf(leaf->second) : leaf->second;
  }
  return entries_.emplace(id, std::move(e)).first->second;
}

int64_t StoredHistory::extend(int64_t parent, uint64_t since_version,
                              const std::optional<std::string>& released, bool held) {
  const auto [it, inserted] = made_.try_emplace({parent, since_version, released, held}, next_id_);
  if (inserted) {
    nodes_[next_id_] = Node{parent, since_version, released, held};
    new_ids_.push_back(next_id_);
    ++next_id_;
  }
  return it->second;
}

void forget_release_rows(pqxx::transaction_base& tx, const std::string& table_name) {
  for (const char* t : {kReleaseRowsTable, kHeldKeysTable})
    tx.exec_params(fmt::format("DELETE FROM {} WHERE table_name = $1", qualified(tx, t)),
                   table_name);
}

void store_releases(pqxx::transaction_base& tx, const std::string& table_name,
                    StoredHistory& stored, const ReleaseWrite& write) {
  const policy::ReleaseHistory& h = stored.history_;
  const auto& versions = h.versions();
  const size_t last = versions.size() - 1;
  // The tuple text of every leaf of the versions compared.
  const size_t from = write.first > 0 ? write.first - 1 : 0;
  std::vector<std::vector<std::string>> literal(versions.size());
  for (size_t i = from; i <= last; ++i) {
    literal[i].resize(versions[i].tree.size());
    for (int leaf : versions[i].tree.leaves())
      literal[i][leaf] = policy::array_literal(policy::leaf_tuple(versions[i].tree, leaf));
  }
  auto text_of = [&](size_t i, int32_t e) -> const std::string* {
    return e == policy::kAbsent ? nullptr : &literal[i][static_cast<size_t>(policy::true_leaf(e))];
  };
  // Rows to write, per class part: arrays for unnest().
  std::vector<std::optional<std::string>> class_label, row_class, row_released;
  std::vector<std::optional<int64_t>> class_held, row_version, row_history, row_until;
  std::vector<bool> row_part, row_held;
  // The stored history ids of the classes listed, and the keys of those
  // without one.
  std::vector<std::optional<int64_t>> changed_ids;
  std::vector<std::optional<std::string>> new_key, new_key_class;
  uint64_t held_now = 0;
  for (uint32_t c = 0; c < h.key_count(); ++c) {
    const uint64_t weight = h.weight(c);
    const uint64_t held = write.held_keys.empty()
                              ? (policy::is_held(h.leaf(last, c)) ? weight : 0)
                              : (c < write.held_keys.size() ? write.held_keys[c] : 0);
    held_now += held;
    const bool split = held > 0 && held < weight;
    bool listed = false;
    for (const bool part : {false, true}) {
      if (part && !split) break;
      int32_t prev = write.first > 0 ? h.leaf(write.first - 1, c) : policy::kAbsent;
      const std::string* prev_text = write.first > 0 ? text_of(write.first - 1, prev) : nullptr;
      int64_t id = c < write.history_ids.size() ? write.history_ids[c] : 0;
      const size_t start = row_class.size();
      for (size_t i = write.first; i <= last; ++i) {
        int32_t e = h.leaf(i, c);
        if (part && i == last) e = policy::held_leaf(policy::true_leaf(e));
        const std::string* text = text_of(i, e);
        const bool same = text == nullptr ? prev_text == nullptr
                                          : prev_text != nullptr && *text == *prev_text &&
                                                policy::is_held(e) == policy::is_held(prev);
        prev = e;
        prev_text = text;
        if (same) continue;
        const std::optional<std::string> released =
            text ? std::optional<std::string>(*text) : std::nullopt;
        id = stored.extend(id, versions[i].version, released, policy::is_held(e));
        row_class.push_back(h.key(c));
        row_part.push_back(part);
        row_version.push_back(static_cast<int64_t>(versions[i].version));
        row_released.push_back(released);
        row_held.push_back(policy::is_held(e));
        row_history.push_back(id);
        row_until.push_back(std::nullopt);
        if (row_class.size() - 1 > start) row_until[row_class.size() - 2] = row_version.back();
      }
      if (row_class.size() > start && !listed) {
        listed = true;
        class_label.push_back(h.key(c));
        class_held.push_back(split ? static_cast<int64_t>(held) : 0);
        const int64_t stored_id = c < write.history_ids.size() ? write.history_ids[c] : 0;
        if (c < write.new_keys.size() && !write.new_keys[c].empty()) {
          for (const auto& k : write.new_keys[c]) {
            new_key.push_back(k);
            new_key_class.push_back(h.key(c));
          }
        } else if (stored_id != 0) {
          changed_ids.push_back(stored_id);
        }
      }
    }
  }
  for (size_t i = write.first; i <= last; ++i) {
    const policy::ReleasedVersion& v = versions[i];
    const ReleaseFigures& f = write.figures[i - write.first];
    base::Json nodes = base::Json::array();
    for (int64_t id : stored.new_ids_) {
      const auto& n = stored.nodes_.at(id);
      if (n.since != v.version) continue;
      nodes.push_back(
          {id, n.parent, n.released ? base::Json(*n.released) : base::Json(nullptr), n.held});
    }
    tx.exec_params(
        fmt::format("INSERT INTO {} (table_name, version, baseline, k, tree, rows, "
                    "released_fraction, linked_rows, min_candidates, rows_below_k, "
                    "updated_rows_below_k, held_rows, row_format, histories) VALUES "
                    "($1, $2, $3, $4, $5::jsonb, $6, $7, $8, $9, $10, $11, $12, $13, $14::jsonb)",
                    qualified(tx, kReleasesTable)),
        table_name, static_cast<int64_t>(v.version), v.baseline, static_cast<int64_t>(f.k),
        policy::tree_json(v.tree), static_cast<int64_t>(f.rows), f.released_fraction,
        static_cast<int64_t>(f.check.linked_rows), static_cast<int64_t>(f.check.min_candidates),
        static_cast<int64_t>(f.check.rows_below_k),
        static_cast<int64_t>(f.check.updated_rows_below_k), static_cast<int64_t>(f.held),
        kReleaseRowFormat, nodes.dump());
  }
  if (!row_class.empty()) {
    // Every row key of a class listed gets the class's rows; of a class
    // with part of its keys held, the first keys in key order are the part
    // held. The key's previous current row ends at its first new one.
    const std::string rows = qualified(tx, kReleaseRowsTable);
    // The planner cannot estimate the arrays and the keys written: a nested
    // loop over them would compare every pair. The previous rows are found
    // through the primary key (key = ANY of the keys written), not by a
    // scan of the table's rows.
    tx.exec("SET LOCAL enable_nestloop = off");
    // A baseline lists every key (no earlier rows); a later release the
    // keys of the classes listed: by their stored history id, or the new
    // keys the load returned.
    // The keys and their classes go as parameters ($12-$14), never in the
    // text: a class is a row's quasi-identifiers and sensitive value, and a
    // statement's text shows in pg_stat_activity to every role with
    // pg_read_all_stats (and in the server's log of slow or failed
    // statements). A baseline names them in an unused CTE (their types).
    const bool baseline = write.first == 0;
    std::string keys = write.keys_sql;
    if (!baseline) {
      std::string stored_keys = write.stored_keys_sql;
      const size_t at = stored_keys.find("{ids}");
      if (at == std::string::npos)
        throw std::logic_error("store_releases: stored_keys_sql without {ids}");
      stored_keys.replace(at, 5, "$12::bigint[]");
      keys =
          fmt::format("{} UNION ALL SELECT * FROM unnest($13::text[], $14::text[]) AS n(key, cls)",
                      stored_keys);
    }
    const std::string insert = fmt::format(
        "INSERT INTO {0} (table_name, key, since_version, released, held, history, "
        "until_version) SELECT $1, k.key, m.version, m.released::text[], m.held, m.history, "
        "m.until_version FROM k JOIN m ON m.cls = k.cls AND m.held_part = k.held_part",
        rows);
    tx.exec_params(
        fmt::format(
            "WITH p AS (SELECT $12::bigint[] AS ids, $13::text[] AS new_keys, $14::text[] AS "
            "new_classes), "
            "c AS (SELECT * FROM unnest($2::text[], $3::bigint[]) AS c(cls, n_held)), "
            "m AS (SELECT * FROM unnest($4::text[], $5::bool[], $6::bigint[], $7::text[], "
            "$8::bool[], $9::bigint[], $10::bigint[]) AS m(cls, held_part, version, released, "
            "held, history, until_version)), "
            "j AS MATERIALIZED (SELECT j.key, j.cls, c.n_held FROM ({0}) j JOIN c ON c.cls = "
            "j.cls), "
            "k AS (SELECT key, cls, false AS held_part FROM j WHERE n_held = 0 UNION ALL "
            "SELECT key, cls, row_number() OVER (PARTITION BY cls ORDER BY key) <= n_held "
            "FROM j WHERE n_held > 0){1}",
            keys,
            baseline ? " " + insert + " AND $11::bigint IS NOT NULL"
                     : fmt::format(", ins AS ({0} RETURNING key, since_version) "
                                   "UPDATE {1} r SET until_version = i.first FROM (SELECT key, "
                                   "min(since_version) AS first FROM ins GROUP BY key) i WHERE "
                                   "r.table_name = $1 AND r.key = ANY (ARRAY(SELECT key FROM ins)) "
                                   "AND r.key = i.key AND r.until_version IS NULL AND "
                                   "r.since_version < $11",
                                   insert, rows)),
        table_name, text_array(class_label), bigint_array(class_held), text_array(row_class),
        bool_array(row_part), bigint_array(row_version), text_array(row_released),
        bool_array(row_held), bigint_array(row_history), bigint_array(row_until),
        static_cast<int64_t>(versions[write.first].version), bigint_array(changed_ids),
        text_array(new_key), text_array(new_key_class));
  }
  // The keys the materialized copy masks (materializer.h), this release's only.
  tx.exec_params(fmt::format("DELETE FROM {} WHERE table_name = $1", qualified(tx, kHeldKeysTable)),
                 table_name);
  if (held_now > 0)
    tx.exec_params(fmt::format("INSERT INTO {} (table_name, key) SELECT table_name, key FROM {} "
                               "WHERE table_name = $1 AND until_version IS NULL AND held",
                               qualified(tx, kHeldKeysTable), qualified(tx, kReleaseRowsTable)),
                   table_name);
}

}  // namespace kanon::store
