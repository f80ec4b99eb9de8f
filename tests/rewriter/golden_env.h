// Policy environments the golden cases name (`--- env:`), built by hand for
// the unit runner: public.people and public.adult as in config/demo, with
// readable hand-written masks, and variants (materialized copy, a policy that
// never built, the same table name protected in two schemas).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "store/policy_store.h"

namespace kanon::testing {

struct GoldenEnv {
  store::PolicySnapshot snapshot;
  std::vector<std::string> listed;  // for Rewriter::set_listed_tables
};

// Throws std::runtime_error for an unknown name.
GoldenEnv make_unit_env(const std::string& name);

// @MASKS / @COPY (a guarded read of the materialized copy) for the expected
// texts.
std::string env_macro(const GoldenEnv& env, const std::string& kind, const std::string& table);

// A snapshot for `schema.table` with the given columns (name, type) and mask
// expressions (same order); `direct` names the direct identifiers.
std::shared_ptr<policy::TableSnapshot> hand_snapshot(
    const std::string& schema, const std::string& table,
    const std::vector<std::pair<std::string, std::string>>& columns,
    const std::vector<std::string>& masks, const std::vector<std::string>& direct = {});

// Gives `table` (a key of env.snapshot.tables) a copy of its snapshot whose
// `column` has a release test, compared as `compared`, as build_masks
// describes a quasi-identifier's mask (`expression`, when not empty, as its
// masked value): a restriction on it is then decided on raw values first.
void add_release_test(GoldenEnv& env, const std::string& table, const std::string& column,
                      const std::string& test, policy::ColumnMask::Compared compared,
                      const std::string& expression = "");

}  // namespace kanon::testing
