// Running other programs from tests: one-shot commands with captured output,
// and long-running children (the proxy) that are always stopped.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace kanon::testing {

struct CommandResult {
  int exit_code = -1;  // -signal when killed by a signal
  std::string out;
  std::string err;
};

using Env = std::map<std::string, std::string>;

// Runs argv[0] (searched in PATH) with the current environment plus `env`,
// feeding `input` on stdin, and waits for it.
CommandResult run_command(const std::vector<std::string>& argv, const Env& env = {},
                          const std::string& input = {});

// A child process running in the background; its stdout and stderr go to
// `log_path`. The destructor kills it (SIGTERM, then SIGKILL).
class ChildProcess {
 public:
  ChildProcess(const std::vector<std::string>& argv, const std::string& log_path,
               const Env& env = {});
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  bool running();
  // Sends `signo` and waits up to `seconds`; returns the exit code (or
  // -signal), or -1000 if it did not exit in time.
  int signal_and_wait(int signo, int seconds);

 private:
  pid_t pid_ = -1;
  int status_ = 0;
  bool reaped_ = false;
};

// Where the executable `name` is: the first directory of PATH, then
// /usr/sbin and /usr/local/sbin, that holds it; "" when none does.
std::string find_executable(const std::string& name);

// The whole text of a file ("" if missing).
std::string read_file(const std::string& path);

}  // namespace kanon::testing
