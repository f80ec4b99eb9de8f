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

// `col <op> constant` as kanon writes it, or "" when the column cannot be
// compared with it as built-in integers or text.
std::string comparison(const ColumnRestriction::Comparison& c, const policy::ColumnMask& m) {
  if (m.holds_integers ? c.string && !integer_text(c.value) : !c.string) return {};
  const std::string constant = c.string ? policy::quote_literal(c.value) : c.value;
  const std::string column = policy::quote_identifier(m.column);
  const std::string op = " OPERATOR(pg_catalog." + c.op + ") ";
  return c.column_first ? column + op + constant : constant + op + column;
}

}  // namespace

std::string restriction_filter(const std::vector<ColumnRestriction>& restrictions,
                               const policy::TableMasks& masks,
                               const catalog::CatalogFacts* facts) {
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
      const std::string cmp = shadowed ? std::string() : comparison(c, *m);
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
