// Two kanon replicas on one database behind Debian's HAProxy (issue 18,
// deployment): HAProxy checks each replica's /readyz, so a replica drained
// with SIGTERM leaves the pool while its open transaction finishes, and
// rejoins once restarted. A client loop through HAProxy (a restricted login,
// a masked SELECT, a new connection per iteration) keeps being served, with
// no iteration failing, ended or retried, while each replica in turn is
// drained and restarted: k1 with SIGTERM alone (its lame duck,
// shutdown_lame_duck 3 s, outlasts HAProxy's 100 ms checks, so HAProxy stops
// sending it clients before its listener closes and the sessions it had
// sent are over by then), k2 taken out of HAProxy first, then SIGTERM.
#include <doctest/doctest.h>
#include <libpq-fe.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "tests/support/haproxy.h"
#include "tests/support/kanon_proxy.h"
#include "tests/support/pg_sandbox.h"

using namespace kanon::testing;

namespace {

const char* kMaskedQuery = "SELECT name, ssn, occupation, city, state FROM people ORDER BY id";

bool in_ci() {
  const char* ci = std::getenv("CI");
  if (ci == nullptr) return false;
  const std::string v = ci;
  return !v.empty() && v != "0" && v != "false";
}

// Polls `condition` every 20 ms for up to `seconds`.
bool eventually(const std::function<bool()>& condition, int seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return condition();
}

bool is_shutdown_message(const std::string& m) {
  return m.find("terminating connection because kanon is shutting down") != std::string::npos;
}

// Rows as "a|b|c" lines, NULL as <null>.
std::string render(PGresult* res) {
  std::string out;
  for (int r = 0; r < PQntuples(res); ++r) {
    for (int c = 0; c < PQnfields(res); ++c) {
      if (c > 0) out += '|';
      out += PQgetisnull(res, r, c) ? "<null>" : PQgetvalue(res, r, c);
    }
    out += '\n';
  }
  return out;
}

// UTC time of day with milliseconds, to compare with haproxy's log.
std::string wall_clock() {
  const auto now = std::chrono::system_clock::now();
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch());
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%02d:%02d:%02d.%03d", tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(ms.count() % 1000));
  return buf;
}

void capture_notice(void* out, const char* message) {
  static_cast<std::string*>(out)->append(message);
}

