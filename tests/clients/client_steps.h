// The steps every client of the matrix runs and the text they print.
//
// A step is one statement or metadata call. Clients read steps as
// tab-separated lines on stdin and print, per step, "== NAME" followed by one
// line per row (values tab-separated, NULL as \N) or "!! NAME<tab>SQLSTATE
// <tab>message". SQL in a step may name {people} and {adult}: expand()
// replaces them with the table itself (what a client sends through kanon) or
// with `kanon tree`'s masked SELECT (what the expected values are read from).
#pragma once

#include <map>
#include <string>
#include <vector>

namespace kanon::testing {

struct Step {
  std::string kind;  // query | prepared | tables | columns
  std::string name;
  std::string sql;                  // for tables/columns: the schema (and table, tab-separated)
  std::vector<std::string> params;  // prepared: i:<int> or s:<text>, for $1, $2, ...
};

struct Section {
  std::vector<std::string> rows;  // tab-separated values, NULL as \N
  std::string error;              // "SQLSTATE message" when the step failed
};
using Sections = std::map<std::string, Section>;

// Steps as the clients read them on stdin.
std::string encode_steps(const std::vector<Step>& steps);
// A client's stdout; throws when a line is outside any section.
Sections parse_sections(const std::string& out);

// Replaces {people} and {adult} in every step's SQL with `replacement[name]`.
std::vector<Step> expand(const std::vector<Step>& steps,
                         const std::map<std::string, std::string>& replacement);

// "" when `got` holds the same rows as `expected` in every section named in
// `expected`; otherwise what differs first (section, row number, both lines).
std::string difference(const Sections& expected, const Sections& got);

// Runs the query/prepared steps with libpqxx (simple queries with exec,
// prepared ones as named prepared statements).
Sections run_libpqxx(const std::string& conninfo, const std::vector<Step>& steps);

}  // namespace kanon::testing
