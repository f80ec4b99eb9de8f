#include "rewriter/statement_rules.h"

#include <array>
#include <utility>

#include "access/direct_access.h"
#include "base/text.h"

namespace kanon::rewriter {

namespace rules {
const Rule kSyntax{"syntax", "the statement does not parse", sqlstate::kSyntaxError};
const Rule kParserMismatch{"parser-mismatch", "kanon's parser cannot read this statement"};
const Rule kOpaqueCode{"opaque-code",
                       "restricted sessions may not run or create code kanon cannot inspect"};
const Rule kServerAccess{"server-access",
                         "restricted sessions may not change server-wide code or connections"};
const Rule kWriteProtected{"write-protected-table",
                           "restricted sessions may not write to, or write with rows of, a "
                           "protected table"};
const Rule kDdlProtected{"ddl-protected-table",
                         "restricted sessions may not run DDL that names or captures a protected "
                         "table"};
const Rule kMaintenanceScope{"maintenance-scope",
                             "restricted sessions may run VACUUM, ANALYZE, CLUSTER and REINDEX "
                             "only on the tables they name: without a list, or on an index, a "
                             "schema or the database, these run index and statistics "
                             "expressions of tables kanon did not check"};
const Rule kSystemColumn{"system-column",
                         "restricted sessions may not read system columns of protected tables"};
const Rule kStatisticsView{"statistics-view",
                           "restricted sessions may not read planner statistics, which hold "
                           "column values"};
const Rule kFunctionBodyProtected{"function-body-reaches-protected",
                                  "restricted sessions may not create a LANGUAGE sql function "
                                  "whose body names or reaches a protected table"};
const Rule kSqlTextFunction{"sql-text-function",
                            "restricted sessions may not call functions that run SQL text or "
                            "read a table by name"};
const Rule kServerFileFunction{"server-file-function",
                               "restricted sessions may not call functions that read server files "
                               "or the write-ahead log"};
const Rule kAdvisoryLock{"advisory-lock",
                         "restricted sessions may not take advisory locks: kanon's catalog "
                         "guard and catalog reader hold advisory locks of their own"};
const Rule kPreparedTransaction{"prepared-transaction",
                                "restricted sessions may not prepare a transaction for two-phase "
                                "commit: a prepared transaction keeps its locks, those of kanon's "
                                "catalog guard among them, after the session ends and until a "
                                "superuser commits or rolls it back"};
const Rule kSnapshotImport{"snapshot-import",
                           "restricted sessions may not import a snapshot (SET TRANSACTION "
                           "SNAPSHOT): its rows may be older than the release kanon masks them "
                           "with"};
const Rule kKanonInternal{"kanon-internal",
                          "restricted sessions may not read, write or lock kanon's own tables "
                          "(trees, snapshots, release history, audit trail)"};
const Rule kCopyFile{"copy-file",
                     "restricted sessions may only COPY to or from the client (STDOUT/STDIN)"};
const Rule kPolicyNotBuilt{"policy-not-built",
                           "the protected table has no built policy yet, so nothing from it "
                           "can be released"};
const Rule kEventTrigger{"event-trigger",
                         "restricted sessions may not run DDL while an event trigger runs code "
                         "on it that reaches a protected table, or code kanon cannot analyse; "
                         "list its function under allowed_functions: if it reveals nothing"};
const Rule kMaskFunction{"mask-function",
                         "the protected table's masks call kanon_mask.released, and the catalog "
                         "no longer holds exactly the function kanon verified under that name"};
const Rule kTablesample{"tablesample-protected",
                        "TABLESAMPLE on a protected table is not supported"};
const Rule kUnsupportedReference{"unsupported-reference",
                                 "kanon cannot mask this reference to a protected table"};
const Rule kAmbiguousName{"ambiguous-protected-name",
                          "the unqualified name matches several protected tables and none is "
                          "on the search_path"};
const Rule kDerivedRelation{"derived-relation",
                            "restricted sessions may not read a materialized view or other "
                            "relation derived from a protected table, which kanon cannot mask; "
                            "give it a policy of its own"};
const Rule kOpaqueRelation{"opaque-relation",
                           "restricted sessions may not read a foreign table, or a view over code "
                           "kanon cannot analyse"};
const Rule kReachingFunction{"function-reaches-protected",
                             "restricted sessions may not call a function that can read a "
                             "protected table unless its policy lists it under allowed_functions"};
const Rule kOpaqueFunction{"opaque-function",
                           "restricted sessions may not call a function whose body kanon cannot "
                           "analyse unless every policy lists it under allowed_functions"};
const Rule kAmbiguousObject{"ambiguous-name",
                            "the unqualified name matches several relations or functions and one "
                            "of them reaches a protected table; qualify it with its schema"};
const Rule kUnknownObject{"unknown-object",
                          "kanon's catalog does not know this object, so it cannot tell what it "
                          "reads"};
const Rule kTemporaryObject{"temporary-object",
                            "a temporary view, function or table that runs code is not in "
                            "kanon's catalog, and what it reads may have changed since it was "
                            "made; restricted sessions may read plain temporary tables only"};
const Rule kDefinition{"definition",
                       "restricted sessions may not define casts, operators, aggregates, types "
                       "or domains: PostgreSQL runs their functions wherever a statement "
                       "converts or compares values, which kanon cannot see"};
const Rule kExplainAnalyze{"explain-analyze",
                           "EXPLAIN ANALYZE of a statement that reads a protected table shows "
                           "the memory and buckets PostgreSQL sized from the raw columns' "
                           "statistics; EXPLAIN without ANALYZE shows its plan"};
const Rule kQuasiIdentifierIndex{
    "quasi-identifier-index",
    "an index of the protected table orders or filters rows by a quasi-identifier: a scan "
    "through it returns masked rows in the order of their raw values; an administrator must "
    "drop it or protect the table with mode: materialized"};
const Rule kCatalogNotRead{"catalog-not-read",
                           "kanon has not read this database's catalog yet, so it cannot tell what "
                           "the statement reads"};
const Rule kDatabaseNotProtected{"database-not-protected",
                                 "restricted sessions may only use a database that policies "
                                 "name or one listed under databases:"};
const Rule kReplicationConnection{"replication-connection",
                                  "restricted sessions may not open replication connections"};
const Rule kFunctionCall{"function-call-message",
                         "restricted sessions may only send fast-path function calls of the "
                         "large-object functions"};
const Rule kStandardConformingStrings{"standard-conforming-strings",
                                      "restricted sessions may only send string constants with "
                                      "backslashes that kanon can spell as E'...' constants, "
                                      "which read alike under any standard_conforming_strings"};
const Rule kClientEncoding{"client-encoding",
                           "restricted sessions may send non-ASCII statement text only in a "
                           "client encoding kanon reads as PostgreSQL does (UTF8, SQL_ASCII "
                           "holding UTF-8, LATIN1 to LATIN10, ISO_8859_5 to ISO_8859_8, WIN866, "
                           "WIN874, WIN1250 to WIN1258, KOI8R, KOI8U, EUC_JP, EUC_CN, EUC_KR, "
                           "EUC_TW) with server_encoding UTF8, and not while a change of "
                           "client_encoding may be under way"};
const Rule kCatalogGuard{"catalog-guard",
                         "kanon cannot find where to put the check that the catalog is still the "
                         "one it decided the statement with"};
const Rule kMalformedMessage{"malformed-message", "the message could not be decoded",
                             sqlstate::kProtocolViolation};
const Rule kStalePrepared{"stale-prepared-statement",
                          "the prepared statement or cursor was decided under an older policy "
                          "or catalog, or kanon could not decide it when it was prepared; "
                          "prepare or declare it again"};
const Rule kUnknownStatement{"unknown-prepared-statement",
                             "kanon holds no prepared statement of that name in this session "
                             "(none was prepared through kanon, or it was deallocated), so for "
                             "kanon it does not exist",
                             sqlstate::kInvalidSqlStatementName};
const Rule kUnknownCursor{"unknown-cursor",
                          "kanon holds no cursor or portal of that name in this session (none "
                          "was declared or bound through kanon, or it was closed or ended with "
                          "its transaction), so for kanon it does not exist",
                          sqlstate::kInvalidCursorName};
const Rule kAuditUnavailable{"audit-unavailable",
                             "restricted statements are refused while kanon cannot write its "
                             "audit trail"};
}  // namespace rules

std::string denial_message(const Rule& rule, std::string_view object) {
  std::string m = rule.sentence;
  if (!object.empty()) {
    m += ": ";
    m += object;
  }
  m += " (kanon rule ";
  m += rule.id;
  m += ')';
  return m;
}

namespace {

struct KindClass {
  StatementKind kind;
  StatementClass cls;
  std::string_view label;
};

// Statement kinds with a class other than kWrite.
constexpr std::array kKinds = {
    KindClass{StatementKind::kSelect, StatementClass::kQuery, "SELECT"},
    KindClass{StatementKind::kExplain, StatementClass::kWrapper, "EXPLAIN"},
    KindClass{StatementKind::kPrepare, StatementClass::kWrapper, "PREPARE"},
    KindClass{StatementKind::kDeclareCursor, StatementClass::kWrapper, "DECLARE CURSOR"},
    KindClass{StatementKind::kCopy, StatementClass::kCopy, "COPY"},
    KindClass{StatementKind::kVariableSet, StatementClass::kSession, "SET"},
    KindClass{StatementKind::kVariableShow, StatementClass::kSession, "SHOW"},
    KindClass{StatementKind::kTransaction, StatementClass::kSession, "transaction control"},
    KindClass{StatementKind::kExecute, StatementClass::kSession, "EXECUTE"},
    KindClass{StatementKind::kDeallocate, StatementClass::kSession, "DEALLOCATE"},
    KindClass{StatementKind::kFetch, StatementClass::kSession, "FETCH"},
    KindClass{StatementKind::kClosePortal, StatementClass::kSession, "CLOSE"},
    KindClass{StatementKind::kListen, StatementClass::kSession, "LISTEN"},
    KindClass{StatementKind::kUnlisten, StatementClass::kSession, "UNLISTEN"},
    KindClass{StatementKind::kNotify, StatementClass::kSession, "NOTIFY"},
    KindClass{StatementKind::kDiscard, StatementClass::kSession, "DISCARD"},
    KindClass{StatementKind::kConstraintsSet, StatementClass::kSession, "SET CONSTRAINTS"},
    // Code whose body kanon cannot see, and ways to reach the data as
    // someone else (foreign servers, subscriptions) or change the server.
    KindClass{StatementKind::kDo, StatementClass::kDenied, "DO"},
    KindClass{StatementKind::kCreateFunction, StatementClass::kDenied, "CREATE FUNCTION/PROCEDURE"},
    KindClass{StatementKind::kCall, StatementClass::kDenied, "CALL"},
    KindClass{StatementKind::kCreatePLang, StatementClass::kDenied, "CREATE LANGUAGE"},
    KindClass{StatementKind::kCreateEventTrig, StatementClass::kDenied, "CREATE EVENT TRIGGER"},
    KindClass{StatementKind::kLoad, StatementClass::kDenied, "LOAD"},
    // Definitions whose functions PostgreSQL runs where a statement converts
    // or compares values (casts, operators, domains' checks, aggregates):
    // kanon sees no name of them in the statement (rules::kDefinition).
    KindClass{StatementKind::kDefine, StatementClass::kDenied,
              "CREATE AGGREGATE/OPERATOR/TYPE/COLLATION"},
    KindClass{StatementKind::kCreateCast, StatementClass::kDenied, "CREATE CAST"},
    KindClass{StatementKind::kCreateDomain, StatementClass::kDenied, "CREATE DOMAIN"},
    KindClass{StatementKind::kCreateRange, StatementClass::kDenied, "CREATE TYPE AS RANGE"},
    KindClass{StatementKind::kCreateOpClass, StatementClass::kDenied, "CREATE OPERATOR CLASS"},
    KindClass{StatementKind::kCreateOpFamily, StatementClass::kDenied, "CREATE OPERATOR FAMILY"},
    KindClass{StatementKind::kAlterOpFamily, StatementClass::kDenied, "ALTER OPERATOR FAMILY"},
    KindClass{StatementKind::kCreateConversion, StatementClass::kDenied, "CREATE CONVERSION"},
    KindClass{StatementKind::kCreateTransform, StatementClass::kDenied, "CREATE TRANSFORM"},
    KindClass{StatementKind::kAlterOperator, StatementClass::kDenied, "ALTER OPERATOR"},
    KindClass{StatementKind::kAlterType, StatementClass::kDenied, "ALTER TYPE"},
    KindClass{StatementKind::kAlterDomain, StatementClass::kDenied, "ALTER DOMAIN"},
    KindClass{StatementKind::kAlterSystem, StatementClass::kDenied, "ALTER SYSTEM"},
    KindClass{StatementKind::kCreateExtension, StatementClass::kDenied, "CREATE EXTENSION"},
    KindClass{StatementKind::kAlterExtension, StatementClass::kDenied, "ALTER EXTENSION"},
    KindClass{StatementKind::kAlterExtensionContents, StatementClass::kDenied, "ALTER EXTENSION"},
    KindClass{StatementKind::kCreateForeignServer, StatementClass::kDenied, "CREATE SERVER"},
    KindClass{StatementKind::kAlterForeignServer, StatementClass::kDenied, "ALTER SERVER"},
    KindClass{StatementKind::kCreateUserMapping, StatementClass::kDenied, "CREATE USER MAPPING"},
    KindClass{StatementKind::kAlterUserMapping, StatementClass::kDenied, "ALTER USER MAPPING"},
    KindClass{StatementKind::kCreateForeignTable, StatementClass::kDenied, "CREATE FOREIGN TABLE"},
    KindClass{StatementKind::kImportForeignSchema, StatementClass::kDenied,
              "IMPORT FOREIGN SCHEMA"},
    KindClass{StatementKind::kCreateSubscription, StatementClass::kDenied, "CREATE SUBSCRIPTION"},
    KindClass{StatementKind::kAlterSubscription, StatementClass::kDenied, "ALTER SUBSCRIPTION"},
    KindClass{StatementKind::kCreatePublication, StatementClass::kDenied, "CREATE PUBLICATION"},
    KindClass{StatementKind::kAlterPublication, StatementClass::kDenied, "ALTER PUBLICATION"},
};

// Labels for common kWrite kinds (messages only).
constexpr std::array<std::pair<StatementKind, std::string_view>, 12> kWriteLabels = {{
    {StatementKind::kInsert, "INSERT"},
    {StatementKind::kUpdate, "UPDATE"},
    {StatementKind::kDelete, "DELETE"},
    {StatementKind::kMerge, "MERGE"},
    {StatementKind::kTruncate, "TRUNCATE"},
    {StatementKind::kCreateTableAs, "CREATE TABLE AS / MATERIALIZED VIEW"},
    {StatementKind::kView, "CREATE VIEW"},
    {StatementKind::kRule, "CREATE RULE"},
    {StatementKind::kCreateTrig, "CREATE TRIGGER"},
    {StatementKind::kCreatePolicy, "CREATE POLICY"},
    {StatementKind::kCreateTable, "CREATE TABLE"},
    {StatementKind::kDrop, "DROP"},
}};

struct DeniedFunction {
  std::string_view name;
  bool prefix;  // matches every name that starts with `name`
  const Rule* rule;
};

// Functions a restricted session may never call because they take SQL text,
// a cursor or a table/schema/database by name and return its rows. Those
// that read server files, large-object files or the write-ahead log are
// access/direct_access.h's (rules::kServerFileFunction).
constexpr std::array kDeniedFunctions = {
    // SQL text / cursors / tables by name -> XML (PostgreSQL core)
    DeniedFunction{"query_to_xml", true, &rules::kSqlTextFunction},  // _and_xmlschema too
    DeniedFunction{"query_to_xmlschema", false, &rules::kSqlTextFunction},
    DeniedFunction{"cursor_to_xml", true, &rules::kSqlTextFunction},  // cursor_to_xmlschema
    DeniedFunction{"table_to_xml", true, &rules::kSqlTextFunction},
    DeniedFunction{"schema_to_xml", true, &rules::kSqlTextFunction},
    DeniedFunction{"database_to_xml", true, &rules::kSqlTextFunction},
    // Text search statistics over a query text; ts_rewrite(query, text).
    DeniedFunction{"ts_stat", false, &rules::kSqlTextFunction},
    DeniedFunction{"ts_rewrite", false, &rules::kSqlTextFunction},
    // Extensions that run SQL text or read tables by name.
    DeniedFunction{"dblink", true, &rules::kSqlTextFunction},
    DeniedFunction{"crosstab", true, &rules::kSqlTextFunction},  // tablefunc
    DeniedFunction{"connectby", false, &rules::kSqlTextFunction},
    DeniedFunction{"xpath_table", false, &rules::kSqlTextFunction},   // xml2
    DeniedFunction{"get_raw_page", false, &rules::kSqlTextFunction},  // pageinspect
    DeniedFunction{"heap_page_items", false, &rules::kSqlTextFunction},
    DeniedFunction{"heap_page_item_attrs", false, &rules::kSqlTextFunction},
    DeniedFunction{"tuple_data_split", false, &rules::kSqlTextFunction},
    DeniedFunction{"bt_page_items", false, &rules::kSqlTextFunction},
    DeniedFunction{"pgrowlocks", false, &rules::kSqlTextFunction},
    // A table by name and a row's physical address: the row's newest
    // version (what the system-column rule keeps ctid from telling).
    DeniedFunction{"currtid2", false, &rules::kSqlTextFunction},
    // Advisory locks: one key space per database, no privilege needed. A
    // session holding kanon's keys (catalog/catalog_watch.h) would stall
    // every DDL, kanon's catalog reader or other sessions' guarded
    // statements. Releasing (pg_advisory_unlock*) frees only the session's
    // own locks and stays allowed.
    DeniedFunction{"pg_advisory_lock", true, &rules::kAdvisoryLock},       // _shared too
    DeniedFunction{"pg_advisory_xact_lock", true, &rules::kAdvisoryLock},  // _shared too
    DeniedFunction{"pg_try_advisory_", true, &rules::kAdvisoryLock},       // the four try_ forms
};

// The large-object functions libpq's lo_* calls reach through the fast path
// (psql's \lo_import, \lo_export and \lo_unlink run them on the client). They
// read and write pg_largeobject only, never a table. lo_import/lo_export (OIDs
// 764, 765, 767: server files) are not among them.
constexpr std::array<FastPathFunction, 13> kFastPathFunctions = {{
    {715, "lo_create"},
    {952, "lo_open"},
    {953, "lo_close"},
    {954, "loread"},
    {955, "lowrite"},
    {956, "lo_lseek"},
    {957, "lo_creat"},
    {958, "lo_tell"},
    {964, "lo_unlink"},
    {1004, "lo_truncate"},
    {3170, "lo_lseek64"},
    {3171, "lo_tell64"},
    {3172, "lo_truncate64"},
}};

constexpr std::array<std::string_view, 5> kStatistics = {
    "pg_stats", "pg_statistic", "pg_stats_ext", "pg_stats_ext_exprs", "pg_statistic_ext_data"};

constexpr std::array<std::string_view, 6> kSystemColumns = {"ctid", "xmin", "xmax",
                                                            "cmin", "cmax", "tableoid"};

}  // namespace

StatementClass classify_statement(StatementKind kind) {
  for (const auto& k : kKinds)
    if (k.kind == kind) return k.cls;
  return StatementClass::kWrite;
}

const Rule& denied_statement_rule(StatementKind kind) {
  if (kind == StatementKind::kDefine || kind == StatementKind::kCreateCast ||
      kind == StatementKind::kCreateDomain || kind == StatementKind::kCreateRange ||
      kind == StatementKind::kCreateOpClass || kind == StatementKind::kCreateOpFamily ||
      kind == StatementKind::kAlterOpFamily || kind == StatementKind::kCreateConversion ||
      kind == StatementKind::kCreateTransform || kind == StatementKind::kAlterOperator ||
      kind == StatementKind::kAlterType || kind == StatementKind::kAlterDomain)
    return rules::kDefinition;
  if (kind == StatementKind::kDo || kind == StatementKind::kCreateFunction ||
      kind == StatementKind::kCall || kind == StatementKind::kCreatePLang ||
      kind == StatementKind::kCreateEventTrig)
    return rules::kOpaqueCode;
  return rules::kServerAccess;
}

const Rule* denied_function(std::string_view name) {
  for (const auto& f : kDeniedFunctions)
    if (f.prefix ? name.starts_with(f.name) : name == f.name) return f.rule;
  if (access::function_named(name)) return &rules::kServerFileFunction;
  return nullptr;
}

std::span<const FastPathFunction> allowed_fast_path_functions() {
  return kFastPathFunctions;
}

const char* allowed_fast_path_function(uint32_t oid) {
  for (const auto& f : kFastPathFunctions)
    if (f.oid == oid) return f.name;
  return nullptr;
}

bool is_statistics_relation(std::string_view name) {
  for (const auto& s : kStatistics)
    if (s == name) return true;
  return false;
}

bool is_filtered_statistics_view(std::string_view name) {
  return name == "pg_stats" || name == "pg_stats_ext" || name == "pg_stats_ext_exprs";
}

std::string statistics_filter(std::string_view name) {
  // pg_my_temp_schema() is 0 until the session creates a temporary object:
  // then the subquery is NULL and no row passes.
  std::string s = "(SELECT * FROM pg_catalog.";
  s += name;
  s += " WHERE schemaname OPERATOR(pg_catalog.=) (SELECT nspname FROM pg_catalog.pg_namespace "
       "WHERE oid OPERATOR(pg_catalog.=) pg_catalog.pg_my_temp_schema()))";
  return s;
}

bool is_system_column(std::string_view name) {
  for (const auto& s : kSystemColumns)
    if (s == name) return true;
  return false;
}

std::string statement_label(const Statement& st) {
  for (const auto& k : kKinds)
    if (k.kind == st.kind) return std::string(k.label);
  for (const auto& [k, label] : kWriteLabels)
    if (k == st.kind) return std::string(label);
  return st.node;
}

RulesVerdict check_rules(const Statement& st, RulesScope scope) {
  RulesVerdict v{classify_statement(st.kind)};
  const auto deny = [&](const Rule& rule, std::string object) {
    v.denied = &rule;
    v.object = std::move(object);
    return v;
  };
  const bool create_function = st.kind == StatementKind::kCreateFunction;
  if (v.cls == StatementClass::kDenied &&
      (scope == RulesScope::kStatement || (scope == RulesScope::kFunctionBody && !create_function)))
    return deny(denied_statement_rule(st.kind), statement_label(st));
  if (scope == RulesScope::kFunctionBody && create_function && st.function_language != "sql")
    return deny(rules::kOpaqueCode, statement_label(st));
  if (st.kind == StatementKind::kVariableSet && base::lower(st.setting) == "transaction snapshot")
    return deny(rules::kSnapshotImport, "SET TRANSACTION SNAPSHOT");
  if (st.kind == StatementKind::kTransaction && st.subkind == "TRANS_STMT_PREPARE")
    return deny(rules::kPreparedTransaction, "PREPARE TRANSACTION");
  for (const auto& f : st.functions)
    if (const Rule* rule = denied_function(f.name)) return deny(*rule, f.name);
  if (v.cls == StatementClass::kCopy &&
      ((scope == RulesScope::kStatement && st.copy_to_file) || scope == RulesScope::kFunctionBody))
    return deny(rules::kCopyFile, "COPY");
  return v;
}

bool names_statistics_relation(const RelationRef& ref) {
  return (ref.schema.empty() || ref.schema == "pg_catalog") && is_statistics_relation(ref.name);
}

}  // namespace kanon::rewriter
