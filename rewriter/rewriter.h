// Rewriter: what a restricted session's SQL becomes before it reaches the
// backend. The contract between proxy/ (which calls it for every Query and
// Parse message of a restricted session) and rewriter/ (which owns SQL).
//
//   kPass      the statement touches no protected table: send it unchanged.
//   kRewritten every protected reference was replaced by a masked derived
//              table (or the materialized copy): send `sql` instead.
//   kDenied    not provably safe: answer ErrorResponse(sqlstate, message),
//              send nothing to the backend. `rule` and `object` name why.
//
// Fail closed: anything the rewriter cannot classify is kDenied with 42501.
// Text that does not parse is kDenied with rule `syntax` (42601, libpg_query's
// message); the proxy then lets PostgreSQL itself parse the text, so clients
// get the server's own error (or `parser-mismatch` when the server reads it).
//
// Thread-safety: rewrite() may be called from any thread concurrently; the
// cache is internally synchronized.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "rewriter/encoding_effect.h"
#include "rewriter/statement_rules.h"
#include "store/policy_store.h"

namespace kanon::rewriter {

// Everything a rewrite depends on besides the policy snapshot (whose version
// and identity complete it): planning reads it, and the rewrite cache keys on
// every field, so two sessions share a cached rewrite only when they would
// have planned it alike.
struct PlanContext {
  std::string search_path;  // as last reported by the backend (ParameterStatus)
  bool exempt = false;      // exempt sessions are never rewritten (always kPass)
  // "schema.table" of the protected tables whose policy exempts this login
  // (a policy's `exempt:` names the user or a role it belongs to): the
  // session reads and writes them as if they were not protected.
  std::vector<std::string> exempt_tables;  // sorted
  std::string role;                        // the login
  std::string database;                    // the session's database
  // False in a database kanon does not protect (server config `databases:`):
  // no table there is protected and no catalog is read, so only the
  // statement rules apply (code, server access, statistics, files).
  bool protected_database = true;
  // PostgreSQL itself keeps this login from reading any protected table
  // (the proxy reads it from the protected database's grants at session
  // start, proxy/role_directory.h): no SELECT on a protected table or on a
  // relation that reaches one, no right to write a relation whose writing
  // reaches one, no EXECUTE on a SECURITY DEFINER function that reaches one
  // or is opaque, no superuser, CREATEROLE, BYPASSRLS, REPLICATION or
  // server-file role, through any role it belongs to. Then code kanon cannot
  // inspect runs with privileges that cannot read protected data: DO, CALL,
  // CREATE FUNCTION in any language the server lets it use, and calls of
  // opaque functions are allowed.
  bool reads_nothing_protected = false;
  // The server is busy (the proxy counts the statements running through it,
  // server config serial_masks_at): a statement that evaluates the function's
  // masks runs without parallel workers too, as SQL masks always do. With
  // every core taken, workers add CPU (their start-up, each decoding the
  // masks again, partial aggregates) and take it from other statements.
  bool serial_masks = false;
  // Names the caller has just confirmed no persistent relation or function
  // has (a kLookup answer, checked against the database): the session's own
  // temporary objects or missing ones. Sorted. A rewrite that used them is
  // not cached: it holds only until the catalog changes.
  std::vector<std::string> absent_names;
  // The caller has just confirmed that the event triggers which fire now are
  // those of the snapshot's catalog (a kLookup answer with `event_triggers`).
  bool event_triggers_confirmed = false;
  // An extended-protocol Parse's text: the parameter types it declares (0,
  // or none past the end: unspecified). Only then is a restriction compared
  // with a parameter (`age = $1`) decided on raw values first
  // (restriction_filter.h); a simple Query's PREPARE types its own.
  bool parse_message = false;
  std::vector<uint32_t> parameter_types;
};

// kLookup: the statement names relations or functions the snapshot's catalog
// does not know (created since it was read, temporary, or missing). The caller
// checks `unknown` against the database: refreshes the catalog when one of
// them now exists, or passes them back in PlanContext::absent_names.
enum class Verdict { kPass, kRewritten, kDenied, kLookup };

struct RewriteResult {
  Verdict verdict = Verdict::kPass;
  std::string sql;           // kRewritten: the text to send instead
  std::string sqlstate;      // kDenied: the rule's SQLSTATE (42501; 42601 for syntax)
  std::string message;       // kDenied: one sentence naming the rule and the object
  std::string rule;          // kDenied: short rule id, e.g. "write-protected-table"
  std::string object;        // kDenied: e.g. "public.people" or "pg_stats"
  uint64_t fingerprint = 0;  // statement fingerprint (no literal values), for logs
  bool cache_hit = false;
  int position = 0;  // kDenied 42601: PostgreSQL's error position (1-based) for the P field
  std::vector<std::string> unknown;  // kLookup: the names to look up (sorted, unique)
  // kLookup: those of `unknown` a statement other than DROP names; a
  // temporary object of one of them that runs code denies the statement.
  std::vector<std::string> unknown_used;
  // kLookup: the statement runs DDL (or code that may), which fires event
  // triggers: the caller confirms that those firing now are the catalog's
  // (creating one fires none, so the catalog watch never hears of it),
  // re-reads the catalog if not, and decides again with
  // PlanContext::event_triggers_confirmed.
  bool event_triggers = false;
  // Not denied: relation names it uses without a schema, its own and those
  // of the SQL function bodies it runs (RewritePlan::shadowable); once the
  // session may have made a temporary object (`defines` of an earlier
  // statement), the proxy denies the statement when a temporary object of
  // one of them runs code (rules::kTemporaryObject).
  std::vector<std::string> shadowable;
  // Not denied: it may create, change or drop an object, a temporary one
  // among them (RewritePlan::defines).
  bool defines = false;
  // kRewritten: "schema.table" of the protected tables the masks read (sorted, unique).
  std::vector<std::string> tables;
  // kPass, kRewritten: what running it may do to the session's client_encoding.
  EncodingEffect encoding_effect;
  // kRewritten: the catalog generation the statement's guard holds it to
  // (catalog_guard.h); 0 when it carries none. A statement kanon only
  // guarded is kRewritten with `masked` false.
  int64_t guard_generation = 0;
  bool masked = false;  // kRewritten: some protected reference was replaced
  // Not denied: it may call a user-defined function whose body PostgreSQL
  // reads when it calls it (RewritePlan::late_code).
  bool late_code = false;
  // Not denied: every statement is transaction control (BEGIN, COMMIT,
  // ROLLBACK [TO SAVEPOINT], SAVEPOINT and the like), or there is none: it
  // runs no code of the catalog's.
  bool transaction_control = false;
  // Not denied: the statements before the first that is more than
  // transaction control, and where that one begins in the text sent (bytes,
  // which are its characters: 0 when a byte before it is not ASCII). Both 0
  // when the first statement is more. kReadInvalidations goes there, so
  // that ROLLBACK TO SAVEPOINT leaves an aborted block first.
  int leading_control = 0;
  size_t leading_control_bytes = 0;
  // Set by the proxy's session, never by the rewriter: a Query to send
  // after kReadInvalidations in the same text (a Parse: after it as
  // messages of kanon's own), in a transaction whose catalog caches may be
  // older than the catalog it was decided with; the generation of that
  // catalog, which the caches reach once kReadInvalidations ran
  // (proxy/session.cc, Session::read_before). 0: sent as it is.
  int64_t read_invalidations_first = 0;
};

// A statement that makes PostgreSQL read the catalog invalidations other
// sessions' DDL queued (a lock on a database object taken anew reads them:
// LockDatabaseObject) and returns no row; sent first in the same Query.
inline constexpr std::string_view kReadInvalidations =
    "SELECT 1 WHERE pg_catalog.pg_get_object_address('schema', '{pg_catalog}', '{}') IS NULL;\n";

// A kDenied result for `rule`, its message built by denial_message().
RewriteResult make_denial(const Rule& rule, std::string object);

// The denial for a kLookup answer the caller could not settle (a name still
// unknown, event triggers not confirmed): fail closed. Keeps the fingerprint.
RewriteResult lookup_denial(const RewriteResult& lookup);

struct CacheStats {
  uint64_t hits = 0;  // shape_hits among them
  uint64_t misses = 0;
  uint64_t entries = 0;
  // Texts new to the cache answered by their shape's decision (literal_shape.h).
  uint64_t shape_hits = 0;
};

class Rewriter {
 public:
  explicit Rewriter(size_t cache_capacity = 4096);
  ~Rewriter();
  Rewriter(const Rewriter&) = delete;
  Rewriter& operator=(const Rewriter&) = delete;

