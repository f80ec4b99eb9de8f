// Plan, then apply: plan_rewrite() finds every protected reference of every
// statement and decides — deny, pass, or a list of text edits (masked derived
// tables spliced in place of names, three-part column references shortened,
// COPY t turned into COPY (query)); apply_edits() makes the new text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "rewriter/protected_index.h"
#include "rewriter/rewriter.h"
#include "rewriter/sql_parser.h"
#include "rewriter/statement_rules.h"

namespace kanon::rewriter {

struct Edit {
  size_t begin = 0;  // byte range of the original text to replace
  size_t end = 0;
  std::string text;
};

struct RewritePlan {
  const Rule* denied = nullptr;  // non-null: deny, naming `object`
  std::string object;
  std::vector<Edit> edits;  // empty and not denied: pass unchanged
};

// REQUIRES: parsed.ok and `parsed` came from parse_sql(sql).
// References to tables in context.exempt_tables are left as they are.
RewritePlan plan_rewrite(std::string_view sql, const ParseOutcome& parsed,
                         const ProtectedIndex& index, const PlanContext& context);

// REQUIRES: edits do not overlap (plan_rewrite guarantees it).
std::string apply_edits(std::string_view sql, std::vector<Edit> edits);

}  // namespace kanon::rewriter
