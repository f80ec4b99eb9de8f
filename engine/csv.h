// CSV input/output for the engine: a header row plus data rows, a configurable
// one-character delimiter, RFC 4180 quoting ("a;b" and "" escapes).
//
// Reading throws CsvError (an std::runtime_error naming the file and line,
// which it also carries as fields) on malformed input: a row whose field count
// differs from the header's, or an unterminated quote. Loading is not a hot
// path.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace kanon::engine {

class CsvError : public std::runtime_error {
 public:
  // what(): "<source>:<line>: <problem>", or "<source>: <problem>" when
  // `line` is 0 (the file as a whole: cannot open, no header).
  CsvError(std::string source, size_t line, std::string problem);

  std::string source;
  size_t line = 0;  // 1-based; 0 when the error is not about one line
  std::string problem;
};

struct CsvTable {
  std::string source;  // file name, for error messages
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<size_t> line_numbers;  // 1-based line of each row, parallel to rows

  // Index of the column named `name`, or -1.
  int column(std::string_view name) const;
};

// Reads a CSV with a header row. Empty lines are skipped.
CsvTable read_csv(const std::string& path, char delimiter);
CsvTable parse_csv(std::istream& in, char delimiter, std::string source, bool has_header = true);

// Writes one record, quoting fields that contain the delimiter, quotes or newlines.
void write_csv_row(std::ostream& out, const std::vector<std::string_view>& fields, char delimiter);

}  // namespace kanon::engine
