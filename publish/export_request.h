// The EXPORT command and its settings:
//
//   EXPORT <table> [TO <schema.table> | TO '<path.csv>']
//          [WITH (k = 5, l = 2, suppression = 0.02, metric = loss,
//                 algorithm = flash|bfs|mondrian, choice = span|max-entropy|min-entropy,
//                 time_limit = 30, hierarchies = '<dir>',
//                 "hierarchy.<column>" = '<file>', suppressed = drop|mask,
//                 report_dir = '<dir>', replace = true, grant = 'role, ...',
//                 risk_threshold = 0.2, population = '<schema.table>' | none)]
//
// parse_export_command() reads the text; resolve_settings() merges the WITH
// options over the policy's `export:` section. Both throw ExportError
// (SQLSTATE 42601 for syntax, 22023 for a bad value) naming the option.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/anonymizer.h"
#include "policy/table_policy.h"

namespace kanon::publish {

class ExportError : public std::runtime_error {
 public:
  ExportError(std::string state, const std::string& message)
      : std::runtime_error(message), sqlstate(std::move(state)) {}
  std::string sqlstate;
};

struct ExportRequest {
  std::string source;                       // as written: "schema.table" or a bare name
  std::string target_table;                 // "schema.table"; empty: see csv_path / default
  std::string csv_path;                     // TO '<path.csv>'
  std::map<std::string, std::string> with;  // option (lower case) -> value
  std::string command;                      // the text, for the report
  // Tables an export may not write, "schema.table" unquoted (the caller's:
  // every protected table, the audit trail's); schemas kanon and kanon_mask
  // never.
  std::vector<std::string> reserved_targets;
};

ExportRequest parse_export_command(const std::string& text);

struct ExportSettings {
  uint32_t k = 2;
  std::optional<uint32_t> l;  // distinct l-diversity on the policy's sensitive attribute
  double suppression = 0;
  engine::MetricKind metric = engine::MetricKind::kLoss;
  engine::Algorithm algorithm = engine::Algorithm::kFlash;
  engine::MondrianChoice choice = engine::MondrianChoice::kSpan;  // mondrian: cut attribute
  double time_limit_s = 0;
  std::map<std::string, std::string> hierarchies;  // quasi-identifier -> file
  std::string hierarchy_dir;
  bool drop_suppressed = true;  // false: suppressed rows keep '*' in their quasi-identifiers
  bool replace = false;         // drop an existing target table first
  // Search and report only: no table, no file, no kanon.exports row (what
  // the export would cost, before it is made).
  bool dry_run = false;
  std::vector<std::string> grant;  // roles given SELECT on the published table
  std::string report_dir;
  // The report's risk section (docs/risk.md): the policy's `risk:` unless
  // the options say otherwise; population = none drops the policy's table.
  double risk_threshold = 0.5;
  std::string population_schema, population_table;  // empty: no population
  std::string target_schema, target_table;          // empty when the target is a CSV file
  std::string csv_path;
};

ExportSettings resolve_settings(const ExportRequest& request, const policy::TablePolicy& policy);

// The hierarchy file of `column`: explicit setting, else in hierarchy_dir
// `<column>.csv|.yaml|.yml` or `*hierarchy_<column>.csv`; empty when none
// (the column then gets the two-level hierarchy value -> '*').
std::string hierarchy_file(const ExportSettings& settings, const std::string& column);

}  // namespace kanon::publish
