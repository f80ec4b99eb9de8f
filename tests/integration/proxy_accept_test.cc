// Accepting under a connection flood: with kanon out of file descriptors
// (its RLIMIT_NOFILE lowered with prlimit) the proxy's and the metrics
// endpoint's accept loops wait and try again, logging once per episode, and
// both serve again once the flood ends; the metrics endpoint holds at most
// 32 connections and closes the ones over that at once.
#include <doctest/doctest.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/support/haproxy.h"
#include "tests/support/kanon_proxy.h"
#include "tests/support/pg_sandbox.h"
#include "tests/support/wait.h"

using namespace kanon::testing;

namespace {

// A TCP connection that sends nothing; it holds a descriptor in kanon once
// accepted.
class Idle {
 public:
  explicit Idle(uint16_t port) : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
      throw std::runtime_error("Idle: connect failed");
  }
  ~Idle() { close(fd_); }
  Idle(const Idle&) = delete;
  Idle& operator=(const Idle&) = delete;

  // True once kanon has closed it (end of stream or reset); does not wait.
  bool closed_by_peer() const {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, 0) <= 0) return false;
    char c;
    return recv(fd_, &c, 1, MSG_PEEK | MSG_DONTWAIT) <= 0;
  }

 private:
  int fd_;
};

using Flood = std::vector<std::unique_ptr<Idle>>;

void flood(Flood& out, uint16_t port, int n) {
  for (int i = 0; i < n; ++i) out.push_back(std::make_unique<Idle>(port));
}

bool healthy(uint16_t metrics) {
  return http_get(metrics, "/healthz").rfind("HTTP/1.1 200 OK", 0) == 0;
}

size_t open_fds(pid_t pid) {
  size_t n = 0;
  std::error_code ec;
  for (std::filesystem::directory_iterator it("/proc/" + std::to_string(pid) + "/fd", ec), end;
       !ec && it != end; it.increment(ec))
    ++n;
  return n;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

bool select_one(const KanonProxy& proxy) {
  PGconn* conn = PQconnectdb(proxy.conninfo().c_str());
  bool ok = false;
  if (PQstatus(conn) == CONNECTION_OK) {
    PGresult* res = PQexec(conn, "SELECT 1");
    ok = PQresultStatus(res) == PGRES_TUPLES_OK && std::string(PQgetvalue(res, 0, 0)) == "1";
    PQclear(res);
  }
  PQfinish(conn);
  return ok;
}

std::string metrics_yaml(uint16_t port) {
  return "metrics: {listen: \"127.0.0.1:" + std::to_string(port) + "\"}\n";
}

}  // namespace

TEST_CASE("out of file descriptors, the accept loops retry quietly and recover") {
  auto& pg = PgSandbox::shared();
  const uint16_t metrics = free_port();
  KanonProxy proxy(pg.port(), metrics_yaml(metrics));
  REQUIRE(until([&] { return healthy(metrics); }));
  REQUIRE(select_one(proxy));

  // A few descriptors to spare, fewer than either flood.
  const pid_t pid = proxy.process().pid();
  const rlim_t limit = open_fds(pid) + 8;
  const rlimit lowered{limit, limit};
  REQUIRE(prlimit(pid, RLIMIT_NOFILE, &lowered, nullptr) == 0);

  Flood idle;
  flood(idle, metrics, 40);
  flood(idle, proxy.port(), 40);
  // Both loops fail (20 lines would be a loop logging each retry).
  CHECK(until(
      [&] {
        const std::string log = proxy.log();
        return (log.find(" listen: accept failed: ") != std::string::npos &&
                log.find("metrics.listen: accept failed: ") != std::string::npos) ||
               count(log, "accept failed") >= 20;
      },
      std::chrono::seconds(60)));
  idle.clear();

  // Both listeners serve again once the flood is gone.
  CHECK(until([&] { return healthy(metrics); }, std::chrono::seconds(60)));
  CHECK(until([&] { return select_one(proxy); }, std::chrono::seconds(60)));
  const std::string log = proxy.log();
  CHECK(count(log, "accept failed") >= 2);
  CHECK(count(log, "accept failed") < 20);
  CHECK(log.find(" listen: accepting again after ") != std::string::npos);
  CHECK(log.find("metrics.listen: accepting again after ") != std::string::npos);
}

TEST_CASE("the metrics endpoint closes connections over 32 at once") {
  auto& pg = PgSandbox::shared();
  const uint16_t metrics = free_port();
  KanonProxy proxy(pg.port(), metrics_yaml(metrics));
  REQUIRE(until([&] { return healthy(metrics); }));

  // Accepted in the order they connect. The health check above may still
  // hold a place for a moment, so the 32nd may be closed too.
  Flood idle;
  flood(idle, metrics, 40);
  const auto closed = [&] {
    size_t n = 0;
    for (const auto& c : idle) n += c->closed_by_peer();
    return n;
  };
  REQUIRE(until([&] { return closed() >= 8; }, std::chrono::seconds(60)));
  for (size_t i = 0; i < 31; ++i) CHECK_MESSAGE(!idle[i]->closed_by_peer(), "connection " << i);
  for (size_t i = 32; i < 40; ++i) CHECK_MESSAGE(idle[i]->closed_by_peer(), "connection " << i);
  CHECK(healthy(metrics) == false);  // still full
  idle.clear();
  CHECK(until([&] { return healthy(metrics); }, std::chrono::seconds(60)));
}
