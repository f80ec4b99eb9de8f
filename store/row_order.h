// Orders a restricted session can read a protected table's rows in, against
// the values its release hides (policy/order_inference.h):
// - the stored order: mode: inline and view hand rows out as PostgreSQL
//   stores them; when that order follows a quasi-identifier (a sorted load,
//   CLUSTER), the rows around a hidden value tell it. mode: materialized
//   writes its copy in random order and is not concerned.
// - the key's order, in every mode: a primary key (or the policy's `key:`)
//   shown raw is an ORDER BY away, and keys numbered during a sorted load
//   follow the sort (the materialized copy's random order does not help).
// At every build and refresh kanon reads rows with their masks once (all of
// a table of up to 20,000 rows, else a repeatable sample of whole blocks of
// about that many), in stored order and ranked by key (keys that follow a
// column's order still do in a sample), and fails the build, naming the
// column, when the nearest shown value guesses hidden ones far more often
// than chance.
#pragma once

#include <cstdint>

#include "base/config_error.h"
#include "policy/release_info.h"
#include "policy/table_masks.h"
#include "policy/table_policy.h"

namespace pqxx {
class connection_base;
}

namespace kanon::store {

// The build's failure when an order tells hidden values. Unlike other
// failures it withdraws the snapshot served before (PolicyStore): the old
// masks read the same rows in the same order.
class RowOrderLeak : public base::ConfigError {
 public:
  using base::ConfigError::ConfigError;
};

// Throws RowOrderLeak naming the first column whose hidden values an order
// tells. `rows`: the table's (and its children's) row count; `key`: the
// table's row key (checked when it is the policy's or the primary key and
// every column of it is shown raw).
void check_row_order(pqxx::connection_base& conn, const policy::TablePolicy& policy,
                     const policy::TableMasks& masks, uint64_t rows, const policy::RowKey& key);

}  // namespace kanon::store
