// The background refresh's schedule (store/refresh_scheduler.h) with hooks
// that record what the scheduler asks for: requests from other replicas are
// taken at once, in table order, coalesced per table (a baseline when any
// asked for one); a table is due its refresh interval after it was built.
// No database; the tests wait on conditions, never on time.
#include "store/refresh_scheduler.h"

#include <doctest/doctest.h>

#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

using namespace kanon::policy;
using namespace kanon::store;

namespace {

TablePolicy policy(const std::string& table, std::chrono::milliseconds refresh) {
  TablePolicy p;
  p.schema = "public";
  p.table = table;
  p.k = 5;
  p.quasi_identifiers = {"city"};
  p.refresh = refresh;
  return p;
}

// What the scheduler asked for, in order: "requested <table>", "baseline
// <table>" or "due <table>". A requested refresh of `hold` waits until
// release() is called.
class Recorder {
 public:
  RefreshScheduler::Hooks hooks(std::vector<TablePolicy> policies) {
    RefreshScheduler::Hooks h;
    h.policies = [policies] { return policies; };
    h.built_at = [this](const std::string& table) {
      std::lock_guard lock(mu_);
      const auto it = built_at_.find(table);
      return it == built_at_.end()
                 ? std::optional<std::chrono::system_clock::time_point>()
                 : std::optional<std::chrono::system_clock::time_point>(it->second);
    };
    h.requested = [this](const std::string& table, bool baseline) {
      std::unique_lock lock(mu_);
      calls_.push_back((baseline ? "baseline " : "requested ") + table);
      cv_.notify_all();
      if (table == hold_) cv_.wait(lock, [&] { return released_; });
    };
    h.due = [this](const std::string& table) {
      std::lock_guard lock(mu_);
      calls_.push_back("due " + table);
      cv_.notify_all();
    };
    return h;
  }
  void hold(const std::string& table) { hold_ = table; }
  void built(const std::string& table, std::chrono::system_clock::time_point at) {
    built_at_[table] = at;
  }
  void release() {
    std::lock_guard lock(mu_);
    released_ = true;
    cv_.notify_all();
  }
  // Waits until `n` calls were made; returns the calls.
  std::vector<std::string> wait_calls(size_t n) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return calls_.size() >= n; });
    return calls_;
  }
  std::vector<std::string> calls() {
    std::lock_guard lock(mu_);
    return calls_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> calls_;
  std::map<std::string, std::chrono::system_clock::time_point> built_at_;
  std::string hold_;
  bool released_ = false;
};

constexpr auto kHour = std::chrono::hours(1);

}  // namespace

TEST_CASE("stop without start, and start twice") {
  Recorder r;
  RefreshScheduler s(r.hooks({policy("t", kHour)}));
  s.stop();
  CHECK(s.start());
  CHECK_FALSE(s.start());
  s.stop();
  CHECK(s.start());  // again after a stop
  s.stop();
  CHECK(r.calls().empty());  // nothing due within the hour, nothing asked
}

TEST_CASE("requests are taken at once, in table order") {
  Recorder r;
  RefreshScheduler s(r.hooks({policy("a", kHour), policy("b", kHour)}));
  s.start();
  s.request({{"public.b", false}, {"public.a", true}});
  const auto calls = r.wait_calls(2);
  s.stop();
  CHECK(calls == std::vector<std::string>{"baseline public.a", "requested public.b"});
}

TEST_CASE("requests for one table before it is taken are one refresh") {
  Recorder r;
  r.hold("public.a");
  RefreshScheduler s(r.hooks({policy("a", kHour), policy("b", kHour)}));
  s.start();
  s.request({{"public.a", false}});
  r.wait_calls(1);  // the thread is in a's refresh, outside its lock
  s.request({{"public.b", false}});
  s.request({{"public.b", true}});
  s.request({{"public.b", false}});
  r.release();
  r.wait_calls(2);
  s.stop();
  CHECK(r.calls() == std::vector<std::string>{"requested public.a", "baseline public.b"});
}

TEST_CASE("a table is due its refresh interval after it was built") {
  Recorder r;
  // Built two hours ago with a one-hour interval: due at once; `b` was
  // never built and is due in an hour.
  r.built("public.a", std::chrono::system_clock::now() - 2 * kHour);
  RefreshScheduler s(r.hooks({policy("a", kHour), policy("b", kHour)}));
  s.start();
  const auto calls = r.wait_calls(1);
  s.stop();
  CHECK(calls.front() == "due public.a");
  for (const auto& c : r.calls()) CHECK(c == "due public.a");
}

TEST_CASE("reschedule re-reads the policies") {
  Recorder r;
  r.built("public.a", std::chrono::system_clock::now() - 2 * kHour);
  RefreshScheduler s(r.hooks({policy("a", kHour)}));
  s.reschedule();  // before start: nothing to wake
  s.start();
  r.wait_calls(1);
  s.reschedule();
  s.request({{"public.a", false}});
  const auto calls = r.wait_calls(2);
  s.stop();
  CHECK(calls[0] == "due public.a");
  CHECK(calls[1] == "requested public.a");
}
