#include "tests/support/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace kanon::testing {
namespace {

std::vector<std::string> merged_environment(const Env& extra) {
  Env all;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string kv(*e);
    const auto eq = kv.find('=');
    if (eq != std::string::npos) all[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : extra) all[k] = v;
  std::vector<std::string> out;
  for (const auto& [k, v] : all) out.push_back(k + "=" + v);
  return out;
}

std::vector<char*> c_strings(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

int decode_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return -WTERMSIG(status);
  return -1;
}

// In the child: set up fds, then exec; never returns.
[[noreturn]] void exec_child(std::vector<std::string> argv, const Env& env) {
  std::vector<std::string> envs = merged_environment(env);
  auto cargv = c_strings(argv);
  auto cenv = c_strings(envs);
  execvpe(cargv[0], cargv.data(), cenv.data());
  const std::string msg = "exec " + argv[0] + ": " + std::strerror(errno) + "\n";
  (void)!write(2, msg.data(), msg.size());
  _exit(127);
}

}  // namespace

CommandResult run_command(const std::vector<std::string>& argv, const Env& env,
                          const std::string& input) {
  // A child that exits before reading all of `input` must not kill the test.
  static const bool sigpipe_ignored = (signal(SIGPIPE, SIG_IGN), true);
  (void)sigpipe_ignored;
  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
    throw std::runtime_error("pipe failed");
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    exec_child(argv, env);
  }
  close(in[0]);
  close(out[1]);
  close(err[1]);
  CommandResult result;
  size_t written = 0;
  int in_fd = in[1];
  if (input.empty()) {
    close(in_fd);
    in_fd = -1;
  } else {
    fcntl(in_fd, F_SETFL, O_NONBLOCK);
  }
  int fds_out[2] = {out[0], err[0]};
  char buf[65536];
  while (fds_out[0] >= 0 || fds_out[1] >= 0) {
    pollfd fds[3] = {{fds_out[0], POLLIN, 0}, {fds_out[1], POLLIN, 0}, {in_fd, POLLOUT, 0}};
    if (poll(fds, 3, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds_out[i] < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = read(fds_out[i], buf, sizeof buf);
      if (n > 0) {
        (i == 0 ? result.out : result.err).append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fds_out[i]);
        fds_out[i] = -1;
      }
    }
    if (in_fd >= 0 && (fds[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
      const ssize_t n = write(in_fd, input.data() + written, input.size() - written);
      if (n > 0) written += static_cast<size_t>(n);
      if (n < 0 || written == input.size()) {
        close(in_fd);
        in_fd = -1;
      }
    }
  }
  if (in_fd >= 0) close(in_fd);
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_code = decode_status(status);
  return result;
}

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const std::string& log_path,
                           const Env& env) {
  const int log_fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) throw std::runtime_error("cannot open " + log_path);
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    const int devnull = open("/dev/null", O_RDONLY);
    dup2(devnull, 0);
    dup2(log_fd, 1);
    dup2(log_fd, 2);
    exec_child(argv, env);
  }
  close(log_fd);
}

ChildProcess::~ChildProcess() {
  if (running() && signal_and_wait(SIGTERM, 5) == -1000) signal_and_wait(SIGKILL, 5);
}

bool ChildProcess::running() {
  if (reaped_ || pid_ <= 0) return false;
  if (waitpid(pid_, &status_, WNOHANG) == pid_) reaped_ = true;
  return !reaped_;
}

int ChildProcess::signal_and_wait(int signo, int seconds) {
  if (running()) kill(pid_, signo);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (running()) {
    if (std::chrono::steady_clock::now() > deadline) return -1000;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return decode_status(status_);
}

std::string find_executable(const std::string& name) {
  std::string dirs = "/usr/sbin:/usr/local/sbin";
  if (const char* path = std::getenv("PATH")) dirs = std::string(path) + ":" + dirs;
  std::istringstream in(dirs);
  std::string dir;
  while (std::getline(in, dir, ':')) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace kanon::testing
