#include "proxy/metrics_endpoint.h"

// clang-format off
#include <utility>  // before awaitable.hpp: Boost 1.74 uses std::exchange without it
#include <boost/asio/awaitable.hpp>
// clang-format on
#include <fmt/format.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include "policy/policy_file.h"
#include "proxy/listener.h"
#include "proxy/log.h"
#include "proxy/wire/startup_messages.h"
#include "store/policy_store.h"

namespace kanon::proxy {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

// Every listed policy whose build failed, a line each ("" when none). Not
// the error itself: this port answers anyone who reaches it, and a build's
// error may quote what PostgreSQL said about the table's rows (a value that
// failed a cast, a key in a constraint's DETAIL). SHOW POLICIES and the log
// give it.
std::string not_built(ServerContext& context) {
  std::string out;
  if (!context.policies) return out;
  for (const auto& store : context.policies->all()) {
    const auto snapshot = store->current();
    for (const auto& p : store->policies())
      if (!snapshot->find(p.name()) && snapshot->errors.count(p.name()))
        out += fmt::format(
            "policy {} is not built, its table is denied (SHOW POLICIES on the admin console "
            "and kanon's log give the error)\n",
            context.policies->name_of(p));
  }
  return out;
}

std::string label_value(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out.push_back('\\');
    if (c == '\n') {
      out.append("\\n");
      continue;
    }
    out.push_back(c);
  }
  return out;
}

// kanon_policy_built{database, table}: 1 when the table's policy is built
// and served, 0 when not (the table is denied).
std::string policies_prometheus(ServerContext& context) {
  std::string out =
      "# HELP kanon_policy_built 1 when the listed table's policy is built and served, 0 when "
      "restricted sessions are denied the table.\n"
      "# TYPE kanon_policy_built gauge\n";
  if (!context.policies) return out;
  for (const auto& store : context.policies->all()) {
    const auto snapshot = store->current();
    for (const auto& p : store->policies())
      out += fmt::format("kanon_policy_built{{database=\"{}\",table=\"{}\"}} {}\n",
                         label_value(store->database_name()), label_value(policy::display_name(p)),
                         snapshot->find(p.name()) ? 1 : 0);
  }
  return out;
}

// Ends a connection's count (counted when accepted). The count is shared: a
// coroutine may end after the endpoint, when its io_context is destroyed.
struct Counted {
  explicit Counted(std::shared_ptr<int> n) : count(std::move(n)) {}
  ~Counted() { --*count; }
  Counted(const Counted&) = delete;
  Counted& operator=(const Counted&) = delete;
  std::shared_ptr<int> count;
};

asio::awaitable<void> serve(tcp::socket socket, ServerContext& context, MetricsEndpoint& endpoint,
                            std::shared_ptr<int> connections) {
  const Counted counted(std::move(connections));
  boost::system::error_code ec;
  asio::streambuf request(16 * 1024);
  asio::steady_timer deadline(socket.get_executor(), std::chrono::seconds(10));
  deadline.async_wait([&socket](const boost::system::error_code& e) {
    if (!e) {
      boost::system::error_code ignored;
      socket.close(ignored);
    }
  });
  co_await asio::async_read_until(socket, request, "\r\n\r\n",
                                  asio::redirect_error(asio::use_awaitable, ec));
  deadline.cancel();
  if (ec) co_return;
  std::string line(asio::buffers_begin(request.data()), asio::buffers_end(request.data()));
  line = line.substr(0, line.find("\r\n"));
  std::string status = "200 OK";
  std::string body;
  const auto is = [&](std::string_view path) {
    const std::string get = fmt::format("GET {}", path);
    return line == get || line.rfind(get + " ", 0) == 0;
  };
  if (is("/metrics")) {
    body = context.stats.prometheus(context.rewriter.cache_stats(), context.active_clients.load());
    if (context.audit) body += context.audit->prometheus();
    body += policies_prometheus(context);
  } else if (is("/healthz")) {
    body = "ok\n";
  } else if (is("/readyz")) {
    const std::string problem = co_await endpoint.not_ready();
    if (problem.empty()) {
      body = "ready\n" + not_built(context);
    } else {
      status = "503 Service Unavailable";
      body = problem + "\n";
    }
  } else {
    status = "404 Not Found";
    body = "kanon: only GET /metrics, /healthz and /readyz are served here\n";
  }
  const std::string response = fmt::format(
      "HTTP/1.1 {}\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
      "Content-Length: {}\r\nConnection: close\r\n\r\n{}",
      status, body.size(), body);
  co_await asio::async_write(socket, asio::buffer(response),
                             asio::redirect_error(asio::use_awaitable, ec));
  socket.shutdown(tcp::socket::shutdown_both, ec);
}

}  // namespace

