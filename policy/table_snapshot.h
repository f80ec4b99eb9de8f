// TableSnapshot: everything built for one protected table at one moment —
// its policy, catalog columns, disclosure tree, release predicates and
// compiled masks — and the pure steps that make one from loaded rows
// (store/snapshot_build.h makes one from the live table).
//
// Immutable once built; held by std::shared_ptr<const TableSnapshot> and
// shared freely between threads.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "policy/disclosure_tree.h"
#include "policy/form_choice.h"
#include "policy/release_info.h"
#include "policy/release_predicate.h"
#include "policy/table_info.h"
#include "policy/table_masks.h"
#include "policy/table_policy.h"

namespace kanon::policy {

struct BuildStats {
  uint64_t rows = 0;
  uint64_t distinct_rows = 0;
  double load_ms = 0;       // catalog + COPY
  double tree_ms = 0;       // tree build
  double compile_ms = 0;    // predicates + SQL
  std::string fingerprint;  // data_fingerprint of the loaded rows (snapshot_codec.h)
};

struct TableSnapshot {
  TablePolicy policy;
  TableInfo info;
  DisclosureTree tree;
  std::vector<ReleasePredicate> predicates;  // one per quasi-identifier, policy order
  TableMasks masks;
  BuildStats stats;
  std::chrono::system_clock::time_point built_at;
  // What restricted sessions read instead of the inline derived table: for
  // mode: materialized the masked copy ("kanon_masked"."schema__table") once
  // materialize() has run, for mode: view the masked view of the same name
  // (build_masked_view); empty for mode: inline.
  std::string materialized_name;
  // grants: manage: the roles kanon could not protect outside the proxy (each
  // a sentence: who, and why they still read the base table directly), and
  // roles that do not exist. Empty when every grant_to role is protected.
  std::vector<std::string> grant_warnings;
  // The history-aware release this snapshot serves (history_build.h):
  // version 0 when the table is not linkable or history was off (then only
  // key and released_fraction are set).
  ReleaseInfo release;
  // The form each predicate's SQL was compiled in (policy order).
  std::vector<PredicateForm> forms;
  // masks.calls_function: the OID of kanon_mask.released as the build
  // verified it (catalog/mask_function.h); the rewriter denies the masks
  // while the catalog names another function so. 0 otherwise.
  uint32_t mask_function = 0;
  // evaluator: auto built with the SQL masks: why kanon_mask.released was
  // not taken (verified_mask_function's error). Empty otherwise.
  std::string evaluator_fallback;
  // Shared snapshots (shared_snapshots.h): the version stored in
  // kanon.snapshots and the replica that built it; 0 and "" when not stored.
  uint64_t shared_version = 0;
  std::string built_by;
};

// k, l and max_nodes of `policy`'s tree.
TreeOptions tree_options(const TablePolicy& policy);

// Tree and masks from an already loaded table (tests, benchmarks).
std::shared_ptr<TableSnapshot> build_from_table(const TablePolicy& policy, const TableInfo& info,
                                                const EncodedTable& table,
                                                PredicateForm form = PredicateForm::kCostBased);
// Predicates and masks from a tree already built on `table`.
std::shared_ptr<TableSnapshot> build_from_tree(const TablePolicy& policy, const TableInfo& info,
                                               DisclosureTree tree, const EncodedTable& table,
                                               PredicateForm form = PredicateForm::kCostBased);

}  // namespace kanon::policy
