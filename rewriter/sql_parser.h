// The libpg_query boundary. libpg_query's types and its JSON never leave
// rewriter/'s parser files; the rest of kanon sees the small types declared
// here: statements, relation references with byte offsets, column references
// and function calls.
//
// Parse form: libpg_query's JSON output read by our own JsonTree. Measured
// on this machine (bench/rewriter), JSON is several times faster than the
// protobuf output unpacked with protobuf-c; see docs/rewriter.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "rewriter/statement_kind.h"

namespace kanon::rewriter {

// A restriction a SELECT puts on a column of a relation its FROM list names
// (outside subqueries; in joins too): a conjunct at the top level of its
// WHERE, which keeps only result rows whose row of that relation satisfies
// it, whatever else the statement does (a row of the relation that fails it
// contributes nothing; an outer join extends the other side with NULLs
// instead, which fail it too): `col <op> constant` either way round, `col IN
// (constants)`, `col NOT IN (constants)`, `col BETWEEN c1 AND c2`, `col =
// ANY (ARRAY[constants] or $n)`, `col <> ALL (ARRAY[constants] or $n)`, `col
// LIKE 'pattern'` and NOT LIKE (op "~~", "!~~"; a string constant of at most
// 256 bytes, the column on the left); `col`
// qualified by the name the relation goes by (its alias, or its name), which
// no other FROM item goes by, or bare when the relation is the only FROM
// item; op = <> < <= > >= unqualified or OPERATOR(pg_catalog.op); a constant
// a positive integer or a string of printable ASCII without a backslash (the
// same characters in every client encoding, whatever
// standard_conforming_strings says), or a parameter `$n` the statement uses
// nowhere else (so that its use here alone types it; in PREPARE, declared
// as integer, smallint, bigint or character varying, or not declared). Also
// a restriction of an outer WHERE on a subquery, or a CTE the statement
// names once, that passes the relation's rows on unchanged (`FROM (SELECT *
// FROM t) s WHERE s.age = 39`: plain columns or * of one relation, beside
// computed ones under other aliases without window functions, no
// grouping, DISTINCT, LIMIT, ...), by the relation's column.
// rewriter/restriction_filter.h uses it.
struct ColumnRestriction {
  struct Comparison {
    std::string op;
    bool column_first = true;  // col <op> constant (false: constant <op> col)
    bool string = false;       // a string constant, else an integer
    std::string value;         // the integer's digits, or the string's characters
    int parameter = 0;         // n of a parameter $n (then neither of the above)
    // A PREPARE's parameter: the type its list declares (0: none, PostgreSQL
    // infers it), otherwise the Parse's (PlanContext::parameter_types).
    bool prepared = false;
    uint32_t declared = 0;
    // `col = ANY ($n)` (op "=") or `col <> ALL ($n)` (op "<>"): $n is an
    // array, as drivers send a list.
    bool array = false;
  };
  std::string column;  // folded, unquoted
  std::vector<Comparison> comparisons;
  bool any = false;  // IN: it holds when any comparison does; otherwise when all do
};

// One reference to a relation by name (a RangeVar).
struct RelationRef {
  enum class Role {
    kRead,        // a FROM item (FROM, JOIN, TABLE t): spliced when protected
    kCopySource,  // COPY t ... (TO or FROM)
    kSampled,     // FROM t TABLESAMPLE ...
    kLockTarget,  // FOR UPDATE OF t: names a FROM item, reads nothing
    kOther,       // write targets, DDL objects, SELECT INTO targets, ...
  };
  std::string catalog;  // as resolved by the grammar: folded, unquoted, unescaped
  std::string schema;
  std::string name;
  int location = -1;  // byte offset of the name's first token in the whole text
  bool inh = true;    // false after ONLY
  bool has_alias = false;
  bool cte = false;         // unqualified, and a WITH in scope defines this name
  bool table_form = false;  // the relation of a `TABLE name` command
  Role role = Role::kOther;
  // A relation of a SELECT's FROM list: what the SELECT's WHERE restricts
  // its columns to (ColumnRestriction).
  std::vector<ColumnRestriction> restrictions;
};

struct ColumnReference {
  std::vector<std::string> fields;  // name parts before a trailing *
  bool star = false;                // ends in .* (or is *)
  int location = -1;
};

struct FunctionReference {
  std::string schema;  // empty when unqualified
  std::string name;
  int location = -1;
};

// The query a statement runs, for kanon's catalog guard (catalog_guard.h):
// the statement's own, or the one EXPLAIN ANALYZE, PREPARE, DECLARE,
// COPY (...) TO and CREATE TABLE AS run. kNone for everything else.
struct RunShape {
  enum class Kind { kNone, kSelect, kInsert, kUpdate, kDelete };
  Kind kind = Kind::kNone;
  // SELECT (an INSERT's too): a FROM list; UPDATE: FROM; DELETE: USING.
  bool has_from = false;
  // SELECT (an INSERT's too): one SELECT, no set operation, no VALUES.
  bool simple = false;
  // INSERT ... VALUES of one row without DEFAULT: it can be sent as
  // INSERT ... SELECT <the row> (PostgreSQL types a simple INSERT ... SELECT's
  // literals by the target columns, as it does VALUES').
  bool one_values_row = false;
  // Any other INSERT ... VALUES: what each item of its first row is, and the
  // INSERT's column list (empty: the table's columns in order). The guard
  // goes around the first item that is not DEFAULT (catalog_guard.h).
  enum class ValuesItem {
    kDefault,  // DEFAULT
    kUntyped,  // a string constant, NULL, $n or ROW(...): typed by its column
    kTyped,    // anything else: typed by itself
  };
  std::vector<ValuesItem> first_row;
  std::vector<std::string> insert_columns;
  // SELECT: its top level has LIMIT, OFFSET, FETCH or FOR UPDATE/SHARE
  // (`limited`), and GROUP BY, HAVING or DISTINCT (`groups`); the guard's
  // OFFSET form needs the first absent (catalog_guard.h).
  bool limited = false;
  bool groups = false;
  bool current_of = false;  // UPDATE/DELETE ... WHERE CURRENT OF
  bool in_parens = false;   // COPY (query): the query is the first parenthesis
};

struct Statement {
  std::string node;  // PostgreSQL's node name, e.g. "SelectStmt", "CopyStmt"
  StatementKind kind = StatementKind::kOther;  // the same, as an enum
  // EXPLAIN/PREPARE/DECLARE/COPY/CREATE TABLE AS/VIEW: the wrapped query's
  // node name and kind.
  std::string inner_node;
  StatementKind inner_kind = StatementKind::kOther;
  int location = 0;  // byte range of the statement in the whole text
  int length = 0;
  std::vector<RelationRef> relations;
  std::vector<ColumnReference> columns;
  std::vector<FunctionReference> functions;
  std::vector<std::string> names;  // every identifier in name lists (DDL objects)
  // Every alias of a FROM item or join (AS t), and whether some alias names
  // columns (AS t(a, b)), which renames them by position.
  std::vector<std::string> alias_names;
  bool alias_columns = false;
  std::vector<std::string> nested_writes;  // INSERT/UPDATE/DELETE/MERGE below the top level
  bool select_into = false;
  // CopyStmt
  bool copy_from = false;
  bool copy_to_file = false;  // a file name or PROGRAM
  bool copy_has_attlist = false;
  // VariableSetStmt / VariableShowStmt
  std::string setting;
  // VariableSetStmt and TransactionStmt: their "kind" ("VAR_SET_VALUE",
  // "VAR_RESET_ALL", "TRANS_STMT_COMMIT", ...); DiscardStmt: its "target"
  // ("DISCARD_ALL", ...); ReindexStmt: its "kind" ("REINDEX_OBJECT_TABLE",
  // "REINDEX_OBJECT_INDEX", ..._SCHEMA, ..._SYSTEM, ..._DATABASE).
  std::string subkind;
  // VariableSetStmt: its values, one per argument; a string constant as
  // written, anything else (a number, an interval) empty.
  std::vector<std::string> setting_values;
  // CreateFunctionStmt: LANGUAGE, lower case ("sql" when there is a BEGIN
  // ATOMIC / RETURN body and no LANGUAGE); the string body of AS '...' when it
  // is one string (two for C: file and symbol, left empty); whether the body
  // is a BEGIN ATOMIC / RETURN one (its relations, columns and functions are
  // this statement's).
  std::string function_language;
  std::string function_body;
  bool function_sql_body = false;
  // The prepared statement or cursor a statement names (folded, unquoted):
  // PREPARE, EXECUTE, DEALLOCATE (empty for ALL), DECLARE CURSOR, FETCH/MOVE,
  // CLOSE (empty for ALL).
  std::string object_name;
  bool cursor_hold = false;  // DECLARE ... CURSOR WITH HOLD
  // ExplainStmt: it has options, in a list `(...)` or as EXPLAIN ANALYZE /
  // VERBOSE (`EXPLAIN (SELECT ...)` has none: the parentheses are the query's).
  bool explain_options = false;
  // ExplainStmt: it has an ANALYZE option (EXPLAIN ANALYZE, or ANALYZE in
  // the list, whatever its value).
  bool explain_analyze = false;
  // The prepared statements an EXECUTE runs, at any depth (EXPLAIN ANALYZE
  // EXECUTE, CREATE TABLE AS EXECUTE).
  std::vector<std::string> executed;
  // A SELECT that passes one relation's rows on unchanged (as a view's
  // definition may): which column of which relation each plain output
  // column is, so that a restriction on the output (on a view's column)
  // restricts the relation's column. Filled when parse_sql is asked to.
  struct PassedColumn {
    std::string output;
    size_t relation = 0;  // index into relations
    std::string column;
  };
  std::vector<PassedColumn> passed_on;
  RunShape run;
  uint64_t fingerprint = 0;  // structure without literal values or positions
};

struct ParseOutcome {
  bool ok = false;
  int statement_count = 0;
  std::vector<Statement> statements;
  // When !ok: PostgreSQL's error message and the byte offset it points at.
  std::string error;
  int error_offset = -1;
};

// Parses `sql` with PostgreSQL 15's grammar. Thread-safe. With
// `passed_on`, also fills Statement::passed_on (a view's definition; other
// statements need not pay for it).
ParseOutcome parse_sql(std::string_view sql, bool passed_on = false);

// True when libpg_query's scanner finds no plain '...' string constant with
// a backslash in `sql` (E'...', dollar-quoted, bit strings do not count), so
// a server with standard_conforming_strings off cuts the text into the same
// tokens (string_literals.h). False when the text does not scan.
bool literals_read_alike(std::string_view sql);

// A token of libpg_query's scanner, reduced to the kinds the catalog guard
// (catalog_guard.h) looks for; byte offsets into the scanned text.
struct SqlToken {
  enum class Kind {
    kOther,
    kOpen,   // (
    kClose,  // )
    kComma,
    kSemicolon,
    kAs,
    kConflict,
    kData,
    kDistinct,
    kFetch,
    kFor,
    kFrom,
    kGroup,
    kHaving,
    kLimit,
    kNo,
    kOffset,
    kOn,
    kOrder,
    kReturning,
    kSelect,
    kUsing,
    kValues,
    kWhere,
    kWindow,
    kWith,
    kAnalyze,  // ANALYZE or ANALYSE
    kVerbose,
  };
  Kind kind = Kind::kOther;
  size_t begin = 0;
  size_t end = 0;
};

// The tokens of `sql`; false when it does not scan.
bool scan_tokens(std::string_view sql, std::vector<SqlToken>& out);

// The time of libpg_query's own parse alone, for benchmarks: the JSON or the
// protobuf form (unpacked with protobuf-c). Returns false on a syntax error.
bool raw_parse_json(std::string_view sql);
bool raw_parse_protobuf(std::string_view sql);

}  // namespace kanon::rewriter
