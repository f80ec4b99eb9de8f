#include "rewriter/string_literals.h"

#include <vector>

#include "rewriter/sql_parser.h"

namespace kanon::rewriter {
namespace {

bool ident_start(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}

bool ident_cont(unsigned char c) {
  return ident_start(c) || (c >= '0' && c <= '9') || c == '$';
}

bool is_digit(unsigned char c) {
  return c >= '0' && c <= '9';
}

class LiteralScanner {
 public:
  LiteralScanner(std::string_view sql, bool standard) : s_(sql), standard_(standard) {}

  std::string run() {
    size_t i = 0;
    while (i < s_.size()) {
      const unsigned char c = static_cast<unsigned char>(s_[i]);
      if (c == '-' && i + 1 < s_.size() && s_[i + 1] == '-') {
        i = line_end(i);
      } else if (c == '/' && i + 1 < s_.size() && s_[i + 1] == '*') {
        i = comment_end(i);
      } else if (c == '"') {
        i = quoted_identifier_end(i);
      } else if (c == '$' && dollar_tag(i) > 0) {
        i = dollar_end(i, dollar_tag(i));
      } else if (c == '\'') {
        i = string_end(i, prefix_before(i));
      } else if (ident_start(c) || is_digit(c)) {
        size_t j = i;
        while (j < s_.size() && ident_cont(static_cast<unsigned char>(s_[j]))) ++j;
        i = j;
      } else {
        ++i;
      }
    }
    std::string out;
    out.reserve(s_.size() + inserts_.size() * 2);
    size_t at = 0;
    for (const auto& [pos, text] : inserts_) {  // in text order
      out.append(s_.substr(at, pos - at));
      out += text;
      at = pos;
    }
    out.append(s_.substr(at));
    return out;
  }

 private:
  enum class Prefix { kPlain, kExtended, kBits, kOther };

  struct Insert {
    size_t pos;
    const char* text;  // inserted before the byte at pos
  };

  // What the word right before the quote at `q` makes of the constant: E'',
  // B''/X'' (no escapes), N''/U&'' (left alone), or a plain one (also after
  // a longer identifier: `date'...'` is a name and a plain constant).
  std::pair<Prefix, bool> prefix_before(size_t q) const {
    size_t b = q;
    bool amp = false;
    if (b > 0 && s_[b - 1] == '&') {
      amp = true;
      --b;
    }
    size_t w = b;
    while (w > 0 && ident_cont(static_cast<unsigned char>(s_[w - 1]))) --w;
    const std::string_view word = s_.substr(w, b - w);
    if (amp) return {word == "u" || word == "U" ? Prefix::kOther : Prefix::kPlain, false};
    if (word.empty()) return {Prefix::kPlain, false};
    // A one-letter word, or digits then the letter (1e'x' is 1 and E'x').
    bool digits = true;
    for (size_t k = 0; k + 1 < word.size(); ++k)
      if (!is_digit(static_cast<unsigned char>(word[k]))) digits = false;
    const char last = word.back();
    if (word.size() == 1 || digits) {
      if (last == 'e' || last == 'E') return {Prefix::kExtended, true};
      if (last == 'b' || last == 'B' || last == 'x' || last == 'X') return {Prefix::kBits, true};
      if (last == 'n' || last == 'N') return {Prefix::kOther, true};
    }
    return {Prefix::kPlain, true};  // after a name: insert " E"
  }

  size_t line_end(size_t i) const {
    while (i < s_.size() && s_[i] != '\n' && s_[i] != '\r') ++i;
    return i;
  }

  size_t comment_end(size_t i) const {
    int depth = 0;
    while (i < s_.size()) {
      if (s_[i] == '/' && i + 1 < s_.size() && s_[i + 1] == '*') {
        ++depth;
        i += 2;
      } else if (s_[i] == '*' && i + 1 < s_.size() && s_[i + 1] == '/') {
        i += 2;
        if (--depth == 0) return i;
      } else {
        ++i;
      }
    }
    return i;
  }

