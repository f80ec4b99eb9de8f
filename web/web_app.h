// WebApp: what the web console answers, request by request, apart from the
// connection (web_server.h). Routes (docs/operations.md#web-console):
//
//   GET  /, /assets/*            the page and its assets (all kanon has;
//                                nothing else before login)
//   POST /login                  user, password (form-encoded) -> cookie
//   POST /logout
//   GET  /api/session            who is logged in, the CSRF token
//   GET  /api/show/<view>        a console SHOW as JSON: policies, stats,
//                                clients, catalog, snapshots, audit,
//                                exposure[?role=], exports, and per
//                                table (?table=) tree, predicates,
//                                classes, utility, releases
//   GET  /api/tree?table=        the disclosure tree's cohorts (as kanon tree
//                                --format json)
//   POST /api/run                {command: refresh|verify|verify-history|
//                                reanonymize, table}: the console command
//   POST /api/exports            start an EXPORT (export_jobs.h)
//   GET  /api/exports/jobs       the started exports, progress and answers
//   POST /api/exports/jobs/<id>/cancel
//   GET  /exports/<id>/report    an export's HTML report (SHOW EXPORTS)
//   GET  /exports/<id>/json      its JSON report
//   GET  /exports/<id>/csv       its CSV file, when it was exported to one
//
// Every answer from /api is JSON. Every POST but /login needs the session's
// CSRF token in X-CSRF-Token; a request whose Origin is another host is
// refused.
#pragma once

#include <boost/beast/http.hpp>
// clang-format off
#include <utility>  // before awaitable.hpp: Boost 1.74 uses std::exchange without it
#include <boost/asio/awaitable.hpp>
// clang-format on
#include <memory>
#include <string>

#include "proxy/server_context.h"
#include "web/export_jobs.h"
#include "web/login_sessions.h"

namespace kanon::web {

namespace http = boost::beast::http;
using Request = http::request<http::string_body>;
using Response = http::response<http::string_body>;

class WebApp {
 public:
  WebApp(proxy::ServerContext& context, const settings::WebConfig& config);

  // `peer`: the client's address, for the log; `tls`: cookies get Secure.
  boost::asio::awaitable<Response> handle(const Request& request, const std::string& peer,
                                          bool tls);
  // An error page for what the connection layer refuses itself (malformed,
  // too large).
  static Response refusal(http::status status, const std::string& message, unsigned version);

  LoginSessions& sessions() { return sessions_; }

 private:
  struct Call;
  boost::asio::awaitable<Response> login(Call& call);
  boost::asio::awaitable<Response> api(Call& call, const LoginSession& session);
  boost::asio::awaitable<Response> console(Call& call, std::vector<std::string> words);
  boost::asio::awaitable<Response> export_file(Call& call, const std::string& id,
                                               const std::string& what);
  Response start_export(Call& call, const LoginSession& session);

  proxy::ServerContext& context_;
  LoginSessions sessions_;
  FailedLogins failed_logins_;
  ExportJobs jobs_;
};

}  // namespace kanon::web
