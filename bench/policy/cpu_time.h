// CPU seconds for the policy benchmarks: this process (getrusage), and a
// PostgreSQL cluster — the postmaster, the children it has reaped (parallel
// workers that ended) and its live children (backends) — from /proc; and the
// load average. On a shared machine CPU seconds are steadier than wall time.
#pragma once

#include <dirent.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace kanon::bench {

inline double self_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// Peak resident set of this process, in MB.
inline double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

inline std::string load_average() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  f >> a >> b >> c;
  return a + " " + b + " " + c;
}

// Fields of /proc/<pid>/stat after the command: [0] = state, [1] = ppid,
// [11..14] = utime, stime, cutime, cstime (ticks). False when it is gone.
inline bool proc_stat(long pid, long& ppid, long long ticks[4]) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(f, line)) return false;
  const auto close = line.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream in(line.substr(close + 2));
  std::string field;
  for (int i = 0; i <= 14 && in >> field; ++i) {
    if (i == 1) ppid = std::atol(field.c_str());
    if (i >= 11) ticks[i - 11] = std::atoll(field.c_str());
  }
  return true;
}

inline std::string proc_cmdline(long pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/cmdline");
  std::string s;
  std::getline(f, s);
  return s;
}

// CPU seconds of the cluster whose postmaster is `postmaster`: the children
// it has reaped (run the cluster with autovacuum off, so these are backends
// and parallel workers) and its other children — client backends, parallel
// workers, ended ones not yet reaped — but not the checkpointer, WAL writer
// and the other background processes.
inline double cluster_cpu_seconds(long postmaster) {
  const double hz = static_cast<double>(sysconf(_SC_CLK_TCK));
  long long total = 0, t[4] = {0, 0, 0, 0};
  long ppid = 0;
  if (proc_stat(postmaster, ppid, t)) total += t[2] + t[3];
  if (DIR* d = opendir("/proc")) {
    while (const dirent* e = readdir(d)) {
      const long pid = std::atol(e->d_name);
      if (pid <= 0 || pid == postmaster) continue;
      long long c[4] = {0, 0, 0, 0};
      if (!proc_stat(pid, ppid, c) || ppid != postmaster) continue;
      const std::string cmd = proc_cmdline(pid);
      bool background = false;
      for (const char* name : {"checkpointer", "background writer", "walwriter",
                               "autovacuum launcher", "logical replication launcher", "archiver"})
        background = background || cmd.find(name) != std::string::npos;
      if (!background) total += c[0] + c[1];
    }
    closedir(d);
  }
  return static_cast<double>(total) / hz;
}

// Waits (up to 5 s) until process `pid` has been reaped.
inline void wait_until_gone(long pid) {
  for (int i = 0; i < 500 && access(("/proc/" + std::to_string(pid)).c_str(), F_OK) == 0; ++i)
    usleep(10000);
}

// The postmaster's pid from a data directory's postmaster.pid.
inline long postmaster_pid(const std::string& data_dir) {
  std::ifstream f(data_dir + "/postmaster.pid");
  long pid = 0;
  f >> pid;
  return pid;
}

}  // namespace kanon::bench
