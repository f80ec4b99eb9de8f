// CopyRow: one row of any width for pqxx::stream_to (COPY ... FROM STDIN).
//
// libpqxx 6.4's stream_to only writes std::tuple rows (a column count fixed
// at compile time): it joins a row's fields with an unqualified call
// separated_list("\t", row, escaper). The overload below, found by
// argument-dependent lookup, writes a CopyRow instead; each field goes
// through libpqxx's own COPY escaper, and a null pointer is written as \N.
// Used by publish/ (exports) and proxy/ (the audit trail's table sink).
#pragma once

#include <string>
#include <vector>

namespace kanon::store {

struct CopyRow {
  std::vector<const std::string*> fields;  // null: SQL NULL
};

template <typename Escaper>
std::string separated_list(const std::string& separator, const CopyRow& row,
                           const Escaper& escape) {
  std::string line;
  for (size_t i = 0; i < row.fields.size(); ++i) {
    if (i > 0) line += separator;
    line += row.fields[i] ? escape(row.fields[i]) : std::string("\\N");
  }
  return line;
}

}  // namespace kanon::store
