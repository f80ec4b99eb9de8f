#include "store/refresh_scheduler.h"

#include <algorithm>
#include <map>

namespace kanon::store {

RefreshScheduler::RefreshScheduler(Hooks hooks) : hooks_(std::move(hooks)) {}

RefreshScheduler::~RefreshScheduler() {
  stop();
}

bool RefreshScheduler::start() {
  std::lock_guard lock(mu_);
  if (thread_.joinable()) return false;
  stopping_ = false;
  thread_ = std::thread([this] { run(); });
  return true;
}

void RefreshScheduler::begin_stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
}

void RefreshScheduler::stop() {
  begin_stop();
  if (thread_.joinable()) thread_.join();
}

void RefreshScheduler::reschedule() {
  {
    std::lock_guard lock(mu_);
    ++generation_;
  }
  wake_.notify_all();
}

void RefreshScheduler::request(const std::vector<Request>& requests) {
  {
    std::lock_guard lock(mu_);
    for (const auto& r : requests) {
      requested_.insert(r.table);
      if (r.baseline) baseline_requested_.insert(r.table);
    }
  }
  wake_.notify_all();
}

void RefreshScheduler::run() {
  using Clock = std::chrono::steady_clock;
  std::map<std::string, Clock::time_point> due;  // by table; re-read after a reload
  // A served snapshot (stored, maybe by an earlier run) is due a refresh
  // interval after it was built.
  const auto first_due = [&](const policy::TablePolicy& p) {
    const auto built_at = hooks_.built_at(p.name());
    if (!built_at) return Clock::now() + p.refresh;
    const auto age =
        std::chrono::duration_cast<Clock::duration>(std::chrono::system_clock::now() - *built_at);
    return Clock::now() + std::max(Clock::duration::zero(), p.refresh - age);
  };
  std::unique_lock lock(mu_);
  while (!stopping_) {
    const auto listed = hooks_.policies();
    std::map<std::string, Clock::time_point> next_due;
    for (const auto& p : listed) {
      const auto it = due.find(p.name());
      next_due[p.name()] = it != due.end() ? it->second : first_due(p);
    }
    due = std::move(next_due);
    auto wake_at = Clock::now() + std::chrono::hours(1);
    for (const auto& [name, t] : due) wake_at = std::min(wake_at, t);
    const uint64_t generation = generation_;
    wake_.wait_until(lock, wake_at,
                     [&] { return stopping_ || generation_ != generation || !requested_.empty(); });
    if (stopping_) break;
    if (generation_ != generation) continue;
    // Refreshes another replica asked the builder for.
    while (!requested_.empty() && !stopping_) {
      const std::string table = *requested_.begin();
      requested_.erase(requested_.begin());
      const bool baseline = baseline_requested_.erase(table) > 0;
      lock.unlock();
      hooks_.requested(table, baseline);
      lock.lock();
      due[table] = Clock::now() + std::chrono::hours(1);  // set again below when listed
      for (const auto& p : listed)
        if (p.name() == table) due[table] = Clock::now() + p.refresh;
    }
    for (const auto& p : listed) {
      if (due[p.name()] > Clock::now()) continue;
      lock.unlock();
      hooks_.due(p.name());
      lock.lock();
      due[p.name()] = Clock::now() + p.refresh;
      if (stopping_) break;
    }
  }
}

}  // namespace kanon::store
