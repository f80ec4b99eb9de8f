// Fingerprints of a policy and of the rows a tree was built from, as 16 hex
// digits (FNV-1a): replicas compare them before serving each other's
// snapshots (shared_snapshots), and each build records its data's.
#pragma once

#include <string>

#include "policy/encoded_table.h"
#include "policy/table_policy.h"

namespace kanon::policy {

// What about `policy` shapes its snapshot (table, k, l, max_nodes,
// attributes, identifiers, mode, indexes, grants, key), as 16 hex digits: two
// replicas serve each other's snapshots only when their hashes are equal.
// Not covered: exempt roles, refresh interval, export options.
std::string policy_hash(const TablePolicy& policy);

// The loaded rows (distinct tuples and their counts, in any order) as 16
// hex digits: equal for equal data.
std::string data_fingerprint(const EncodedTable& table);

}  // namespace kanon::policy
