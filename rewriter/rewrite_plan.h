// Plan, then apply: plan_rewrite() finds every protected reference of every
// statement and decides — deny, pass, or a list of text edits (masked derived
// tables spliced in place of names, three-part column references shortened,
// COPY t turned into COPY (query)); apply_edits() makes the new text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "rewriter/object_catalog.h"
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
  // Not denied: "schema.table" of the protected tables the masks read
  // (through views too), sorted and unique; for the audit trail.
  std::vector<std::string> tables;
  // Not denied, but names the catalog does not know: look them up first.
  std::vector<std::string> unknown;
  // Something it names or reaches runs a function whose body PostgreSQL
  // reads from the catalog only when it calls it (Reach::late_code): its
  // catalog guard holds the catalog still to the end (catalog_guard.h).
  bool late_code = false;
  // Reach::shadowable of what it names or reaches (sorted, unique): the
  // caller checks that no temporary object of these names runs code.
  std::vector<std::string> shadowable;
  // It evaluates masks in a SQL form (a protected table, a child or a view
  // read inline, or a mode: view view; not a materialized copy, nor masks
  // that call kanon_mask.released, policy evaluator: function): its guard
  // carries the serial marker (catalog_guard.h).
  bool inline_masks = false;
  // It evaluates masks that call kanon_mask.released (evaluator: function):
  // serial only while the server is busy (PlanContext::serial_masks).
  bool function_masks = false;
  // Not denied, but it fires event triggers (rewrite_plan.cc) and the caller
  // has not confirmed they are the catalog's (RewriteResult::event_triggers).
  bool confirm_event_triggers = false;
};

struct PlanInputs {
  const ProtectedIndex& index;
  const ObjectCatalog* catalog = nullptr;  // null: the snapshot has no catalog
  bool require_catalog = false;            // then deny what only a catalog could classify
  const PlanContext& context;
};

// REQUIRES: parsed.ok and `parsed` came from parse_sql(sql).
// References to tables in context.exempt_tables are left as they are. With a
// catalog, every other relation and function the statement names is
// classified: views that reach a protected table are expanded in place with
// masks inside, children of protected tables get the parent's masks, and what
// reaches a protected table in a way kanon cannot mask is denied.
RewritePlan plan_rewrite(std::string_view sql, const ParseOutcome& parsed,
                         const PlanInputs& inputs);

// REQUIRES: edits do not overlap (plan_rewrite guarantees it).
std::string apply_edits(std::string_view sql, std::vector<Edit> edits);

}  // namespace kanon::rewriter
