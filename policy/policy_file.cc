#include "policy/policy_file.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <set>

#include "base/text.h"
#include "base/yaml_reader.h"
#include "engine/algorithm.h"
#include "engine/quality_metric.h"

namespace kanon::policy {
namespace {

class Reader : public base::YamlReader {
 public:
  using YamlReader::YamlReader;

  SourceRef ref(const YAML::Node& node, const std::string& key) const {
    return SourceRef{source(), line_of(node), key};
  }

  std::string column(const YAML::Node& node, const std::string& key) const {
    std::string s = string(node, key);
    if (s.empty()) fail(node, key, "empty column name");
    return s;
  }

  std::vector<std::string> role_list(const YAML::Node& node, const std::string& key) const {
    if (!node.IsSequence()) fail(node, key, "expected a list of users or roles");
    std::vector<std::string> out;
    for (size_t i = 0; i < node.size(); ++i) {
      const std::string k = fmt::format("{}[{}]", key, i);
      std::string role = string(node[i], k);
      if (role.empty()) fail(node[i], k, "empty role name");
      out.push_back(std::move(role));
    }
    return out;
  }
  std::vector<std::pair<std::string, YAML::Node>> column_list(const YAML::Node& node,
                                                              const std::string& key) const {
    if (!node.IsSequence()) fail(node, key, "expected a list of column names");
    std::vector<std::pair<std::string, YAML::Node>> out;
    std::set<std::string> seen;
    for (size_t i = 0; i < node.size(); ++i) {
      const std::string k = fmt::format("{}[{}]", key, i);
      std::string c = column(node[i], k);
      if (!seen.insert(c).second) fail(node[i], k, fmt::format("column '{}' listed twice", c));
      out.emplace_back(std::move(c), node[i]);
    }
    return out;
  }
};

const std::set<std::string> kTableKeys = {"table",
                                          "database",
                                          "k",
                                          "quasi_identifiers",
                                          "direct_identifiers",
                                          "sensitive",
                                          "exempt",
                                          "refresh",
                                          "max_nodes",
                                          "mode",
                                          "evaluator",
                                          "export",
                                          "indexes",
                                          "allowed_functions",
                                          "grants",
                                          "grant_to",
                                          "key",
                                          "person",
                                          "risk"};

void parse_export(const Reader& r, const YAML::Node& node, const std::string& key, TablePolicy& p) {
  r.expect_map(node, key, {"hierarchies", "suppression", "metric", "algorithm", "grant"});
  if (const auto h = node["hierarchies"]) {
    if (!h.IsMap()) r.fail(h, key + ".hierarchies", "expected a mapping of column to file");
    const auto dir = std::filesystem::path(r.source()).parent_path();
    for (const auto& kv : h) {
      const std::string col = r.column(kv.first, key + ".hierarchies");
      const std::string k = key + ".hierarchies." + col;
      const std::filesystem::path file(r.string(kv.second, k));
      if (std::find(p.quasi_identifiers.begin(), p.quasi_identifiers.end(), col) ==
          p.quasi_identifiers.end())
        r.fail(kv.first, k, fmt::format("'{}' is not a quasi-identifier of this table", col));
      p.export_options.hierarchies[col] =
          file.is_absolute() ? file.string() : (dir / file).lexically_normal().string();
    }
  }
  if (const auto s = node["suppression"])
    p.export_options.suppression = r.fraction(s, key + ".suppression");
  if (const auto m = node["metric"]) {
    p.export_options.metric = r.string(m, key + ".metric");
    if (!engine::parse_metric(p.export_options.metric))
      r.fail(m, key + ".metric", engine::metric_names().unknown(p.export_options.metric));
  }
  if (const auto a = node["algorithm"]) {
    p.export_options.algorithm = r.string(a, key + ".algorithm");
    if (!engine::parse_algorithm(p.export_options.algorithm))
      r.fail(a, key + ".algorithm", engine::algorithm_names().unknown(p.export_options.algorithm));
  }
  if (const auto g = node["grant"]) p.export_options.grant = r.role_list(g, key + ".grant");
}

void parse_risk(const Reader& r, const YAML::Node& node, const std::string& key, TablePolicy& p) {
  r.expect_map(node, key, {"threshold", "population"});
  p.risk.where = r.ref(node, key);
  if (const auto t = node["threshold"]) {
    const double v = r.fraction(t, key + ".threshold");
    if (v <= 0)
      r.fail(t, key + ".threshold",
             "must be above 0 (the highest re-identification probability a record may have, "
             "e.g. 0.2 for classes of 5)");
    p.risk.threshold = v;
  }
  if (const auto pop = node["population"]) {
    const std::string name = r.string(pop, key + ".population");
    const auto parts = split_table_name(name);
    if (!parts)
      r.fail(pop, key + ".population",
             fmt::format("'{}' is not a schema-qualified table name (schema.table)", name));
    p.risk.population_schema = parts->first;
    p.risk.population_table = parts->second;
  }
}

TablePolicy parse_table(const Reader& r, const YAML::Node& node, const std::string& key) {
  r.expect_map(node, key, kTableKeys);
  TablePolicy p;
  for (const char* required : {"table", "k", "quasi_identifiers"})
    if (!node[required]) r.fail(node, key + "." + required, "required key is missing");

  const std::string name = r.string(node["table"], key + ".table");
  const auto parts = split_table_name(name);
  if (!parts)
    r.fail(node["table"], key + ".table",
           fmt::format("'{}' is not a schema-qualified table name (schema.table)", name));
  p.schema = parts->first;
  p.table = parts->second;
  p.where = r.ref(node["table"], key + ".table");
  if (const auto db = node["database"]) {
    p.database = r.string(db, key + ".database");
    if (p.database.empty()) r.fail(db, key + ".database", "empty database name");
  }

  p.k = static_cast<uint32_t>(
      r.integer(node["k"], key + ".k", 2, 1u << 30, "must be at least 2 (and at most 2^30)"));

  std::set<std::string> used;  // every column has one role
  auto claim = [&](const std::string& col, const YAML::Node& at, const std::string& k) {
    if (!used.insert(col).second)
      r.fail(at, k, fmt::format("column '{}' already has another role in this table", col));
  };

  const auto qis = r.column_list(node["quasi_identifiers"], key + ".quasi_identifiers");
  if (qis.empty()) r.fail(node["quasi_identifiers"], key + ".quasi_identifiers", "empty list");
  if (qis.size() > 64)
    r.fail(node["quasi_identifiers"], key + ".quasi_identifiers", "at most 64 columns");
  for (size_t i = 0; i < qis.size(); ++i) {
    const std::string k = fmt::format("{}.quasi_identifiers[{}]", key, i);
    claim(qis[i].first, qis[i].second, k);
    p.quasi_identifiers.push_back(qis[i].first);
    p.quasi_identifier_refs.push_back(r.ref(qis[i].second, k));
  }

  if (const auto d = node["direct_identifiers"]) {
    const std::string dk = key + ".direct_identifiers";
    if (d.IsSequence()) {  // [name, ssn]: all masked as NULL
      for (const auto& [col, at] : r.column_list(d, dk)) {
        claim(col, at, dk + "." + col);
        p.direct_identifiers.push_back({col, std::nullopt, r.ref(at, dk + "." + col)});
      }
    } else if (d.IsMap()) {
      for (const auto& kv : d) {
        const std::string col = r.column(kv.first, dk);
        const std::string k = dk + "." + col;
        claim(col, kv.first, k);
        DirectIdentifier di{col, std::nullopt, r.ref(kv.first, k)};
        if (!kv.second.IsNull()) di.constant = r.string(kv.second, k);
        p.direct_identifiers.push_back(std::move(di));
      }
    } else {
      r.fail(d, dk, "expected a mapping of column to null or a constant, or a list of columns");
    }
  }

  if (const auto s = node["sensitive"]) {
    const std::string sk = key + ".sensitive";
    r.expect_map(s, sk, {"column", "l"});
    if (!s["column"]) r.fail(s, sk + ".column", "required key is missing");
    SensitiveAttribute sa;
    sa.column = r.column(s["column"], sk + ".column");
    sa.where = r.ref(s["column"], sk + ".column");
    claim(sa.column, s["column"], sk + ".column");
    if (s["l"]) sa.l = static_cast<uint32_t>(r.integer(s["l"], sk + ".l", 2, 1u << 20));
    p.sensitive = sa;
  }

  if (const auto e = node["exempt"]) p.exempt = r.role_list(e, key + ".exempt");

  if (const auto af = node["allowed_functions"]) {
    const std::string ak = key + ".allowed_functions";
    if (!af.IsSequence()) r.fail(af, ak, "expected a list of functions as schema.name");
    for (size_t j = 0; j < af.size(); ++j) {
      const std::string k = fmt::format("{}[{}]", ak, j);
      const std::string name = r.string(af[j], k);
      const size_t dot = name.find('.');
      if (dot == std::string::npos || dot == 0 || dot + 1 == name.size() ||
          name.find('.', dot + 1) != std::string::npos)
        r.fail(af[j], k, fmt::format("'{}' is not schema.name", name));
      p.allowed_functions.push_back(name);
    }
  }

  if (const auto f = node["refresh"]) {
    const std::string text = r.string(f, key + ".refresh");
    const auto d = base::parse_duration(text);
    if (!d || d->count() <= 0)
      r.fail(f, key + ".refresh",
             fmt::format("'{}' is not a positive duration (e.g. 30s, 10m, 1h)", text));
    p.refresh = *d;
  }

  if (const auto m = node["max_nodes"])
    p.max_nodes = static_cast<uint32_t>(r.integer(m, key + ".max_nodes", 1, 1u << 24));

  if (const auto m = node["mode"]) {
    const std::string mode = r.string(m, key + ".mode");
    if (mode == "inline") {
      p.mode = EnforcementMode::kInline;
    } else if (mode == "materialized") {
      p.mode = EnforcementMode::kMaterialized;
    } else if (mode == "view") {
      p.mode = EnforcementMode::kView;
    } else {
      r.fail(m, key + ".mode", fmt::format("'{}' is not one of inline, materialized, view", mode));
    }
  }

  if (const auto e = node["evaluator"]) {
    const std::string value = r.string(e, key + ".evaluator");
    if (value == "function") {
      p.evaluator = MaskEvaluator::kFunction;
    } else if (value == "auto") {
      p.evaluator = MaskEvaluator::kAuto;
    } else if (value != "sql") {
      r.fail(e, key + ".evaluator", fmt::format("'{}' is not one of sql, function, auto", value));
    }
    p.evaluator_where = r.ref(e, key + ".evaluator");
  }

  if (const auto g = node["grants"]) {
    const std::string gk = key + ".grants";
    const std::string value = r.string(g, gk);
    if (value == "manage") {
      p.grants = GrantPolicy::kManage;
    } else if (value != "none") {
      r.fail(g, gk, fmt::format("'{}' is not one of none, manage", value));
    }
    if (p.grants == GrantPolicy::kManage && p.mode != EnforcementMode::kView)
      r.fail(g, gk, "grants: manage applies only to mode: view (kanon grants on its masked view)");
    p.grants_where = r.ref(g, gk);
  }
  if (const auto gt = node["grant_to"]) {
    const std::string gk = key + ".grant_to";
    if (p.grants != GrantPolicy::kManage)
      r.fail(gt, gk, "grant_to needs grants: manage (and mode: view)");
    p.grant_to = r.role_list(gt, gk);
    if (p.grant_to.empty()) r.fail(gt, gk, "empty list: name the restricted roles");
    std::set<std::string> seen;
    for (size_t j = 0; j < p.grant_to.size(); ++j) {
      const std::string& role = p.grant_to[j];
      const std::string k = fmt::format("{}[{}]", gk, j);
      if (!seen.insert(role).second) r.fail(gt[j], k, fmt::format("role '{}' listed twice", role));
      std::string lower = role;
      for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (lower == "public")
        r.fail(gt[j], k, "PUBLIC cannot be managed: name the restricted roles");
      if (std::find(p.exempt.begin(), p.exempt.end(), role) != p.exempt.end())
        r.fail(gt[j], k,
               fmt::format("role '{}' is exempt (it reads the raw table): it cannot lose SELECT "
                           "on it",
                           role));
    }
  }
  if (p.grants == GrantPolicy::kManage && p.grant_to.empty())
    r.fail(node["grants"], key + ".grants",
           "grants: manage needs grant_to, the list of restricted roles to manage");

  if (const auto ix = node["indexes"]) {
    const std::string ik = key + ".indexes";
    if (p.mode != EnforcementMode::kMaterialized)
      r.fail(ix, ik,
             "indexes apply only to mode: materialized (the inline form and the view have no "
             "copy)");
    const auto cols = r.column_list(ix, ik);  // checks the type and duplicates
    for (size_t j = 0; j < cols.size(); ++j) {
      p.indexes.push_back(cols[j].first);
      p.index_refs.push_back(r.ref(cols[j].second, fmt::format("{}[{}]", ik, j)));
    }
  }

  if (const auto pn = node["person"]) {
    const std::string pk = key + ".person";
    // One column, or a list: who a row belongs to (k counts persons).
    const auto cols =
        pn.IsScalar() ? std::vector{std::pair{r.column(pn, pk), pn}} : r.column_list(pn, pk);
    if (cols.empty()) r.fail(pn, pk, "empty list: name the column(s) that identify a person");
    for (size_t j = 0; j < cols.size(); ++j) {
      const std::string k = pn.IsScalar() ? pk : fmt::format("{}[{}]", pk, j);
      for (const auto& q : p.quasi_identifiers)
        if (q == cols[j].first)
          r.fail(cols[j].second, k,
                 fmt::format("person column '{}' is a quasi-identifier; it names who a row "
                             "belongs to",
                             q));
      p.person.push_back(cols[j].first);
      p.person_refs.push_back(r.ref(cols[j].second, k));
    }
  }

  if (const auto kn = node["key"]) {
    const std::string kk = key + ".key";
    const auto cols = r.column_list(kn, kk);  // checks the type and duplicates
    for (size_t j = 0; j < cols.size(); ++j) {
      for (const auto& q : p.quasi_identifiers)
        if (q == cols[j].first)
          r.fail(kn, kk,
                 fmt::format("key column '{}' is a quasi-identifier; the key links releases "
                             "and must be a column the analyst sees unmasked",
                             q));
      p.key.push_back(cols[j].first);
      p.key_refs.push_back(r.ref(cols[j].second, fmt::format("{}[{}]", kk, j)));
    }
  }

  if (const auto x = node["export"]) parse_export(r, x, key + ".export", p);
  if (const auto x = node["risk"]) parse_risk(r, x, key + ".risk", p);
  return p;
}

}  // namespace

const char* to_string(EnforcementMode mode) {
  switch (mode) {
    case EnforcementMode::kMaterialized:
      return "materialized";
    case EnforcementMode::kView:
      return "view";
    case EnforcementMode::kInline:
      break;
  }
  return "inline";
}

const char* to_string(GrantPolicy grants) {
  return grants == GrantPolicy::kManage ? "manage" : "none";
}

std::optional<std::vector<std::string>> split_qualified_name(const std::string& text) {
  std::vector<std::string> parts(1);
  size_t i = 0;
  bool part_started = false;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '"') {
      if (part_started) return std::nullopt;
      ++i;
      std::string& out = parts.back();
      for (;;) {
        if (i >= text.size()) return std::nullopt;
        if (text[i] == '"') {
          if (i + 1 < text.size() && text[i + 1] == '"') {
            out += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        out += text[i++];
      }
      part_started = true;
      if (i < text.size() && text[i] != '.') return std::nullopt;
    } else if (c == '.') {
      if (parts.back().empty()) return std::nullopt;
      parts.emplace_back();
      part_started = false;
      ++i;
    } else {
      parts.back() += c;
      part_started = true;
      ++i;
    }
  }
  for (const auto& p : parts)
    if (p.empty()) return std::nullopt;
  return parts;
}

std::string join_qualified_name(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& part : parts) {
    if (!out.empty()) out += '.';
    const bool quote = part.empty() || part.find_first_of(".\"; \t\r\n\v\f") != std::string::npos;
    if (!quote) {
      out += part;
      continue;
    }
    out += '"';
    for (const char c : part) {
      if (c == '"') out += '"';
      out += c;
    }
    out += '"';
  }
  return out;
}

