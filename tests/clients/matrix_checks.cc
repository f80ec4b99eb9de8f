#include "tests/clients/matrix_checks.h"

#include <doctest/doctest.h>

namespace kanon::testing {

std::vector<Step> people_steps() {
  return {
      {"query", "people_all", "SELECT * FROM {people} ORDER BY id", {}},
      {"query",
       "people_by_state",
       "SELECT state, city, count(*) AS n FROM {people} GROUP BY state, city ORDER BY 1, 2",
       {}},
      {"prepared",
       "people_where_state",
       "SELECT id, name, ssn, occupation, city, state FROM {people} WHERE state = $1 ORDER BY id",
       {"s:OH"}},
      {"prepared",
       "people_where_id_occupation",
       "SELECT id, occupation, diagnosis FROM {people} WHERE id >= $1 AND occupation = $2 "
       "ORDER BY id",
       {"i:2", "s:Accountant"}},
  };
}

std::vector<Step> protected_steps() {
  auto steps = people_steps();
  const std::vector<Step> adult = {
      {"query", "adult_all", "SELECT * FROM {adult} ORDER BY id", {}},
      {"query",
       "adult_group_by",
       "SELECT sex, age, \"marital-status\", count(*) AS n FROM {adult} "
       "GROUP BY sex, age, \"marital-status\" ORDER BY 1, 2, 3",
       {}},
      {"prepared",
       "adult_where_age",
       "SELECT id, age, sex, race, education, \"salary-class\" FROM {adult} WHERE age = $1 "
       "ORDER BY id",
       {"i:39"}},
  };
  steps.insert(steps.end(), adult.begin(), adult.end());
  return steps;
}

std::vector<Step> open_steps() {
  return {
      {"query", "open_all", "SELECT * FROM public.open_data ORDER BY id", {}},
      {"prepared",
       "open_where",
       "SELECT id, label, amount, day FROM public.open_data "
       "WHERE id >= $1 AND label <> $2 ORDER BY id",
       {"i:2", "s:beta"}},
  };
}

namespace {

std::vector<Step> concat(std::vector<Step> a, const std::vector<Step>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

Sections check_restricted(ClientFixture& f, Driver d, const Endpoint& through,
                          const std::vector<Step>& steps) {
  CAPTURE(driver_name(d));
  CAPTURE(through.user);
  const auto all = concat(steps, open_steps());
  const Sections got = run_driver(d, through, expand(all, f.through_kanon()));
  const Sections want_masked = f.expected(steps, f.masked());
  const std::string masked_diff = difference(want_masked, got);
  CHECK_MESSAGE(masked_diff.empty(), "masked as kanon tree says: " << masked_diff);
  const Sections want_open = f.expected(open_steps(), f.raw());
  const std::string open_diff = difference(want_open, got);
  CHECK_MESSAGE(open_diff.empty(), "unprotected table untouched: " << open_diff);
  return got;
}

void check_exempt(ClientFixture& f, Driver d, const Endpoint& through) {
  CAPTURE(driver_name(d));
  CAPTURE(through.user);
  const auto steps = protected_steps();
  const Sections got = run_driver(d, through, expand(steps, f.through_kanon()));
  const std::string diff = difference(f.expected(steps, f.raw()), got);
  CHECK_MESSAGE(diff.empty(), "exempt user sees raw rows: " << diff);
}

void check_open_same_as_direct(Driver d, const Sections& via, const Endpoint& direct) {
  CAPTURE(driver_name(d));
  CAPTURE(direct.user);
  const Sections dir = run_driver(d, direct, open_steps());
  REQUIRE(dir.size() == open_steps().size());
  for (const auto& [name, section] : dir) {
    CAPTURE(name);
    CHECK(section.error.empty());
    CHECK(!section.rows.empty());
  }
  const std::string diff = difference(dir, via);
  CHECK_MESSAGE(diff.empty(), "same driver directly vs through kanon: " << diff);
}

void check_driver(ClientFixture& f, Driver d) {
  check_restricted(f, d, f.kanon("analyst"), protected_steps());
  const Sections md5 = check_restricted(f, d, f.kanon("kanon_md5", "md5-secret"), people_steps());
  check_open_same_as_direct(d, md5, f.direct("kanon_md5", "md5-secret"));
  check_restricted(f, d, f.kanon("kanon_scram", "scram-secret"), people_steps());
  check_exempt(f, d, f.kanon("postgres"));
}

}  // namespace kanon::testing
