#include "rewriter/sql_lexer.h"

#include <cctype>

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
  if (s.size() <= kMaxIdentifierBytes) return;
  size_t n = kMaxIdentifierBytes;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  s.resize(n);
}

void append_utf8(std::string& out, unsigned long cp) {
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

bool is_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
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
      if (!is_hex(raw[at + d])) return false;
      const char h = raw[at + d];
      const int v = h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10;
      cp = cp * 16 + static_cast<unsigned long>(v);
    }
    if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp < 0xE000)) return false;
    append_utf8(out, cp);
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
      std::string word(text.substr(after, 7));
      for (auto& ch : word) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
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
  std::string w(text.substr(i, end - i));
  for (auto& ch : w) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return w;
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
