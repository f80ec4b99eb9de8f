#include "tests/support/haproxy.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "tests/support/kanon_proxy.h"
#include "tests/support/pg_sandbox.h"
#include "tests/support/raw_client.h"

namespace kanon::testing {

std::string haproxy_executable() {
  return find_executable("haproxy");
}

std::string http_get(uint16_t port, const std::string& path) {
  try {
    RawClient c(port);
    c.send("GET " + path + " HTTP/1.0\r\n\r\n");
    const auto bytes = c.read_until_close(5);
    return std::string(bytes.begin(), bytes.end());
  } catch (const std::runtime_error&) {
    return "";
  }
}

namespace {

std::string make_config(const std::vector<HaproxyServer>& servers, uint16_t port,
                        uint16_t stats_port, const std::string& socket) {
  std::ostringstream c;
  c << "global\n"
       "  maxconn 2000\n"
       "  log stderr format iso local0 info\n"
       "  stats socket "
    << socket
    << " mode 600 level admin\n"
       "defaults\n"
       "  mode tcp\n"
       "  log global\n"
       "  option tcplog\n"  // one line per session, with its termination state
       "  timeout connect 2s\n"
       // /readyz may wait up to 1 s for its backend probe; without this the
       // check's timeout is `inter` and a busy machine marks both down
       "  timeout check 3s\n"
       "  timeout client 60s\n"
       "  timeout server 60s\n"
       "  retries 3\n"
       "  option redispatch 1\n"  // every retry of a refused connect goes elsewhere
       "frontend postgres\n"
       "  bind 127.0.0.1:"
    << port
    << "\n"
       "  default_backend kanon\n"
       "backend kanon\n"
       "  balance roundrobin\n"
       "  option httpchk GET /readyz\n"
       "  http-check expect status 200\n"
       "  default-server inter 100ms fall 1 rise 2\n";
  for (const auto& s : servers)
    c << "  server " << s.name << " 127.0.0.1:" << s.port << " check port " << s.check_port << "\n";
  c << "frontend stats\n"
       "  mode http\n"
       "  bind 127.0.0.1:"
    << stats_port
    << "\n"
       "  stats enable\n"
       "  stats uri /stats\n";
  return c.str();
}

// The body of an HTTP answer whose headers end at `body`, de-chunked when it
// is sent with `transfer-encoding: chunked` (HAProxy's stats are).
std::string http_body(const std::string& answer, size_t body) {
  std::string headers = answer.substr(0, body);
  for (auto& ch : headers) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (headers.find("transfer-encoding: chunked") == std::string::npos)
    return answer.substr(body + 4);
  std::string out;
  size_t at = body + 4;
  for (;;) {
    const size_t eol = answer.find("\r\n", at);
    if (eol == std::string::npos) break;
    const size_t size = std::stoul(answer.substr(at, eol - at), nullptr, 16);
    if (size == 0 || eol + 2 + size > answer.size()) break;
    out += answer.substr(eol + 2, size);
    at = eol + 2 + size + 2;
  }
  return out;
}

long number(const std::vector<std::string>& fields, size_t i) {
  return i < fields.size() && !fields[i].empty() ? std::stol(fields[i]) : 0;
}

}  // namespace

HaProxy::HaProxy(const std::vector<HaproxyServer>& servers) {
  const std::string exe = haproxy_executable();
  if (exe.empty()) throw std::runtime_error("haproxy is not installed");
  char tmpl[] = "/tmp/kanon-haproxy.XXXXXX";
  if (mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
  port_ = free_port();
  stats_port_ = free_port();
  config_text_ = make_config(servers, port_, stats_port_, dir_ + "/admin.sock");
  const std::string config = dir_ + "/haproxy.cfg";
  std::ofstream(config) << config_text_;
  const auto checked = run_command({exe, "-c", "-f", config});
  if (checked.exit_code != 0)
    throw std::runtime_error("haproxy -c rejected the configuration:\n" + checked.out +
                             checked.err + "\n" + config_text_);
  process_ = std::make_unique<ChildProcess>(std::vector<std::string>{exe, "-db", "-f", config},
                                            dir_ + "/haproxy.log");
  if (!wait_for_port(port_, 20) || !wait_for_port(stats_port_, 20))
    throw std::runtime_error("haproxy did not start listening; its log:\n" + log());
}

HaProxy::~HaProxy() {
  process_.reset();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::map<std::string, HaproxyServerStats> HaProxy::stats() const {
  const std::string answer = http_get(stats_port_, "/stats;csv");
  const auto body = answer.find("\r\n\r\n");
  if (answer.rfind("HTTP/1.1 200", 0) != 0 || body == std::string::npos)
    throw std::runtime_error("haproxy's stats did not answer: " + answer);
  // Columns (HAProxy's management guide, "CSV format"): 0 pxname, 1 svname,
  // 4 scur, 7 stot, 13 econ, 16 wredis, 17 status.
  std::map<std::string, HaproxyServerStats> out;
  std::istringstream lines(http_body(answer, body));
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f;
    std::istringstream cells(line);
    std::string cell;
    while (std::getline(cells, cell, ',')) f.push_back(cell);
    if (f.size() < 18 || f[0] != "kanon" || f[1] == "FRONTEND" || f[1] == "BACKEND") continue;
    out[f[1]] = HaproxyServerStats{f[17], number(f, 7), number(f, 4), number(f, 16), number(f, 13)};
  }
  return out;
}

std::string HaProxy::command(const std::string& line) const {
  const std::string path = dir_ + "/admin.sock";
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) throw std::runtime_error("socket path too long");
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    throw std::runtime_error("haproxy's runtime API does not answer at " + path);
  }
  const std::string request = line + "\n";
  if (write(fd, request.data(), request.size()) != static_cast<ssize_t>(request.size())) {
    close(fd);
    throw std::runtime_error("cannot send to haproxy's runtime API");
  }
  std::string answer;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) answer.append(buf, static_cast<size_t>(n));
  close(fd);
  return answer;
}

}  // namespace kanon::testing
