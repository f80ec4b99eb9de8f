// Stopwatch: wall time, thread CPU time and laps only move forward.
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
  w.restart();
  CHECK(w.ms() < first_lap);
}

}  // namespace kanon::base
