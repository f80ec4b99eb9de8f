#include "policy/snapshot_build.h"

#include <fmt/format.h>

#include <pqxx/pqxx>
#include <stdexcept>

#include "base/stopwatch.h"
#include "policy/history_build.h"
#include "policy/history_refresh.h"
#include "policy/materializer.h"
#include "policy/table_catalog.h"

namespace kanon::policy {

std::shared_ptr<const TableSnapshot> build_table_snapshot(pqxx::connection_base& conn,
                                                          const TablePolicy& policy,
                                                          const BuildOptions& options) {
  base::Stopwatch clock;
  pin_session_settings(conn);
  const TableInfo info = read_table_info(conn, policy);
  check_against_catalog(policy, info);
  check_indexes(policy, info);
  check_constants(conn, policy, info);
  const RowKey key = options.history ? row_key(conn, policy, info) : RowKey{};
  const EncodedTable table = load_table(conn, policy, info, options.load);
  const double load_ms = clock.lap_ms();
  if (!key.linkable()) {
    auto snap = build_from_table(policy, info, table, options.form);
    snap->stats.load_ms = load_ms;
    snap->release.key = key;
    snap->release.released_fraction = released_fraction(snap->tree, table);
    return snap;
  }
  // The history-aware tree (its own keyed load, in the history's
  // transaction); predicates and form choice on the aggregated load.
  HistoryBuildResult built;
  try {
    built = build_history_release(conn, policy, info, key, tree_options(policy), options.baseline,
                                  policy.mode != EnforcementMode::kMaterialized);
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
  auto snap = build_from_tree(policy, info, std::move(built.tree), table, options.form);
  snap->stats.load_ms = load_ms;
  snap->stats.tree_ms = tree_ms;
  snap->release = std::move(built.release);
  return snap;
}

}  // namespace kanon::policy
