// The admin console's risk and utility answers, from what
// store::verify_table reports (docs/risk.md defines every figure):
//
//   VERIFY <table>          its columns end with risk_columns() / risk_values()
//   SHOW CLASSES <table>    one row per class size: class_size, classes, rows,
//                           records, prosecutor_risk, above_threshold
//   SHOW UTILITY <table>    one row per quasi-identifier: column, rows,
//                           released_rows, released_fraction, distinct_values,
//                           distinct_released
//
// Pure formatting: the handlers in admin_console.cc query the backend.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "policy/table_policy.h"
#include "proxy/result_set.h"
#include "store/verification.h"

namespace kanon::proxy {

// The columns VERIFY appends after its own: prosecutor_max_risk,
// records_at_max_risk, prosecutor_avg_risk, records_above_threshold,
// share_above_threshold, risk_threshold, population, journalist_max_risk,
// journalist_avg_risk, journalist_share_above_threshold, marketer_risk.
std::vector<std::string> risk_columns();
// Their values; the journalist figures and population are NULL without a
// usable population table.
std::vector<std::optional<std::string>> risk_values(const store::VerificationReport& v,
                                                    const policy::RiskOptions& risk);

ResultSet classes_result(const store::VerificationReport& v);
ResultSet utility_result(const policy::TablePolicy& p, const store::VerificationReport& v,
                         const std::vector<store::ColumnDistinct>& distinct);

}  // namespace kanon::proxy