// One kanon process on fixed ports, so that a restart comes back where
// HAProxy looks for it.
class Replica {
 public:
  explicit Replica(uint16_t backend_port) {
    char tmpl[] = "/tmp/kanon-replica.XXXXXX";
    if (mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = tmpl;
    port_ = free_port();
    metrics_ = free_port();
    config_ = dir_ + "/kanon.yaml";
    std::ofstream(config_) << "listen: {host: 127.0.0.1, port: " << port_ << "}\n"
                           << "backend: {host: 127.0.0.1, port: " << backend_port
                           << ", user: postgres, dbname: postgres}\n"
                           << "metrics: {listen: \"127.0.0.1:" << metrics_ << "\"}\n"
                           << "shutdown_lame_duck: 3s\n"
                           << "shutdown_grace: 60s\n"
                           << "log_level: info\n"
                           << "policies: [" << source_dir() << "/config/policies/people.yaml]\n";
  }
  ~Replica() {
    process_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  // Starts kanon and waits until /readyz answers 200 (the policy is built).
  void start() {
    ++starts_;
    process_ = std::make_unique<ChildProcess>(
        std::vector<std::string>{kanon_executable(), "proxy", "--config", config_}, log_path());
    if (!eventually([&] { return ready(); }, 60))
      throw std::runtime_error("kanon did not become ready; its log:\n" + log());
  }
  // SIGTERM, then waits for the exit (the drain); returns the exit code.
  int drain() { return process_->signal_and_wait(SIGTERM, 90); }

  uint16_t port() const { return port_; }
  uint16_t metrics_port() const { return metrics_; }
  bool ready() const { return http_get(metrics_, "/readyz").rfind("HTTP/1.1 200", 0) == 0; }
  std::string readyz() const { return http_get(metrics_, "/readyz"); }
  bool alive() const { return http_get(metrics_, "/healthz").rfind("HTTP/1.1 200", 0) == 0; }
  // A counter or gauge of /metrics (without labels); -1 when absent.
  long metric(const std::string& name) const {
    const std::string text = http_get(metrics_, "/metrics");
    const auto at = text.find("\n" + name + " ");
    if (at == std::string::npos) return -1;
    return std::stol(text.substr(at + name.size() + 2));
  }
  std::string log() const { return read_file(log_path()); }

 private:
  std::string log_path() const { return dir_ + "/kanon-" + std::to_string(starts_) + ".log"; }

  std::string dir_;
  std::string config_;
  uint16_t port_ = 0;
  uint16_t metrics_ = 0;
  int starts_ = 0;
  std::unique_ptr<ChildProcess> process_;
};

enum class Outcome { kServed, kEndedByDrain, kFailed };

// One iteration: connect as the restricted analyst, run the masked SELECT,
// disconnect. kEndedByDrain: kanon ended the session with 57P01 (it was in
// start-up or idle between transactions when a drain began) before the
// query was answered.
Outcome iteration(const std::string& conninfo, const std::string& expected, std::string* why) {
  PGconn* conn = PQconnectdb(conninfo.c_str());
  std::string notices;
  Outcome outcome = Outcome::kServed;
  if (PQstatus(conn) != CONNECTION_OK) {
    *why = PQerrorMessage(conn);
    outcome = is_shutdown_message(*why) ? Outcome::kEndedByDrain : Outcome::kFailed;
  } else {
    PQsetNoticeProcessor(conn, capture_notice, &notices);
    PGresult* res = PQexec(conn, kMaskedQuery);
    if (PQresultStatus(res) != PGRES_TUPLES_OK) {
      *why = std::string(PQerrorMessage(conn)) + notices;
      const char* state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
      const bool drained =
          (state != nullptr && std::string(state) == "57P01") || is_shutdown_message(*why);
      outcome = drained ? Outcome::kEndedByDrain : Outcome::kFailed;
    } else if (const std::string got = render(res); got != expected) {
      *why = "wrong rows:\n" + got;
      outcome = Outcome::kFailed;
    }
    PQclear(res);
  }
  PQfinish(conn);
  return outcome;
}

// Client threads looping through HAProxy until stopped, without retries:
// an iteration refused, ended by a drain's 57P01 or answered wrongly counts
// as failed.
class ClientLoop {
 public:
  ClientLoop(std::string conninfo, std::string expected, int threads)
      : conninfo_(std::move(conninfo)), expected_(std::move(expected)) {
    for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { run(); });
  }
  ~ClientLoop() { stop(); }
  void stop() {
    stop_ = true;
    for (auto& t : threads_)
      if (t.joinable()) t.join();
  }
  long served() const { return served_.load(); }
  long failed() const { return failed_.load(); }
  std::vector<std::string> failures() {
    const std::lock_guard lock(mutex_);
    return failures_;
  }

 private:
  void run() {
    while (!stop_) {
      std::string why;
      const Outcome o = iteration(conninfo_, expected_, &why);
      if (o == Outcome::kServed) {
        ++served_;
      } else {
        ++failed_;
        if (o == Outcome::kEndedByDrain) why = "ended by a drain: " + why;
        const std::lock_guard lock(mutex_);
        if (failures_.size() < 10) failures_.push_back(wall_clock() + " " + why);
      }
    }
  }

  std::string conninfo_;
  std::string expected_;
  std::atomic<bool> stop_{false};
  std::atomic<long> served_{0}, failed_{0};
  std::mutex mutex_;
  std::vector<std::string> failures_;
  std::vector<std::thread> threads_;
};

std::string query_once(const std::string& conninfo) {
  PGconn* conn = PQconnectdb(conninfo.c_str());
  std::string out = "connection failed: " + std::string(PQerrorMessage(conn));
  if (PQstatus(conn) == CONNECTION_OK) {
    PGresult* res = PQexec(conn, kMaskedQuery);
    out = PQresultStatus(res) == PGRES_TUPLES_OK ? render(res) : PQerrorMessage(conn);
    PQclear(res);
  }
  PQfinish(conn);
  return out;
}

bool status_is(const HaProxy& lb, const std::string& server, const std::string& prefix) {
  const auto stats = lb.stats();
  const auto it = stats.find(server);
  return it != stats.end() && it->second.status.rfind(prefix, 0) == 0;
}

// Waits until `replica`'s kanon_connections_total has grown by `n`.
bool serves(const Replica& replica, long n) {
  const long base = replica.metric("kanon_connections_total");
  return eventually([&] { return replica.metric("kanon_connections_total") >= base + n; }, 60);
}

}  // namespace

