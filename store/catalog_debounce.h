// The catalog watcher's debounce decision, without a database: a burst of
// DDL notifications (a migration) gives one catalog refresh. The refresh is
// due once notifications have been quiet for kQuiet, but no later than
// kMaxDelay after the burst's first one.
//
// Not thread-safe: the catalog watcher's thread owns its CatalogDebounce.
#pragma once

#include <chrono>
#include <cstdint>

namespace kanon::store {

struct CatalogDebounce {
  using Clock = std::chrono::steady_clock;
  static constexpr Clock::duration kQuiet = std::chrono::milliseconds(25);
  static constexpr Clock::duration kMaxDelay = std::chrono::milliseconds(250);

  uint64_t received = 0;      // notifications received (the LISTEN receiver counts them)
  uint64_t handled = 0;       // ... that a refresh the watcher began covers
  Clock::time_point first{};  // the pending burst's first notification
  Clock::time_point last{};   // ... and its latest

  // `received` was `before` until now: the notifications since belong to the
  // pending burst, or begin one.
  void note(uint64_t before, Clock::time_point now);
  // Notifications wait for a refresh.
  bool pending() const { return received > handled; }
  // The pending burst is to be refreshed at `now`.
  bool due(Clock::time_point now) const;
  // Marks every notification received as handled (the refresh begins).
  void handle() { handled = received; }
  // How long to wait for more notifications at `now`, in milliseconds:
  // until the pending burst is due (0 when it is), -1 (no limit) when
  // nothing is pending.
  int wait_ms(Clock::time_point now) const;
};

}  // namespace kanon::store
