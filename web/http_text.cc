#include "web/http_text.h"

namespace kanon::web {

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::string percent_decode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '+' && plus_is_space) {
      out += ' ';
    } else if (c == '%' && i + 2 < text.size() && hex_digit(text[i + 1]) >= 0 &&
               hex_digit(text[i + 2]) >= 0) {
      out += static_cast<char>(hex_digit(text[i + 1]) * 16 + hex_digit(text[i + 2]));
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

std::map<std::string, std::string> parse_form(std::string_view text) {
  std::map<std::string, std::string> out;
  while (!text.empty()) {
    const size_t amp = text.find('&');
    const std::string_view pair = text.substr(0, amp);
    text = amp == std::string_view::npos ? std::string_view() : text.substr(amp + 1);
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    const std::string name = percent_decode(pair.substr(0, eq));
    const std::string value =
        eq == std::string_view::npos ? std::string() : percent_decode(pair.substr(eq + 1));
    out.emplace(name, value);
  }
  return out;
}

std::optional<std::string> cookie_value(std::string_view header, std::string_view name) {
  while (!header.empty()) {
    const size_t semi = header.find(';');
    const std::string_view item = trim(header.substr(0, semi));
    header = semi == std::string_view::npos ? std::string_view() : header.substr(semi + 1);
    const size_t eq = item.find('=');
    if (eq != std::string_view::npos && trim(item.substr(0, eq)) == name)
      return std::string(trim(item.substr(eq + 1)));
  }
  return std::nullopt;
}

std::string_view target_path(std::string_view target) {
  return target.substr(0, target.find('?'));
}

std::string_view target_query(std::string_view target) {
  const size_t q = target.find('?');
  return q == std::string_view::npos ? std::string_view() : target.substr(q + 1);
}

std::string attachment_disposition(std::string_view file_name) {
  const auto unsafe = [](unsigned char b) {
    return b < 0x20 || b == 0x7F || b == '"' || b == '\\' || b == ';';
  };
  std::string ascii, encoded;
  bool non_ascii = false;
  for (const char c : file_name) {
    const auto b = static_cast<unsigned char>(c);
    non_ascii = non_ascii || b >= 0x80;
    ascii += unsafe(b) || b >= 0x80 ? '_' : c;
    // RFC 5987 attr-char is sent as it is, every other byte as %XX.
    static constexpr std::string_view kAttrChars =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!#$&+-.^_`|~";
    static constexpr char kHex[] = "0123456789ABCDEF";
    if (unsafe(b)) {
      encoded += '_';
    } else if (kAttrChars.find(c) != std::string_view::npos) {
      encoded += c;
    } else {
      encoded += '%';
      encoded += kHex[b >> 4];
      encoded += kHex[b & 15];
    }
  }
  std::string out = "attachment; filename=\"" + ascii + "\"";
  if (non_ascii) out += "; filename*=UTF-8''" + encoded;
  return out;
}

}  // namespace kanon::web
