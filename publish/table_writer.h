// Writing the published copy: a new table in the export's transaction
// (CREATE TABLE, GRANT SELECT to the settings' roles, the rows through
// COPY ... FROM STDIN with pqxx::stream_to), or a CSV file.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "publish/export_request.h"
#include "publish/live_table.h"
#include "publish/published_rows.h"

namespace pqxx {
class transaction_base;
}

namespace kanon::publish {

// Rows between two calls of the progress callback of write_table().
inline constexpr uint64_t kRowsPerProgress = 500;

// Creates settings.target_schema.target_table (dropped first with
// `replace`): quasi-identifiers as text, other columns with their live type.
// `progress` gets the rows written so far every kRowsPerProgress rows and at
// the end; it may throw to stop. pqxx errors pass through.
void write_table(pqxx::transaction_base& tx, const ExportSettings& settings, const LiveTable& live,
                 const PublishedRows& rows, const std::function<void(uint64_t written)>& progress);

// Writes the header and the rows to `path` (';'-separated, NULL as an empty
// field). Throws ExportError 58030 when the file cannot be written.
void write_csv(const std::string& path, const LiveTable& live, const PublishedRows& rows);

}  // namespace kanon::publish
