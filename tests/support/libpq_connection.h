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

}  // namespace kanon::testing
