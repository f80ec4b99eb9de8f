// Running one statement as a client would and keeping what came back: the
// rows as text, or the error's SQLSTATE and message. For tests that compare
// what kanon returns with an oracle, or expect a denial.
#pragma once

#include <pqxx/pqxx>
#include <string>

namespace kanon::testing {

// Each row as "v1|v2|...|\n", NULL as "<null>".
std::string render(const pqxx::result& r);

struct Outcome {
  std::string rows;      // render() of the result
  std::string sqlstate;  // empty when it succeeded
  std::string message;
};

// Runs `sql` with the simple (exec) or extended (exec_params) protocol in a
// nontransaction on `c`: the result of the last statement, or the error.
Outcome run(pqxx::connection& c, const std::string& sql, bool extended = false);

}  // namespace kanon::testing
