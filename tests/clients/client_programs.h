// The client programs of the matrix: libpqxx (in process), psycopg2
// (python/client.py with Debian's /usr/bin/python3), node-postgres
// (node/client.js; `npm ci` into the build directory on first use) and pgJDBC
// (java/KanonClient.java, compiled with javac on first use). A missing
// interpreter, compiler, driver or package throws with what to install.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tests/clients/client_steps.h"

namespace kanon::testing {

struct Endpoint {
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  std::string user;
  std::string password;  // "" = none
  std::string dbname = "postgres";
  // libpq's sslmode ("" = the client's default); for verify-ca/verify-full
  // `sslrootcert` is the CA file.
  std::string sslmode;
  std::string sslrootcert;
};

enum class Driver { libpqxx, psycopg2, node, jdbc };
std::string driver_name(Driver d);

std::string libpq_conninfo(const Endpoint& e);

// Runs `steps` with the driver against `e` and returns what it printed.
// Throws when the program cannot run or exits with an error (connection
// refused, authentication failed), with its stderr.
Sections run_driver(Driver d, const Endpoint& e, const std::vector<Step>& steps);

// Path of `program` in PATH, or "" when it is not installed.
std::string find_program(const std::string& program);

}  // namespace kanon::testing
