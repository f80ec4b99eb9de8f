// A table of the backend read into the engine's CsvTable form: every value as
// text (the backend's output format), plus the columns' SQL types and which
// cells were NULL, so the published copy keeps the other columns as they are.
#pragma once

#include <cstdint>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "engine/csv.h"

namespace kanon::publish {

struct LiveTable {
  engine::CsvTable table;
  std::vector<std::string> types;           // format_type() per column
  std::vector<std::vector<uint8_t>> nulls;  // [row][column]: 1 when NULL (the text is "")
};

// Reads schema.table in attribute order. Throws pqxx errors.
LiveTable load_live_table(pqxx::transaction_base& tx, const std::string& schema,
                          const std::string& table);

// "schema"."table", quoted for SQL.
std::string qualified_name(pqxx::transaction_base& tx, const std::string& schema,
                           const std::string& table);

}  // namespace kanon::publish
