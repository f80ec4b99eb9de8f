// The stored form of a TableSnapshot (shared snapshots, docs/operations.md):
// what one replica built, written to kanon.snapshots so that every replica
// serves it and a restart serves it at once.
//
// Only data is stored, never SQL: the tree (its split values are quoted as
// literals when masks are compiled), the predicate form of each
// quasi-identifier, figures and the release summary. Decoding re-reads the
// table's columns from the catalog and compiles predicates and masks with
// kanon's own code, so a row written into kanon.snapshots by someone else
// can at most change what the tree releases, never inject SQL.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "policy/encoded_table.h"
#include "policy/fingerprint.h"
#include "policy/table_snapshot.h"

namespace kanon::store {

// Stored snapshots of another format are ignored (rebuilt).
inline constexpr int kSnapshotFormat = 1;

// JSON text of everything decode_snapshot needs.
std::string encode_snapshot(const policy::TableSnapshot& snapshot);

// The snapshot `body` describes, for `policy`, with `info` read from the
// catalog now. Throws std::runtime_error naming what is wrong when the body
// is malformed, of another format, or does not fit the policy or the table.
std::shared_ptr<policy::TableSnapshot> decode_snapshot(const std::string& body,
                                                       const policy::TablePolicy& policy,
                                                       const policy::TableInfo& info);

}  // namespace kanon::store
