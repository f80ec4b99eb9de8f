#include "policy/tree_report.h"

#include <fmt/format.h>

#include "base/json.h"
#include "base/text.h"
#include "policy/policy_file.h"
#include "policy/sql_text.h"

namespace kanon::policy {
namespace {

std::string path_text(const DisclosureTree& tree, int leaf) {
  std::string s;
  for (const auto& c : tree.path(leaf))
    s += fmt::format("{}({} {} {})", s.empty() ? "" : " AND ", tree.attributes()[c.attribute],
                     c.equal ? "=" : "<>", c.value);
  return s.empty() ? "TRUE" : base::one_line(s);
}

}  // namespace

std::string tree_report_text(const TableSnapshot& s) {
  const auto& tree = s.tree;
  std::string out = fmt::format(
      "table {}  k={}{}  rows={} (distinct {})  nodes={} depth={} cohorts={}\n"
      "load {:.1f} ms, tree {:.1f} ms, compile {:.1f} ms\n\nCohorts\n",
      base::one_line(s.policy.name()), s.policy.k,
      s.policy.sensitive ? fmt::format(" l={} on {}", s.policy.sensitive->l,
                                       base::one_line(s.policy.sensitive->column))
                         : "",
      s.stats.rows, s.stats.distinct_rows, tree.size(), tree.depth(), tree.leaves().size(),
      s.stats.load_ms, s.stats.tree_ms, s.stats.compile_ms);
  std::string header = "  partition  rows  ";
  for (const auto& a : tree.attributes()) header += fmt::format("{}  ", base::one_line(a));
  out += header + "rule\n";
  for (int leaf : tree.leaves()) {
    const auto& n = tree.nodes()[leaf];
    out += fmt::format("  {:<9}  {:>4}  ", n.label, n.rows);
    for (size_t a = 0; a < tree.attributes().size(); ++a)
      out += fmt::format("{:<{}}  ", (n.released >> a & 1) ? "yes" : "no",
                         tree.attributes()[a].size());
    out += path_text(tree, leaf) + "\n";
  }
  out += "\nRelease rules\n";
  for (size_t a = 0; a < s.predicates.size(); ++a)
    out += fmt::format("  {}: {} ({} tests)\n", base::one_line(tree.attributes()[a]),
                       base::one_line(s.predicates[a].rule_text(tree.attributes())),
                       s.predicates[a].size());
  out += "\nSQL masks\n";
  for (const auto& c : s.masks.columns)
    if (c.role == ColumnMask::Role::kQuasiIdentifier ||
        c.role == ColumnMask::Role::kDirectIdentifier)
      out += fmt::format("  {}: {}\n", base::one_line(c.column), base::one_line(c.expression));
  return out;
}

std::string tree_report_json(const TableSnapshot& s) {
  using base::Json;
  using base::json_number;
  const auto& tree = s.tree;
  const auto& attributes = tree.attributes();
  Json doc;
  doc["table"] = display_name(s.policy);
  doc["k"] = s.policy.k;
  doc["rows"] = s.stats.rows;
  doc["distinct_rows"] = s.stats.distinct_rows;
  doc["nodes"] = tree.size();
  doc["depth"] = tree.depth();
  doc["load_ms"] = json_number(s.stats.load_ms, 3);
  doc["tree_ms"] = json_number(s.stats.tree_ms, 3);
  doc["compile_ms"] = json_number(s.stats.compile_ms, 3);
  auto& cohorts = doc["cohorts"] = Json::array();
  for (int leaf : tree.leaves()) {
    const auto& n = tree.nodes()[leaf];
    Json path = Json::array(), released = Json::array();
    for (const auto& c : tree.path(leaf))
      path.push_back({{"attribute", attributes[c.attribute]},
                      {"op", c.equal ? "=" : "<>"},
                      {"value", c.value}});
    for (size_t a = 0; a < attributes.size(); ++a)
      if (n.released >> a & 1) released.push_back(attributes[a]);
    cohorts.push_back({{"partition", n.label},
                       {"rows", n.rows},
                       {"path", std::move(path)},
                       {"released", std::move(released)}});
  }
  auto& rules = doc["rules"] = Json::object();
  for (size_t a = 0; a < s.predicates.size(); ++a)
    rules[attributes[a]] = s.predicates[a].rule_text(attributes);
  auto& masks = doc["masks"] = Json::object();
  for (const auto& c : s.masks.columns) masks[c.column] = c.expression;
  return base::json_text(doc, 2);
}

std::string tree_report_sql(const TableSnapshot& s) {
  std::string out = "SELECT";
  for (size_t i = 0; i < s.masks.columns.size(); ++i) {
    const auto& c = s.masks.columns[i];
    out += fmt::format("{}\n  {} AS {}", i ? "," : "", c.expression, quote_identifier(c.column));
  }
  return out + "\nFROM " + qualified_name(s.policy.schema, s.policy.table) + ";\n";
}

}  // namespace kanon::policy
