#include "policy/sql_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <optional>

namespace kanon::policy {

namespace {

// The code points of valid UTF-8 text; nullopt when it is not.
std::optional<std::vector<uint32_t>> code_points(std::string_view text) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < text.size();) {
    const auto b = static_cast<unsigned char>(text[i]);
    const int extra = b < 0x80         ? 0
                      : (b >> 5) == 6  ? 1
                      : (b >> 4) == 14 ? 2
                      : (b >> 3) == 30 ? 3
                                       : -1;
    if (extra < 0 || (extra > 0 && i + static_cast<size_t>(extra) >= text.size()))
      return std::nullopt;
    uint32_t cp = extra == 0 ? b : b & (0x3fu >> extra);
    for (int k = 1; k <= extra; ++k) {
      const auto c = static_cast<unsigned char>(text[i + static_cast<size_t>(k)]);
      if ((c >> 6) != 2) return std::nullopt;
      cp = (cp << 6) | (c & 0x3fu);
    }
    out.push_back(cp);
    i += static_cast<size_t>(extra) + 1;
  }
  return out;
}

}  // namespace

std::string quote_identifier(std::string_view name) {
  const bool ascii = std::all_of(name.begin(), name.end(),
                                 [](char c) { return static_cast<unsigned char>(c) < 0x80; });
  const auto points = ascii ? std::nullopt : code_points(name);
  if (!points) {
    std::string out = "\"";
    for (char c : name) {
      if (c == '"') out += '"';
      out += c;
    }
    return out + "\"";
  }
  // Non-ASCII: U&"..." with every code point above ASCII escaped, so the
  // name reads the same in every client encoding (identifiers accept
  // Unicode escapes whatever standard_conforming_strings says).
  std::string out = "U&\"";
  for (const uint32_t cp : *points) {
    if (cp == '"') {
      out += "\"\"";
    } else if (cp == '\\') {
      out += "\\\\";
    } else if (cp >= 0x20 && cp < 0x7f) {
      out += static_cast<char>(cp);
    } else {
      out += cp <= 0xffff ? fmt::format("\\{:04X}", cp) : fmt::format("\\+{:06X}", cp);
    }
  }
  return out + "\"";
}

std::string quote_literal(std::string_view text) {
  // ASCII only: bytes outside printable ASCII (and backslashes) become
  // escapes of an E'...' constant, which every client encoding PostgreSQL
  // accepts reads alike and which means the same whatever
  // standard_conforming_strings says. The server validates the bytes as its
  // own encoding, so the constant holds exactly the bytes kanon read.
  const bool plain = std::all_of(text.begin(), text.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u >= 0x20 && u < 0x7f && c != '\\';
  });
  if (plain) {
    std::string out = "'";
    for (char c : text) {
      if (c == '\'') out += c;
      out += c;
    }
    return out + "'";
  }
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out = "E'";
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\'' || c == '\\') {
      out += c;
      out += c;
    } else if (u >= 0x20 && u < 0x7f) {
      out += c;
    } else {
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    }
  }
  return out + "'";
}

std::string typed_literal(std::string_view text, std::string_view type) {
  return quote_literal(text) + "::" + std::string(type);
}

std::string typed_array_literal(const std::vector<std::string>& values, std::string_view type) {
  std::string body = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) body += ',';
    body += '"';
    for (char c : values[i]) {
      if (c == '"' || c == '\\') body += '\\';
      body += c;
    }
    body += '"';
  }
  body += '}';
  return quote_literal(body) + "::" + std::string(type) + "[]";
}

std::string qualified_name(std::string_view schema, std::string_view table) {
  return quote_identifier(schema) + "." + quote_identifier(table);
}

std::string name_value(std::string_view name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string qualified_name_value(std::string_view schema, std::string_view table) {
  return name_value(schema) + "." + name_value(table);
}

}  // namespace kanon::policy
