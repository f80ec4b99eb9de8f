// The risk section of an export's report (docs/risk.md): the prosecutor
// figures of the published classes and, when the settings name a population
// table, the journalist and marketer figures, with every population row
// published the way the chosen levels publish the table
// (Publication::publish_value). Mondrian cannot place population rows; the
// section then says why (Publication::no_value_maps).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "policy/table_policy.h"
#include "publish/export_request.h"
#include "publish/publication.h"
#include "publish/report.h"

namespace pqxx {
class connection_base;
}

namespace kanon::publish {

// Published class values -> class size (rows, or distinct persons).
using PublishedClasses = std::map<std::vector<std::string>, uint64_t>;

// Population rows by their quasi-identifier values (policy order, COPY text
// as live_table.h reads them, NULL as "").
using PopulationCounts = std::map<std::vector<std::string>, uint64_t>;

// Reads schema.table's quasi-identifier columns grouped, with the session
// settings the export pinned. Throws policy::ConfigError when the table does
// not exist, std::runtime_error naming a missing column, pqxx errors.
PopulationCounts load_population(pqxx::connection_base& conn, const policy::TablePolicy& policy,
                                 const std::string& schema, const std::string& table);

// The figures, from counts already read (pure; `population` is ignored
// unless `s` names a population table).
RiskReport risk_report(const Publication& pub, const ExportSettings& s,
                       const PublishedClasses& classes, const PopulationCounts* population);

// Reads the population (when `s` names one) and computes the figures; a
// population that cannot be read is reported in population_note.
RiskReport export_risk(pqxx::connection_base& conn, const Publication& pub,
                       const policy::TablePolicy& policy, const ExportSettings& s,
                       const PublishedClasses& classes);

}  // namespace kanon::publish