  size_t quoted_identifier_end(size_t i) const {
    ++i;
    while (i < s_.size()) {
      if (s_[i] == '"') {
        if (i + 1 < s_.size() && s_[i + 1] == '"') {
          i += 2;
          continue;
        }
        return i + 1;
      }
      ++i;
    }
    return i;
  }

  // Length of the $tag$ opening at `i` (0 when it is none: a parameter $1,
  // or a $ inside an identifier).
  size_t dollar_tag(size_t i) const {
    if (i > 0 && ident_cont(static_cast<unsigned char>(s_[i - 1]))) return 0;
    size_t j = i + 1;
    if (j < s_.size() && ident_start(static_cast<unsigned char>(s_[j]))) {
      while (j < s_.size() && ident_cont(static_cast<unsigned char>(s_[j])) && s_[j] != '$') ++j;
    }
    if (j < s_.size() && s_[j] == '$') return j + 1 - i;
    return 0;
  }

  size_t dollar_end(size_t i, size_t tag_len) const {
    const std::string_view tag = s_.substr(i, tag_len);
    const size_t close = s_.find(tag, i + tag_len);
    return close == std::string_view::npos ? s_.size() : close + tag_len;
  }

  // After the closing quote at `i - 1`: the start of a continuation
  // ('...' <whitespace with a newline> '...'), or npos.
  size_t continuation(size_t i) const {
    bool newline = false;
    while (i < s_.size()) {
      const char c = s_[i];
      if (c == '\n' || c == '\r') {
        newline = true;
        ++i;
      } else if (c == ' ' || c == '\t' || c == '\f' || c == '\v') {
        ++i;
      } else if (c == '-' && newline && i + 1 < s_.size() && s_[i + 1] == '-') {
        i = line_end(i);  // a -- comment after the newline, up to the next one
      } else {
        break;
      }
    }
    return newline && i < s_.size() && s_[i] == '\'' ? i : std::string_view::npos;
  }

  // The constant whose opening quote is at `q`; returns the byte after it.
  size_t string_end(size_t q, std::pair<Prefix, bool> prefix) {
    // Backslash escapes: E'' always; plain ones (and N'') with the setting
    // off; never in bit strings or, with the setting on, plain ones.
    const bool escapes =
        prefix.first == Prefix::kExtended || (!standard_ && prefix.first != Prefix::kBits);
    bool backslash = false;
    std::vector<size_t> backslashes;  // plain constants with the setting on
    size_t i = q + 1;
    while (i < s_.size()) {
      const char c = s_[i];
      if (c == '\\' && escapes) {
        backslash = true;
        i += 2;
      } else if (c == '\\') {
        backslash = true;
        backslashes.push_back(i);
        ++i;
      } else if (c == '\'') {
        if (i + 1 < s_.size() && s_[i + 1] == '\'') {
          i += 2;
          continue;
        }
        ++i;
        const size_t next = continuation(i);
        if (next == std::string_view::npos) break;
        i = next + 1;
      } else {
        ++i;
      }
    }
    if (prefix.first == Prefix::kPlain && backslash) {
      inserts_.push_back({q, prefix.second ? " E" : "E"});
      // With the setting on a backslash is itself: E'' needs it doubled.
      if (standard_)
        for (size_t b : backslashes) inserts_.push_back({b, "\\"});
    }
    return i;
  }

  std::string_view s_;
  const bool standard_;  // the session's standard_conforming_strings
  std::vector<Insert> inserts_;
};

}  // namespace

std::string escape_backslash_literals(std::string_view sql, bool standard_conforming_strings) {
  return LiteralScanner(sql, standard_conforming_strings).run();
}

std::optional<std::string> standard_text(std::string_view sql, bool standard_conforming_strings) {
  if (sql.find('\\') == std::string_view::npos) return std::string(sql);
  std::string escaped = escape_backslash_literals(sql, standard_conforming_strings);
  if (literals_read_alike(escaped)) return escaped;
  // Text kanon's parser cannot read either way (E'\u061', an unterminated
  // constant): the rewriter answers `syntax`, and the proxy's syntax probe
  // lets the server raise its own error without executing anything.
  if (!parse_sql(escaped).ok && !parse_sql(sql).ok) return std::string(sql);
  return std::nullopt;
}

}  // namespace kanon::rewriter
