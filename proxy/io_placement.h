// IoPlacement: which I/O thread a new session runs on, and how busy each
// thread is.
//
// `io_placement: spread` (the default) takes the threads in turn. `pack`
// puts new sessions on the first I/O thread that used less than half a core
// over the last sample (a quarter of a second), and, when every thread is
// that busy, on the least busy one. A session stays on its thread;
// placement applies to sessions that connect later.
//
// The trade (bench/README.md, "Stop 45"): an I/O thread with a few sessions
// sleeps in epoll_wait between their messages and is woken for the next
// one, and on a small host those wake-ups are much of what a relayed message
// costs. Two threads sharing eight pgbench clients each sleep and wake about
// as often as one thread that has them all: packed, kanon's CPU per
// transaction is PgBouncer's. But a thread is also a share of the CPU
// scheduler's time: on two cores shared with PostgreSQL and the clients,
// one packed thread relays 5-15% fewer transactions than two (restricted
// sessions, whose statements are rewritten, up to 20% fewer), so spread
// stays the default.
#pragma once

#include <pthread.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kanon::proxy {

class IoPlacement {
 public:
  static constexpr uint32_t kBusyPermille = 500;  // half a core
  static constexpr auto kSampleEvery = std::chrono::milliseconds(250);

  IoPlacement(size_t threads, bool pack);

  // On each I/O thread before it runs: its CPU clock is read from then on.
  void enter_thread(size_t index);
  // Reads every thread's CPU time: the load since the previous sample.
  // Called every kSampleEvery from one thread (the one that calls pick).
  void sample();
  // The thread the next session goes to.
  size_t pick();
  void session_started(size_t index);
  void session_ended(size_t index);

  size_t threads() const { return threads_.size(); }
  // Per thread, for SHOW STATS: share of a core at the last sample ("0.42
  // 0.00") and sessions ("8 0").
  std::string loads_text() const;
  std::string sessions_text() const;

  // The packing rule on given loads (per mille of a core).
  static size_t pack(const std::vector<uint32_t>& permille, uint32_t busy);

 private:
  struct Thread {
    std::atomic<bool> known{false};
    clockid_t clock{};
    int64_t last_cpu_ns = -1;
    std::atomic<uint32_t> permille{0};
    std::atomic<int32_t> sessions{0};
  };
  std::vector<std::unique_ptr<Thread>> threads_;
  const bool pack_;
  size_t next_ = 0;  // spread's turn
  std::chrono::steady_clock::time_point last_sample_ = std::chrono::steady_clock::now();
};

}  // namespace kanon::proxy
