#include "policy/tree_report.h"

#include <fmt/format.h>

#include "engine/json_string.h"
#include "policy/sql_text.h"

namespace kanon::policy {
namespace {

using engine::json_string;

std::string path_text(const DisclosureTree& tree, int leaf) {
  std::string s;
  for (const auto& c : tree.path(leaf))
    s += fmt::format("{}({} {} {})", s.empty() ? "" : " AND ", tree.attributes()[c.attribute],
                     c.equal ? "=" : "<>", c.value);
  return s.empty() ? "TRUE" : s;
}

}  // namespace

std::string tree_report_text(const TableSnapshot& s) {
  const auto& tree = s.tree;
  std::string out = fmt::format(
      "table {}  k={}{}  rows={} (distinct {})  nodes={} depth={} cohorts={}\n"
      "load {:.1f} ms, tree {:.1f} ms, compile {:.1f} ms\n\nCohorts\n",
      s.policy.name(), s.policy.k,
      s.policy.sensitive
          ? fmt::format(" l={} on {}", s.policy.sensitive->l, s.policy.sensitive->column)
          : "",
      s.stats.rows, s.stats.distinct_rows, tree.size(), tree.depth(), tree.leaves().size(),
      s.stats.load_ms, s.stats.tree_ms, s.stats.compile_ms);
  std::string header = "  partition  rows  ";
  for (const auto& a : tree.attributes()) header += fmt::format("{}  ", a);
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
    out += fmt::format("  {}: {} ({} tests)\n", tree.attributes()[a],
                       s.predicates[a].rule_text(tree.attributes()), s.predicates[a].size());
  out += "\nSQL masks\n";
  for (const auto& c : s.masks.columns)
    if (c.role == ColumnMask::Role::kQuasiIdentifier ||
        c.role == ColumnMask::Role::kDirectIdentifier)
      out += fmt::format("  {}: {}\n", c.column, c.expression);
  return out;
}

std::string tree_report_json(const TableSnapshot& s) {
  const auto& tree = s.tree;
  std::string out = fmt::format(
      "{{\"table\": {}, \"k\": {}, \"rows\": {}, \"distinct_rows\": {}, \"nodes\": {}, "
      "\"depth\": {}, \"load_ms\": {:.3f}, \"tree_ms\": {:.3f}, \"compile_ms\": {:.3f},\n"
      " \"cohorts\": [",
      json_string(s.policy.name()), s.policy.k, s.stats.rows, s.stats.distinct_rows, tree.size(),
      tree.depth(), s.stats.load_ms, s.stats.tree_ms, s.stats.compile_ms);
  bool first = true;
  for (int leaf : tree.leaves()) {
    const auto& n = tree.nodes()[leaf];
    std::string path, released;
    for (const auto& c : tree.path(leaf))
      path += fmt::format("{}{{\"attribute\": {}, \"op\": \"{}\", \"value\": {}}}",
                          path.empty() ? "" : ", ", json_string(tree.attributes()[c.attribute]),
                          c.equal ? "=" : "<>", json_string(c.value));
    for (size_t a = 0; a < tree.attributes().size(); ++a)
      if (n.released >> a & 1)
        released += (released.empty() ? "" : ", ") + json_string(tree.attributes()[a]);
    out +=
        fmt::format("{}\n  {{\"partition\": {}, \"rows\": {}, \"path\": [{}], \"released\": [{}]}}",
                    first ? "" : ",", json_string(n.label), n.rows, path, released);
    first = false;
  }
  out += "],\n \"rules\": {";
  for (size_t a = 0; a < s.predicates.size(); ++a)
    out += fmt::format("{}\n  {}: {}", a ? "," : "", json_string(tree.attributes()[a]),
                       json_string(s.predicates[a].rule_text(tree.attributes())));
  out += "},\n \"masks\": {";
  first = true;
  for (const auto& c : s.masks.columns) {
    out += fmt::format("{}\n  {}: {}", first ? "" : ",", json_string(c.column),
                       json_string(c.expression));
    first = false;
  }
  return out + "}}\n";
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
