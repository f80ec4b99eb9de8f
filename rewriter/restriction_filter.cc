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

constexpr uint32_t kInt8 = 20, kInt2 = 21, kInt4 = 23, kText = 25, kVarchar = 1043;

bool integer_type(uint32_t type) {
  return type == kInt2 || type == kInt4 || type == kInt8;
}

// The type OID of column `m` (ColumnMask::compared).
uint32_t column_type(const policy::ColumnMask& m) {
  using C = policy::ColumnMask::Compared;
  switch (m.compared) {
    case C::kSmallint:
      return kInt2;
    case C::kInteger:
      return kInt4;
    case C::kBigint:
      return kInt8;
    case C::kVarchar:
      return kVarchar;
    default:
      return kText;
  }
}

constexpr uint32_t kNoType = 0xffffffff;

// The element type of the array types a list parameter may have; kNoType
// for any other.
uint32_t element_type(uint32_t array) {
  switch (array) {
    case 1005:
      return kInt2;
    case 1007:
      return kInt4;
    case 1016:
      return kInt8;
    case 1009:
      return kText;
    case 1015:
      return kVarchar;
    default:
      return kNoType;
  }
}

// Whether a parameter a Parse declares as `type` (0: unspecified) is
// compared with column `m` by one of pg_catalog's leakproof, strict
// operators, the same in the filter as in the user's conjunct. Unspecified,
// PostgreSQL gives it the type its only use asks for: the column's (text
// for character varying with `=`, but character varying with IN, so not
// there).
bool typed_as_column(uint32_t type, const policy::ColumnMask& m) {
  if (m.holds_integers()) return type == 0 || integer_type(type);
  if (type == kText || type == kVarchar) return true;
  return type == 0 && m.compared == policy::ColumnMask::Compared::kText;
}

// A comparison as kanon writes it, and the argument types of the operator
// PostgreSQL finds for the user's unqualified one by its exact types (both
// 0 when it has to choose among candidates by coercions).
struct Written {
  std::string text;  // "" when the column cannot be compared with the operand
  uint32_t left = 0, right = 0;
};

// `col <op> constant` (or `$n`), or nothing when the column cannot be
// compared with it as built-in integers or text.
Written comparison(const ColumnRestriction::Comparison& c, const policy::ColumnMask& m,
                   const std::vector<uint32_t>* parameter_types) {
  // LIKE and NOT LIKE (the parser's "~~", "!~~"): text against a constant
  // pattern.
  if ((c.op == "~~" || c.op == "!~~") && (c.parameter > 0 || !c.string || m.holds_integers()))
    return {};
  std::string operand;
  const uint32_t column = column_type(m);
  uint32_t type = column;  // an unknown literal or unspecified parameter: the column's
  if (c.parameter > 0) {
    if (!c.prepared && !parameter_types) return {};
    const size_t i = static_cast<size_t>(c.parameter) - 1;
    uint32_t declared = c.prepared                    ? c.declared
                        : i < parameter_types->size() ? (*parameter_types)[i]
                                                      : 0;
    // An array's elements are compared: smallint[], integer[], bigint[],
    // text[], character varying[].
    if (c.array && declared != 0) declared = element_type(declared);
    if (declared == kNoType || !typed_as_column(declared, m)) return {};
    if (declared != 0) type = declared;
    operand = std::to_string(c.parameter);
    operand.insert(operand.begin(), '$');
    if (c.array) operand = (c.op == "=" ? "ANY (" : "ALL (") + operand + ")";
  } else {
    if (m.holds_integers() ? c.string && !integer_text(c.value) : !c.string) return {};
    if (!c.string) type = kInt4;  // libpg_query's ival: an int4 constant
    operand = c.string ? policy::quote_literal(c.value) : c.value;
  }
  const std::string name = policy::quote_identifier(m.column);
  const std::string op = " OPERATOR(pg_catalog." + c.op + ") ";
  Written w{c.column_first ? name + op + operand : operand + op + name};
  // pg_catalog has the operator of exactly these types for integers with
  // integers and text with text; not for character varying.
  if ((integer_type(column) && integer_type(type)) || (column == kText && type == kText)) {
    w.left = c.column_first ? column : type;
    w.right = c.column_first ? type : column;
  }
  return w;
}

// Whether the user's unqualified operator could be a user-defined one:
// PostgreSQL takes an operator of the exact argument types first, in
// search_path order, pg_catalog's unless a user-defined one has the same
// name and types; without one of exact types any of the name might win.
bool shadowed(const catalog::CatalogFacts& facts, const std::string& op, const Written& w) {
  return std::any_of(facts.operators.begin(), facts.operators.end(), [&](const auto& o) {
    return o.name == op && (w.left == 0 || (o.left == w.left && o.right == w.right));
  });
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
      const Written w = comparison(c, *m, parameter_types);
      const std::string cmp = shadowed(*facts, c.op, w) ? std::string() : w.text;
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
