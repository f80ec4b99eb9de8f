// The wait for the builder (store/builder_request.h) with scripted hooks
// and a clock that moves only when told: a newer stored version answers the
// request, the builder's error fails it, a replica that gets the lock builds
// itself, and 15 minutes without an answer give up. No database.
#include "store/builder_request.h"

#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

using kanon::store::ask_builder;
using kanon::store::BuilderRequest;
using std::chrono::minutes;
using std::chrono::seconds;

namespace {

// A request whose hooks record each call in `calls` and answer from the
// script: the wait finds a newer version on wait number `newer_at` (0:
// never), the builder's error appears on look number `error_at`, the lock
// is taken on try number `lead_at`. Each wait moves the clock by `step`.
struct Script {
  int newer_at = 0;
  int error_at = 0;
  bool error_throws = false;  // the database cannot be asked
  int lead_at = 0;
  bool send_throws = false;
  bool take_over_result = true;
  BuilderRequest::Clock::duration step = seconds(1);

  std::vector<std::string> calls;
  std::vector<std::string> failures;
  uint64_t waited_before = 99;
  BuilderRequest::Clock::duration waited_timeout{};
  BuilderRequest::Clock::time_point clock{minutes(60)};
  int waits = 0, looks = 0, tries = 0;

  BuilderRequest request() {
    BuilderRequest r;
    r.served_version = [this] {
      calls.push_back("served");
      return uint64_t{7};
    };
    r.send = [this] {
      calls.push_back("send");
      if (send_throws) throw std::runtime_error("connection refused");
    };
    r.builder_error = [this]() -> std::optional<std::string> {
      calls.push_back("error?");
      ++looks;
      if (error_throws) throw std::runtime_error("gone");
      if (error_at > 0 && looks >= error_at) return "out of memory";
      return std::nullopt;
    };
    r.wait_newer = [this](uint64_t before, BuilderRequest::Clock::duration timeout) {
      calls.push_back("wait");
      waited_before = before;
      waited_timeout = timeout;
      clock += step;
      ++waits;
      return newer_at > 0 && waits >= newer_at;
    };
    r.fail = [this](const std::string& error) { failures.push_back(error); };
    r.lead = [this] {
      calls.push_back("lead");
      ++tries;
      return lead_at > 0 && tries >= lead_at;
    };
    r.take_over = [this] {
      calls.push_back("build");
      return take_over_result;
    };
    r.now = [this] { return clock; };
    return r;
  }
};

using Calls = std::vector<std::string>;

// The calls of a request sent, then `rounds` waits without an answer, then
// `last`.
Calls after_rounds(int rounds, const Calls& last) {
  Calls calls{"served", "send"};
  for (int i = 0; i < rounds; ++i) calls.insert(calls.end(), {"wait", "error?", "lead"});
  calls.insert(calls.end(), last.begin(), last.end());
  return calls;
}

}  // namespace

TEST_CASE("a newer stored version answers the request") {
  Script s;
  s.newer_at = 1;
  CHECK(ask_builder(s.request()));
  CHECK(s.calls == Calls{"served", "send", "wait"});
  CHECK(s.waited_before == 7);  // the version served before the request was sent
  CHECK(s.waited_timeout == seconds(1));
  CHECK(s.failures.empty());

  Script later;  // after a few polls
  later.newer_at = 3;
  CHECK(ask_builder(later.request()));
  CHECK(later.calls == after_rounds(2, {"wait"}));
  CHECK(later.failures.empty());
}

TEST_CASE("a request that cannot be sent fails at once") {
  Script s;
  s.send_throws = true;
  CHECK_FALSE(ask_builder(s.request()));
  CHECK(s.calls == Calls{"served", "send"});
  CHECK(s.failures == Calls{"cannot ask the builder for a refresh: connection refused"});
}

TEST_CASE("the builder's error fails the request") {
  Script s;
  s.error_at = 2;
  CHECK_FALSE(ask_builder(s.request()));
  CHECK(s.calls == after_rounds(1, {"wait", "error?"}));
  CHECK(s.failures == Calls{"the builder's refresh failed: out of memory"});
}

TEST_CASE("no builder any more: this replica takes over") {
  Script s;
  s.lead_at = 2;
  CHECK(ask_builder(s.request()));
  CHECK(s.calls == after_rounds(1, {"wait", "error?", "lead", "build"}));
  CHECK(s.failures.empty());

  Script failed;
  failed.lead_at = 1;
  failed.take_over_result = false;  // its own build failed (published by the build)
  CHECK_FALSE(ask_builder(failed.request()));
  CHECK(failed.calls.back() == "build");
  CHECK(failed.failures.empty());
}

TEST_CASE("an unreadable answer is not a failure: the lock is tried") {
  Script s;
  s.error_throws = true;
  s.lead_at = 1;
  CHECK(ask_builder(s.request()));
  CHECK(s.calls == after_rounds(0, {"wait", "error?", "lead", "build"}));
  CHECK(s.failures.empty());
}

TEST_CASE("no answer within 15 minutes: the request gives up") {
  Script s;
  s.step = minutes(1);
  CHECK_FALSE(ask_builder(s.request()));
  CHECK(s.failures == Calls{"the builder did not store a new version within 15 minutes"});
  // Deadline at 15 minutes after sending; the 16th wait passes it.
  CHECK(s.waits == 16);
  CHECK(s.looks == 16);
  CHECK(s.tries == 16);
}

TEST_CASE("a version served in the wait that passes the deadline is taken") {
  Script s;
  s.step = minutes(1);
  s.newer_at = 16;
  CHECK(ask_builder(s.request()));
  CHECK(s.failures.empty());
  CHECK(s.looks == 15);
}
