#include "proxy/io_placement.h"

#include <fmt/format.h>

#include <ctime>

namespace kanon::proxy {

IoPlacement::IoPlacement(size_t threads, bool pack) : pack_(pack) {
  for (size_t i = 0; i < std::max<size_t>(threads, 1); ++i)
    threads_.push_back(std::make_unique<Thread>());
}

void IoPlacement::enter_thread(size_t index) {
  Thread& t = *threads_.at(index);
  if (pthread_getcpuclockid(pthread_self(), &t.clock) == 0) t.known.store(true);
}

void IoPlacement::sample() {
  const auto now = std::chrono::steady_clock::now();
  const int64_t wall_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(now - last_sample_).count();
  last_sample_ = now;
  for (auto& t : threads_) {
    timespec ts{};
    if (!t->known.load() || clock_gettime(t->clock, &ts) != 0) continue;
    const int64_t cpu_ns = int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
    if (t->last_cpu_ns >= 0 && wall_ns > 0)
      t->permille.store(static_cast<uint32_t>((cpu_ns - t->last_cpu_ns) * 1000 / wall_ns));
    t->last_cpu_ns = cpu_ns;
  }
}

size_t IoPlacement::pack(const std::vector<uint32_t>& permille, uint32_t busy) {
  size_t least = 0;
  for (size_t i = 0; i < permille.size(); ++i) {
    if (permille[i] < busy) return i;
    if (permille[i] < permille[least]) least = i;
  }
  return least;
}

size_t IoPlacement::pick() {
  if (!pack_) {
    const size_t i = next_;
    next_ = (next_ + 1) % threads_.size();
    return i;
  }
  std::vector<uint32_t> loads;
  for (const auto& t : threads_) loads.push_back(t->permille.load());
  return pack(loads, kBusyPermille);
}

void IoPlacement::session_started(size_t index) {
  ++threads_.at(index)->sessions;
}
void IoPlacement::session_ended(size_t index) {
  --threads_.at(index)->sessions;
}

std::string IoPlacement::loads_text() const {
  std::string out;
  for (const auto& t : threads_)
    out += fmt::format("{}{:.2f}", out.empty() ? "" : " ", t->permille.load() / 1000.0);
  return out;
}

std::string IoPlacement::sessions_text() const {
  std::string out;
  for (const auto& t : threads_)
    out += fmt::format("{}{}", out.empty() ? "" : " ", t->sessions.load());
  return out;
}

}  // namespace kanon::proxy
