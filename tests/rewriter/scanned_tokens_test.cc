// The scanner's tokens read straight from pg_query_scan's protobuf message
// (rewriter/scanned_tokens.h) must be exactly the tokens protobuf-c's own
// unpack gives, and a damaged message must be refused, never half read.
#include "rewriter/scanned_tokens.h"

#include <doctest/doctest.h>
#include <pg_query.h>
#include <pg_query/pg_query.pb-c.h>

#include <string>
#include <vector>

using namespace kanon::rewriter;

namespace {

std::vector<ScannedToken> unpacked(const std::string& sql) {
  std::vector<ScannedToken> out;
  PgQueryScanResult r = pg_query_scan(sql.c_str());
  REQUIRE(r.error == nullptr);
  PgQuery__ScanResult* s = pg_query__scan_result__unpack(
      nullptr, r.pbuf.len, reinterpret_cast<const uint8_t*>(r.pbuf.data));
  REQUIRE(s != nullptr);
  for (size_t i = 0; i < s->n_tokens; ++i)
    out.push_back({s->tokens[i]->start, s->tokens[i]->token});
  pg_query__scan_result__free_unpacked(s, nullptr);
  pg_query_free_scan_result(r);
  return out;
}

std::string packed(const std::string& sql) {
  PgQueryScanResult r = pg_query_scan(sql.c_str());
  REQUIRE(r.error == nullptr);
  std::string bytes(r.pbuf.data, r.pbuf.len);
  pg_query_free_scan_result(r);
  return bytes;
}

}  // namespace

TEST_CASE("the tokens read from the message are protobuf-c's, token for token") {
  const std::vector<std::string> texts = {
      "SELECT 1",
      "select city, count(*) from people group by 1 /* c */ -- end",
      "SELECT U&\"peopl\\0065\".city FROM U&\"peopl\\0065\" WHERE a <> 'x''y' AND b = E'\\\\'",
      "SELECT $tag$ a ; b $tag$, $$x$$, 1.5e10, .5, B'101', X'ff', :foo, $1 ;; COMMIT",
      "WITH w AS MATERIALIZED (SELECT * FROM t) INSERT INTO u SELECT * FROM w ON CONFLICT DO "
      "NOTHING RETURNING *",
      "   \n\t(SELECT 1) UNION ALL (SELECT 2) ORDER BY 1 LIMIT 10 OFFSET 5 FOR UPDATE",
      "SELECT 'Zürich', \"Stück\", 'über' || 'straße' FROM \"Ünïcödé\"",
      std::string(3000, ' ') + "SELECT /* /* nested */ */ x FROM y",
  };
  for (const auto& sql : texts) {
    CAPTURE(sql);
    const auto expected = unpacked(sql);
    const ScannedTokens got(sql);
    REQUIRE(got.ok());
    REQUIRE(got.size() == expected.size());
    CHECK(got.size() > 0);
    for (size_t i = 0; i < expected.size(); ++i) {
      CAPTURE(i);
      CHECK(got.at(i).start == expected[i].start);
      CHECK(got.at(i).token == expected[i].token);
    }
    CHECK(got.next_start(got.size() - 1) == sql.size());
  }
}

TEST_CASE("a text that does not scan, and the empty text") {
  CHECK_FALSE(ScannedTokens("SELECT 'open").ok());
  CHECK_FALSE(ScannedTokens("SELECT \"open").ok());
  const ScannedTokens empty("");
  CHECK(empty.ok());
  CHECK(empty.size() == 0);
}

TEST_CASE("a damaged message is refused") {
  const std::string bytes = packed("SELECT a, b FROM t WHERE c = 1");
  std::vector<ScannedToken> out;
  REQUIRE(decode_scan_result(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), out));
  CHECK(out.size() == 10);
  // Every cut inside a token's message leaves an incomplete field.
  size_t refused = 0;
  for (size_t cut = 1; cut < bytes.size(); ++cut) {
    out.clear();
    if (!decode_scan_result(reinterpret_cast<const uint8_t*>(bytes.data()), cut, out)) ++refused;
  }
  CHECK(refused > bytes.size() / 2);
  // A length that runs past the end, a varint of eleven bytes, a group.
  const uint8_t past_end[] = {0x12, 0x7F, 0x08, 0x01};
  CHECK_FALSE(decode_scan_result(past_end, sizeof past_end, out));
  const uint8_t long_varint[] = {0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                                 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01};
  CHECK_FALSE(decode_scan_result(long_varint, sizeof long_varint, out));
  const uint8_t group[] = {0x0B, 0x0C};
  CHECK_FALSE(decode_scan_result(group, sizeof group, out));
  // A negative start (a varint of ten bytes) in a token.
  const uint8_t negative[] = {0x12, 0x0B, 0x08, 0xFF, 0xFF, 0xFF, 0xFF,
                              0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01};
  CHECK_FALSE(decode_scan_result(negative, sizeof negative, out));
}