TEST_CASE("behind HAProxy, clients are served while each replica is drained and restarted") {
  if (haproxy_executable().empty()) {
    if (in_ci()) FAIL("haproxy is not installed; under CI it must be (scripts/install-deps.sh)");
    MESSAGE(
        "SKIPPED: haproxy is not installed (apt-get install haproxy); "
        "under CI=true this is a failure");
    return;
  }
  auto& pg = PgSandbox::shared();
  Replica k1(pg.port()), k2(pg.port());
  k1.start();
  k2.start();
  HaProxy lb({{"k1", k1.port(), k1.metrics_port()}, {"k2", k2.port(), k2.metrics_port()}});
  INFO("haproxy.cfg:\n" << lb.config_text());
  REQUIRE(eventually([&] { return status_is(lb, "k1", "UP") && status_is(lb, "k2", "UP"); }, 30));

  // Both replicas mask alike, and the masks hide what the raw table shows.
  const auto direct = [](const Replica& r) {
    return make_conninfo("127.0.0.1", r.port(), "analyst", "postgres");
  };
  const std::string expected = query_once(direct(k1));
  REQUIRE(std::count(expected.begin(), expected.end(), '\n') == 11);
  CHECK(query_once(direct(k2)) == expected);
  const std::string raw = query_once(pg.conninfo("postgres"));
  CHECK(raw.find("Ada Quill") != std::string::npos);
  CHECK(expected.find("Ada Quill") == std::string::npos);
  CHECK(expected.rfind("<null>|***|", 0) == 0);  // name NULL, ssn masked
  CHECK(expected != raw);

  const std::string through_lb = make_conninfo("127.0.0.1", lb.port(), "analyst", "postgres");
  // An analyst's transaction on k1 (round-robin: the first connection that
  // lands there), still open when k1's drain begins.
  PGconn* tx = nullptr;
  for (int i = 0; i < 4 && tx == nullptr; ++i) {
    const long before = k1.metric("kanon_clients_active");
    PGconn* c = PQconnectdb(through_lb.c_str());
    REQUIRE(PQstatus(c) == CONNECTION_OK);
    if (k1.metric("kanon_clients_active") == before + 1) {
      tx = c;
    } else {
      PQfinish(c);
    }
  }
  REQUIRE(tx != nullptr);
  PQclear(PQexec(tx, "BEGIN"));
  REQUIRE(PQtransactionStatus(tx) == PQTRANS_INTRANS);

  ClientLoop loop(through_lb, expected, 2);
  // Both replicas serve the loop.
  CHECK(serves(k1, 20));
  CHECK(serves(k2, 20));

  // SIGTERM to k1 while its transaction is open: /readyz answers 503 at
  // once and HAProxy takes k1 out of the pool while k1, a lame duck, still
  // serves new connections; then k1 drains: new connections to it are
  // refused, and the transaction still finishes there (HAProxy does not end
  // its session).
  const long failed_before_k1 = loop.failed();
  std::atomic<int> k1_exit{-2000};
  std::thread drainer([&] { k1_exit = k1.drain(); });
  CHECK(eventually([&] { return k1.readyz().find("lame duck") != std::string::npos; }, 30));
  CHECK(eventually([&] { return status_is(lb, "k1", "DOWN"); }, 30));
  INFO("k1's /readyz once HAProxy marked it down: " << k1.readyz());
  CHECK(query_once(direct(k1)) == expected);  // still in the lame duck
  CHECK(eventually(
      [&] { return k1.readyz().find("draining: no new connections") != std::string::npos; }, 30));
  PGconn* refused = PQconnectdb(direct(k1).c_str());
  CHECK(PQstatus(refused) == CONNECTION_BAD);
  PQfinish(refused);
  const long k1_sent = lb.stats().at("k1").sessions_total;
  CHECK(serves(k2, 50));  // k2 alone serves the loop meanwhile
  CHECK(lb.stats().at("k1").sessions_total == k1_sent);
  CHECK(k1.alive());  // still draining: the transaction holds it
  PGresult* res = PQexec(tx, kMaskedQuery);
  CHECK(PQresultStatus(res) == PGRES_TUPLES_OK);
  CHECK(render(res) == expected);
  PQclear(res);
  res = PQexec(tx, "COMMIT");
  CHECK(PQresultStatus(res) == PGRES_COMMAND_OK);
  PQclear(res);
  drainer.join();
  CHECK(k1_exit == 0);
  PQfinish(tx);
  INFO("k1's log:\n" << k1.log());
  CHECK(k1.log().find("lame duck over: the drain begins") != std::string::npos);
  // No client of the loop noticed: HAProxy stopped sending k1 clients
  // before its listener closed, and they had all left k1 by then.
  CHECK(loop.failed() == failed_before_k1);

  // k1 comes back: HAProxy sees it ready and sends it clients again.
  k1.start();
  CHECK(eventually([&] { return status_is(lb, "k1", "UP"); }, 30));
  CHECK(serves(k1, 20));

  // Then k2 the way docs/operations.md gives for a drain without 57P01:
  // out of HAProxy first (runtime API), SIGTERM once it has no session.
  CHECK(lb.command("set server kanon/k2 state drain").find("No such") == std::string::npos);
  CHECK(eventually([&] { return lb.stats().at("k2").sessions_current == 0; }, 30));
  CHECK(serves(k1, 50));  // k1 alone serves the loop meanwhile
  const long failed_before = loop.failed();
  CHECK(k2.drain() == 0);
  CHECK(eventually([&] { return status_is(lb, "k2", "DOWN"); }, 30));
  CHECK(serves(k1, 50));
  k2.start();
  CHECK(lb.command("set server kanon/k2 state ready").find("No such") == std::string::npos);
  CHECK(eventually([&] { return status_is(lb, "k2", "UP"); }, 30));
  CHECK(serves(k2, 20));
  CHECK(serves(k1, 20));
  // No session was on k2 when its drain began: none was ended.
  CHECK(loop.failed() == failed_before);

  loop.stop();
  const auto stats = lb.stats();
  MESSAGE("iterations served: " << loop.served() << ", failed: " << loop.failed()
                                << "; HAProxy sent k1 " << stats.at("k1").sessions_total
                                << " and k2 " << stats.at("k2").sessions_total
                                << " sessions, redispatched "
                                << stats.at("k1").redispatches + stats.at("k2").redispatches);
  for (const auto& f : loop.failures()) MESSAGE("failed iteration: " << f);
  if (loop.failed() > 0) MESSAGE("haproxy's log:\n" << lb.log());
  CHECK(loop.failed() == 0);
  CHECK(loop.served() > 0);
  // Nor did HAProxy hide a refused connection by sending it elsewhere.
  CHECK(stats.at("k1").redispatches + stats.at("k2").redispatches == 0);
  CHECK(stats.at("k1").connect_errors + stats.at("k2").connect_errors == 0);
  CHECK(stats.at("k1").sessions_total > 0);
  CHECK(stats.at("k2").sessions_total > 0);
}
