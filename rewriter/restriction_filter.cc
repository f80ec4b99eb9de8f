#include "rewriter/restriction_filter.h"

#include <algorithm>

#include "policy/sql_text.h"

namespace kanon::rewriter {
namespace {

// A string constant an integer column reads as an integer: what the
// column's input function accepts without spaces.
bool integer_text(const std::string& s) {
  const size_t digits = s.size() - (!s.empty() && (s[0] == '-' || s[0] == '+') ? 1 : 0);
  return digits >= 1 && digits <= 18 &&
         std::all_of(s.end() - static_cast<std::ptrdiff_t>(digits), s.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

// Whether a parameter a Parse declares as `type` (0: unspecified) is
// compared with column `m` by one of pg_catalog's leakproof, strict
// operators, the same in the filter as in the user's conjunct. Unspecified,
// PostgreSQL gives it the type its only use asks for: the column's (text
// for character varying with `=`, but character varying with IN, so not
// there).
bool typed_as_column(uint32_t type, const policy::ColumnMask& m) {
  constexpr uint32_t kInt8 = 20, kInt2 = 21, kInt4 = 23, kText = 25, kVarchar = 1043;
  if (m.holds_integers()) return type == 0 || type == kInt2 || type == kInt4 || type == kInt8;
  if (type == kText || type == kVarchar) return true;
  return type == 0 && m.compared == policy::ColumnMask::Compared::kText;
}

// `col <op> constant` (or `$n`) as kanon writes it, or "" when the column
// cannot be compared with it as built-in integers or text.
std::string comparison(const ColumnRestriction::Comparison& c, const policy::ColumnMask& m,
                       const std::vector<uint32_t>* parameter_types) {
  std::string operand;
  if (c.parameter > 0) {
    if (!parameter_types) return {};
    const size_t i = static_cast<size_t>(c.parameter) - 1;
    if (!typed_as_column(i < parameter_types->size() ? (*parameter_types)[i] : 0, m)) return {};
    operand = std::to_string(c.parameter);
    operand.insert(operand.begin(), '$');
  } else {
    if (m.holds_integers() ? c.string && !integer_text(c.value) : !c.string) return {};
    operand = c.string ? policy::quote_literal(c.value) : c.value;
  }
  const std::string column = policy::quote_identifier(m.column);
  const std::string op = " OPERATOR(pg_catalog." + c.op + ") ";
  return c.column_first ? column + op + operand : operand + op + column;
}

}  // namespace

std::string restriction_filter(const std::vector<ColumnRestriction>& restrictions,
                               const policy::TableMasks& masks, const catalog::CatalogFacts* facts,
                               const std::vector<uint32_t>* parameter_types) {
  if (!facts) return {};
  // Per column, in the order of its first restriction: the raw conditions.
  std::vector<std::pair<const policy::ColumnMask*, std::string>> conditions;
  for (const auto& r : restrictions) {
    const auto m = std::find_if(masks.columns.begin(), masks.columns.end(), [&](const auto& c) {
      return c.column == r.column && !c.release_test.empty();
    });
    if (m == masks.columns.end()) continue;
    std::string condition;
    for (const auto& c : r.comparisons) {
      const bool shadowed = std::any_of(facts->operators.begin(), facts->operators.end(),
                                        [&](const auto& o) { return o.name == c.op; });
      const std::string cmp = shadowed ? std::string() : comparison(c, *m, parameter_types);
      if (cmp.empty()) {
        condition.clear();
        break;
      }
      condition += (condition.empty() ? "" : r.any ? " OR " : " AND ") + cmp;
    }
    if (condition.empty()) continue;
    if (r.comparisons.size() > 1) condition = "(" + condition + ")";
    const auto same = std::find_if(conditions.begin(), conditions.end(),
                                   [&](const auto& p) { return p.first == &*m; });
    if (same == conditions.end())
      conditions.emplace_back(&*m, condition);
    else
      same->second += " AND " + condition;
  }
  std::string out;
  for (const auto& [m, condition] : conditions)
    out += (out.empty() ? " WHERE " : " AND ") + std::string("CASE WHEN ") + condition + " THEN " +
           m->release_test + " ELSE false END";
  return out;
}

}  // namespace kanon::rewriter
