// IoPlacement: the packing rule (the first thread under half a core, else
// the least busy), spread's turns, the session counts, and a thread's load
// read from its CPU clock.
#include "proxy/io_placement.h"

#include <doctest/doctest.h>

#include <ctime>
#include <string>

using kanon::proxy::IoPlacement;

TEST_CASE("IoPlacement::pack: the first thread not busy, else the least busy") {
  CHECK(IoPlacement::pack({0, 0}, 500) == 0);
  CHECK(IoPlacement::pack({499, 0}, 500) == 0);
  CHECK(IoPlacement::pack({500, 0}, 500) == 1);
  CHECK(IoPlacement::pack({600, 100, 0}, 500) == 1);
  CHECK(IoPlacement::pack({900, 600, 700}, 500) == 1);
  CHECK(IoPlacement::pack({800, 900}, 500) == 0);
  CHECK(IoPlacement::pack({7}, 500) == 0);
}

TEST_CASE("IoPlacement: pack keeps an idle server on the first thread, spread takes turns") {
  IoPlacement packed(3, true);
  for (int i = 0; i < 4; ++i) CHECK(packed.pick() == 0);
  IoPlacement spread(3, false);
  CHECK(spread.pick() == 0);
  CHECK(spread.pick() == 1);
  CHECK(spread.pick() == 2);
  CHECK(spread.pick() == 0);
}

TEST_CASE("IoPlacement: sessions per thread") {
  IoPlacement p(2, true);
  CHECK(p.sessions_text() == "0 0");
  p.session_started(0);
  p.session_started(0);
  p.session_started(1);
  p.session_ended(0);
  CHECK(p.sessions_text() == "1 1");
}

TEST_CASE("IoPlacement: a thread's load comes from its CPU clock") {
  IoPlacement p(2, true);
  p.enter_thread(0);  // this thread; thread 1 never entered: no load
  p.sample();         // the first sample only reads the clocks
  CHECK(p.loads_text() == "0.00 0.00");
  // Spend 200 ms of this thread's CPU (however long that takes).
  timespec start{}, now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
  volatile uint64_t sink = 0;
  do {
    for (int i = 0; i < 100000; ++i) sink = sink + i;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  } while ((now.tv_sec - start.tv_sec) * 1'000'000'000 + (now.tv_nsec - start.tv_nsec) <
           200'000'000);
  p.sample();
  const std::string loads = p.loads_text();
  INFO(loads);
  CHECK(std::stod(loads.substr(0, loads.find(' '))) > 0.0);
  CHECK(loads.substr(loads.find(' ') + 1) == "0.00");
}
