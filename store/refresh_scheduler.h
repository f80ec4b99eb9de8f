// RefreshScheduler: PolicyStore's background refresh thread. Each listed
// table is refreshed again a policy's `refresh` interval after its served
// snapshot was built (or after the scheduler first saw it), and at once
// when another replica asked this one (the builder) for it; requests for the
// same table before the thread takes them are one refresh (a baseline when
// any of them asked for REANONYMIZE).
//
// What a refresh is, the policies and the served snapshots are the
// store's: the scheduler reaches them through its Hooks, called on its
// thread; `requested` and `due` outside its lock, `policies` and `built_at`
// under it (so they must not call the scheduler).
//
// Thread-safety: every member may be called from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "policy/table_policy.h"

namespace kanon::store {

class RefreshScheduler {
 public:
  struct Hooks {
    // The policies as now loaded (re-read after reschedule()).
    std::function<std::vector<policy::TablePolicy>()> policies;
    // When the served snapshot of a table was built; none while none is served.
    std::function<std::optional<std::chrono::system_clock::time_point>(const std::string& table)>
        built_at;
    // A refresh another replica asked for; `baseline` for REANONYMIZE.
    std::function<void(const std::string& table, bool baseline)> requested;
    // A table whose refresh interval has passed.
    std::function<void(const std::string& table)> due;
  };
  struct Request {
    std::string table;
    bool baseline = false;
  };

  explicit RefreshScheduler(Hooks hooks);
  ~RefreshScheduler();  // stop()
  RefreshScheduler(const RefreshScheduler&) = delete;
  RefreshScheduler& operator=(const RefreshScheduler&) = delete;

  // Starts the thread; false (and nothing done) when it runs already.
  bool start();
  // Stops the thread (after the refresh it is in) and joins it.
  void stop();
  // Tells the thread to stop, without waiting (stop() then joins it).
  void begin_stop();
  // The policies changed (RELOAD): the thread reads them and their schedule
  // again.
  void reschedule();
  // Refreshes asked for, taken by the thread in table order.
  void request(const std::vector<Request>& requests);

 private:
  void run();

  const Hooks hooks_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  uint64_t generation_ = 0;  // bumped by reschedule()
  std::set<std::string> requested_;
  std::set<std::string> baseline_requested_;
  std::thread thread_;
};

}  // namespace kanon::store
