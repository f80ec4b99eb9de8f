#include "policy/table_snapshot.h"

#include <fmt/format.h>

#include "base/stopwatch.h"
#include "policy/fingerprint.h"
#include "policy/form_choice.h"

namespace kanon::policy {

TreeOptions tree_options(const TablePolicy& policy) {
  TreeOptions o;
  o.k = policy.k;
  o.l = policy.sensitive ? policy.sensitive->l : 0;
  o.max_nodes = policy.max_nodes;
  return o;
}

std::shared_ptr<TableSnapshot> build_from_tree(const TablePolicy& policy, const TableInfo& info,
                                               DisclosureTree tree, const EncodedTable& table,
                                               PredicateForm form) {
  base::Stopwatch clock;
  auto predicates = compile_release_predicates(tree);
  auto forms = form == PredicateForm::kCostBased
                   ? choose_forms(predicates, table)
                   : std::vector<PredicateForm>(predicates.size(), form);
  auto masks = build_masks(policy, info, predicates, forms);
  auto snap = std::make_shared<TableSnapshot>(TableSnapshot{policy,
                                                            info,
                                                            std::move(tree),
                                                            std::move(predicates),
                                                            std::move(masks),
                                                            {},
                                                            std::chrono::system_clock::now(),
                                                            {},
                                                            {},
                                                            {}});
  snap->forms = std::move(forms);
  snap->stats.fingerprint = data_fingerprint(table);
  snap->stats.rows = table.total_rows();
  snap->stats.distinct_rows = table.distinct_rows();
  snap->stats.compile_ms = clock.lap_ms();
  return snap;
}

std::shared_ptr<TableSnapshot> build_from_table(const TablePolicy& policy, const TableInfo& info,
                                                const EncodedTable& table, PredicateForm form) {
  base::Stopwatch clock;
  auto tree = DisclosureTree::build(table, tree_options(policy));
  const double tree_ms = clock.lap_ms();
  auto snap = build_from_tree(policy, info, std::move(tree), table, form);
  snap->stats.tree_ms = tree_ms;
  return snap;
}

}  // namespace kanon::policy
