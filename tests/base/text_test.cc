// UTF-8, hexadecimal and case helpers.
#include "base/text.h"

#include <doctest/doctest.h>

namespace kanon::base {

TEST_CASE("append_utf8 encodes one to four bytes") {
  std::string s;
  append_utf8(s, 'A');
  CHECK(s == "A");
  s.clear();
  append_utf8(s, 0xE9);  // é
  CHECK(s == "\xC3\xA9");
  s.clear();
  append_utf8(s, 0x20AC);  // €
  CHECK(s == "\xE2\x82\xAC");
  s.clear();
  append_utf8(s, 0x1F600);  // 😀
  CHECK(s == "\xF0\x9F\x98\x80");
  s.clear();
  append_utf8(s, 0x7F);
  append_utf8(s, 0x80);
  append_utf8(s, 0x7FF);
  append_utf8(s, 0x800);
  append_utf8(s, 0xFFFF);
  append_utf8(s, 0x10000);
  append_utf8(s, 0x10FFFF);
  CHECK(s == "\x7F\xC2\x80\xDF\xBF\xE0\xA0\x80\xEF\xBF\xBF\xF0\x90\x80\x80\xF4\x8F\xBF\xBF");
}

TEST_CASE("utf8_prefix never splits a sequence") {
  const std::string s =
      "ab\xE2\x82\xAC"
      "c";  // "ab€c"
  CHECK(utf8_prefix(s, 10) == s);
  CHECK(utf8_prefix(s, 5) == "ab\xE2\x82\xAC");
  CHECK(utf8_prefix(s, 4) == "ab");
  CHECK(utf8_prefix(s, 3) == "ab");
  CHECK(utf8_prefix(s, 2) == "ab");
  CHECK(utf8_prefix(s, 0) == "");
}

TEST_CASE("hex digits") {
  CHECK(hex_value('0') == 0);
  CHECK(hex_value('9') == 9);
  CHECK(hex_value('a') == 10);
  CHECK(hex_value('F') == 15);
  CHECK(hex_value('g') == -1);
  CHECK(hex_value('/') == -1);
  CHECK(hex_value(':') == -1);
  CHECK(hex_value('@') == -1);
  CHECK(hex_value('G') == -1);
  CHECK(hex_value('`') == -1);
  CHECK(is_hex_digit('c'));
  CHECK_FALSE(is_hex_digit('x'));
  CHECK(hex_digit(0) == '0');
  CHECK(hex_digit(11) == 'b');
  CHECK(hex_byte(0x00) == "00");
  CHECK(hex_byte(0x2f) == "2f");
  CHECK(hex_byte(0xff) == "ff");
  for (unsigned b = 0; b < 256; ++b) {
    const std::string h = hex_byte(static_cast<uint8_t>(b));
    CHECK(hex_value(h[0]) * 16 + hex_value(h[1]) == static_cast<int>(b));
  }
}

TEST_CASE("case folding is ASCII only") {
  CHECK(lower("SELECT Émile_1") == "select Émile_1");
  CHECK(upper("show exports;") == "SHOW EXPORTS;");
  CHECK(lower("\xC3\x89") == "\xC3\x89");
  CHECK(lower("") == "");
}

TEST_CASE("durations") {
  CHECK(parse_duration("30s") == std::chrono::seconds(30));
  CHECK(parse_duration("500ms") == std::chrono::milliseconds(500));
  CHECK(parse_duration("2h") == std::chrono::hours(2));
  CHECK(parse_duration("2d") == std::chrono::hours(48));
  CHECK(parse_duration("15") == std::chrono::seconds(15));
  CHECK(!parse_duration("m"));
  CHECK(!parse_duration("5 minutes"));
  CHECK(!parse_duration("99999999999999d"));
}

}  // namespace kanon::base

TEST_CASE("one_line writes control characters as escapes") {
  using kanon::base::one_line;
  CHECK(one_line("plain text, Zürich") == "plain text, Zürich");
  CHECK(one_line("a\nb\rc\td") == "a\\nb\\rc\\td");
  CHECK(one_line(std::string("\x1b[2J\x07\x7f", 6) + std::string(1, '\0')) ==
        "\\x1b[2J\\x07\\x7f\\x00");
  // A typed backslash is doubled, so a typed "\n" does not read as a newline.
  CHECK(one_line("a\\nb\\") == "a\\\\nb\\\\");
  // Bytes that are not well-formed UTF-8: a lone 0x9B (CSI to an 8-bit
  // terminal), a cut sequence, an overlong '/', a surrogate.
  CHECK(one_line("x\x9b[2Jy") == "x\\x9b[2Jy");
  CHECK(one_line("\xc3") == "\\xc3");
  CHECK(one_line("\xc0\xaf") == "\\xc0\\xaf");
  CHECK(one_line("\xed\xa0\x80") == "\\xed\\xa0\\x80");
  CHECK(one_line("\xf4\x90\x80\x80") == "\\xf4\\x90\\x80\\x80");  // beyond U+10FFFF
  // Well-formed but acting on the screen: U+009B (C1 CSI), U+202E (right-to-left override).
  CHECK(one_line("a\xc2\x9b"
                 "b") == "a\\u009bb");
  CHECK(one_line("user\xe2\x80\xaetxt.exe") == "user\\u202etxt.exe");
  // Other characters stay as they are, four-byte ones included.
  CHECK(one_line("\xe2\x82\xac \xf0\x9f\x98\x80 \xe4\xb8\xad") ==
        "\xe2\x82\xac \xf0\x9f\x98\x80 \xe4\xb8\xad");
}
