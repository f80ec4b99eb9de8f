// Human and machine readable views of a TableSnapshot, for `kanon tree`:
// the cohorts (label, path predicate, rows, released attributes — the seed's
// "Predicate for each cohort" table), the per-attribute release rules, and
// the SQL masks.
#pragma once

#include <string>

#include "policy/table_snapshot.h"

namespace kanon::policy {

std::string tree_report_text(const TableSnapshot& snapshot);
std::string tree_report_json(const TableSnapshot& snapshot);
// SELECT <masks> FROM "schema"."table"; — the masked projection as one query.
std::string tree_report_sql(const TableSnapshot& snapshot);

}  // namespace kanon::policy
