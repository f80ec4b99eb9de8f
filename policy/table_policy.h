// TablePolicy: what kanon enforces on one protected table, as read from a
// policy file (see docs/policy.md for the format and every key).
//
// Every field that names a column remembers where it was written (file, line,
// key), so checks made later against the catalog still point at the YAML.
// Plain values; safe to copy and to share read-only between threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kanon::policy {

// Where a value was written: "file:line: key".
struct SourceRef {
  std::string file;
  int line = 0;
  std::string key;
};

enum class EnforcementMode { kInline, kMaterialized, kView };

// `grants:` (mode: view only): whether kanon manages the restricted roles'
// rights in PostgreSQL itself (see docs/security.md, defense in depth).
enum class GrantPolicy { kNone, kManage };

struct DirectIdentifier {
  std::string column;
  std::optional<std::string> constant;  // nullopt: masked as a typed NULL
  SourceRef where;
};

struct SensitiveAttribute {
  std::string column;
  uint32_t l = 2;  // distinct l-diversity required in every cohort
  SourceRef where;
};

// The `export:` section, handed to the offline engine.
struct ExportOptions {
  std::map<std::string, std::string> hierarchies;  // column -> file (resolved)
  double suppression = 0.0;                        // fraction of rows, 0..1
  std::string metric = "loss";                     // engine::parse_metric() reads it
  std::string algorithm = "flash";                 // engine::parse_algorithm() reads it
  // Roles given SELECT on the published table: the policy's word that they
  // may read the anonymized copy (through kanon it is not masked).
  std::vector<std::string> grant;
};

// `risk:` how VERIFY and EXPORT report re-identification risk (docs/risk.md).
struct RiskOptions {
  std::optional<double> threshold;  // in (0, 1]; unset: 1/k
  // A table in the same database with the quasi-identifier columns, one row
  // per person of the population the table was drawn from; empty: none (no
  // journalist figures, the marketer's from the release alone).
  std::string population_schema, population_table;
  SourceRef where;

  bool has_population() const { return !population_table.empty(); }
  std::string population() const { return population_schema + "." + population_table; }
};

enum class MaskEvaluator { kSql, kFunction, kAuto };

struct TablePolicy {
  // `database:` the database the table lives in; load_policies() fills an
  // unset one with backend.dbname, and it stays empty only when that is unset
  // too (the service account's libpq default). Trees, catalog and release
  // history are per database: the same schema.table in two databases are two
  // policies.
  std::string database;
  std::string schema;
  std::string table;
  uint32_t k = 2;
  std::vector<std::string> quasi_identifiers;  // policy order breaks ties in the tree
  std::vector<SourceRef> quasi_identifier_refs;
  std::vector<DirectIdentifier> direct_identifiers;
  std::optional<SensitiveAttribute> sensitive;
  std::vector<std::string> exempt;  // users or roles that see raw data
  std::chrono::milliseconds refresh{std::chrono::minutes(10)};
  uint32_t max_nodes = 4096;  // cap on tree nodes (leaves included)
  EnforcementMode mode = EnforcementMode::kInline;
  // `evaluator:` how the masks of mode inline and view test a row: kSql,
  // CASE expressions (nothing to install); kFunction, calls of
  // kanon_mask.released, the C function of maskfn/ a superuser installs in
  // the table's database (predicate_code.h); kAuto, kFunction when the build
  // finds that function as kFunction requires it, else kSql (and why, in
  // TableSnapshot::evaluator_fallback). A materialized copy is built with
  // the same masks.
  MaskEvaluator evaluator = MaskEvaluator::kSql;
  SourceRef evaluator_where;
  // mode: materialized only: columns of the copy that get an index each.
  std::vector<std::string> indexes;
  std::vector<SourceRef> index_refs;
  // mode: view only. kManage: every `grant_to` role gets SELECT on the masked
  // view (and USAGE on its schema) and loses SELECT on the base table.
  GrantPolicy grants = GrantPolicy::kNone;
  std::vector<std::string> grant_to;
  SourceRef grants_where;
  // `key:` the columns that identify a row across releases (history-aware
  // refresh, docs/security.md); empty: the primary key from the catalog, or
  // else every column that is neither a quasi-identifier nor a direct
  // identifier.
  std::vector<std::string> key;
  std::vector<SourceRef> key_refs;
  // `person:` the columns that name who a row belongs to: the tree, VERIFY
  // and the history count distinct persons instead of rows (a person whose
  // rows fall in several cohorts counts in each). Empty: every row is a
  // person of its own.
  std::vector<std::string> person;
  std::vector<SourceRef> person_refs;
  ExportOptions export_options;
  RiskOptions risk;
  // Functions ("schema.name") a restricted session may call although they
  // can read this table (their results are not masked): the policy's word
  // that they release nothing identifying. See docs/security.md.
  std::vector<std::string> allowed_functions;
  SourceRef where;  // the `table:` key of the entry

  // "schema.table" as written in policies (unquoted).
  std::string name() const { return schema + "." + table; }
  // The risk threshold: `risk.threshold`, else 1/k (records above it are in
  // classes below k).
  double risk_threshold() const { return risk.threshold.value_or(1.0 / k); }
};

const char* to_string(EnforcementMode mode);
const char* to_string(GrantPolicy grants);

}  // namespace kanon::policy
