#include "policy/sql_text.h"

namespace kanon::policy {

std::string quote_identifier(std::string_view name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string quote_literal(std::string_view text) {
  const bool backslash = text.find('\\') != std::string_view::npos;
  std::string out = backslash ? "E'" : "'";
  for (char c : text) {
    if (c == '\'' || (backslash && c == '\\')) out += c;
    out += c;
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

}  // namespace kanon::policy