asio::awaitable<std::string> MetricsEndpoint::not_ready() {
  if (context_.shutting_down())
    co_return fmt::format("not ready: kanon is shutting down ({})", context_.shutdown_state());
  if (context_.paused.load()) co_return "not ready: paused (admin console PAUSE)";
  if (context_.audit && context_.audit->deny_on_failure() && !context_.audit->available())
    co_return fmt::format("not ready: the audit trail cannot take records ({})",
                          context_.audit->unavailable_reason());
  // A policy whose build failed does not make the replica unready: its
  // table is denied (fail closed) here as on every other replica, which
  // read the same data, and the other tables are served. One whose first
  // build has not ended yet does: another replica may serve it.
  if (context_.policies) {
    for (const auto& store : context_.policies->all()) {
      const auto tables = store->policies();
      const auto snapshot = store->current();
      for (const auto& p : tables)
        if (!snapshot->find(p.name()) && !snapshot->errors.count(p.name()))
          co_return fmt::format("not ready: policy {} is being built",
                                context_.policies->name_of(p));
      if (!tables.empty() && !snapshot->catalog)
        co_return fmt::format("not ready: the catalog of database {} is not read: {}",
                              store->database_name(), snapshot->catalog_error);
    }
  }
  const auto now = std::chrono::steady_clock::now();
  if (!probed_ || now - probed_at_ >= std::chrono::seconds(1)) {
    backend_problem_ = co_await probe_backend();
    probed_at_ = std::chrono::steady_clock::now();
    probed_ = true;
  }
  if (!backend_problem_.empty()) co_return "not ready: " + backend_problem_;
  co_return "";
}

// TCP to the backend and an SSLRequest: a PostgreSQL server answers 'S' or
// 'N' before any authentication. Given one second.
asio::awaitable<std::string> MetricsEndpoint::probe_backend() {
  const auto& b = context_.runtime()->config->backend;
  const auto executor = acceptor_.get_executor();
  // Shared with the timer's handler, which may run after this returns.
  auto socket = std::make_shared<tcp::socket>(executor);
  auto timed_out = std::make_shared<bool>(false);
  asio::steady_timer deadline(executor, std::chrono::seconds(1));
  deadline.async_wait([socket, timed_out](const boost::system::error_code& e) {
    if (!e) {
      *timed_out = true;
      boost::system::error_code ignored;
      socket->close(ignored);
    }
  });
  boost::system::error_code ec;
  tcp::resolver resolver(executor);
  const auto endpoints = co_await resolver.async_resolve(
      b.host, std::to_string(b.port), asio::redirect_error(asio::use_awaitable, ec));
  if (!ec)
    co_await asio::async_connect(*socket, endpoints, asio::redirect_error(asio::use_awaitable, ec));
  uint8_t answer = 0;
  if (!ec) {
    wire::Buffer request;
    wire::encode(wire::SslRequest{}, request);
    co_await asio::async_write(*socket, asio::buffer(request),
                               asio::redirect_error(asio::use_awaitable, ec));
  }
  if (!ec)
    co_await asio::async_read(*socket, asio::buffer(&answer, 1),
                              asio::redirect_error(asio::use_awaitable, ec));
  deadline.cancel();
  boost::system::error_code ignored;
  socket->close(ignored);
  if (*timed_out)
    co_return fmt::format("the backend {}:{} did not answer within 1 s", b.host, b.port);
  if (ec) co_return fmt::format("cannot reach the backend {}:{}: {}", b.host, b.port, ec.message());
  if (answer != 'S' && answer != 'N')
    co_return fmt::format("the backend {}:{} does not speak the PostgreSQL protocol", b.host,
                          b.port);
  co_return "";
}

MetricsEndpoint::MetricsEndpoint(asio::io_context& io, const settings::Endpoint& listen,
                                 ServerContext& context)
    : context_(context), acceptor_(io), retry_(io.get_executor(), "metrics.listen") {
  open_listener(acceptor_, listen, "metrics.listen");
}

void MetricsEndpoint::start() {
  acceptor_.async_accept([this](const boost::system::error_code& ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;  // stop()
    if (ec) {
      // Out of descriptors or memory: try again later, not at once.
      retry_.failed(ec).async_wait([this](const boost::system::error_code& e) {
        if (!e && acceptor_.is_open()) start();
      });
      return;
    }
    retry_.accepted();
    if (*connections_ >= kMaxConnections) {
      boost::system::error_code ignored;
      socket.close(ignored);
    } else {
      ++*connections_;
      asio::co_spawn(acceptor_.get_executor(),
                     serve(std::move(socket), context_, *this, connections_), asio::detached);
    }
    start();
  });
}

void MetricsEndpoint::stop() {
  boost::system::error_code ec;
  acceptor_.close(ec);
  retry_.cancel();
}

}  // namespace kanon::proxy
