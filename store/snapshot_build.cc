#include "store/snapshot_build.h"

#include <fmt/format.h>

#include <pqxx/pqxx>
#include <stdexcept>

#include "base/config_error.h"
#include "base/stopwatch.h"
#include "catalog/mask_function.h"
#include "catalog/table_catalog.h"
#include "policy/history_refresh.h"
#include "store/history_build.h"
#include "store/materializer.h"
#include "store/row_order.h"

namespace kanon::store {

std::shared_ptr<const policy::TableSnapshot> build_table_snapshot(pqxx::connection_base& conn,
                                                                  const policy::TablePolicy& policy,
                                                                  const BuildOptions& options) {
  base::Stopwatch clock;
  pin_session_settings(conn);
  const policy::TableInfo info = catalog::read_table_info(conn, policy);
  policy::check_against_catalog(policy, info);
  check_indexes(policy, info);
  check_constants(conn, policy, info);
  // evaluator: function: the masks call kanon_mask.released, once the
  // catalog shows that only a superuser decides what that name means;
  // evaluator: auto: if it does, else the SQL masks.
  uint32_t mask_function = 0;
  std::string fallback;
  if (policy.evaluator == policy::MaskEvaluator::kFunction) {
    mask_function = catalog::verified_mask_function(conn, policy);
  } else if (policy.evaluator == policy::MaskEvaluator::kAuto) {
    try {
      mask_function = catalog::verified_mask_function(conn, policy);
    } catch (const base::ConfigError& e) {
      fallback = e.what();
    }
  }
  const policy::PredicateForm form =
      mask_function ? policy::PredicateForm::kFunction : options.form;
  const policy::RowKey key = options.history ? row_key(conn, policy, info) : policy::RowKey{};
  const policy::EncodedTable table = load_table(conn, policy, info, options.load);
  const double load_ms = clock.lap_ms();
  if (!key.linkable()) {
    auto snap = policy::build_from_table(policy, info, table, form);
    if (snap->masks.calls_function) snap->mask_function = mask_function;
    snap->evaluator_fallback = fallback;
    snap->stats.load_ms = load_ms;
    snap->release.key = key;
    snap->release.released_fraction = policy::released_fraction(snap->tree, table);
    check_row_order(conn, policy, snap->masks, snap->stats.rows, key);
    return snap;
  }
  // The history-aware tree (its own keyed load, in the history's
  // transaction); predicates and form choice on the aggregated load.
  HistoryBuildResult built;
  try {
    built = build_history_release(conn, policy, info, key, policy::tree_options(policy),
                                  options.baseline,
                                  policy.mode != policy::EnforcementMode::kMaterialized);
  } catch (const pqxx::sql_error& e) {
    std::string cause = e.what();
    if (const auto nl = cause.find('\n'); nl != std::string::npos) cause.resize(nl);
    throw std::runtime_error(fmt::format(
        "{}: the release history in schema kanon (kanon.releases, kanon.release_rows, "
        "kanon.held_keys) could not be read or written, so no history-aware release can be "
        "built: {}{}",
        policy.name(), cause,
        dynamic_cast<const pqxx::insufficient_privilege*>(&e)
            ? " (the service user needs CREATE on the database, or USAGE and CREATE on schema "
              "kanon and rights on its tables)"
            : ""));
  }
  const double tree_ms = clock.lap_ms();
  auto snap = policy::build_from_tree(policy, info, std::move(built.tree), table, form);
  if (snap->masks.calls_function) snap->mask_function = mask_function;
  snap->evaluator_fallback = std::move(fallback);
  snap->stats.load_ms = load_ms;
  snap->stats.tree_ms = tree_ms;
  snap->release = std::move(built.release);
  check_row_order(conn, policy, snap->masks, snap->stats.rows, key);
  return snap;
}

}  // namespace kanon::store
