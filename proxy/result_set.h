// ResultSet: a table of text values encoded as the backend would send it
// (RowDescription, DataRows, CommandComplete), for answers kanon gives
// itself, such as the admin console's.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "proxy/wire/framing.h"

namespace kanon::proxy {

struct ResultSet {
  std::vector<std::string> columns;
  std::vector<std::vector<std::optional<std::string>>> rows;  // nullopt: NULL
  std::string tag;  // CommandComplete tag; "SHOW" when empty

  void add(std::vector<std::optional<std::string>> row) { rows.push_back(std::move(row)); }
};

// Appends the messages (no ReadyForQuery). Columns are typed text.
void encode(const ResultSet& result, wire::Buffer& out);

}  // namespace kanon::proxy
