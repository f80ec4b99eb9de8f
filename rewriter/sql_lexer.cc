#include "rewriter/sql_lexer.h"

#include <cctype>

#include "base/text.h"

namespace kanon::rewriter {
namespace {

constexpr size_t kMaxIdentifierBytes = 63;  // NAMEDATALEN - 1

bool ident_start(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}

bool ident_cont(unsigned char c) {
  return ident_start(c) || (c >= '0' && c <= '9') || c == '$';
}

// PostgreSQL truncates identifiers to 63 bytes on a character boundary.
void truncate_identifier(std::string& s) {
  s.resize(base::utf8_prefix(s, kMaxIdentifierBytes).size());
}

// Body of a "..." identifier starting after the opening quote; `end` gets the
// byte after the closing quote.
bool read_quoted(std::string_view text, size_t pos, std::string& raw, size_t& end) {
  for (size_t i = pos; i < text.size(); ++i) {
    if (text[i] != '"') {
      raw += text[i];
      continue;
    }
    if (i + 1 < text.size() && text[i + 1] == '"') {
      raw += '"';
      ++i;
      continue;
    }
    end = i + 1;
    return !raw.empty();
  }
  return false;
}

bool decode_unicode(const std::string& raw, char escape, std::string& out) {
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] != escape) {
      out += raw[i];
      continue;
    }
    if (i + 1 < raw.size() && raw[i + 1] == escape) {
      out += escape;
      ++i;
      continue;
    }
    size_t digits = 4;
    size_t at = i + 1;
    if (at < raw.size() && raw[at] == '+') {
      digits = 6;
      ++at;
    }
    if (at + digits > raw.size()) return false;
    unsigned long cp = 0;
    for (size_t d = 0; d < digits; ++d) {
      const int v = base::hex_value(raw[at + d]);
      if (v < 0) return false;
      cp = cp * 16 + static_cast<unsigned long>(v);
    }
    if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp < 0xE000)) return false;
    base::append_utf8(out, static_cast<uint32_t>(cp));
    i = at + digits - 1;
  }
  return true;
}

}  // namespace

size_t skip_space(std::string_view text, size_t pos) {
  while (pos < text.size()) {
    const char c = text[pos];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      ++pos;
    } else if (c == '-' && pos + 1 < text.size() && text[pos + 1] == '-') {
      while (pos < text.size() && text[pos] != '\n' && text[pos] != '\r') ++pos;
    } else if (c == '/' && pos + 1 < text.size() && text[pos + 1] == '*') {
      int depth = 0;
      while (pos + 1 < text.size()) {
        if (text[pos] == '/' && text[pos + 1] == '*') {
          ++depth;
          pos += 2;
        } else if (text[pos] == '*' && text[pos + 1] == '/') {
          pos += 2;
          if (--depth == 0) break;
        } else {
          ++pos;
        }
      }
      if (depth != 0) return text.size();
    } else {
      break;
    }
  }
  return pos;
}

bool read_identifier(std::string_view text, size_t pos, NameToken& out) {
  out = NameToken{};
  out.begin = pos;
  if (pos >= text.size()) return false;
  const auto c = static_cast<unsigned char>(text[pos]);
  if ((c == 'u' || c == 'U') && pos + 2 < text.size() && text[pos + 1] == '&' &&
      text[pos + 2] == '"') {
    std::string raw;
    size_t end = 0;
    if (!read_quoted(text, pos + 3, raw, end)) return false;
    char escape = '\\';
    // Optional UESCAPE 'c'.
    const size_t after = skip_space(text, end);
    if (after + 7 <= text.size()) {
      const std::string word = base::lower(text.substr(after, 7));
      if (word == "uescape" && (after + 7 == text.size() || !ident_cont(text[after + 7]))) {
        const size_t q = skip_space(text, after + 7);
        if (q + 2 >= text.size() || text[q] != '\'' || text[q + 2] != '\'') return false;
        escape = text[q + 1];
        end = q + 3;
      }
    }
    if (!decode_unicode(raw, escape, out.value)) return false;
    truncate_identifier(out.value);
    out.end = end;
    return true;
  }
  if (c == '"') {
    size_t end = 0;
    if (!read_quoted(text, pos + 1, out.value, end)) return false;
    truncate_identifier(out.value);
    out.end = end;
    return true;
  }
  if (!ident_start(c)) return false;
  size_t i = pos;
  while (i < text.size() && ident_cont(static_cast<unsigned char>(text[i]))) {
    char ch = text[i++];
    if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
    out.value += ch;
  }
  truncate_identifier(out.value);
  out.end = i;
  return true;
}

std::vector<NameToken> read_dotted_name(std::string_view text, size_t pos, size_t max_parts,
                                        bool allow_star) {
  std::vector<NameToken> parts;
  while (parts.size() < max_parts) {
    NameToken t;
    if (allow_star && pos < text.size() && text[pos] == '*') {
      t.begin = pos;
      t.end = pos + 1;
      t.value.assign(1, '*');
      parts.push_back(std::move(t));
      break;
    }
    if (!read_identifier(text, pos, t)) break;
    parts.push_back(std::move(t));
    const size_t dot = skip_space(text, parts.back().end);
    if (parts.size() == max_parts || dot >= text.size() || text[dot] != '.') break;
    pos = skip_space(text, dot + 1);
  }
  return parts;
}

std::string word_before(std::string_view text, size_t pos, size_t& begin) {
  size_t i = pos;
  while (i > 0 && (text[i - 1] == ' ' || text[i - 1] == '\t' || text[i - 1] == '\n' ||
                   text[i - 1] == '\r' || text[i - 1] == '\f' || text[i - 1] == '\v'))
    --i;
  const size_t end = i;
  while (i > 0) {
    const auto c = static_cast<unsigned char>(text[i - 1]);
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '$'))
      break;
    --i;
  }
  begin = i;
  return base::lower(text.substr(i, end - i));
}

size_t matching_paren(std::string_view text, size_t pos) {
  int depth = 0;
  size_t i = pos;
  while (i < text.size()) {
    const size_t next = skip_space(text, i);
    if (next != i) {
      i = next;
      continue;
    }
    const char c = text[i];
    if (c == '(') {
      ++depth;
      ++i;
    } else if (c == ')') {
      ++i;
      if (--depth == 0) return i;
    } else if (c == '"' || c == '\'') {
      ++i;
      while (i < text.size()) {
        if (text[i] == c) {
          if (i + 1 < text.size() && text[i + 1] == c) {
            i += 2;
            continue;
          }
          break;
        }
        ++i;
      }
      if (i >= text.size()) return std::string_view::npos;
      ++i;
    } else {
      ++i;
    }
  }
  return std::string_view::npos;
}

}  // namespace kanon::rewriter
