// The libpg_query boundary. libpg_query's types never leave rewriter/; the
// rest of kanon sees the small types declared here.
#pragma once

#include <string>
#include <string_view>

namespace kanon::rewriter {

struct ParseOutcome {
  bool ok = false;
  int statement_count = 0;
  // When !ok: PostgreSQL's error message and the byte offset it points at.
  std::string error;
  int error_offset = -1;
};

// Parses `sql` with PostgreSQL 15's grammar. Thread-safe.
ParseOutcome parse_sql(std::string_view sql);

}  // namespace kanon::rewriter