  // `sql` may hold several statements (simple protocol); each is classified
  // and rewritten; one denied statement denies the whole string.
  // REQUIRES: a PolicySnapshot's content never changes while it has the same
  // version (PolicyStore guarantees it); results are cached by version.
  RewriteResult rewrite(std::string_view sql, const store::PolicySnapshot& policies,
                        const PlanContext& context);

  // The catalog of the snapshot (what its objects reach), built once per
  // snapshot version (and store); null when the snapshot has none.
  std::shared_ptr<const class ObjectCatalog> catalog_for(const store::PolicySnapshot& policies);

  // Tables to treat as listed in every snapshot ("schema.table"), for tests
  // that plan with hand-made snapshots. A listed table that has no built
  // snapshot yet is denied when referenced (fail closed). A snapshot's own
  // `listed`, `tables` and `errors` count as listed without this call.
  void set_listed_tables(std::vector<std::string> tables);

  // Tables kanon writes for itself outside schema kanon ("schema.table": the
  // audit trail's, server config audit.table), in every database's catalog:
  // out of a restricted session's reach like kanon's own tables
  // (rules::kKanonInternal), and so is every view or function that reads or
  // writes them (ObjectCatalog). No analyst reads the others' statements or
  // deletes its own records.
  void set_internal_tables(std::vector<std::string> tables);

  // When set (the proxy), a snapshot without a catalog denies every statement
  // that names a relation or function that is not protected (fail closed).
  // Off by default, for tests that plan without a database.
  void set_require_catalog(bool require);

  CacheStats cache_stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kanon::rewriter
