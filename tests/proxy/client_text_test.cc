// client_text: PostgreSQL's encoding names and aliases, and the conversions
// kanon makes of a restricted session's text (proxy_encoding_test compares
// them with PostgreSQL's own over every character).
#include "proxy/client_text.h"

#include <doctest/doctest.h>

using namespace kanon::proxy;

namespace {

ClientEncoding enc(std::string_view name) {
  const auto e = find_encoding(name);
  REQUIRE_MESSAGE(e.has_value(), name);
  return *e;
}

}  // namespace

TEST_CASE("encoding names: canonical names and every alias PostgreSQL accepts") {
  CHECK(enc("LATIN1").name == "LATIN1");
  CHECK(enc("latin1").name == "LATIN1");
  CHECK(enc("ISO-8859-1").name == "LATIN1");
  CHECK(enc("iso_8859_1").name == "LATIN1");
  CHECK(enc("ISO88599").name == "LATIN5");
  CHECK(enc("UNICODE").name == "UTF8");  // reported as is by PostgreSQL
  CHECK(enc("utf-8").name == "UTF8");
  CHECK(enc("Windows-1252").name == "WIN1252");
  CHECK(enc("win").name == "WIN1251");
  CHECK(enc("koi8").name == "KOI8R");
  CHECK(enc("ALT").name == "WIN866");
  CHECK(enc("TCVN5712").name == "WIN1258");
  CHECK(enc("mskanji").name == "SJIS");
  CHECK(enc("WIN932").name == "SJIS");
  CHECK(enc("EUC_JIS_2004").name == "EUC_JIS_2004");
  CHECK(enc("SQL_ASCII").name == "SQL_ASCII");
  CHECK_FALSE(find_encoding("EBCDIC").has_value());
  CHECK_FALSE(find_encoding("").has_value());
  // Every canonical name finds itself.
  for (const auto& e : client_encodings()) {
    CAPTURE(e.name);
    CHECK(enc(e.name) == e);
  }
}

TEST_CASE("which encodings kanon converts, and which it reads only as ASCII") {
  CHECK(enc("UTF8").support == EncodingSupport::kUtf8);
  CHECK(enc("SQL_ASCII").support == EncodingSupport::kSqlAscii);
  for (const char* name :
       {"LATIN1",  "LATIN2",  "LATIN3",  "LATIN4",     "LATIN5",     "LATIN6",     "LATIN7",
        "LATIN8",  "LATIN9",  "LATIN10", "ISO_8859_5", "ISO_8859_6", "ISO_8859_7", "ISO_8859_8",
        "WIN866",  "WIN874",  "WIN1250", "WIN1251",    "WIN1252",    "WIN1253",    "WIN1254",
        "WIN1255", "WIN1256", "WIN1257", "WIN1258",    "KOI8R",      "KOI8U",      "EUC_JP",
        "EUC_CN",  "EUC_KR",  "EUC_TW"}) {
    CAPTURE(name);
    CHECK(enc(name).support == EncodingSupport::kConverted);
  }
  // Not ASCII-safe, or no converter that agrees with PostgreSQL's.
  for (const char* name : {"SJIS", "SHIFT_JIS_2004", "BIG5", "GBK", "UHC", "GB18030", "JOHAB",
                           "EUC_JIS_2004", "MULE_INTERNAL"}) {
    CAPTURE(name);
    CHECK(enc(name).support == EncodingSupport::kAsciiOnly);
    CHECK_FALSE(to_utf8("x", enc(name)).has_value());
  }
}

TEST_CASE("ASCII and UTF-8 checks") {
  CHECK(is_ascii(""));
  CHECK(is_ascii("SELECT * FROM people WHERE city = 'Zurich' -- a comment longer than 8"));
  CHECK_FALSE(is_ascii("SELECT 'Z\xC3\xBCrich'"));
  CHECK_FALSE(is_ascii("0123456789abcde\xFC"));  // past the word-at-a-time part
  CHECK_FALSE(is_ascii("\x80"));

  CHECK(is_valid_utf8("Z\xC3\xBCrich, \xE2\x82\xAC, \xF0\x9F\x98\x80"));
  CHECK_FALSE(is_valid_utf8("Z\xFCrich"));         // LATIN1
  CHECK_FALSE(is_valid_utf8("\xC0\xAF"));          // overlong '/'
  CHECK_FALSE(is_valid_utf8("\xE0\x80\xAF"));      // overlong
  CHECK_FALSE(is_valid_utf8("\xED\xA0\x80"));      // a surrogate
  CHECK_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));  // above U+10FFFF
  CHECK_FALSE(is_valid_utf8("\xE2\x82"));          // cut short
  CHECK_FALSE(is_valid_utf8("\x82\x5C"));          // a lone continuation byte
}

