// The security model for restricted sessions as data: which statement kinds
// are allowed, which objects are denied outright, and the rules a denial
// names. See docs/rewriter.md for the table in prose.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "base/sqlstate.h"
#include "rewriter/sql_parser.h"

namespace kanon::rewriter {

enum class StatementClass {
  kQuery,    // SELECT, VALUES, TABLE: protected references are masked
  kWrapper,  // EXPLAIN, PREPARE, DECLARE CURSOR: the inner query is masked
  kCopy,     // COPY: TO STDOUT masked; FROM or file/program checked
  kSession,  // SET, SHOW, transaction control, EXECUTE, FETCH, LISTEN, ...: passed
  kWrite,    // writes and DDL: passed when no protected table is involved, else denied
  kDenied,   // code or server access kanon cannot inspect: always denied
};

// By the statement's kind (statement_kind.h, from PostgreSQL's node name).
// Kinds not in the table, kOther among them, are kWrite (fail closed when protected tables are
// involved).
StatementClass classify_statement(StatementKind kind);

// A denial: the rule id, the sentence that explains it and the SQLSTATE the
// client gets. Every denial kanon makes, the proxy's included, is one of
// `rules::`; denial_message() builds every message.
struct Rule {
  const char* id;
  const char* sentence;
  const char* sqlstate = sqlstate::kInsufficientPrivilege;
};

// Rules kanon reports (the `rule` of a denied RewriteResult).
namespace rules {
// Text kanon's parser cannot read. The proxy lets PostgreSQL raise its own
// error for it (see proxy/statement_gate.h); kParserMismatch when PostgreSQL
// can read the text after all.
extern const Rule kSyntax;
extern const Rule kParserMismatch;
extern const Rule kOpaqueCode;
extern const Rule kServerAccess;
extern const Rule kWriteProtected;
extern const Rule kDdlProtected;
extern const Rule kMaintenanceScope;
extern const Rule kSystemColumn;
extern const Rule kStatisticsView;
// CREATE FUNCTION ... LANGUAGE sql whose body names or reaches a protected
// table (other languages stay kOpaqueCode).
extern const Rule kFunctionBodyProtected;
extern const Rule kSqlTextFunction;
extern const Rule kServerFileFunction;
extern const Rule kAdvisoryLock;
extern const Rule kSnapshotImport;
extern const Rule kPreparedTransaction;
extern const Rule kKanonInternal;
extern const Rule kCopyFile;
extern const Rule kPolicyNotBuilt;
extern const Rule kMaskFunction;
// DDL (or DO, CALL) while an event trigger's function reaches a protected
// table or is opaque (rewrite_plan.cc, check_event_triggers).
extern const Rule kEventTrigger;
extern const Rule kTablesample;
extern const Rule kUnsupportedReference;
extern const Rule kAmbiguousName;
// Objects the catalog says reach a protected table (object_catalog.h).
extern const Rule kDerivedRelation;
extern const Rule kOpaqueRelation;
extern const Rule kReachingFunction;
extern const Rule kOpaqueFunction;
extern const Rule kAmbiguousObject;
extern const Rule kUnknownObject;
// A temporary object that runs code (catalog::unsafe_temporary_object).
extern const Rule kTemporaryObject;
// CREATE CAST, OPERATOR, AGGREGATE, TYPE, DOMAIN and their ALTERs.
extern const Rule kDefinition;
// EXPLAIN ANALYZE of a statement that reads protected rows: hash tables'
// memory and original bucket counts follow the raw statistics.
extern const Rule kExplainAnalyze;
// A read that evaluates masks of a table one of whose indexes has a
// quasi-identifier among its keys, expressions or predicate: an index scan
// returns rows in raw order (catalog::RelationFacts::indexes).
extern const Rule kQuasiIdentifierIndex;
extern const Rule kCatalogNotRead;
// Decided by the proxy, before or around the rewriter.
extern const Rule kReplicationConnection;
extern const Rule kDatabaseNotProtected;
extern const Rule kFunctionCall;
extern const Rule kStandardConformingStrings;
// Non-ASCII statement text kanon cannot read as PostgreSQL will: an
// encoding that is not ASCII-safe or that kanon does not convert, text that
// does not convert, a server encoding other than UTF8, or a change of
// client_encoding still under way (proxy/encoding_guard.h).
extern const Rule kClientEncoding;
extern const Rule kCatalogGuard;
extern const Rule kMalformedMessage;
// A prepared statement, cursor or portal decided under an older policy
// snapshot whose decision now differs, or one whose text kanon could not
// decide when it was prepared (proxy/prepared_registry.h).
extern const Rule kStalePrepared;
// A use of a name kanon holds no statement (26000), cursor or portal
// (34000) of: never prepared through kanon, or removed since. Never passed
// to the server (it could hold anything); PostgreSQL's own SQLSTATE, so
// that a driver prepares it again as it would after a DISCARD ALL.
extern const Rule kUnknownStatement;
extern const Rule kUnknownCursor;
// The audit trail cannot take records (a sink is down or the queue is full)
// and audit.on_failure is deny.
extern const Rule kAuditUnavailable;
}  // namespace rules

// "<sentence>: <object> (kanon rule <id>)"; without ": <object>" when the
// object is empty.
std::string denial_message(const Rule& rule, std::string_view object);

// The rule for a statement kind of class kDenied.
const Rule& denied_statement_rule(StatementKind kind);

// Functions denied in every restricted statement (they run SQL text, read a
// table or a server file by name, or decode WAL); nullptr when allowed.
// `name` is the unqualified function name as the parser folded it.
const Rule* denied_function(std::string_view name);

// A function a restricted session may call with the fast-path FunctionCall
// message, by its fixed OID (PostgreSQL 15's pg_proc.dat): the client-side
// large-object functions, which reach no table.
struct FastPathFunction {
  uint32_t oid;
  const char* name;
};
std::span<const FastPathFunction> allowed_fast_path_functions();
// The function's name when `oid` is one of them; nullptr otherwise (the
// FunctionCall is denied with rules::kFunctionCall).
const char* allowed_fast_path_function(uint32_t oid);

// Relations that expose column values of any table (statistics).
bool is_statistics_relation(std::string_view name);
// The statistics views with a `schemaname` column (pg_stats, pg_stats_ext,
// pg_stats_ext_exprs): a restricted query reads only the rows of the
// session's own temporary tables (statistics_filter()).
bool is_filtered_statistics_view(std::string_view name);
// The derived table that replaces a reference to such a view: its rows whose
// schemaname is the session's temporary schema (none when it has none).
std::string statistics_filter(std::string_view name);

// ctid, xmin, xmax, cmin, cmax, tableoid.
bool is_system_column(std::string_view name);

// "DO", "CREATE FUNCTION", ... for messages; the node name otherwise.
std::string statement_label(const Statement& st);

// Where a statement stands when the planner asks the table about it.
enum class RulesScope {
  kStatement,         // a statement the session runs
  kUnprivilegedCode,  // DO / CALL / CREATE FUNCTION of a login that reads nothing protected
  kFunctionBody,      // a statement of a LANGUAGE sql function's body: it runs later
};

// What the table alone says of a statement, before any relation is looked
// up: its class and, when the table denies it, the rule and the object the
// denial names. In order: a denied kind (kStatement, and kFunctionBody but
// for CREATE FUNCTION, whose language decides: anything but sql is opaque
// code there), a denied function, then COPY (to a file or program in a
// statement; any COPY in a function body).
struct RulesVerdict {
  StatementClass cls;
  const Rule* denied = nullptr;
  std::string object;
};
RulesVerdict check_rules(const Statement& st, RulesScope scope);

// A reference to one of pg_catalog's statistics relations (bare or
// pg_catalog-qualified; another schema's relation of that name is not).
bool names_statistics_relation(const RelationRef& ref);

}  // namespace kanon::rewriter
