#include "tests/rewriter/shape_variants.h"

#include "rewriter/literal_shape.h"

namespace kanon::testing {

namespace {

std::string random_digits(size_t n, std::mt19937& rng, char first_min) {
  std::string out;
  out += static_cast<char>(first_min +
                           static_cast<char>(rng() % static_cast<unsigned>('9' - first_min + 1)));
  while (out.size() < n) out += static_cast<char>('0' + rng() % 10);
  return out;
}

}  // namespace

std::string with_other_constants(const std::string& sql, std::mt19937& rng) {
  const auto shape = rewriter::literal_shape(sql);
  if (!shape) return sql;
  std::string out;
  size_t at = 0;
  for (const auto& s : shape->spans) {
    out.append(sql, at, s.begin - at);
    const std::string digits = sql.substr(s.begin, s.end - s.begin);
    size_t first = 0;
    while (first < digits.size() && digits[first] == '0') ++first;
    const size_t len = digits.size() - first;
    if (len == 0) {
      out += rng() % 2 ? "0" : "00";
    } else if (len < 10 || (len == 10 && digits.substr(first) <= "2147483647")) {
      out += random_digits(1 + rng() % 9, rng, '1');  // below 10^9: an integer
    } else {
      out += random_digits(11 + rng() % 8, rng, '1');  // above 2^31
    }
    at = s.end;
  }
  out.append(sql, at);
  return out;
}

std::string result_difference(const rewriter::RewriteResult& got,
                              const rewriter::RewriteResult& want) {
  if (got.verdict != want.verdict) return "verdict";
  if (got.sql != want.sql) return "sql: " + got.sql + "\n  want: " + want.sql;
  if (got.sqlstate != want.sqlstate || got.rule != want.rule || got.object != want.object ||
      got.message != want.message || got.position != want.position)
    return "denial: " + got.rule + " " + got.object + " / " + want.rule + " " + want.object;
  if (got.fingerprint != want.fingerprint) return "fingerprint";
  if (got.unknown != want.unknown || got.unknown_used != want.unknown_used ||
      got.event_triggers != want.event_triggers)
    return "look-up";
  if (got.shadowable != want.shadowable || got.defines != want.defines ||
      got.late_code != want.late_code)
    return "shadowable, defines or late code";
  if (got.tables != want.tables || got.masked != want.masked) return "tables or masked";
  if (!(got.encoding_effect == want.encoding_effect)) return "encoding effect";
  if (got.guard_generation != want.guard_generation) return "guard generation";
  if (got.transaction_control != want.transaction_control ||
      got.leading_control != want.leading_control ||
      got.leading_control_bytes != want.leading_control_bytes)
    return "transaction control";
  if (got.read_invalidations_first != want.read_invalidations_first) return "invalidations";
  return "";
}

}  // namespace kanon::testing