TEST_CASE("single-byte encodings, byte for byte") {
  const auto latin1 = enc("LATIN1");
  CHECK(to_utf8("SELECT 'Z\xFCrich', \"Gen\xE8ve\"", latin1) ==
        "SELECT 'Z\xC3\xBCrich', \"Gen\xC3\xA8ve\"");
  CHECK(from_utf8("SELECT 'Z\xC3\xBCrich'", latin1) == "SELECT 'Z\xFCrich'");
  CHECK_FALSE(from_utf8("\xE2\x82\xAC", latin1).has_value());  // no euro sign in LATIN1
  CHECK_FALSE(from_utf8("Z\xFCrich", latin1).has_value());     // not UTF-8

  const auto win1252 = enc("WIN1252");
  CHECK(to_utf8("\x80 5", win1252) == "\xE2\x82\xAC 5");
  CHECK(from_utf8("\xE2\x82\xAC 5", win1252) == "\x80 5");
  CHECK_FALSE(to_utf8("\x81", win1252).has_value());  // undefined, as in PostgreSQL

  // WIN1258 (and WIN1255) combining marks stay separate characters, as
  // PostgreSQL converts them; glibc's iconv would compose "a" + acute.
  const auto win1258 = enc("WIN1258");
  CHECK(to_utf8("a\xEC", win1258) == "a\xCC\x81");
  CHECK(from_utf8("a\xCC\x81", win1258) == "a\xEC");

  CHECK(to_utf8("\xF3\xC5\xCC\xCF", enc("KOI8R")) == "\xD0\xA1\xD0\xB5\xD0\xBB\xD0\xBE");  // Село
  CHECK(to_utf8("plain ASCII", enc("LATIN2")) == "plain ASCII");
}

TEST_CASE("multi-byte EUC encodings through iconv") {
  const auto euc_jp = enc("EUC_JP");
  // 0xA4A2 HIRAGANA A; 0xA1C1, which PostgreSQL maps to U+FF5E (glibc's
  // plain EUC-JP says U+301C).
  CHECK(to_utf8("'\xA4\xA2' \xA1\xC1", euc_jp) == "'\xE3\x81\x82' \xEF\xBD\x9E");
  CHECK(from_utf8("'\xE3\x81\x82'", euc_jp) == "'\xA4\xA2'");
  CHECK_FALSE(to_utf8("\xA4", euc_jp).has_value());  // cut short
  CHECK_FALSE(to_utf8("\xA4'", euc_jp).has_value());
  CHECK(to_utf8("\xC7\xD1", enc("EUC_KR")) == "\xED\x95\x9C");  // 한
  CHECK(to_utf8("\xD6\xD0", enc("EUC_CN")) == "\xE4\xB8\xAD");  // 中
  CHECK(from_utf8("\xE4\xB8\xAD", enc("EUC_CN")) == "\xD6\xD0");
}

TEST_CASE("kanon's messages in the client's encoding") {
  const std::string m = "denied: public.b\xC3\xBCrger \xE2\x82\xAC";
  CHECK(from_utf8_lossy(m, enc("LATIN1")) == "denied: public.b\xFCrger ?");
  CHECK(from_utf8_lossy(m, enc("WIN1252")) == "denied: public.b\xFCrger \x80");
  CHECK(from_utf8_lossy(m, enc("SJIS")) == "denied: public.b?rger ?");
  CHECK(from_utf8_lossy(m, enc("UTF8")) == m);
  CHECK(from_utf8_lossy(m, ClientEncoding{}) == "denied: public.b?rger ?");
}

TEST_CASE("printable UTF-8 for records") {
  CHECK(printable_utf8("Z\xC3\xBCrich") == "Z\xC3\xBCrich");
  CHECK(printable_utf8("Z\xFCrich") == "Z\\xFCrich");
  CHECK(printable_utf8("\x82\x5C'") == "\\x82\\'");
}
