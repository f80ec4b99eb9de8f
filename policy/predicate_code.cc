#include "policy/predicate_code.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <map>
#include <set>
#include <utility>

#include "policy/sql_text.h"

namespace kanon::policy {
namespace {

// Unsigned LEB128: seven bits a byte, low first, the high bit set on every
// byte but the last.
void put_varint(std::string& out, uint32_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}

// Reverse post-order of the tests reachable from `id`: a parent before its
// children, so the function can check that every walk moves forward.
void post_order(const ReleasePredicate& p, uint32_t id, std::set<uint32_t>& seen,
                std::vector<uint32_t>& out) {
  if (ReleasePredicate::constant(id) || !seen.insert(id).second) return;
  post_order(p, p.test(id).if_equal, seen, out);
  post_order(p, p.test(id).if_not, seen, out);
  out.push_back(id);
}

// The predicate with its own attribute tested first (switched), where
// kanon_mask.released turns that run of tests into one table lookup
// (maskfn/kanon_mask.c, build_switches: an integer column, at least 4 tests,
// values spanning at most 8 table entries per test plus 64); else nullopt.
std::optional<ReleasePredicate> own_switch(const ReleasePredicate& predicate,
                                           const SqlColumn& own) {
  static constexpr std::array<std::string_view, 8> kIntegers = {
      "pg_catalog.int2", "pg_catalog.int4", "pg_catalog.int8", "pg_catalog.oid",
      "smallint",        "integer",         "bigint",          "oid"};
  if (std::find(kIntegers.begin(), kIntegers.end(), own.type) == kIntegers.end()) return {};
  const int a = predicate.attribute();
  ReleasePredicate switched = predicate.switched(a);
  uint64_t n = 0;
  int64_t min = 0, max = 0;
  for (uint32_t id = switched.root();
       !ReleasePredicate::constant(id) && switched.test(id).attribute == a;
       id = switched.test(id).if_not, ++n) {
    const std::string& text = switched.test(id).value;
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size()) return {};
    min = n ? std::min(min, v) : v;
    max = n ? std::max(max, v) : v;
  }
  // max - min + 1 entries, computed without overflow for any two int64s.
  if (n < 4 || static_cast<uint64_t>(max) - static_cast<uint64_t>(min) >= 8 * n + 64) return {};
  return switched;
}

}  // namespace

PredicateCode predicate_code(const ReleasePredicate& predicate) {
  std::set<uint32_t> seen;
  std::vector<uint32_t> order;
  post_order(predicate, predicate.root(), seen, order);
  std::reverse(order.begin(), order.end());
  std::map<uint32_t, uint32_t> new_id = {{ReleasePredicate::kFalse, ReleasePredicate::kFalse},
                                         {ReleasePredicate::kTrue, ReleasePredicate::kTrue}};
  for (size_t i = 0; i < order.size(); ++i) new_id[order[i]] = static_cast<uint32_t>(i + 2);

  PredicateCode code;
  std::map<int, uint8_t> argument;  // tree attribute -> argument index
  for (uint32_t id : order) {
    const int a = predicate.test(id).attribute;
    if (argument.emplace(a, static_cast<uint8_t>(code.arguments.size())).second)
      code.arguments.push_back(a);
  }
  // Each distinct (argument, value) once, in the order tests first use it.
  using Value = std::pair<uint8_t, std::string>;
  std::map<Value, uint32_t> value_index;
  std::vector<Value> values;
  for (uint32_t id : order) {
    const auto& t = predicate.test(id);
    Value v{argument.at(t.attribute), t.value};
    if (value_index.emplace(v, static_cast<uint32_t>(values.size())).second)
      values.push_back(std::move(v));
  }
  code.bytes = "KMP2";
  code.bytes += static_cast<char>(code.arguments.size());
  put_varint(code.bytes, new_id.at(predicate.root()));
  put_varint(code.bytes, static_cast<uint32_t>(values.size()));
  for (const auto& [arg, text] : values) {
    code.bytes += static_cast<char>(arg);
    put_varint(code.bytes, static_cast<uint32_t>(text.size()));
    code.bytes += text;
  }
  put_varint(code.bytes, static_cast<uint32_t>(order.size()));
  // A branch: 0 FALSE, 1 TRUE, d >= 2 the test d - 1 places further on.
  const auto branch = [&](uint32_t from, uint32_t to) { return to < 2 ? to : to - from + 1; };
  for (uint32_t id : order) {
    const auto& t = predicate.test(id);
    const uint32_t self = new_id.at(id);
    put_varint(code.bytes, value_index.at({argument.at(t.attribute), t.value}));
    put_varint(code.bytes, branch(self, new_id.at(t.if_equal)));
    put_varint(code.bytes, branch(self, new_id.at(t.if_not)));
  }
  return code;
}

bool function_evaluable(const SqlColumn& column) {
  static constexpr std::array<std::string_view, 16> kTypes = {"pg_catalog.text",
                                                              "pg_catalog.\"varchar\"",
                                                              "pg_catalog.int2",
                                                              "pg_catalog.int4",
                                                              "pg_catalog.int8",
                                                              "pg_catalog.bool",
                                                              "pg_catalog.date",
                                                              "pg_catalog.oid",
                                                              "text",
                                                              "character varying",
                                                              "smallint",
                                                              "integer",
                                                              "bigint",
                                                              "boolean",
                                                              "date",
                                                              "oid"};
  const bool own_equality = !column.equality.empty() && column.equality != "OPERATOR(pg_catalog.=)";
  return !own_equality && std::find(kTypes.begin(), kTypes.end(), column.type) != kTypes.end();
}

std::optional<std::string> function_predicate_sql(const ReleasePredicate& predicate,
                                                  const std::vector<SqlColumn>& attributes) {
  if (predicate.root() == ReleasePredicate::kTrue) return "true";
  if (predicate.root() == ReleasePredicate::kFalse) return "false";
  const int own = predicate.attribute();
  const auto switched =
      own >= 0 ? own_switch(predicate, attributes[static_cast<size_t>(own)]) : std::nullopt;
  const PredicateCode code = predicate_code(switched ? *switched : predicate);
  if (code.arguments.size() > 64) return std::nullopt;
  for (int a : code.arguments)
    if (!function_evaluable(attributes[static_cast<size_t>(a)])) return std::nullopt;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex = "\\x";
  for (char c : code.bytes) {
    const auto u = static_cast<unsigned char>(c);
    hex += kHex[u >> 4];
    hex += kHex[u & 15];
  }
  std::string out = std::string(kMaskFunction) + "(" + typed_literal(hex, "pg_catalog.bytea");
  for (int a : code.arguments)
    out += ", " + quote_identifier(attributes[static_cast<size_t>(a)].name);
  return out + ")";
}

}  // namespace kanon::policy