std::string display_name(const TablePolicy& policy) {
  return join_qualified_name({policy.schema, policy.table});
}

std::optional<std::pair<std::string, std::string>> split_table_name(const std::string& text) {
  const auto parts = split_qualified_name(text);
  if (!parts || parts->size() != 2) return std::nullopt;
  return std::make_pair((*parts)[0], (*parts)[1]);
}

std::vector<TablePolicy> load_policy_file(const std::string& path) {
  const Reader r(path);
  const YAML::Node root = r.load_file("the policy file");
  if (!root.IsMap()) r.fail(root, "tables", "a policy file is a mapping with a tables: list");
  r.expect_map(root, "", {"database", "tables"});
  std::string database;  // the file's default for its tables
  if (const auto db = root["database"]) {
    database = r.string(db, "database");
    if (database.empty()) r.fail(db, "database", "empty database name");
  }
  const auto tables = root["tables"];
  if (!tables || !tables.IsSequence()) r.fail(root, "tables", "expected a list of tables");
  std::vector<TablePolicy> out;
  for (size_t i = 0; i < tables.size(); ++i) {
    auto p = parse_table(r, tables[i], fmt::format("tables[{}]", i));
    if (p.database.empty()) p.database = database;
    for (const auto& q : out)
      if (q.database == p.database && q.schema == p.schema && q.table == p.table)
        throw ConfigError(fmt::format("{}:{}: {}: table {} already has a policy at line {}",
                                      p.where.file, p.where.line, p.where.key, p.name(),
                                      q.where.line));
    out.push_back(std::move(p));
  }
  return out;
}

