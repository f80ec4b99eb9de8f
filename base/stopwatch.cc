#include "base/stopwatch.h"

#include <time.h>

namespace kanon::base {

namespace {

double ms_between(std::chrono::steady_clock::time_point from,
                  std::chrono::steady_clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

}  // namespace

double thread_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

void Stopwatch::restart() {
  start_ = lap_ = Clock::now();
  cpu_start_ = thread_cpu_ms();
}

double Stopwatch::ms() const {
  return ms_between(start_, Clock::now());
}

double Stopwatch::cpu_ms() const {
  return thread_cpu_ms() - cpu_start_;
}

double Stopwatch::lap_ms() {
  const auto now = Clock::now();
  const double ms = ms_between(lap_, now);
  lap_ = now;
  return ms;
}

}  // namespace kanon::base
