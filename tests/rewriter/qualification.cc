#include "tests/rewriter/qualification.h"

#include <pg_query.h>

#include <nlohmann/json.hpp>

namespace kanon::testing {
namespace {

using nlohmann::json;

std::string names_text(const json& list) {
  std::string s;
  for (const auto& n : list) {
    if (!s.empty()) s += '.';
    s += n.contains("String") ? n["String"].value("sval", "") : std::string("?");
  }
  return s;
}

void walk(const json& node, std::vector<std::string>& out) {
  if (node.is_array()) {
    for (const auto& v : node) walk(v, out);
    return;
  }
  if (!node.is_object()) return;
  for (const auto& [key, value] : node.items()) {
    if (key == "A_Expr") {
      const std::string kind = value.value("kind", "");
      const json names = value.value("name", json::array());
      const bool qualified_op = kind.rfind("AEXPR_OP", 0) == 0 && names.size() == 2;
      if (!qualified_op) out.push_back(kind + " " + names_text(names));
    } else if (key == "FuncCall") {
      const json names = value.value("funcname", json::array());
      if (names.size() < 2) out.push_back("function " + names_text(names));
    } else if (key == "TypeName") {
      const json names = value.value("names", json::array());
      if (names.size() < 2) out.push_back("type " + names_text(names));
    } else if (key == "typeName") {
      const json names = value.value("names", json::array());
      if (names.size() < 2) out.push_back("type " + names_text(names));
    } else if (key == "CaseExpr" && value.contains("arg")) {
      out.push_back("CASE x WHEN (looks = up)");
    } else if (key == "SubLink" && value.contains("operName")) {
      const json names = value["operName"];
      if (names.size() < 2) out.push_back("subquery operator " + names_text(names));
    } else if (key == "RangeVar" && !value.contains("schemaname")) {
      out.push_back("relation " + value.value("relname", ""));
    }
    walk(value, out);
  }
}

}  // namespace

std::vector<std::string> unqualified_names(const std::string& sql) {
  PgQueryParseResult result = pg_query_parse(sql.c_str());
  std::vector<std::string> out;
  if (result.error) {
    out.push_back(std::string("cannot parse: ") + result.error->message);
  } else {
    walk(json::parse(result.parse_tree), out);
  }
  pg_query_free_parse_result(result);
  return out;
}

}  // namespace kanon::testing
