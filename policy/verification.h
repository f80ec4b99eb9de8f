// Verification: what the backend itself says about the masked table. Runs
// the snapshot's compiled masks over every row of the table (or, once a
// materialized copy exists, reads the copy), groups by the masked
// quasi-identifiers and reports the smallest group (the real k, which drops
// below the policy's k when rows were deleted or changed since the last
// refresh), the number of groups, and the fraction of quasi-identifier cells
// released.
#pragma once

#include <cstdint>
#include <string>

#include "policy/table_snapshot.h"

namespace pqxx {
class connection_base;
}

namespace kanon::policy {

struct VerificationReport {
  uint64_t rows = 0;
  uint64_t groups = 0;
  uint64_t min_group = 0;        // 0 for an empty table; persons with `person:`
  uint64_t groups_below_k = 0;   // groups smaller than the policy's k (in persons, with `person:`)
  double released_fraction = 0;  // released QI cells / (rows x QIs)
};

// The SQL verify_table runs (for the docs and the CLI).
std::string verification_query(const TableSnapshot& snapshot);

// Throws pqxx errors.
VerificationReport verify_table(pqxx::connection_base& conn, const TableSnapshot& snapshot);

}  // namespace kanon::policy
