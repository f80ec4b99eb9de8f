// What every driver of the matrix is checked for, against ClientFixture.
#pragma once

#include <string>
#include <vector>

#include "tests/clients/client_fixture.h"

namespace kanon::testing {

// people and adult through both protocols: SELECT *, GROUP BY and WHERE on
// quasi-identifiers, prepared statements with int and text parameters.
std::vector<Step> protected_steps();
// The people steps only (for the extra logins of each driver).
std::vector<Step> people_steps();
// public.open_data, which no policy protects.
std::vector<Step> open_steps();

// Restricted login `user` through kanon: protected steps equal `kanon
// tree`'s masks row for row, open_data equals the direct read. Returns what
// the driver printed.
Sections check_restricted(ClientFixture& f, Driver d, const Endpoint& through,
                          const std::vector<Step>& steps);
// The exempt postgres through kanon: the raw rows.
void check_exempt(ClientFixture& f, Driver d, const Endpoint& through);
// open_data as the driver read it through kanon (`via`) equals the same
// driver reading PostgreSQL directly at `direct`.
void check_open_same_as_direct(Driver d, const Sections& via, const Endpoint& direct);

// The same for every driver: analyst (trust), kanon_md5 and kanon_scram
// restricted, postgres exempt, open_data as direct.
void check_driver(ClientFixture& f, Driver d);

}  // namespace kanon::testing
