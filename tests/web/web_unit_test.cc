// The web console's pure parts: login sessions (expiry by idle time and by
// age, eviction, logout, tokens) and the failed-login throttle with a clock
// passed in, and the HTTP text it reads and writes (percent-decoding, forms,
// cookies, Content-Disposition).
#include <doctest/doctest.h>

#include <set>

#include "web/connection_limits.h"
#include "web/http_text.h"
#include "web/login_sessions.h"

using namespace kanon::web;
using namespace std::chrono_literals;

TEST_CASE("a session lives while it is used, and ends after the idle timeout or its lifetime") {
  LoginSessions sessions(30min, 12h);
  const Clock::time_point t0{};
  const LoginSession s = sessions.open("alice", t0);
  CHECK(s.user == "alice");
  CHECK(s.id != s.csrf);
  REQUIRE(sessions.touch(s.id, t0 + 29min));
  // Used at 29 min: alive until 58 min.
  REQUIRE(sessions.touch(s.id, t0 + 58min));
  CHECK_FALSE(sessions.touch(s.id, t0 + 88min));  // idle for 30 min
  CHECK(sessions.size() == 0);                    // and gone

  const LoginSession busy = sessions.open("bob", t0);
  for (auto t = t0; t < t0 + 12h; t += 20min) REQUIRE(sessions.touch(busy.id, t));
  CHECK_FALSE(sessions.touch(busy.id, t0 + 12h));  // however busy, 12 h at most
}

TEST_CASE("unknown, closed and forged ids find no session") {
  LoginSessions sessions(30min, 12h);
  const Clock::time_point t0{};
  const LoginSession s = sessions.open("alice", t0);
  CHECK_FALSE(sessions.touch("", t0));
  CHECK_FALSE(sessions.touch(s.csrf, t0));  // the CSRF token is not a session id
  std::string forged = s.id;
  forged.back() = forged.back() == '0' ? '1' : '0';
  CHECK_FALSE(sessions.touch(forged, t0));
  sessions.close(s.id);
  CHECK_FALSE(sessions.touch(s.id, t0));
}

TEST_CASE("at most max_sessions live: the least recently used goes first") {
  LoginSessions sessions(30min, 12h, 2);
  const Clock::time_point t0{};
  const auto a = sessions.open("a", t0);
  const auto b = sessions.open("b", t0 + 1min);
  REQUIRE(sessions.touch(a.id, t0 + 2min));  // b is now the least recently used
  const auto c = sessions.open("c", t0 + 3min);
  CHECK(sessions.size() == 2);
  CHECK(sessions.touch(a.id, t0 + 4min));
  CHECK_FALSE(sessions.touch(b.id, t0 + 4min));
  CHECK(sessions.touch(c.id, t0 + 4min));
}

TEST_CASE("tokens are 64 hex digits, all different; same_token compares whole tokens") {
  std::set<std::string> seen;
  for (int i = 0; i < 200; ++i) {
    const std::string t = random_token();
    REQUIRE(t.size() == 64);
    REQUIRE(t.find_first_not_of("0123456789abcdef") == std::string::npos);
    seen.insert(t);
  }
  CHECK(seen.size() == 200);
  CHECK(same_token("abc", "abc"));
  CHECK_FALSE(same_token("abc", "abd"));
  CHECK_FALSE(same_token("abc", "ab"));
  CHECK_FALSE(same_token("", ""));  // an empty token never matches
}

TEST_CASE("forms, queries and cookies") {
  CHECK(percent_decode("a%20b+c") == "a b c");
  CHECK(percent_decode("a+b", false) == "a+b");
  CHECK(percent_decode("100%") == "100%");    // a bad escape is kept
  CHECK(percent_decode("%zz%4") == "%zz%4");  // so is a short one
  CHECK(percent_decode("%C3%A9") == "\xC3\xA9");
  const auto form = parse_form("user=kanon_scram&password=p%26w%3Dx&&empty=&flag&user=second");
  CHECK(form.at("user") == "kanon_scram");  // the first of repeated names
  CHECK(form.at("password") == "p&w=x");
  CHECK(form.at("empty").empty());
  CHECK(form.count("flag") == 1);
  CHECK(cookie_value("a=1; kanon_session=xyz ;b=2", "kanon_session") == "xyz");
  CHECK_FALSE(cookie_value("kanon_sessionx=1; x=kanon_session", "kanon_session"));
  CHECK(target_path("/api/tree?table=adult") == "/api/tree");
  CHECK(target_query("/api/tree?table=adult") == "table=adult");
  CHECK(target_query("/") == "");
}

