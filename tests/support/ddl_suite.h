// What the adversarial suites on DDL share (ddl_timing_test,
// block_invalidations_test): a kanon proxy protecting public.people over the
// shared sandbox, an administrator's statement, and the check that an answer
// holds no raw value of people. Header-only: the checks are doctest's.
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <memory>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "tests/support/kanon_proxy.h"
#include "tests/support/pg_sandbox.h"
#include "tests/support/statement_outcome.h"

namespace kanon::testing {

// Values of public.people its tree never releases (k = 2, demo data), and
// a direct identifier.
inline const std::vector<std::string> kPeopleForbidden = {
    "Lawyer",  "Washington",   "Columbus", "Withamsville",
    "Whately", "College Park", "Bellevue", "Ada Quill"};

// public.flip_cities() (set up by the suites) reads public.open_people, or
// people once replaced by the administrator.
inline const std::string kCallFlipCities = "SELECT * FROM flip_cities()";
inline const std::string kFlipCitiesToPeople =
    "CREATE OR REPLACE FUNCTION public.flip_cities() RETURNS SETOF text LANGUAGE sql STABLE "
    "AS 'SELECT city FROM public.people'";
inline const std::string kFlipCitiesToOpen =
    "CREATE OR REPLACE FUNCTION public.flip_cities() RETURNS SETOF text LANGUAGE sql STABLE "
    "AS 'SELECT city FROM public.open_people'";

// KANON_TEST_C_GUARD set (ctest's *_c_guard_test twins): with the catalog
// guard in C installed (maskfn/install.sql), which kanon then writes instead
// of the PL/pgSQL one.
inline bool c_guard() {
  const char* v = std::getenv("KANON_TEST_C_GUARD");
  return v && *v;
}

// Runs `setup` as the administrator, then starts kanon with the example
// policy for public.people (admin console: database kanon, user postgres).
inline std::unique_ptr<KanonProxy> people_proxy(const std::string& setup) {
  auto& pg = PgSandbox::shared();
  pg.psql(setup);
  if (c_guard()) pg.install_mask_function();
  return std::make_unique<KanonProxy>(
      pg.port(),
      "policies: [" + source_dir() +
          "/config/policies/people.yaml]\nadmin: {database: kanon, users: [postgres]}\n");
}

inline void admin(const std::string& sql) {
  pqxx::connection c(PgSandbox::shared().conninfo("postgres"));
  pqxx::nontransaction(c).exec(sql);
}

inline void check_no_raw_value(const std::string& bytes) {
  for (const auto& v : kPeopleForbidden) CHECK_MESSAGE(bytes.find(v) == std::string::npos, bytes);
}

// Masked, or an error that says so (40001, 42501 when `may_fail`); never a
// raw value.
inline void check_answer(const Outcome& o, bool may_fail) {
  check_no_raw_value(o.rows);
  if (o.sqlstate.empty()) return;
  CHECK_MESSAGE(may_fail, o.sqlstate << " " << o.message);
  CHECK_MESSAGE((o.sqlstate == "40001" || o.sqlstate == "42501"), o.sqlstate << " " << o.message);
}

}  // namespace kanon::testing
