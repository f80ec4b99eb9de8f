// Just enough of PostgreSQL's lexical rules to find where a name the parser
// reported ends: whitespace and comments, plain, quoted and U&"..." (with
// UESCAPE) identifiers, decoded the way the grammar decodes them, so the
// caller can check that the text it is about to replace spells exactly the
// name the parser saw. Positions are byte offsets into the whole text.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kanon::rewriter {

// Skips whitespace, -- comments and (nested) /* */ comments from `pos`.
size_t skip_space(std::string_view text, size_t pos);

struct NameToken {
  size_t begin = 0;
  size_t end = 0;
  std::string value;  // folded (plain) or unescaped (quoted)
};

// Reads one identifier at `pos` (no leading space). False when there is none
// or it is malformed.
bool read_identifier(std::string_view text, size_t pos, NameToken& out);

// Reads up to `max_parts` identifiers separated by dots (space and comments
// allowed around the dots); `*` is accepted as the last part when
// `allow_star` (its value is "*").
std::vector<NameToken> read_dotted_name(std::string_view text, size_t pos, size_t max_parts,
                                        bool allow_star);

// The word (letters, digits, _ and $) that ends right before `pos` after
// skipping whitespace backwards, lower-cased; its start in `begin`. Empty when
// the text before is not a word (comments are not skipped backwards).
std::string word_before(std::string_view text, size_t pos, size_t& begin);

// Index of the byte after the `)` matching the `(` at `pos`, skipping
// strings, quoted identifiers and comments; npos when unbalanced.
size_t matching_paren(std::string_view text, size_t pos);

}  // namespace kanon::rewriter
