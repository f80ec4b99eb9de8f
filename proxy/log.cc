#include "proxy/log.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <string>

#include "base/text.h"

namespace kanon::proxy {
namespace {

std::atomic<int> g_level{static_cast<int>(LogLevel::kInfo)};
std::mutex g_mutex;

}  // namespace

void set_log_level(LogLevel level) {
  g_level.store(static_cast<int>(level));
}

bool log_enabled(LogLevel level) {
  return static_cast<int>(level) >= g_level.load();
}

void log_line(LogLevel level, std::string_view message) {
  using namespace std::chrono;
  const auto now = system_clock::now();
  const std::time_t secs = system_clock::to_time_t(now);
  const auto millis = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
  const std::string line = fmt::format("{}.{:03}Z {:<7} {}\n", stamp, millis,
                                       settings::to_string(level), base::one_line(message));
  const std::lock_guard lock(g_mutex);
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace kanon::proxy