const TablePolicy& find_policy(const std::vector<TablePolicy>& policies, const std::string& name) {
  const auto parts = split_qualified_name(name);
  const auto matches = [&](const TablePolicy& p) {
    if (!parts || parts->empty() || parts->size() > 3) return false;
    const auto& v = *parts;
    const size_t n = v.size();
    if (v[n - 1] != p.table) return false;
    if (n >= 2 && v[n - 2] != p.schema) return false;
    return n < 3 || v[0] == p.database;
  };
  const TablePolicy* found = nullptr;
  int count = 0;
  for (const auto& p : policies)
    if (matches(p)) found = &p, ++count;
  if (count == 1) return *found;
  // Database-qualified only when the policies span several databases.
  const bool several = std::any_of(policies.begin(), policies.end(), [&](const TablePolicy& p) {
    return p.database != policies.front().database;
  });
  std::string list;
  for (const auto& p : policies)
    list += (list.empty() ? "" : ", ") + (several ? database_qualified_name(p) : p.name());
  const char* why = "";
  if (count > 1)
    why = parts && parts->size() == 1 ? " (ambiguous: qualify it with its schema)"
                                      : " (ambiguous: qualify it with its database)";
  throw ConfigError(fmt::format("no policy for table '{}'{} (protected tables: {})", name, why,
                                list.empty() ? "none" : list));
}

