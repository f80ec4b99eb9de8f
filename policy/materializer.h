// Materialized enforcement (policy key `mode: materialized`): kanon keeps a
// masked copy of the table in its own schema, kanon_masked, built with the
// same masks as the inline form. Each refresh builds a new table and swaps it
// in within one transaction (readers see the old copy until the commit), then
// grants SELECT on it (and USAGE on the schema) to every role holding SELECT
// on the base table. Rows changed after the refresh are not visible until the
// next one. Requires a service user that may create the schema (or owns it).
#pragma once

#include <string>

#include "policy/table_policy.h"
#include "policy/table_snapshot.h"

namespace pqxx {
class connection_base;
}

namespace kanon::policy {

inline constexpr const char* kMaterializedSchema = "kanon_masked";

// The copy's table name inside kanon_masked: the table name for schema
// public, otherwise "schema__table".
std::string materialized_table(const TablePolicy& policy);
// "kanon_masked"."<materialized_table>"
std::string materialized_name(const TablePolicy& policy);

// Builds and swaps in the copy; returns its qualified name. Throws pqxx errors
// (the transaction rolls back and the previous copy stays).
std::string materialize(pqxx::connection_base& conn, const TableSnapshot& snapshot);

}  // namespace kanon::policy
