// build_table_snapshot: a TableSnapshot (policy/table_snapshot.h) made from
// the live table over kanon's service connection: catalog check, constants
// check, load, the history-aware tree where the table has a row key,
// predicates and masks.
#pragma once

#include <memory>

#include "policy/form_choice.h"
#include "policy/table_policy.h"
#include "policy/table_snapshot.h"
#include "store/table_loader.h"

namespace pqxx {
class connection_base;
}

namespace kanon::store {

using base::ConfigError;

struct BuildOptions {
  LoadOptions load;
  // Cost-based: flat or switch per predicate, whichever evaluates fewer
  // comparisons on the loaded rows (form_choice.h; measured in bench/policy).
  policy::PredicateForm form = policy::PredicateForm::kCostBased;
  // History-aware refresh (the default): the tree may release only what keeps
  // every row of an earlier release at >= k candidates over all releases
  // since the baseline (docs/security.md). Off: a fresh tree every time.
  bool history = true;
  // Start a new baseline (REANONYMIZE): forget the earlier releases.
  bool baseline = false;
};

// Catalog check, constants check, COPY, tree, predicates, masks. The
// connection should be pinned (pin_session_settings) — this does it.
// Throws ConfigError for policy/catalog mismatches, pqxx errors otherwise.
std::shared_ptr<const policy::TableSnapshot> build_table_snapshot(pqxx::connection_base& conn,
                                                                  const policy::TablePolicy& policy,
                                                                  const BuildOptions& options = {});

}  // namespace kanon::store