std::vector<std::string> databases_of(const std::vector<TablePolicy>& policies,
                                      const std::string& default_database) {
  std::vector<std::string> out{default_database};
  for (const auto& p : policies)
    if (std::find(out.begin(), out.end(), p.database) == out.end()) out.push_back(p.database);
  return out;
}

std::vector<TablePolicy> policies_of(const std::vector<TablePolicy>& policies,
                                     const std::string& database) {
  std::vector<TablePolicy> out;
  for (const auto& p : policies)
    if (p.database == database) out.push_back(p);
  return out;
}

std::string database_qualified_name(const TablePolicy& policy) {
  return policy.database.empty() ? policy.name() : policy.database + "." + policy.name();
}

std::vector<TablePolicy> load_policies(const std::vector<std::string>& files,
                                       const std::string& default_db) {
  std::vector<TablePolicy> all;
  for (const auto& file : files) {
    for (auto& p : load_policy_file(file)) {
      if (p.database.empty()) {
        p.database = default_db;
      } else if (default_db.empty()) {
        // Which store would the other tables belong to? Only the server
        // knows: the same database could end up with two sets of trees.
        throw ConfigError(
            fmt::format("{}:{}: {}: the policy names database {}, but kanon's own database is not "
                        "configured: set backend.dbname (or dbname in backend.conninfo)",
                        p.where.file, p.where.line, p.where.key, p.database));
      }
      for (const auto& q : all)
        if (q.database == p.database && q.schema == p.schema && q.table == p.table)
          throw ConfigError(fmt::format("{}:{}: {}: table {} already has a policy in {}:{}",
                                        p.where.file, p.where.line, p.where.key, p.name(),
                                        q.where.file, q.where.line));
      all.push_back(std::move(p));
    }
  }
  return all;
}

}  // namespace kanon::policy
