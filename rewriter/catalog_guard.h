// The catalog guard: a restricted statement never runs against a catalog
// newer than the one kanon decided it with.
//
// kanon decides with the catalog facts it read at generation G (policy/
// catalog_watch.h: an event trigger advances the generation inside every
// DDL's transaction, before it commits, and the facts of generation G hold
// every DDL advanced up to G). The query the statement runs carries, as the
// first conjunct of its WHERE clause,
//
//   "kanon"."catalog_is"(G::pg_catalog.int8)
//
// ("kanon_mask"."catalog_is", the same check in C, where maskfn/install.sql
// installed it: GuardCall::c_function.)
// A pseudo-constant qualification: PostgreSQL's planner puts it in a gating
// Result at the top of that query level, evaluated once before any row is
// read, so after PostgreSQL parsed the statement (and took its locks) and
// before anything ran. A DDL that the parse saw committed had advanced the
// generation before it committed, so the guard sees a generation other than
// G and fails (SQLSTATE KN001) and nothing of the statement's result leaves
// the server. A statement that may call a function whose body PostgreSQL
// reads only when it calls it (RewritePlan::late_code) carries
// "kanon"."catalog_stays"(G) instead: it also holds, to the end of the
// transaction, a lock every DDL's event trigger waits for before it advances
// the generation, so no DDL commits while the statement runs.
//
// Where it goes, by what the statement runs (sql_parser.h, RunShape):
//   SELECT, UPDATE, DELETE  WHERE <guard> AND (<the user's condition>), or
//                           WHERE <guard> where there was none
//   set operations, VALUES  SELECT * FROM (<query>) AS "kanon query"
//                           WHERE <guard>
//   INSERT ... SELECT       as its SELECT
//   INSERT ... VALUES (row) INSERT ... SELECT <row> WHERE <guard>
//   INSERT ... VALUES of several rows, or with DEFAULT: the first item of
//                           the first row that is not DEFAULT becomes
//                           (CASE WHEN <guard> THEN <item> END), the item
//                           cast to its column's type when it is a string
//                           constant or NULL (which its column types)
// A SELECT that gathers rows (GuardCall::at_offset: GROUP BY, HAVING,
// DISTINCT, an aggregate) and has no LIMIT, OFFSET, FETCH or FOR UPDATE at
// its top level gets the guard as an OFFSET of that level instead:
//
//   <query> OFFSET (CASE WHEN <guard> THEN 0 ELSE -1 END)
//
// PostgreSQL's Limit node, the plan's top, evaluates it once before it asks
// its input for the first row, so it too runs before anything else does. The
// WHERE form's gating Result sits right above the scan and passes (and
// projects) every row read: 4-11% of an aggregate over a million rows. A
// guard that returned false or NULL would make the OFFSET negative, an
// error. (PostgreSQL also evaluates the OFFSET once while planning, to
// estimate it: a few microseconds, which is why the gathering statements
// only get this form.)
// EXPLAIN ANALYZE (and a plain EXPLAIN of a statement with the serial
// marker, so the plan it shows is the one that runs), PREPARE, DECLARE,
// COPY (query) TO and CREATE TABLE AS get
// the guard in the query they run. WHERE CURRENT OF, COPY of a table and an
// INSERT ... VALUES whose first row is all DEFAULT, or whose first item's
// column type is unknown, are not guarded (docs/security.md says what that
// leaves).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "rewriter/rewrite_plan.h"
#include "rewriter/sql_parser.h"

namespace kanon::rewriter {

enum class GuardPlacement {
  kPlaced,     // edits appended to `out`
  kNotNeeded,  // the statement runs nothing the guard covers
  kNoPlace,    // it should have one, and kanon cannot find where: deny
};

// The guard for one statement.
struct GuardCall {
  int64_t generation = 0;
  bool hold = false;    // catalog_stays
  bool serial = false;  // AND "kanon"."serial"()
  // INSERT ... VALUES of several rows or with DEFAULT whose first guarded
  // item is a string constant or NULL (RunShape::first_row): its target
  // column's type, schema-qualified, to cast it to inside the guard (it is
  // typed by its column no longer). Empty: the guard is not placed there.
  std::string values_cast;
  // A SELECT that gathers rows: the guard goes into an OFFSET (above) when
  // its top level has none.
  bool at_offset = false;
  // The guard in C, kanon_mask.catalog_is or catalog_stays (maskfn/
  // catalog_guard.c), where the catalog holds it as maskfn/install.sql
  // makes it (catalog::CatalogFacts::c_guard): the same check, without the
  // PL/pgSQL function's compilation in each new backend and its SPI query in
  // each statement. Otherwise kanon.catalog_is or catalog_stays.
  bool c_function = false;
};

// The guard's call: "<schema>"."catalog_is"(<generation>::pg_catalog.int8),
// or catalog_stays with `hold` (it also holds the catalog still until the
// statement's transaction ends; RewritePlan::late_code says when); with
// `serial`, followed by AND "kanon"."serial"(), a PARALLEL UNSAFE marker
// PostgreSQL folds away, which keeps a statement that evaluates masks off
// parallel workers (RewritePlan::inline_masks; catalog/catalog_watch.h).
std::string catalog_guard_call(const GuardCall& guard);

// Appends to `out` the edits that put the guard into `st`, one of the
// statements of a text whose tokens are `tokens` (scan_tokens of the whole
// text, as parse_sql's offsets are).
GuardPlacement place_catalog_guard(const std::vector<SqlToken>& tokens, const Statement& st,
                                   const GuardCall& guard, std::vector<Edit>& out);

}  // namespace kanon::rewriter
