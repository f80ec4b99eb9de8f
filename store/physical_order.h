// mode: inline and view hand a restricted session the table's rows in the
// order PostgreSQL stores them; when that order follows a quasi-identifier
// (a sorted load, CLUSTER), the rows around a hidden value tell it
// (policy/order_inference.h). At every build and refresh of such a table,
// kanon reads rows in stored order with their masks (all of a table of up
// to 20,000 rows, else a repeatable sample of whole blocks of about that
// many) and fails the build, naming the column, when the nearest shown value
// guesses hidden ones far more often than chance. mode: materialized writes
// its copy in random order and is not concerned.
#pragma once

#include <cstdint>

#include "base/config_error.h"
#include "policy/table_masks.h"
#include "policy/table_policy.h"

namespace pqxx {
class connection_base;
}

namespace kanon::store {

// The build's failure when the stored order tells hidden values. Unlike
// other failures it withdraws the snapshot served before (PolicyStore):
// the old masks read the same rows in the same order.
class StoredOrderLeak : public base::ConfigError {
 public:
  using base::ConfigError::ConfigError;
};

// Throws StoredOrderLeak naming the first column whose hidden values the
// stored order tells. `rows`: the table's (and its children's) row count.
void check_physical_order(pqxx::connection_base& conn, const policy::TablePolicy& policy,
                          const policy::TableMasks& masks, uint64_t rows);

}  // namespace kanon::store
