// A table of the backend read into the engine's CsvTable form, the way
// policy/ loads a protected table (store/table_loader.h): session settings
// pinned (pin_session_settings), every value as COPY text, and the policy's
// quasi-identifiers and sensitive attribute through loaded_expression(), so
// an export sees exactly the values the disclosure tree sees. Also the
// columns' SQL types and which cells were NULL, so the published copy keeps
// the other columns as they are. With the policy's `person:`, the person
// text (store::person_expression) is one more column after the table's own,
// read by the engine only and never published.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/csv.h"
#include "policy/table_policy.h"

namespace pqxx {
class connection_base;
}

namespace kanon::publish {

struct LiveTable {
  engine::CsvTable table;
  std::vector<std::string> types;           // with modifiers, e.g. "character varying(20)"
  std::vector<std::vector<uint8_t>> nulls;  // [row][column]: 1 when NULL (the text is "")
  // `person:` only: the person column's index and header name (chosen not to
  // clash with the table's columns); -1 and empty otherwise. A NULL person
  // reads as one value of its own, so all NULL persons count as one person, as
  // in the disclosure tree.
  int person_column = -1;
  std::string person_name;
};

// Pins the session settings of `conn` (they stay for the rest of the export)
// and reads the policy's table in attribute order. Throws policy::ConfigError
// when the table does not exist, pqxx errors otherwise.
LiveTable load_live_table(pqxx::connection_base& conn, const policy::TablePolicy& policy);

}  // namespace kanon::publish
