// A statement's shape: its text with the integer constants taken out, so
// that `SELECT abalance FROM pgbench_accounts WHERE aid = 123` and `... aid =
// 456` share one decision (what ORMs, pgbench and BI tools send with their
// values inlined; the rewrite cache would otherwise parse each anew).
//
// Which constants are taken out is decided twice:
//   - literal_shape(), a scan of the text (every lookup): a run of digits at
//     a token's start outside strings, quoted identifiers, comments and
//     dollar quotes, not part of a parameter, a name or a fraction, and
//     followed by a character that ends it (not a letter, digit, `_`, `$`
//     or `.`). Each run's class (zero, integer, bigger than an integer) is
//     part of the key: PostgreSQL types them differently.
//   - constants_are_inert(), PostgreSQL's own parse of the text a decision
//     was made for (once per shape): each run must be an integer constant
//     the grammar placed there (or a negated one, its minus right before
//     the digits), as an operand of a comparison (=, <>, <, <=, >, >=, IN)
//     whose other operand is a column, of arithmetic (+, -, *, /, %), an item
//     of a VALUES row or the value an UPDATE sets. kanon decides no rule on
//     the value of such a constant except the restriction filter of a
//     protected table's column, which copies it into the text sent: such
//     rewrites are never shared (RewritePlan::copies_constants, rewriter.cc).
//     Not: a LIMIT's count, FETCH's (a raw number in the statement's
//     fingerprint), a function's or a cast's argument.
// Two texts of one key differ only in the digits of those runs, so
// PostgreSQL reads the same tokens from both.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rewriter/rewrite_plan.h"

namespace kanon::rewriter {

struct LiteralSpan {
  size_t begin = 0;  // bytes of the statement's text
  size_t end = 0;
};

struct LiteralShape {
  std::string key;                 // the text, each constant replaced by kSlot and its class
  std::vector<LiteralSpan> spans;  // the constants, in order
};

// Marks a constant in LiteralShape::key and in a template (shape_template).
inline constexpr char kSlot = '\x01';

// nullopt when the text holds no such constant, holds kSlot, or does not
// scan (an unterminated string or comment).
std::optional<LiteralShape> literal_shape(std::string_view sql);

// Whether PostgreSQL's parse of `sql` has an integer constant at each span,
// of that value, where no rule reads it (see above).
bool constants_are_inert(std::string_view sql, const std::vector<LiteralSpan>& spans);

// The text sent for `sql` (the statement with `edits` applied, as
// apply_edits does) with each constant at `spans` replaced by kSlot; nullopt
// when an edit replaces any of a constant's bytes.
std::optional<std::string> shape_template(std::string_view sql, const std::vector<Edit>& edits,
                                          const std::vector<LiteralSpan>& spans);

// Whether `templ` holds, outside its slots, a run of digits of the value of
// one of the constants: a copy of it (or a number that happens to be equal),
// which filling the slots would leave as it was.
bool template_repeats_constants(std::string_view templ, std::string_view sql,
                                const std::vector<LiteralSpan>& spans);

// `templ` with its slots filled, in order, by the constants of `sql` at `spans`.
std::string fill_template(std::string_view templ, std::string_view sql,
                          const std::vector<LiteralSpan>& spans);

}  // namespace kanon::rewriter
