#include "base/text.h"

#include <fmt/format.h>

#include <charconv>
#include <utility>

namespace kanon::base {

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::string_view utf8_prefix(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  while (max_bytes > 0 && (static_cast<unsigned char>(text[max_bytes]) & 0xC0) == 0x80) --max_bytes;
  return text.substr(0, max_bytes);
}

std::string hex_byte(uint8_t byte) {
  return {hex_digit(byte >> 4), hex_digit(byte & 0xf)};
}

namespace {

// The code point of the well-formed UTF-8 sequence at text[at] and its
// length; length 0 when the bytes there are not one (overlong, surrogate,
// beyond U+10FFFF, cut short).
std::pair<uint32_t, size_t> utf8_at(std::string_view text, size_t at) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[at + i]); };
  const unsigned char b0 = byte(0);
  const size_t n = b0 >= 0xF0 ? 4 : b0 >= 0xE0 ? 3 : b0 >= 0xC0 ? 2 : 0;
  if (n == 0 || b0 > 0xF4 || at + n > text.size()) return {0, 0};
  uint32_t cp = b0 & (0x3F >> (n - 1));
  for (size_t i = 1; i < n; ++i) {
    if ((byte(i) & 0xC0) != 0x80) return {0, 0};
    cp = (cp << 6) | (byte(i) & 0x3F);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {0, 0};
  return {cp, n};
}

// C1 controls (a terminal may take U+009B for an escape sequence's start)
// and the marks that reorder what follows them on screen.
bool hidden_control(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) || cp == 0x61C || cp == 0x200E || cp == 0x200F ||
         (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

}  // namespace

std::string one_line(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    const auto b = static_cast<unsigned char>(c);
    if (b >= 0x80) {
      const auto [cp, n] = utf8_at(text, i);
      if (n == 0) {
        out += "\\x" + hex_byte(b);
        ++i;
      } else {
        if (hidden_control(cp))
          out += fmt::format("\\u{:04x}", cp);
        else
          out.append(text.substr(i, n));
        i += n;
      }
      continue;
    }
    ++i;
    if (c == '\\')
      out += "\\\\";
    else if (b >= 0x20 && b != 0x7F)
      out += c;
    else if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\t')
      out += "\\t";
    else
      out += "\\x" + hex_byte(b);
  }
  return out;
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

std::string upper(std::string_view text) {
  std::string out(text);
  for (auto& c : out)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return out;
}

std::string join(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += separator;
    out += items[i];
  }
  return out;
}

std::optional<std::chrono::milliseconds> parse_duration(const std::string& text) {
  uint64_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end == text.data()) return std::nullopt;
  const std::string unit(end, text.data() + text.size());
  uint64_t ms = 0;
  if (unit == "ms") {
    ms = 1;
  } else if (unit == "s" || unit.empty()) {
    ms = 1000;
  } else if (unit == "m") {
    ms = 60'000;
  } else if (unit == "h") {
    ms = 3'600'000;
  } else if (unit == "d") {
    ms = 86'400'000;
  } else {
    return std::nullopt;
  }
  if (n > (uint64_t{1} << 40) / ms) return std::nullopt;
  return std::chrono::milliseconds(n * ms);
}

}  // namespace kanon::base
