// ExportJobs: EXPORT commands started from the web console. Each runs the
// console's own EXPORT (AdminConsole, so the same settings, checks and
// report) on a thread of its own, so a long export never holds the blocking
// pool; the page polls its progress and notices and may cancel it (as
// Ctrl-C does in psql: nothing is written). At most `max_running` at once;
// the latest `keep` finished jobs stay listed. The destructor cancels and
// joins every running job.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "proxy/admin_console.h"

namespace kanon::web {

enum class JobState { kRunning, kDone, kFailed, kCancelled };
const char* to_string(JobState state);

struct JobView {
  uint64_t id = 0;
  std::string user, table, command;
  JobState state = JobState::kRunning;
  double progress = 0;                     // 0 to 1
  std::vector<std::string> notices;        // the EXPORT's progress lines
  std::optional<proxy::ResultSet> result;  // when done: the console's answer row
  std::string sqlstate, error;             // when failed or cancelled
};

class ExportJobs {
 public:
  explicit ExportJobs(proxy::ServerContext& context, size_t max_running = 2, size_t keep = 20)
      : context_(context), max_running_(max_running), keep_(keep) {}
  ~ExportJobs();

  // Starts `command` (EXPORT <table> ...) for `table`; nullopt when
  // max_running jobs run.
  std::optional<uint64_t> start(const std::string& user, const std::string& table,
                                const std::string& command);
  bool cancel(uint64_t id);
  std::vector<JobView> list() const;

 private:
  struct Job {
    JobView view;
    proxy::ConsoleChannel channel;
    std::thread thread;
  };
  void run(Job& job);
  static void collect(Job& job);  // notices and progress into the view (under mu_)

  proxy::ServerContext& context_;
  const size_t max_running_, keep_;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Job>> jobs_;  // oldest first
  uint64_t next_id_ = 1;
};

}  // namespace kanon::web
