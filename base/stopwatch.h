// Stopwatch: elapsed wall time (steady clock) and CPU time of the calling
// thread since it was started, in milliseconds, plus laps for timing the
// phases of a run one after the other.
#pragma once

#include <chrono>

namespace kanon::base {

class Stopwatch {
 public:
  Stopwatch() { restart(); }

  void restart();
  // Wall milliseconds since the start.
  double ms() const;
  // CPU milliseconds of the calling thread since the start (meaningful when
  // the same thread started the watch).
  double cpu_ms() const;
  // Wall milliseconds since the previous lap (or the start); starts a new lap.
  double lap_ms();

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point start_;
  Clock::time_point lap_;
  double cpu_start_ = 0;
};

// CPU milliseconds the calling thread has used.
double thread_cpu_ms();

}  // namespace kanon::base
