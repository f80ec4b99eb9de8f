#include "rewriter/literal_shape.h"

#include <pg_query.h>

#include <algorithm>
#include <cstdint>
#include <utility>

#include "rewriter/json_tree.h"

namespace kanon::rewriter {

namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_letter(char c) {
  const auto u = static_cast<unsigned char>(c);
  return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || u == '_' || u >= 0x80;
}
// What continues a name, or makes a number something other than an integer.
bool continues_token(char c) {
  return is_letter(c) || is_digit(c) || c == '$' || c == '.';
}

// The class PostgreSQL's scanner gives a run of digits: zero (libpg_query
// writes its value as an empty node), an integer (ICONST), or a number that
// does not fit in one (FCONST, then bigint or numeric).
char digits_class(std::string_view digits) {
  size_t first = 0;
  while (first < digits.size() && digits[first] == '0') ++first;
  const std::string_view value = digits.substr(first);
  if (value.empty()) return 'z';
  if (value.size() < 10 || (value.size() == 10 && value <= "2147483647")) return 'i';
  return 'b';
}

// Index after the quoted text that begins at `open` (a ' or "), doubled
// quotes inside; with `backslashes`, a backslash escapes the next byte (E'').
// npos when it does not end.
size_t after_quoted(std::string_view s, size_t open, bool backslashes) {
  const char q = s[open];
  for (size_t i = open + 1; i < s.size(); ++i) {
    if (backslashes && s[i] == '\\') {
      ++i;
    } else if (s[i] == q) {
      if (i + 1 < s.size() && s[i + 1] == q) {
        ++i;
      } else {
        return i + 1;
      }
    }
  }
  return std::string_view::npos;
}

// Index after the comment that begins at `at` (`--` or `/*`, nested).
size_t after_comment(std::string_view s, size_t at) {
  if (s[at] == '-') {
    const size_t nl = s.find('\n', at);
    return nl == std::string_view::npos ? s.size() : nl + 1;
  }
  int depth = 0;
  for (size_t i = at; i + 1 < s.size(); ++i) {
    if (s[i] == '/' && s[i + 1] == '*') {
      ++depth;
      ++i;
    } else if (s[i] == '*' && s[i + 1] == '/') {
      ++i;
      if (--depth == 0) return i + 1;
    }
  }
  return std::string_view::npos;
}

// At a `$`: a parameter ($1) or a dollar quote ($tag$...$tag$). Index after
// it; npos for an unterminated quote; at + 1 for a lone `$`.
size_t after_dollar(std::string_view s, size_t at) {
  size_t i = at + 1;
  if (i < s.size() && is_digit(s[i])) {
    while (i < s.size() && is_digit(s[i])) ++i;
    return i;
  }
  while (i < s.size() && (is_letter(s[i]) || is_digit(s[i]))) ++i;
  if (i >= s.size() || s[i] != '$' || (i > at + 1 && is_digit(s[at + 1]))) return at + 1;
  const std::string_view tag = s.substr(at, i + 1 - at);
  const size_t close = s.find(tag, i + 1);
  return close == std::string_view::npos ? close : close + tag.size();
}

// An integer constant as PostgreSQL's parse placed it: its location and
// value. A negated one (`-5`) is folded by the grammar into one constant at
// the minus's location; libpg_query's JSON writes a negative integer, like
// zero, as an empty node (`"ival": {}`), so its value is the digits after
// that minus.
struct Operand {
  size_t location = 0;
  std::string_view fval;  // a number larger than an integer, as written ("-" first when negated)
  int64_t ival = 0;       // otherwise: its value, 0 when the node is empty
  bool ival_written = false;
};

// The integer constant of a JSON A_Const body, or false when it is
// something else (a string, a boolean, NULL, a fraction).
bool integer_constant(const JsonTree& t, int32_t body, Operand& o) {
  for (const char* other : {"sval", "bsval", "boolval", "isnull"})
    if (t.member(body, other) >= 0) return false;
  const int32_t ival = t.member(body, "ival");
  if (ival >= 0) {
    const int32_t v = t.member(ival, "ival");
    if (v >= 0 && t.at(v).kind != JsonValue::Kind::kNumber) return false;
    o.ival_written = v >= 0;
    o.ival = v >= 0 ? t.at(v).number : 0;
    return true;
  }
  const int32_t fval = t.member(t.member(body, "fval"), "fval");
  if (fval < 0 || t.at(fval).kind != JsonValue::Kind::kString) return false;
  o.fval = t.at(fval).text;
  std::string_view digits = o.fval;
  if (!digits.empty() && digits.front() == '-') digits.remove_prefix(1);
  return !digits.empty() && std::all_of(digits.begin(), digits.end(), is_digit);
}

// Whether the constant `o` is the run of digits at `span` of `sql` (after a
// minus right before it, for a negated one).
bool is_constant_at(const Operand& o, std::string_view sql, const LiteralSpan& span) {
  const std::string_view digits = sql.substr(span.begin, span.end - span.begin);
  const bool negated = o.location < sql.size() && sql[o.location] == '-';
  if (o.location + (negated ? 1 : 0) != span.begin) return false;
  if (!o.fval.empty()) {
    std::string_view written = o.fval;
    if (negated != (written.front() == '-')) return false;
    if (negated) written.remove_prefix(1);
    return written == digits;
  }
  if (digits_class(digits) == 'b') return false;  // an integer's digits
  int64_t v = 0;
  for (char d : digits) v = v * 10 + (d - '0');  // at most 10 digits: no overflow
  if (negated) return o.ival_written ? o.ival == -v : o.ival == 0 && v != 0;
  return o.ival == v;
}

// The node inside a one-member wrapper object ({"ColumnRef": {...}}): its
// name and body.
std::pair<std::string_view, int32_t> node_of(const JsonTree& t, int32_t wrapper) {
  if (wrapper < 0 || t.at(wrapper).kind != JsonValue::Kind::kObject) return {{}, -1};
  const int32_t inner = t.at(wrapper).first_child;
  if (inner < 0) return {{}, -1};
  return {t.at(inner).key, inner};
}

// `node` when it is an integer constant (A_Const).
void note_constant(const JsonTree& t, int32_t node, std::vector<Operand>& out) {
  const auto [kind, body] = node_of(t, node);
  if (kind != "A_Const") return;
  Operand o;
  const int32_t location = t.member(body, "location");
  if (location < 0 || t.at(location).kind != JsonValue::Kind::kNumber || t.at(location).number < 0)
    return;
  if (!integer_constant(t, body, o)) return;
  o.location = static_cast<size_t>(t.at(location).number);
  out.push_back(o);
}

// The items of each array member `key` of the objects named `parent`
// (UpdateStmt's targetList: ResTarget's val) or of each List in it
// (valuesLists: a VALUES row's items).
void note_items(const JsonTree& t, int32_t array, bool lists, std::vector<Operand>& out) {
  if (array < 0 || t.at(array).kind != JsonValue::Kind::kArray) return;
  for (int32_t e = t.at(array).first_child; e >= 0; e = t.at(e).next_sibling) {
    const auto [kind, body] = node_of(t, e);
    if (lists && kind == "List") {
      const int32_t items = t.member(body, "items");
      for (int32_t item = items >= 0 ? t.at(items).first_child : -1; item >= 0;
           item = t.at(item).next_sibling)
        note_constant(t, item, out);
    } else if (!lists && kind == "ResTarget") {
      note_constant(t, t.member(body, "val"), out);
    }
  }
}

bool is_column(const JsonTree& t, int32_t node) {
  return node_of(t, node).first == "ColumnRef";
}

// The one unqualified operator of an A_Expr of kind AEXPR_OP or AEXPR_IN
// ("" for anything else: OPERATOR(s.=), other kinds).
std::string_view plain_operator(const JsonTree& t, int32_t expr, std::string_view& kind) {
  const int32_t k = t.member(expr, "kind");
  const int32_t name = t.member(expr, "name");
  if (k < 0 || name < 0 || t.at(name).kind != JsonValue::Kind::kArray) return {};
  kind = t.at(k).text;
  const int32_t first = t.at(name).first_child;
  if (first < 0 || t.at(first).next_sibling >= 0) return {};
  const int32_t sval = t.member(t.member(first, "String"), "sval");
  return sval < 0 ? std::string_view() : t.at(sval).text;
}

// Every integer constant whose value no rule of kanon reads: an operand of a
// comparison (=, <>, <, <=, >, >=, IN) with a column, of arithmetic (+, -,
// *, /, %), an item of a VALUES row, the value an UPDATE sets. (The one
// rule that reads such a value, the restriction filter, copies it into the
// text sent; rewriter.cc never shares those decisions.)
std::vector<Operand> inert_constants(const JsonTree& t) {
  std::vector<Operand> out;
  for (int32_t i = 0; i < t.size(); ++i) {
    const std::string_view key = t.at(i).key;
    if (t.at(i).kind != JsonValue::Kind::kObject) {
      if (key == "valuesLists") note_items(t, i, true, out);
      continue;
    }
    if (key == "UpdateStmt") note_items(t, t.member(i, "targetList"), false, out);
    if (key != "A_Expr") continue;
    std::string_view kind;
    const std::string_view op = plain_operator(t, i, kind);
    const int32_t lexpr = t.member(i, "lexpr");
    const int32_t rexpr = t.member(i, "rexpr");
    const bool comparison =
        op == "=" || op == "<>" || op == "<" || op == "<=" || op == ">" || op == ">=";
    const bool arithmetic = op == "+" || op == "-" || op == "*" || op == "/" || op == "%";
    if (kind == "AEXPR_OP" && arithmetic) {
      note_constant(t, lexpr, out);
      note_constant(t, rexpr, out);
    } else if (kind == "AEXPR_OP" && comparison) {
      if (is_column(t, lexpr)) note_constant(t, rexpr, out);
      if (is_column(t, rexpr)) note_constant(t, lexpr, out);
    } else if (kind == "AEXPR_IN" && comparison && is_column(t, lexpr)) {
      const auto [list_kind, list] = node_of(t, rexpr);
      const int32_t items = list_kind == "List" ? t.member(list, "items") : -1;
      for (int32_t item = items >= 0 ? t.at(items).first_child : -1; item >= 0;
           item = t.at(item).next_sibling)
        note_constant(t, item, out);
    }
  }
  return out;
}

}  // namespace

