// The mask function a policy with `evaluator: function` calls
// (kanon_mask.released, maskfn/), checked in the table's database before a
// tree is built on it. The masks call it by name, so kanon accepts it only
// where no one but a superuser can decide what that name means:
//   - schema kanon_mask exists and belongs to a superuser;
//   - no role that is not a superuser may CREATE in it (has_schema_privilege,
//     so through membership too): nobody else can add an overload that
//     PostgreSQL would prefer to the VARIADIC "any" one;
//   - every function in it belongs to a superuser, and exactly one is named
//     released: (bytea, VARIADIC "any") returning boolean, LANGUAGE c,
//     symbol kanon_mask_released, IMMUTABLE, PARALLEL SAFE.
// The OID it returns goes into the snapshot; the rewriter denies a statement
// when the catalog of the moment does not hold exactly that one function
// under the name (rewriter/rewrite_plan.cc, rule mask-function).
#pragma once

#include <cstdint>
#include <pqxx/pqxx>

#include "policy/table_policy.h"

namespace kanon::catalog {

inline constexpr const char* kMaskSchema = "kanon_mask";
inline constexpr const char* kMaskFunctionName = "released";

// Throws base::ConfigError "file:line: key: ..." naming what is wrong and
// how to install it (maskfn/install.sql).
uint32_t verified_mask_function(pqxx::connection_base& conn, const policy::TablePolicy& policy);

}  // namespace kanon::catalog
