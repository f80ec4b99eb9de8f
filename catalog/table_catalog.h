// What the backend's catalog says about a protected table: its columns and
// types, children and OID (policy/table_info.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/config_error.h"
#include "policy/table_info.h"
#include "policy/table_policy.h"

namespace pqxx {
class connection_base;
}

namespace kanon::catalog {

using base::ConfigError;

// Reads the columns of schema.table. Throws ConfigError (naming the policy
// entry) when the table does not exist; pqxx errors pass through.
policy::TableInfo read_table_info(pqxx::connection_base& conn, const policy::TablePolicy& policy);

}  // namespace kanon::catalog
