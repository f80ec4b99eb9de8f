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
  // Those of `unknown` a statement other than DROP names (dropping a
  // temporary object runs none of its code): the caller's temporary look-up
  // covers only these.
  std::vector<std::string> unknown_used;
  // Something it names or reaches runs a function whose body PostgreSQL
  // reads from the catalog only when it calls it (Reach::late_code): its
  // catalog guard holds the catalog still to the end (catalog_guard.h).
  bool late_code = false;
  // The relation names its statements use without a schema (DROP's left
  // out) and Reach::shadowable of what they name or reach (sorted, unique):
  // a temporary object of one of these names would be read instead. The
  // caller checks that none runs code, once the session may have made one
  // (`defines`).
  std::vector<std::string> shadowable;
  // It may create, change or drop an object (a temporary one among them):
  // a statement that fires event triggers (DDL, SELECT INTO, DO, CALL,
  // CREATE FUNCTION), or one that runs a function whose body PostgreSQL
  // reads when it calls it (`late_code`).
  bool defines = false;
  // It evaluates masks in a SQL form (a protected table, a child or a view
  // read inline, or a mode: view view; not a materialized copy, nor masks
  // that call kanon_mask.released, policy evaluator: function): its guard
  // carries the serial marker (catalog_guard.h).
  bool inline_masks = false;
  // It evaluates masks that call kanon_mask.released (evaluator: function):
  // serial only while the server is busy (PlanContext::serial_masks).
  bool function_masks = false;
  // A restriction filter wrote the statement's constants (or parameters)
  // into the text sent (restriction_filter.h): the text's own rewrite,
  // shared with no other text of its shape (literal_shape.h).
  bool copies_constants = false;
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
