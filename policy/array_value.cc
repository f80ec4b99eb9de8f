#include "policy/array_value.h"

#include <cctype>
#include <optional>

#include "policy/sql_text.h"

namespace kanon::policy {
namespace {

bool is_null_token(std::string_view t) {
  if (t.size() != 4) return false;
  const char* n = "NULL";
  for (size_t i = 0; i < 4; ++i)
    if (std::toupper(static_cast<unsigned char>(t[i])) != n[i]) return false;
  return true;
}

// array_out's form read once: the ARRAY[...] expression (when the value has
// no explicit bounds and no empty sub-array) and the same text with every
// unquoted NULL element quoted.
struct Reading {
  bool null_element = false;
  bool constructible = true;
  std::string constructor;
  std::string nulls_quoted;
};

class Reader {
 public:
  Reader(std::string_view text, std::string element_type)
      : s_(text), element_(std::move(element_type)) {}

  std::optional<Reading> read() {
    Reading r;
    if (!s_.empty() && s_[0] == '[') {
      // Explicit bounds: "[1:2][0:1]={...}".
      const size_t eq = s_.find('=');
      if (eq == std::string_view::npos) return std::nullopt;
      r.constructible = false;
      r.nulls_quoted.append(s_.substr(0, eq + 1));
      i_ = eq + 1;
    }
    if (!array(r, 0)) return std::nullopt;
    skip_space();
    if (i_ != s_.size()) return std::nullopt;
    return r;
  }

 private:
  void skip_space() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }

  bool array(Reading& r, int depth) {
    if (depth > 6) return false;  // PostgreSQL's MAXDIM
    skip_space();
    if (i_ >= s_.size() || s_[i_] != '{') return false;
    ++i_;
    r.nulls_quoted += '{';
    r.constructor += "ARRAY[";
    skip_space();
    if (i_ < s_.size() && s_[i_] == '}') {
      ++i_;
      r.nulls_quoted += '}';
      r.constructible = false;  // ARRAY[] needs a type of its own
      return true;
    }
    for (bool first = true;; first = false) {
      if (!first) {
        r.nulls_quoted += ',';
        r.constructor += ", ";
      }
      skip_space();
      if (i_ >= s_.size()) return false;
      if (s_[i_] == '{') {
        if (!array(r, depth + 1)) return false;
      } else if (!element(r)) {
        return false;
      }
      skip_space();
      if (i_ >= s_.size()) return false;
      if (s_[i_] == '}') break;
      if (s_[i_] != ',') return false;
      ++i_;
    }
    ++i_;
    r.nulls_quoted += '}';
    r.constructor += ']';
    return true;
  }

  bool element(Reading& r) {
    if (s_[i_] == '"') {
      const size_t start = i_++;
      std::string value;
      while (i_ < s_.size() && s_[i_] != '"') {
        if (s_[i_] == '\\' && i_ + 1 < s_.size()) ++i_;
        value += s_[i_++];
      }
      if (i_ >= s_.size()) return false;
      ++i_;
      r.nulls_quoted.append(s_.substr(start, i_ - start));
      r.constructor += typed_literal(value, element_);
      return true;
    }
    const size_t start = i_;
    while (i_ < s_.size() && s_[i_] != ',' && s_[i_] != '}' && s_[i_] != '{' && s_[i_] != '"') ++i_;
    std::string_view token = s_.substr(start, i_ - start);
    while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back())))
      token.remove_suffix(1);
    if (token.empty()) return false;
    if (is_null_token(token)) {
      r.null_element = true;
      r.nulls_quoted += "\"NULL\"";
      r.constructor += "NULL::" + element_;
    } else {
      r.nulls_quoted.append(token);
      r.constructor += typed_literal(token, element_);
    }
    return true;
  }

  std::string_view s_;
  std::string element_;
  size_t i_ = 0;
};

std::string element_type(std::string_view array_type) {
  return std::string(array_type.substr(0, array_type.size() - 2));
}

}  // namespace

std::string array_equals(std::string_view column, std::string_view op, std::string_view text,
                         std::string_view array_type) {
  const std::string test = std::string(column) + " " + std::string(op) + " ";
  const auto r = Reader(text, element_type(array_type)).read();
  if (!r) {
    for (size_t i = 0; i + 4 <= text.size(); ++i)
      if (is_null_token(text.substr(i, 4))) return "false";
    return test + typed_literal(text, array_type);
  }
  if (!r->null_element) return test + typed_literal(text, array_type);
  if (r->constructible) return test + r->constructor + "::" + std::string(array_type);
  return "(" + test + typed_literal(text, array_type) + " AND NOT " + test +
         typed_literal(r->nulls_quoted, array_type) + ")";
}

}  // namespace kanon::policy
