// Sessions with standard_conforming_strings off. The server then reads a
// plain '...' string constant with backslash escapes ('\'' is one quote);
// kanon's parser always reads it the standard way. Instead of denying every
// statement of such a session, the proxy sends the server a text both read
// alike:
//   1. escape_backslash_literals() turns every plain string constant that
//      contains a backslash into the E'...' constant the server would have
//      read (an E prefix; E'...' means the same whatever the setting);
//   2. literals_read_alike() (sql_parser.h) checks the result with
//      libpg_query's own scanner: no plain string constant may hold a
//      backslash. Then the server's scanner, with the setting off, cuts the
//      text into the same tokens as the parser (they differ only inside such
//      constants), so what kanon decided is what the server runs.
// A mistake in step 1 can only make step 2 deny; the text sent is always
// the checked one.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kanon::rewriter {

// `sql` with an E prefix on every plain string constant (with the
// continuations that follow it after a newline) that contains a backslash,
// read the way the server reads it with standard_conforming_strings off.
// N'...' and U&'...' constants are left as they are (the check denies them
// when they hold a backslash; the server refuses U&'...' with the setting
// off).
std::string escape_backslash_literals(std::string_view sql);

// Both steps: the text to decide and send instead of `sql` in a session with
// standard_conforming_strings off; nullopt when the check fails (deny with
// rules::kStandardConformingStrings).
std::optional<std::string> standard_text(std::string_view sql);

}  // namespace kanon::rewriter
