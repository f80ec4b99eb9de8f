// Verification: what the backend itself says about the masked table. Runs
// the snapshot's compiled masks over every row of the table (or, once a
// materialized copy exists, reads the copy), groups by the masked
// quasi-identifiers and reports the smallest group (the real k, which drops
// below the policy's k when rows were deleted or changed since the last
// refresh), the number of groups, the fraction of quasi-identifier cells
// released (in all and per quasi-identifier), the distribution of class
// sizes and the re-identification risk of the classes
// (reidentification_risk.h; docs/risk.md). With `risk.population` the same
// masks run over the population table, grouped the same way, and each
// released class is matched with its population class (journalist and
// marketer risk).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "policy/reidentification_risk.h"
#include "policy/table_snapshot.h"

namespace pqxx {
class connection_base;
}

namespace kanon::store {

// The released classes of one size (and one population size).
struct ClassSizeCount {
  uint64_t size = 0;        // rows, or distinct persons with `person:`
  uint64_t population = 0;  // rows of the population class; 0 without a population
  uint64_t classes = 0;
  uint64_t rows = 0;  // rows of these classes (== size x classes without `person:`)
};

// One quasi-identifier: how many of the table's rows show it unmasked.
struct ColumnRelease {
  std::string column;
  uint64_t released_rows = 0;  // masked value not NULL
};

struct VerificationReport {
  uint64_t rows = 0;
  uint64_t groups = 0;
  uint64_t min_group = 0;        // 0 for an empty table; persons with `person:`
  uint64_t groups_below_k = 0;   // groups smaller than the policy's k (in persons, with `person:`)
  double released_fraction = 0;  // released QI cells / (rows x QIs)
  std::vector<ClassSizeCount> class_sizes;  // by size, then population size
  std::vector<ColumnRelease> columns;       // policy order
  policy::RiskFigures risk;
  // `risk.population` given but not usable (no such table, a column missing
  // or of another type, a class with no population record): why. The
  // journalist figures are then absent and the marketer's is J / n.
  std::string population_error;

  double released_fraction_of(const ColumnRelease& c) const {
    return rows ? static_cast<double>(c.released_rows) / static_cast<double>(rows) : 0.0;
  }
};

// The SQL verify_table runs (for the docs and the CLI): one row per class
// size and population size: size, population size, classes, rows, then the
// released rows of every quasi-identifier. `population`: "" or the
// population table's quoted schema.table.
std::string verification_query(const policy::TableSnapshot& snapshot,
                               const std::string& population = std::string());

// Why the population table cannot be grouped with the snapshot's masks (it
// is missing, or a quasi-identifier is missing or has another type than in
// the protected table), or "" when it can.
std::string check_population(pqxx::connection_base& conn, const policy::TableSnapshot& snapshot,
                             const policy::RiskOptions& risk);

// `risk`: the threshold and population table (the policy's `risk:`; the
// snapshot's policy may be older than a RELOAD that changed only them).
// Throws pqxx errors of the verification itself; a population that cannot be
// used is reported in population_error.
VerificationReport verify_table(pqxx::connection_base& conn, const policy::TableSnapshot& snapshot,
                                const policy::RiskOptions& risk);
VerificationReport verify_table(pqxx::connection_base& conn, const policy::TableSnapshot& snapshot);

// Per quasi-identifier: distinct non-NULL values in the table and distinct
// released values as restricted users read them (SHOW UTILITY).
struct ColumnDistinct {
  std::string column;
  uint64_t distinct_values = 0;
  uint64_t distinct_released = 0;
};
std::vector<ColumnDistinct> distinct_values(pqxx::connection_base& conn,
                                            const policy::TableSnapshot& snapshot);

}  // namespace kanon::store