TEST_CASE("a download's file name cannot end its quoted string or add parameters") {
  CHECK(attachment_disposition("people.csv") == "attachment; filename=\"people.csv\"");
  // The name of an export to /tmp/x/q"; filename=evil.html; x=".csv
  CHECK(attachment_disposition("q\"; filename=evil.html; x=\".csv") ==
        "attachment; filename=\"q__ filename=evil.html_ x=_.csv\"");
  CHECK(attachment_disposition("a\\b\r\nSet-Cookie: x=1\x7f.csv") ==
        "attachment; filename=\"a_b__Set-Cookie: x=1_.csv\"");
  // Non-ASCII: '_' in filename, percent-encoded UTF-8 in filename*.
  CHECK(attachment_disposition("caf\xC3\xA9 \"x\".csv") ==
        "attachment; filename=\"caf__ _x_.csv\"; filename*=UTF-8''caf%C3%A9%20_x_.csv");
}

TEST_CASE("failed logins: after the limit an address waits, each failure restarts the pause") {
  FailedLogins failed(3, 30s);
  const Clock::time_point t0{};
  for (int i = 0; i < 3; ++i) {
    CHECK(failed.begin("10.0.0.1", t0).count() == 0);
    failed.failed("10.0.0.1", t0);
  }
  CHECK(failed.begin("10.0.0.1", t0) == 30s);
  CHECK(failed.begin("10.0.0.1", t0 + 10s) == 20s);
  CHECK(failed.begin("10.0.0.2", t0).count() == 0);  // another address
  failed.failed("10.0.0.2", t0);
  CHECK(failed.begin("10.0.0.1", t0 + 30s).count() == 0);
  failed.failed("10.0.0.1", t0 + 31s);  // still over the limit: a new pause
  CHECK(failed.begin("10.0.0.1", t0 + 31s) == 30s);
  CHECK(failed.begin("10.0.0.1", t0 + 61s).count() == 0);
  failed.succeeded("10.0.0.1");
  CHECK(failed.begin("10.0.0.1", t0 + 61s).count() == 0);
}

TEST_CASE("failed logins: attempts in flight count, so logins sent at once are limited too") {
  FailedLogins failed(3, 30s);
  const Clock::time_point t0{};
  // Three attempts begin before any has an answer: a fourth must wait.
  for (int i = 0; i < 3; ++i) REQUIRE(failed.begin("10.0.0.1", t0).count() == 0);
  for (int i = 0; i < 57; ++i) CHECK(failed.begin("10.0.0.1", t0) == 30s);
  CHECK(failed.begin("10.0.0.2", t0).count() == 0);  // another address may try
  // One succeeds: its slot is free again; the other two fail.
  failed.succeeded("10.0.0.1");
  failed.failed("10.0.0.1", t0 + 1s);
  failed.failed("10.0.0.1", t0 + 1s);
  REQUIRE(failed.begin("10.0.0.1", t0 + 1s).count() == 0);
  CHECK(failed.begin("10.0.0.1", t0 + 1s) == 30s);
  failed.failed("10.0.0.1", t0 + 2s);  // the third failure in a row
  CHECK(failed.begin("10.0.0.1", t0 + 2s) == 30s);
  // After the pause, one attempt at a time, as when they come one by one.
  REQUIRE(failed.begin("10.0.0.1", t0 + 32s).count() == 0);
  CHECK(failed.begin("10.0.0.1", t0 + 32s) == 30s);
  CHECK(failed.begin("10.0.0.1", t0 + 40s) == 30s);
  failed.failed("10.0.0.1", t0 + 41s);
  CHECK(failed.begin("10.0.0.1", t0 + 41s) == 30s);
}

TEST_CASE("connection limits: in all and per address; a slot gives its place back") {
  auto limits = std::make_shared<ConnectionLimits>(4, 2);
  auto a1 = limits->admit("10.0.0.1");
  auto a2 = limits->admit("10.0.0.1");
  REQUIRE(a1);
  REQUIRE(a2);
  CHECK_FALSE(limits->admit("10.0.0.1"));  // per address
  auto b1 = limits->admit("10.0.0.2");
  auto c1 = limits->admit("10.0.0.3");
  REQUIRE(b1);
  REQUIRE(c1);
  CHECK(limits->size() == 4);
  CHECK_FALSE(limits->admit("10.0.0.4"));  // in all
  CHECK(limits->from("10.0.0.1") == 2);
  a1.reset();
  CHECK(limits->size() == 3);
  CHECK(limits->from("10.0.0.1") == 1);
  {
    auto moved = std::move(*a2);  // a moved slot gives its place back once
    a2.reset();
    CHECK(limits->from("10.0.0.1") == 1);
  }
  CHECK(limits->from("10.0.0.1") == 0);
  CHECK(limits->size() == 2);
  CHECK(limits->admit("10.0.0.4"));  // a temporary: admitted and given back at once
  CHECK(limits->size() == 2);
}
