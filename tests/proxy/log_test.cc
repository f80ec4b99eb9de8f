// The log writer: every line is one line, whatever the message holds.
// Control characters (a newline in a user name, an ANSI escape in a
// statement) are written as escapes.
#include "proxy/log.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

using namespace kanon::proxy;

namespace {

// What log() writes to stderr for `user`, without the time stamp and level.
std::string logged(const std::string& user) {
  char path[] = "/tmp/kanon-log-test.XXXXXX";
  const int file = mkstemp(path);
  REQUIRE(file >= 0);
  const int saved = dup(STDERR_FILENO);
  REQUIRE(dup2(file, STDERR_FILENO) >= 0);
  log(LogLevel::kWarning, "login as \"{}\" refused", user);
  std::fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  close(file);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::remove(path);
  const std::string line = text.str();
  const size_t start = line.find("login as");
  REQUIRE(start != std::string::npos);
  return line.substr(start);
}

}  // namespace

TEST_CASE("control characters in a message are escaped: one event, one line") {
  CHECK(logged("alice") == "login as \"alice\" refused\n");
  // A newline would forge a line of its own.
  CHECK(logged("x\n2026-01-01T00:00:00.000Z info    web console: root logged in") ==
        "login as \"x\\n2026-01-01T00:00:00.000Z info    web console: root logged in\" "
        "refused\n");
  CHECK(logged("a\rb\tc") == "login as \"a\\rb\\tc\" refused\n");
  // An ANSI escape (clear the screen), DEL and NUL.
  CHECK(logged(std::string("\x1b[2J\x7f", 5) + std::string(1, '\0')) ==
        "login as \"\\x1b[2J\\x7f\\x00\" refused\n");
  // UTF-8 stays as it is; a backslash is doubled, so a typed "\n" cannot
  // pass for an escaped newline; a byte outside UTF-8 (0x9B: CSI to an 8-bit
  // terminal) and a right-to-left override are escaped.
  CHECK(logged("Jos\xC3\xA9 \\n") == "login as \"Jos\xC3\xA9 \\\\n\" refused\n");
  CHECK(logged("a\x9b"
               "2Jb\xe2\x80\xae") == "login as \"a\\x9b2Jb\\u202e\" refused\n");
}
