// Stopwatch: wall time, thread CPU time and laps only move forward. No
// upper bound on time anywhere: the machine may be busy.
#include "base/stopwatch.h"

#include <doctest/doctest.h>

#include <thread>

namespace kanon::base {

TEST_CASE("wall time, laps and CPU time") {
  Stopwatch w;
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const double first_lap = w.lap_ms();
  CHECK(first_lap >= 19);
  volatile double sink = 0;
  for (int i = 0; i < 2000000; ++i) sink = sink + i;
  const double second_lap = w.lap_ms();
  CHECK(second_lap >= 0);
  CHECK(w.ms() >= first_lap + second_lap);
  CHECK(w.cpu_ms() > 0);
  CHECK(w.cpu_ms() <= w.ms() + 1);
  // A restart counts from then on: less than a watch started before it,
  // however long the thread is descheduled in between.
  Stopwatch before_restart;
  w.restart();
  const double since_restart = w.ms();
  CHECK(since_restart <= before_restart.ms());
}

}  // namespace kanon::base
