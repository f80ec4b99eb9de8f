// The catalog watcher's debounce (store/catalog_debounce.h): one refresh per
// burst of DDL notifications, after a quiet interval but never later than
// the maximum delay after the burst's first notification. Times are given,
// not measured: no clock, no database.
#include "store/catalog_debounce.h"

#include <doctest/doctest.h>

using kanon::store::CatalogDebounce;
using std::chrono::milliseconds;

namespace {

const CatalogDebounce::Clock::time_point t0{std::chrono::hours(1)};

// `n` notifications arrive at `at`.
void receive(CatalogDebounce& d, uint64_t n, CatalogDebounce::Clock::time_point at) {
  const uint64_t before = d.received;
  d.received += n;
  d.note(before, at);
}

}  // namespace

TEST_CASE("nothing received: nothing due, wait without limit") {
  CatalogDebounce d;
  CHECK_FALSE(d.pending());
  CHECK_FALSE(d.due(t0));
  CHECK(d.wait_ms(t0) == -1);
  d.note(0, t0);  // nothing new
  CHECK_FALSE(d.pending());
  CHECK(d.wait_ms(t0) == -1);
}

TEST_CASE("one notification is due after the quiet interval") {
  CatalogDebounce d;
  receive(d, 1, t0);
  CHECK(d.pending());
  CHECK_FALSE(d.due(t0));
  CHECK(d.wait_ms(t0) == 25);
  CHECK_FALSE(d.due(t0 + milliseconds(24)));
  CHECK(d.wait_ms(t0 + milliseconds(24)) == 1);
  CHECK(d.due(t0 + milliseconds(25)));
  CHECK(d.wait_ms(t0 + milliseconds(25)) == 0);
  CHECK(d.wait_ms(t0 + milliseconds(100)) == 0);
  d.handle();
  CHECK_FALSE(d.pending());
  CHECK_FALSE(d.due(t0 + milliseconds(100)));
  CHECK(d.wait_ms(t0 + milliseconds(100)) == -1);
}

TEST_CASE("a burst is refreshed once, when it goes quiet") {
  CatalogDebounce d;
  receive(d, 1, t0);
  receive(d, 3, t0 + milliseconds(10));
  receive(d, 1, t0 + milliseconds(20));
  CHECK(d.first == t0);
  CHECK(d.last == t0 + milliseconds(20));
  CHECK_FALSE(d.due(t0 + milliseconds(44)));
  CHECK(d.wait_ms(t0 + milliseconds(30)) == 15);
  CHECK(d.due(t0 + milliseconds(45)));
  d.handle();
  CHECK(d.handled == 5);
  CHECK_FALSE(d.pending());
}

TEST_CASE("a burst that never goes quiet is refreshed at the maximum delay") {
  CatalogDebounce d;
  for (int ms = 0; ms < 250; ms += 10) {
    receive(d, 1, t0 + milliseconds(ms));
    CHECK_FALSE(d.due(t0 + milliseconds(ms)));
  }
  CHECK(d.first == t0);
  // Quiet until 240 + 25 = 265, but at most 250 after the first.
  CHECK(d.wait_ms(t0 + milliseconds(240)) == 10);
  receive(d, 1, t0 + milliseconds(250));
  CHECK(d.due(t0 + milliseconds(250)));
  CHECK(d.wait_ms(t0 + milliseconds(250)) == 0);
}

TEST_CASE("notifications during a refresh begin the next burst") {
  CatalogDebounce d;
  receive(d, 2, t0);
  d.handle();                             // the refresh begins at t0 + 25 ...
  receive(d, 1, t0 + milliseconds(300));  // ... and DDL arrives after it
  CHECK(d.pending());
  CHECK(d.first == t0 + milliseconds(300));
  CHECK_FALSE(d.due(t0 + milliseconds(310)));
  CHECK(d.due(t0 + milliseconds(325)));
}

TEST_CASE("a burst not yet handled keeps its first notification") {
  CatalogDebounce d;
  receive(d, 1, t0);
  receive(d, 1, t0 + milliseconds(200));
  CHECK(d.first == t0);  // not restarted by the second
  CHECK(d.due(t0 + milliseconds(225)));
  CHECK(d.wait_ms(t0 + milliseconds(210)) == 15);
  CHECK(d.wait_ms(t0 + milliseconds(240)) == 0);
}
