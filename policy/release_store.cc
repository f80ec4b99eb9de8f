#include "policy/release_store.h"

#include <fmt/format.h>

#include <map>
#include <pqxx/pqxx>
#include <stdexcept>

#include "base/json.h"
#include "policy/table_loader.h"

namespace kanon::policy {
namespace {

std::string qualified(pqxx::transaction_base& tx, const char* table) {
  return tx.quote_name("kanon") + "." + tx.quote_name(table);
}

// A text[] literal of a tuple ("{a,NULL,\"b c\"}").
std::string array_literal(const std::vector<std::optional<std::string>>& tuple) {
  std::string out = "{";
  for (size_t i = 0; i < tuple.size(); ++i) {
    if (i) out += ',';
    if (!tuple[i]) {
      out += "NULL";
      continue;
    }
    out += '"';
    for (char c : *tuple[i]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "}";
}

// One release_rows line for pqxx::stream_to (libpqxx 6.4 joins a row's
// fields with an unqualified separated_list call; this overload, found by
// argument-dependent lookup, writes a row of strings, nullptr as \N).
struct ReleaseRow {
  std::vector<const std::string*> fields;
};

template <typename Escaper>
std::string separated_list(const std::string& separator, const ReleaseRow& row,
                           const Escaper& escape) {
  std::string line;
  for (size_t i = 0; i < row.fields.size(); ++i) {
    if (i) line += separator;
    line += row.fields[i] ? escape(row.fields[i]) : std::string("\\N");
  }
  return line;
}

// Parses a text[] value as PostgreSQL prints it (elements quoted when
// needed, NULL unquoted).
std::vector<std::optional<std::string>> parse_array(const std::string& text) {
  std::vector<std::optional<std::string>> out;
  if (text.size() < 2 || text.front() != '{' || text.back() != '}')
    throw std::runtime_error("kanon.release_rows: malformed released array " + text);
  size_t i = 1;
  if (text.size() == 2) return out;
  for (;;) {
    std::string v;
    bool quoted = false;
    if (text[i] == '"') {
      quoted = true;
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\') ++i;
        v += text[i];
      }
      ++i;
    } else {
      for (; i < text.size() && text[i] != ',' && text[i] != '}'; ++i) v += text[i];
    }
    if (!quoted && v == "NULL")
      out.emplace_back();
    else
      out.emplace_back(std::move(v));
    if (i >= text.size() || text[i] == '}') break;
    ++i;  // ','
  }
  return out;
}

std::string tuple_key(const std::vector<std::optional<std::string>>& t) {
  std::string s;
  for (const auto& v : t) s += v ? "=" + *v + '\x1f' : std::string("*\x1f");
  return s;
}

}  // namespace

void ensure_release_tables(pqxx::transaction_base& tx) {
  // Only what is missing is created: CREATE ... IF NOT EXISTS checks the
  // right to create even when the object exists, and a service user may
  // have been given the tables without that right.
  const char* const check =
      "SELECT to_regnamespace('kanon') IS NULL, to_regclass('kanon.releases') IS NULL, "
      "to_regclass('kanon.release_rows') IS NULL, to_regclass('kanon.held_keys') IS NULL";
  auto missing = tx.exec(check)[0];
  bool any = false;
  for (const auto& field : missing) any = any || field.as<bool>();
  if (!any) return;
  // Two builders creating them at once (two kanon processes, or the proxy
  // and `kanon tree`) would collide in the catalog's unique indexes, even
  // with IF NOT EXISTS: the lock the catalog watcher takes to create schema
  // kanon serializes them, and the check is made again under it.
  tx.exec("SELECT pg_catalog.pg_advisory_xact_lock(7306355, 1)");
  missing = tx.exec(check)[0];
  if (missing[0].as<bool>()) tx.exec("CREATE SCHEMA IF NOT EXISTS " + tx.quote_name("kanon"));
  if (missing[1].as<bool>())
    tx.exec(fmt::format(
        "CREATE TABLE IF NOT EXISTS {} (table_name text NOT NULL, version bigint NOT NULL, "
        "built_at timestamptz NOT NULL DEFAULT now(), baseline boolean NOT NULL, "
        "k integer NOT NULL, tree jsonb NOT NULL, rows bigint NOT NULL, "
        "released_fraction double precision NOT NULL, linked_rows bigint NOT NULL, "
        "min_candidates bigint NOT NULL, rows_below_k bigint NOT NULL, "
        "updated_rows_below_k bigint NOT NULL, held_rows bigint NOT NULL, "
        "PRIMARY KEY (table_name, version))",
        qualified(tx, kReleasesTable)));
  if (missing[2].as<bool>())
    tx.exec(
        fmt::format("CREATE TABLE IF NOT EXISTS {} (table_name text NOT NULL, key text NOT NULL, "
                    "since_version bigint NOT NULL, released text[], "
                    "held boolean NOT NULL DEFAULT false, "
                    "PRIMARY KEY (table_name, key, since_version))",
                    qualified(tx, kReleaseRowsTable)));
  if (missing[3].as<bool>())
    tx.exec(
        fmt::format("CREATE TABLE IF NOT EXISTS {} (table_name text NOT NULL, key text NOT NULL, "
                    "PRIMARY KEY (table_name, key))",
                    qualified(tx, kHeldKeysTable)));
}

std::string tree_json(const DisclosureTree& tree) {
  base::Json nodes = base::Json::array();
  for (const auto& n : tree.nodes()) {
    if (n.leaf())
      nodes.push_back({{"rows", n.rows}});
    else
      nodes.push_back({{"attribute", n.attribute},
                       {"value", n.value},
                       {"left", n.left},
                       {"right", n.right},
                       {"rows", n.rows}});
  }
  base::Json doc = {{"attributes", tree.attributes()}, {"nodes", std::move(nodes)}};
  return doc.dump();
}

DisclosureTree tree_from_json(const std::string& json, const TreeOptions& options) {
  const auto doc = nlohmann::json::parse(json);
  std::vector<TreeNode> nodes;
  for (const auto& j : doc.at("nodes")) {
    TreeNode n;
    n.rows = j.at("rows").get<uint64_t>();
    if (j.contains("attribute")) {
      n.attribute = j.at("attribute").get<int>();
      n.value = j.at("value").get<std::string>();
      n.left = j.at("left").get<int>();
      n.right = j.at("right").get<int>();
    }
    nodes.push_back(std::move(n));
  }
  return DisclosureTree::from_nodes(doc.at("attributes").get<std::vector<std::string>>(),
                                    std::move(nodes), options);
}

std::vector<std::optional<std::string>> leaf_tuple(const DisclosureTree& tree, int leaf) {
  std::vector<std::optional<std::string>> out(tree.attributes().size());
  for (const auto& c : tree.path(leaf))
    if (c.equal) out[static_cast<size_t>(c.attribute)] = c.value;
  return out;
}

uint64_t next_release_version(pqxx::transaction_base& tx, const std::string& table_name) {
  return tx
      .exec_params(fmt::format("SELECT coalesce(max(version), 0) + 1 FROM {} WHERE table_name = $1",
                               qualified(tx, kReleasesTable)),
                   table_name)[0][0]
      .as<uint64_t>();
}

ReleaseHistory load_release_history(pqxx::transaction_base& tx, const std::string& table_name,
                                    const std::vector<std::string>& attributes) {
  ReleaseHistory history;
  const auto releases = tx.exec_params(
      fmt::format("SELECT version, baseline, tree::text, k, "
                  "extract(epoch FROM built_at)::float8 FROM {} WHERE table_name = $1 AND "
                  "version >= (SELECT coalesce(max(version), 0) FROM {} WHERE table_name = $1 "
                  "AND baseline) ORDER BY version",
                  qualified(tx, kReleasesTable), qualified(tx, kReleasesTable)),
      table_name);
  if (releases.empty()) return history;
  std::vector<ReleasedVersion> versions;
  for (const auto& r : releases) {
    ReleasedVersion v;
    v.version = r[0].as<uint64_t>();
    v.baseline = r[1].as<bool>();
    v.tree = tree_from_json(r[2].as<std::string>(), {.k = r[3].as<uint64_t>()});
    v.built_at = std::chrono::system_clock::time_point(
        std::chrono::duration_cast<std::chrono::system_clock::duration>(
            std::chrono::duration<double>(r[4].as<double>())));
    if (v.tree.attributes() != attributes) return ReleaseHistory{};
    versions.push_back(std::move(v));
  }
  if (!versions.front().baseline) return ReleaseHistory{};
  // Per version, released tuple text -> leaf.
  std::vector<std::map<std::string, int32_t>> leaf_of(versions.size());
  for (size_t i = 0; i < versions.size(); ++i)
    for (int leaf : versions[i].tree.leaves())
      leaf_of[i][tuple_key(leaf_tuple(versions[i].tree, leaf))] = leaf;
  const uint64_t first = versions.front().version;
  std::vector<std::vector<int32_t>> columns(versions.size());
  const auto rows = tx.exec_params(
      fmt::format(
          "SELECT key, since_version, released::text, held FROM {} WHERE table_name = $1 AND "
          "since_version >= $2 ORDER BY key, since_version",
          qualified(tx, kReleaseRowsTable)),
      table_name, static_cast<int64_t>(first));
  // Each row holds from its version up to the key's next row.
  for (pqxx::result::size_type i = 0; i < rows.size(); ++i) {
    const auto key = rows[i][0].as<std::string>();
    const uint64_t since = rows[i][1].as<uint64_t>();
    const bool next_same = i + 1 < rows.size() && rows[i + 1][0].as<std::string>() == key;
    const uint64_t until = next_same ? rows[i + 1][1].as<uint64_t>() : UINT64_MAX;
    if (rows[i][2].is_null()) continue;
    const uint32_t index = history.intern(key);
    const std::string tk = tuple_key(parse_array(rows[i][2].as<std::string>()));
    const bool held = rows[i][3].as<bool>();
    for (size_t v = 0; v < versions.size(); ++v) {
      if (versions[v].version < since || versions[v].version >= until) continue;
      const auto leaf = leaf_of[v].find(tk);
      if (leaf == leaf_of[v].end())
        throw std::runtime_error(fmt::format(
            "kanon.release_rows: the tuple of key {} at version {} names no leaf of its tree", key,
            versions[v].version));
      auto& col = columns[v];
      if (col.size() <= index) col.resize(index + 1, kAbsent);
      col[index] = held ? held_leaf(leaf->second) : leaf->second;
    }
  }
  for (size_t v = 0; v < versions.size(); ++v) {
    versions[v].leaves = std::move(columns[v]);
    history.append(std::move(versions[v]));
  }
  return history;
}

void store_release(pqxx::transaction_base& tx, const std::string& table_name,
                   const ReleaseHistory& history, size_t index, const ReleaseFigures& figures) {
  const ReleasedVersion& v = history.versions()[index];
  const ReleasedVersion* prev = index > 0 ? &history.versions()[index - 1] : nullptr;
  if (v.baseline)
    tx.exec_params(
        fmt::format("DELETE FROM {} WHERE table_name = $1", qualified(tx, kReleaseRowsTable)),
        table_name);
  tx.exec_params(
      fmt::format("INSERT INTO {} (table_name, version, baseline, k, tree, rows, "
                  "released_fraction, linked_rows, min_candidates, rows_below_k, "
                  "updated_rows_below_k, held_rows) VALUES "
                  "($1, $2, $3, $4, $5::jsonb, $6, $7, $8, $9, $10, $11, $12)",
                  qualified(tx, kReleasesTable)),
      table_name, static_cast<int64_t>(v.version), v.baseline, static_cast<int64_t>(figures.k),
      tree_json(v.tree), static_cast<int64_t>(figures.rows), figures.released_fraction,
      static_cast<int64_t>(figures.check.linked_rows),
      static_cast<int64_t>(figures.check.min_candidates),
      static_cast<int64_t>(figures.check.rows_below_k),
      static_cast<int64_t>(figures.check.updated_rows_below_k), static_cast<int64_t>(figures.held));
  std::vector<std::string> literal(v.tree.size());
  for (int leaf : v.tree.leaves()) literal[leaf] = array_literal(leaf_tuple(v.tree, leaf));
  std::vector<std::string> prev_literal(prev ? prev->tree.size() : 0);
  if (prev)
    for (int leaf : prev->tree.leaves())
      prev_literal[leaf] = array_literal(leaf_tuple(prev->tree, leaf));
  pqxx::stream_to copy(
      tx, "kanon." + std::string(kReleaseRowsTable),
      std::vector<std::string>{"table_name", "key", "since_version", "released", "held"});
  const std::string version = std::to_string(v.version);
  const std::string yes = "t", no = "f";
  std::vector<const std::string*> held_keys;
  for (uint32_t key = 0; key < history.key_count(); ++key) {
    const int32_t now = history.leaf(index, key);
    const int32_t before = prev && !v.baseline ? history.leaf(index - 1, key) : kAbsent;
    if (is_held(now)) held_keys.push_back(&history.key(key));
    const std::string* a = now == kAbsent ? nullptr : &literal[true_leaf(now)];
    const std::string* b = before == kAbsent ? nullptr : &prev_literal[true_leaf(before)];
    if (a == nullptr && b == nullptr) continue;
    if (a && b && *a == *b && is_held(now) == is_held(before)) continue;
    copy << ReleaseRow{{&table_name, &history.key(key), &version, a, is_held(now) ? &yes : &no}};
  }
  copy.complete();
  // The keys the materialized copy masks (materializer.h), this release's only.
  tx.exec_params(fmt::format("DELETE FROM {} WHERE table_name = $1", qualified(tx, kHeldKeysTable)),
                 table_name);
  if (!held_keys.empty()) {
    pqxx::stream_to held(tx, "kanon." + std::string(kHeldKeysTable),
                         std::vector<std::string>{"table_name", "key"});
    for (const std::string* key : held_keys) held << ReleaseRow{{&table_name, key}};
    held.complete();
  }
}

}  // namespace kanon::policy
