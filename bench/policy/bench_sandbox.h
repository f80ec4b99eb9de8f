// A throwaway PostgreSQL 15 with the demo tables for the policy benchmarks
// (scripts/pg-sandbox.sh), stopped when the object goes away; and run(), a
// shell command's output.
#pragma once

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace kanon::bench {

inline std::string run(const std::string& cmd) {
  FILE* f = popen(cmd.c_str(), "r");
  if (!f) throw std::runtime_error("popen failed");
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof buf, f)) out += buf;
  if (pclose(f) != 0) throw std::runtime_error(cmd + " failed:\n" + out);
  return out;
}

struct Sandbox {
  std::string dir, port;
  Sandbox() {
    const std::string out = run(fmt::format("{}/scripts/pg-sandbox.sh start --demo --owner-pid {}",
                                            KANON_SOURCE_DIR, getpid()));
    for (size_t p = 0; p < out.size();) {
      const size_t e = out.find('\n', p);
      const std::string line = out.substr(p, e - p);
      if (line.rfind("KANON_PG_DIR=", 0) == 0) dir = line.substr(13);
      if (line.rfind("KANON_PG_PORT=", 0) == 0) port = line.substr(14);
      if (e == std::string::npos) break;
      p = e + 1;
    }
  }
  ~Sandbox() {
    if (!dir.empty())
      std::system((std::string(KANON_SOURCE_DIR) + "/scripts/pg-sandbox.sh stop " + dir).c_str());
  }
  Sandbox(const Sandbox&) = delete;
  Sandbox& operator=(const Sandbox&) = delete;
  std::string conninfo() const {
    return "host=127.0.0.1 port=" + port + " user=postgres dbname=postgres";
  }
};

}  // namespace kanon::bench