std::optional<LiteralShape> literal_shape(std::string_view sql) {
  if (sql.find_first_of("0123456789") == std::string_view::npos) return std::nullopt;
  if (sql.find(kSlot) != std::string_view::npos) return std::nullopt;
  LiteralShape out;
  size_t copied = 0;  // sql[copied, i) is still to be copied into the key
  size_t i = 0;
  while (i < sql.size()) {
    const char c = sql[i];
    if (c == '\'' || c == '"') {
      i = after_quoted(sql, i, false);
    } else if ((c == '-' && i + 1 < sql.size() && sql[i + 1] == '-') ||
               (c == '/' && i + 1 < sql.size() && sql[i + 1] == '*')) {
      i = after_comment(sql, i);
    } else if (c == '$') {
      i = after_dollar(sql, i);
    } else if (is_letter(c)) {
      const size_t start = i;
      while (i < sql.size() && (is_letter(sql[i]) || is_digit(sql[i]) || sql[i] == '$')) ++i;
      // E'...' (e'...'): backslash escapes.
      if (i < sql.size() && sql[i] == '\'' && i == start + 1 && (c == 'E' || c == 'e'))
        i = after_quoted(sql, i, true);
    } else if (is_digit(c) || (c == '.' && i + 1 < sql.size() && is_digit(sql[i + 1]))) {
      const size_t start = i;
      while (i < sql.size() && is_digit(sql[i])) ++i;
      if (c != '.' && (i >= sql.size() || !continues_token(sql[i]))) {
        out.key.append(sql.substr(copied, start - copied));
        out.key += kSlot;
        out.key += digits_class(sql.substr(start, i - start));
        out.spans.push_back({start, i});
        copied = i;
        continue;
      }
      // A fraction, an exponent, or digits running into a name: kept as written.
      while (i < sql.size() &&
             (continues_token(sql[i]) ||
              ((sql[i] == '+' || sql[i] == '-') && (sql[i - 1] == 'e' || sql[i - 1] == 'E'))))
        ++i;
    } else {
      ++i;
    }
    if (i == std::string_view::npos) return std::nullopt;
  }
  if (out.spans.empty()) return std::nullopt;
  out.key.append(sql.substr(copied));
  return out;
}

