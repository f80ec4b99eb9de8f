// Pq: a libpq connection for tests that need what libpqxx hides (the raw
// PGresult, error fields, client encodings); closed on destruction.
#pragma once

#include <doctest/doctest.h>
#include <libpq-fe.h>

#include <string>

namespace kanon::testing {

class Pq {
 public:
  explicit Pq(const std::string& conninfo) : c_(PQconnectdb(conninfo.c_str())) {
    REQUIRE_MESSAGE(PQstatus(c_) == CONNECTION_OK, PQerrorMessage(c_));
  }
  ~Pq() { PQfinish(c_); }
  Pq(const Pq&) = delete;
  Pq& operator=(const Pq&) = delete;
  PGconn* get() const { return c_; }

 private:
  PGconn* c_;
};

// `res`'s rows, each field followed by '|' and each row by '\n' ("" for a
// command), or "error: " and its message; clears `res`.
inline std::string result_rows(PGresult* res) {
  const auto status = PQresultStatus(res);
  std::string out = status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK
                        ? ""
                        : "error: " + std::string(PQresultErrorMessage(res));
  for (int r = 0; r < PQntuples(res); ++r, out += '\n')
    for (int f = 0; f < PQnfields(res); ++f) out += std::string(PQgetvalue(res, r, f)) + "|";
  PQclear(res);
  return out;
}

}  // namespace kanon::testing
