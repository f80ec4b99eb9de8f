// Loading a protected table's quasi-identifiers from PostgreSQL into an
// EncodedTable, over kanon's own service connection.
//
// The session is pinned first (pin_session_settings) so that the text
// PostgreSQL prints for each value is canonical and, used as a typed literal
// in a release predicate, compares equal to the stored value whatever the
// client session's settings: DateStyle ISO, IntervalStyle postgres, TimeZone
// UTC, extra_float_digits 3, bytea_output hex, UTF8. numeric values are
// loaded through trim_scale() so 1.50 and 1.5 are one value, as they are for
// the `=` operator. NULLs stay NULL.
//
// publish/ reads live tables for EXPORT the same way (pinned settings,
// loaded_expression(), copy_rows()), so both see the same text for a value.
//
// Errors: pqxx exceptions (connection, permissions, SQL) pass through; a
// constant for a direct identifier that is not valid for the column's type
// throws ConfigError naming the policy file and key.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/table_catalog.h"
#include "policy/encoded_table.h"
#include "policy/table_policy.h"

namespace pqxx {
class connection_base;
class transaction_base;
}  // namespace pqxx

namespace kanon::store {

using base::ConfigError;

struct LoadOptions {
  // On (default): COPY (SELECT qis, count(*) ... GROUP BY qis), so only
  // distinct rows travel and are parsed (ADULT x 32: 18k lines instead of
  // 965k). Off: COPY (SELECT qis FROM t), one line per row. bench/policy
  // measures both.
  bool aggregate = true;
  // The aggregated COPY's own settings, SET LOCAL in its transaction (the
  // figures are in bench/README.md, "policy_bench"): work_mem 256MB and
  // enable_sort off, so PostgreSQL hashes even where the planner expects far
  // more groups than the distinct rows there are (a sort of every row was
  // 3-4x slower); jit off (it saved nothing measurable); and, for tables of
  // at least `parallel_bytes` (pg_relation_size; a partitioned parent counts
  // as 0), parallel_tuple_cost 0, which lets the planner hand the scan and
  // partial aggregates to parallel workers (1.3-2.9x faster wall at
  // ADULT x 1024 on two shared cores, for 0-40% more CPU; at ADULT x 32 twice
  // the CPU for no faster wall). Off: work_mem only, as before.
  bool tuned = true;
  uint64_t parallel_bytes = uint64_t{1} << 30;
};

// The text of a row's person (policy `person:`): "col"::text, or
// ROW("a", "b")::text for several columns.
std::string person_expression(const policy::TablePolicy& policy);

void pin_session_settings(pqxx::connection_base& conn);

// The SELECT-list expression a column is loaded through: its released form
// (policy::ColumnInfo::released, e.g. trim_scale() for numeric, lower() for
// citext, 0 for -0), so values its `=` finds equal are one value in the tree,
// as they are in the masks' tests; the quoted column otherwise.
std::string loaded_expression(const policy::ColumnInfo& column);

// One row of copy_rows(): the fields, nullopt for NULL; the views are valid
// during the call only. The callee may change the vector.
using CopyRowHandler = std::function<void(std::vector<std::optional<std::string_view>>& fields)>;

// Runs COPY (`query`) TO STDOUT in `tx` and hands every row to `on_row`.
// Throws std::runtime_error naming `source` when a line is not `width` fields.
void copy_rows(pqxx::transaction_base& tx, const std::string& query, size_t width,
               const std::string& source, const CopyRowHandler& on_row);

// The SELECT whose output is copied (exposed for tests and the docs).
std::string load_query(const policy::TablePolicy& policy, const policy::TableInfo& info,
                       const LoadOptions& options);

// The SET LOCAL statements load_table runs before an aggregated COPY
// (LoadOptions::tuned; reads the table's size in `tx`).
std::string aggregate_settings(pqxx::transaction_base& tx, const policy::TablePolicy& policy,
                               const LoadOptions& options);

policy::EncodedTable load_table(pqxx::connection_base& conn, const policy::TablePolicy& policy,
                                const policy::TableInfo& info, const LoadOptions& options = {});

// Checks that every direct-identifier constant is a valid value of its
// column's type (by casting it on the backend).
void check_constants(pqxx::connection_base& conn, const policy::TablePolicy& policy,
                     const policy::TableInfo& info);

// Splits one line of COPY text format into fields (tab separated, \N = NULL,
// backslash escapes decoded). `storage` receives the decoded text; the views
// in `fields` point into it. Returns false on a malformed line.
bool parse_copy_line(std::string_view line, std::string& storage,
                     std::vector<std::optional<std::string_view>>& fields);

}  // namespace kanon::store
