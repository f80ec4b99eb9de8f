// Backslashes in string constants. PostgreSQL reads a plain '...' constant
// with backslash escapes when the session's standard_conforming_strings is
// off ('\'' is one quote) and without them when it is on; kanon's parser
// always reads it the standard way, and the proxy may learn of a change of
// the setting only after it has passed on the next statements (a pipelined
// SET, set_config(), a function's SET clause). So the proxy never sends a
// restricted statement whose reading depends on the setting:
//   1. escape_backslash_literals() spells every plain constant that holds a
//      backslash as the E'...' constant the session would read (the setting
//      off: an E prefix; on: an E prefix and every backslash doubled).
//      E'...' constants mean the same whatever the setting.
//   2. literals_read_alike() (sql_parser.h) checks the result with
//      libpg_query's own scanner: no plain string constant may hold a
//      backslash. Then the server's scanner cuts the text into the same
//      tokens as the parser under either setting (they differ only inside
//      such constants), so what kanon decided is what the server runs, even
//      when kanon's idea of the setting is out of date (then the constant's
//      value may differ from what the client meant, never its extent).
// A mistake in step 1 can only make step 2 deny; the text sent is always
// the checked one. Text without a backslash is left as it is.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kanon::rewriter {

// `sql` with every plain string constant (with the continuations that
// follow it after a newline) that contains a backslash spelled as an E'...'
// constant, read the way the server reads it with the given setting.
// N'...' and U&'...' constants are left as they are (the check denies N'...'
// with a backslash; U&'...' reads alike with the setting on, and the server
// refuses it with the setting off).
std::string escape_backslash_literals(std::string_view sql, bool standard_conforming_strings);

// Both steps: the text to decide and send instead of `sql` (`sql` itself
// when it holds no backslash, or when kanon's parser cannot read it either
// way: the rewriter then answers `syntax`); nullopt when the check fails
// (deny with rules::kStandardConformingStrings).
std::optional<std::string> standard_text(std::string_view sql, bool standard_conforming_strings);

}  // namespace kanon::rewriter
