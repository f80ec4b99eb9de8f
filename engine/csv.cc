#include "engine/csv.h"

#include <fmt/format.h>

#include <fstream>
#include <istream>
#include <ostream>

namespace kanon::engine {

namespace {

std::string csv_error_text(const std::string& source, size_t line, const std::string& problem) {
  return line ? fmt::format("{}:{}: {}", source, line, problem)
              : fmt::format("{}: {}", source, problem);
}

// Splits one record; a quoted field may span lines, so more lines are pulled
// from `in` as needed. Returns false at end of input.
bool read_record(std::istream& in, char delim, std::vector<std::string>& fields, size_t& line,
                 const std::string& source) {
  std::string text;
  if (!std::getline(in, text)) return false;
  ++line;
  const size_t start_line = line;
  fields.clear();
  std::string field;
  bool quoted = false;
  size_t i = 0;
  for (;;) {
    if (i == text.size()) {
      if (quoted) {
        std::string more;
        if (!std::getline(in, more)) {
          throw CsvError(source, start_line, "unterminated quoted field");
        }
        ++line;
        field.push_back('\n');
        text = std::move(more);
        i = 0;
        continue;
      }
      break;
    }
    const char c = text[i++];
    if (quoted) {
      if (c == '"') {
        if (i < text.size() && text[i] == '"') {
          field.push_back('"');
          ++i;
        } else {
          quoted = false;
        }
      } else {
        field.push_back(c);
      }
    } else if (c == '"' && field.empty()) {
      quoted = true;
    } else if (c == delim) {
      fields.push_back(std::move(field));
      field.clear();
    } else if (c == '\r' && i == text.size()) {
      // Windows line ending.
    } else {
      field.push_back(c);
    }
  }
  fields.push_back(std::move(field));
  return true;
}

}  // namespace

CsvError::CsvError(std::string source_name, size_t line_number, std::string what)
    : std::runtime_error(csv_error_text(source_name, line_number, what)),
      source(std::move(source_name)),
      line(line_number),
      problem(std::move(what)) {}

int CsvTable::column(std::string_view name) const {
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) return static_cast<int>(i);
  }
  return -1;
}

CsvTable parse_csv(std::istream& in, char delimiter, std::string source, bool has_header) {
  CsvTable table;
  table.source = std::move(source);
  std::vector<std::string> fields;
  size_t line = 0;
  size_t width = 0;
  bool first = true;
  while (read_record(in, delimiter, fields, line, table.source)) {
    if (fields.size() == 1 && fields[0].empty()) continue;
    if (first && has_header) {
      table.header = fields;
      width = fields.size();
      first = false;
      continue;
    }
    if (first) width = fields.size();
    first = false;
    if (fields.size() != width) {
      throw CsvError(table.source, line,
                     fmt::format("expected {} fields, found {}", width, fields.size()));
    }
    table.rows.push_back(fields);
    table.line_numbers.push_back(line);
  }
  if (has_header && first) throw CsvError(table.source, 0, "empty file, no header");
  return table;
}

CsvTable read_csv(const std::string& path, char delimiter) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CsvError(path, 0, "cannot open file");
  return parse_csv(in, delimiter, path, true);
}

void write_csv_row(std::ostream& out, const std::vector<std::string_view>& fields, char delimiter) {
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i) out.put(delimiter);
    const std::string_view f = fields[i];
    if (f.find_first_of(std::string{delimiter, '"', '\n', '\r'}) == std::string_view::npos) {
      out << f;
      continue;
    }
    out.put('"');
    for (char c : f) {
      if (c == '"') out.put('"');
      out.put(c);
    }
    out.put('"');
  }
  out.put('\n');
}

}  // namespace kanon::engine