bool constants_are_inert(std::string_view sql, const std::vector<LiteralSpan>& spans) {
  const std::string text(sql);
  PgQueryParseResult parsed = pg_query_parse(text.c_str());
  bool ok = parsed.error == nullptr;
  if (ok) {
    JsonTree tree;
    ok = tree.parse(parsed.parse_tree);
    const std::vector<Operand> operands = ok ? inert_constants(tree) : std::vector<Operand>{};
    for (const auto& span : spans) {
      ok = std::any_of(operands.begin(), operands.end(),
                       [&](const Operand& o) { return is_constant_at(o, sql, span); });
      if (!ok) break;
    }
  }
  pg_query_free_parse_result(parsed);
  return ok;
}

std::optional<std::string> shape_template(std::string_view sql, const std::vector<Edit>& edits,
                                          const std::vector<LiteralSpan>& spans) {
  // Each constant becomes an edit of its own (a slot); an insertion where it
  // begins or ends stays outside it, as apply_edits orders them.
  std::vector<Edit> all = edits;
  for (const auto& span : spans) {
    for (const auto& edit : edits)
      if (edit.begin < span.end && edit.end > span.begin) return std::nullopt;
    all.push_back({span.begin, span.end, std::string(1, kSlot)});
  }
  return apply_edits(sql, std::move(all));
}

bool template_repeats_constants(std::string_view templ, std::string_view sql,
                                const std::vector<LiteralSpan>& spans) {
  const auto value = [](std::string_view digits) {
    const size_t first = digits.find_first_not_of('0');
    return first == std::string_view::npos ? std::string_view("0") : digits.substr(first);
  };
  std::vector<std::string_view> constants;
  for (const auto& s : spans) constants.push_back(value(sql.substr(s.begin, s.end - s.begin)));
  for (size_t i = 0; i < templ.size();) {
    if (!is_digit(templ[i])) {
      ++i;
      continue;
    }
    const size_t start = i;
    while (i < templ.size() && is_digit(templ[i])) ++i;
    const std::string_view run = value(templ.substr(start, i - start));
    if (std::find(constants.begin(), constants.end(), run) != constants.end()) return true;
  }
  return false;
}

std::string fill_template(std::string_view templ, std::string_view sql,
                          const std::vector<LiteralSpan>& spans) {
  std::string out;
  out.reserve(templ.size() + sql.size() / 4);
  size_t next = 0;
  for (char c : templ) {
    if (c == kSlot && next < spans.size()) {
      const auto& s = spans[next++];
      out.append(sql.substr(s.begin, s.end - s.begin));
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace kanon::rewriter
