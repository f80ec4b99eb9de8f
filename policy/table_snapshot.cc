#include "policy/table_snapshot.h"

#include <pqxx/pqxx>

#include "base/stopwatch.h"
#include "policy/form_choice.h"
#include "policy/materializer.h"

namespace kanon::policy {

std::shared_ptr<TableSnapshot> build_from_table(const TablePolicy& policy, const TableInfo& info,
                                                const EncodedTable& table,
                                                const BuildOptions& options) {
  base::Stopwatch clock;
  TreeOptions tree_options;
  tree_options.k = policy.k;
  tree_options.l = policy.sensitive ? policy.sensitive->l : 0;
  tree_options.max_nodes = policy.max_nodes;
  auto tree = DisclosureTree::build(table, tree_options);
  const double tree_ms = clock.lap_ms();
  auto predicates = compile_release_predicates(tree);
  auto masks = options.form == PredicateForm::kCostBased
                   ? build_masks(policy, info, predicates, choose_forms(predicates, table))
                   : build_masks(policy, info, predicates, options.form);
  auto snap = std::make_shared<TableSnapshot>(TableSnapshot{policy,
                                                            info,
                                                            std::move(tree),
                                                            std::move(predicates),
                                                            std::move(masks),
                                                            {},
                                                            std::chrono::system_clock::now(),
                                                            {}});
  snap->stats.rows = table.total_rows();
  snap->stats.distinct_rows = table.distinct_rows();
  snap->stats.tree_ms = tree_ms;
  snap->stats.compile_ms = clock.lap_ms();
  return snap;
}

std::shared_ptr<const TableSnapshot> build_table_snapshot(pqxx::connection_base& conn,
                                                          const TablePolicy& policy,
                                                          const BuildOptions& options) {
  const base::Stopwatch clock;
  pin_session_settings(conn);
  const TableInfo info = read_table_info(conn, policy);
  check_against_catalog(policy, info);
  check_indexes(policy, info);
  check_constants(conn, policy, info);
  const EncodedTable table = load_table(conn, policy, info, options.load);
  const double load_ms = clock.ms();
  auto snap = build_from_table(policy, info, table, options);
  snap->stats.load_ms = load_ms;
  return snap;
}

}  // namespace kanon::policy
