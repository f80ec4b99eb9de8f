// Waiting on a condition, never on the clock alone: `until` asks again
// every few milliseconds until the condition holds. `limit` only keeps a
// broken test from hanging; on a busy machine a condition may take long,
// so give limits of a minute, not of what an idle machine needs.
#pragma once

#include <chrono>
#include <thread>

namespace kanon::testing {

template <typename Condition>
bool until(Condition&& condition, std::chrono::seconds limit = std::chrono::seconds(120)) {
  const auto give_up = std::chrono::steady_clock::now() + limit;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

}  // namespace kanon::testing
