#include "web/web_app.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/json.h"
#include "base/text.h"
#include "policy/tree_report.h"
#include "proxy/blocking.h"
#include "proxy/log.h"
#include "web/assets.h"
#include "web/http_text.h"
#include "web/password_check.h"
#include "web/web_json.h"

namespace kanon::web {

namespace asio = boost::asio;
using base::Json;
using proxy::LogLevel;

namespace {

constexpr std::string_view kCookie = "kanon_session";
// A session lasts at most this long, however busy.
constexpr auto kLifetime = std::chrono::hours(12);
// How long a GET may rely on the last confirmation of the role's login.
constexpr auto kConfirmEvery = std::chrono::seconds(5);
// The largest file /exports/<id>/csv sends.
constexpr uintmax_t kMaxDownload = uintmax_t{256} << 20;

// Beast 1.74 has a string_view of its own.
std::string_view sv(boost::beast::string_view v) {
  return {v.data(), v.size()};
}
boost::beast::string_view bv(std::string_view v) {
  return {v.data(), v.size()};
}

void security_headers(Response& r, bool report_page = false) {
  // The page runs only kanon's own script and style; an export's report is
  // a self-contained page with inline style and no script at all.
  r.set("Content-Security-Policy",
        report_page ? "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
                      "frame-ancestors 'none'; sandbox"
                    : "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' "
                      "data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; "
                      "base-uri 'none'");
  r.set("X-Content-Type-Options", "nosniff");
  r.set("X-Frame-Options", "DENY");
  r.set("Referrer-Policy", "no-referrer");
  r.set(http::field::cache_control, "no-store");
}

Response make(http::status status, unsigned version, std::string body, std::string_view type) {
  Response r{status, version};
  r.set(http::field::server, "kanon");
  r.set(http::field::content_type, bv(type));
  r.body() = std::move(body);
  r.prepare_payload();
  security_headers(r);
  return r;
}

http::status status_of(const std::string& sqlstate) {
  if (sqlstate == "42601" || sqlstate == "22023" || sqlstate == "22P02" || sqlstate == "42602")
    return http::status::bad_request;
  if (sqlstate == "42P01" || sqlstate == "42704") return http::status::not_found;
  if (sqlstate == "55000" || sqlstate == "57014" || sqlstate == "42P07")
    return http::status::conflict;
  if (sqlstate.starts_with("08")) return http::status::bad_gateway;
  return http::status::internal_server_error;
}

// The host[:port] of an Origin header ("https://host:port").
std::string origin_host(std::string_view origin) {
  const size_t scheme = origin.find("://");
  if (scheme != std::string_view::npos) origin.remove_prefix(scheme + 3);
  return std::string(origin.substr(0, origin.find('/')));
}

bool admin_user(const settings::ServerConfig& config, const std::string& user) {
  const auto& admins = config.admin.users;
  return std::find(admins.begin(), admins.end(), user) != admins.end();
}

std::string string_field(const Json& body, const char* name) {
  const auto it = body.find(name);
  if (it == body.end() || it->is_null()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_number() || it->is_boolean()) return it->dump();
  throw std::invalid_argument(fmt::format("{} must be a string or a number", name));
}

// Checks of form values, written out (no std::regex: it is slow, and GCC 12
// warns about its internals under the sanitizers).
bool identifier(std::string_view s, bool lower_only) {
  const auto letter = [&](char c) {
    return (c >= 'a' && c <= 'z') || c == '_' || (!lower_only && c >= 'A' && c <= 'Z');
  };
  if (s.empty() || !letter(s[0])) return false;
  for (char c : s)
    if (!letter(c) && !(c >= '0' && c <= '9')) return false;
  return true;
}

// "a", "a.b" ... with between `min` and `max` identifiers.
bool dotted(std::string_view s, size_t min, size_t max, bool lower_only) {
  size_t parts = 0;
  for (;;) {
    const size_t dot = s.find('.');
    if (!identifier(s.substr(0, dot), lower_only)) return false;
    ++parts;
    if (dot == std::string_view::npos) break;
    s.remove_prefix(dot + 1);
  }
  return parts >= min && parts <= max;
}

bool digits(std::string_view s, size_t max) {
  return !s.empty() && s.size() <= max &&
         s.find_first_not_of("0123456789") == std::string_view::npos;
}

bool whole_number(std::string_view s, size_t max_digits) {
  return digits(s, max_digits) && s[0] != '0';
}

// 0, 1, or a decimal fraction below 1 with at most 6 places (".02", "0.02").
bool fraction(std::string_view s) {
  if (s == "0" || s == "1") return true;
  if (s.starts_with("0")) s.remove_prefix(1);
  return s.starts_with(".") && digits(s.substr(1), 6);
}

bool metric_name(std::string_view s) {
  return !s.empty() && s.size() <= 31 && s[0] >= 'a' && s[0] <= 'z' &&
         s.find_first_not_of("abcdefghijklmnopqrstuvwxyz_-") == std::string_view::npos;
}

bool csv_path(std::string_view s) {
  return s.size() > 5 && s[0] == '/' && s.ends_with(".csv") &&
         s.find("..") == std::string_view::npos &&
         s.find_first_not_of(
             "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./-") ==
             std::string_view::npos;
}

// The EXPORT command of a form; std::invalid_argument naming the field when
// a value is not what the field takes (so nothing but the options below
// ever reaches the console's EXPORT parser).
std::string export_command(const Json& body) {
  const std::string table = string_field(body, "table");
  if (!dotted(table, 1, 3, false))
    throw std::invalid_argument("table: expected [database.][schema.]table");
  std::string command = "EXPORT " + table;
  const std::string target = string_field(body, "target_table");
  const std::string csv = string_field(body, "csv_path");
  if (!target.empty() && !csv.empty())
    throw std::invalid_argument("give a target table or a CSV file, not both");
  if (!target.empty()) {
    if (!dotted(target, 2, 2, true))
      throw std::invalid_argument("target_table: expected schema.table in lower case");
    command += " TO " + target;
  } else if (!csv.empty()) {
    if (!csv_path(csv))
      throw std::invalid_argument(
          "csv_path: expected an absolute path of letters, digits, _ . - / ending in .csv");
    command += " TO '" + csv + "'";
  }
  std::vector<std::string> options;
  const auto option = [&](const char* name, auto valid, const char* what) {
    const std::string v = string_field(body, name);
    if (v.empty()) return;
    if (!valid(std::string_view(v))) throw std::invalid_argument(fmt::format("{}: {}", name, what));
    options.push_back(fmt::format("{} = {}", name, v));
  };
  const auto either = [](std::initializer_list<std::string_view> names) {
    return [names](std::string_view v) {
      return std::find(names.begin(), names.end(), v) != names.end();
    };
  };
  option(
      "k", [](std::string_view v) { return whole_number(v, 7); },
      "expected a whole number of at least 1");
  option(
      "l", [](std::string_view v) { return whole_number(v, 4); },
      "expected a whole number of at least 1");
  option("suppression", fraction, "expected a fraction between 0 and 1");
  option("algorithm", either({"flash", "bfs", "mondrian"}), "expected flash, bfs or mondrian");
  option("metric", metric_name, "expected a metric name");
  option(
      "time_limit", [](std::string_view v) { return digits(v, 6); }, "expected seconds");
  option("replace", either({"true", "false"}), "expected true or false");
  option("dry_run", either({"true", "false"}), "expected true or false");
  if (!options.empty()) command += " WITH (" + base::join(options, ", ") + ")";
  return command;
}

}  // namespace

struct WebApp::Call {
  const Request& request;
  std::string peer;
  bool tls;
  std::string path;
  std::map<std::string, std::string> query;

  unsigned version() const { return request.version(); }
  Response json(http::status status, const Json& doc) const {
    return make(status, version(), base::json_text(doc, 0), "application/json; charset=utf-8");
  }
  Response error(http::status status, const std::string& message,
                 const std::string& sqlstate = "") const {
    return json(status, error_json(message, sqlstate));
  }
};

WebApp::WebApp(proxy::ServerContext& context, const settings::WebConfig& config)
    : context_(context), sessions_(config.session_timeout, kLifetime), jobs_(context) {}

Response WebApp::refusal(http::status status, const std::string& message, unsigned version) {
  Response r = make(status, version, base::json_text(error_json(message), 0),
                    "application/json; charset=utf-8");
  r.keep_alive(false);
  return r;
}

asio::awaitable<Response> WebApp::handle(const Request& request, const std::string& peer,
                                         bool tls) {
  Call call{request, peer, tls, std::string(target_path(sv(request.target()))),
            parse_form(target_query(sv(request.target())))};
  const bool get = request.method() == http::verb::get;
  const bool post = request.method() == http::verb::post;
  if (!get && !post) co_return call.error(http::status::method_not_allowed, "GET or POST only");
  // Requests made by another site's page are refused outright (the cookie is
  // SameSite=Strict as well).
  if (const auto origin = request.find(http::field::origin); origin != request.end()) {
    const auto host = request.find(http::field::host);
    if (host == request.end() || origin_host(sv(origin->value())) != sv(host->value()))
      co_return call.error(http::status::forbidden, "cross-origin request refused");
  }
  // The page and its assets: all that is served before login.
  if (get && (call.path == "/" || call.path == "/index.html" || call.path == "/favicon.ico" ||
              call.path.starts_with("/assets/"))) {
    const std::string_view name = call.path == "/" || call.path == "/index.html" ? "index.html"
                                  : call.path == "/favicon.ico"
                                      ? "favicon.svg"
                                      : std::string_view(call.path).substr(8);
    const auto asset = find_asset(name);
    if (!asset) co_return call.error(http::status::not_found, "no such asset");
    co_return make(http::status::ok, call.version(), std::string(asset->body), asset->content_type);
  }
  if (post && call.path == "/login") co_return co_await login(call);

  std::optional<LoginSession> session;
  if (const auto cookie = request.find(http::field::cookie); cookie != request.end())
    if (const auto id = cookie_value(sv(cookie->value()), kCookie))
      session = sessions_.touch(*id, Clock::now());
  // A session lasts only while its user is one of admin.users in the
  // configuration in force (a RELOAD may have removed it).
  if (session && !admin_user(*context_.runtime()->config, session->user)) {
    sessions_.close(session->id);
    proxy::log(LogLevel::kWarning,
               "web console: session of {} from {} ended: no longer one of admin.users",
               session->user, call.peer);
    co_return call.error(http::status::unauthorized,
                         "log in first (the session has ended: its user is no longer an admin)");
  }
  // The page asks first whether it is logged in: not an error.
  if (!session && get && call.path == "/api/session")
    co_return call.json(http::status::ok, Json{{"user", nullptr}});
  if (!session)
    co_return call.error(http::status::unauthorized,
                         "log in first (the session is missing or "
                         "has expired)");
  if (post) {
    const auto token = request.find("X-CSRF-Token");
    if (token == request.end() || !same_token(sv(token->value()), session->csrf))
      co_return call.error(http::status::forbidden,
                           "missing or wrong CSRF token (X-CSRF-Token); reload the page");
  }
  if (post && call.path == "/logout") {
    sessions_.close(session->id);
    Response r = call.json(http::status::ok, Json{{"logged_out", session->user}});
    r.set(http::field::set_cookie,
          fmt::format("{}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0{}", kCookie,
                      call.tls ? "; Secure" : ""));
    co_return r;
  }
  // A session lasts only while its role's login is what it was at login:
  // checked before every POST and at least every kConfirmEvery otherwise.
  if (post || Clock::now() - session->confirmed >= kConfirmEvery) {
    std::optional<std::string> state;
    try {
      const auto config = context_.runtime()->config;
      const std::string user = session->user;
      state = co_await proxy::run_blocking(context_.blocking,
                                           [&] { return login_state(*config, user); });
    } catch (const std::exception& e) {
      proxy::log(LogLevel::kWarning, "web console: cannot confirm the login of {}: {}",
                 session->user, e.what());
      co_return call.error(http::status::service_unavailable,
                           "kanon cannot confirm this login with PostgreSQL now; try again");
    }
    if (!state || *state != session->login_state) {
      sessions_.close(session->id);
      proxy::log(LogLevel::kWarning,
                 "web console: session of {} from {} ended: the role's password or login "
                 "changed",
                 session->user, call.peer);
      co_return call.error(http::status::unauthorized,
                           "log in again (the session has ended: the role's password or login "
                           "rights changed)");
    }
    sessions_.confirmed(session->id, Clock::now());
  }
  if (call.path.starts_with("/api/")) co_return co_await api(call, *session);
  // /exports/<id>/report|json|csv
  if (get && call.path.starts_with("/exports/")) {
    const std::string_view rest = std::string_view(call.path).substr(9);
    const size_t slash = rest.find('/');
    const std::string_view id = rest.substr(0, slash), what = rest.substr(slash + 1);
    if (slash != std::string_view::npos && digits(id, 18) &&
        (what == "report" || what == "json" || what == "csv"))
      co_return co_await export_file(call, std::string(id), std::string(what));
  }
  co_return call.error(http::status::not_found, "no such page");
}

asio::awaitable<Response> WebApp::login(Call& call) {
  const auto type = call.request.find(http::field::content_type);
  if (type == call.request.end() ||
      !sv(type->value()).starts_with("application/x-www-form-urlencoded"))
    co_return call.error(http::status::unsupported_media_type,
                         "send the login form as application/x-www-form-urlencoded");
  const auto form = parse_form(call.request.body());
  const auto field = [&](const char* name) {
    const auto it = form.find(name);
    return it == form.end() ? std::string() : it->second;
  };
  const std::string user = field("user"), password = field("password");
  // Throttled per client address (without the port).
  const std::string address = call.peer.substr(0, call.peer.rfind(':'));
  // The attempt counts from here, before the backend is asked.
  if (const auto wait = failed_logins_.begin(address, Clock::now()); wait.count() > 0) {
    proxy::log(LogLevel::kWarning,
               "web console: login as \"{}\" from {} refused: too many failed logins, {} s to "
               "wait",
               user, call.peer, (wait.count() + 999) / 1000);
    Response r = call.error(http::status::too_many_requests,
                            "too many failed logins from this address; try again later");
    r.set(http::field::retry_after, std::to_string((wait.count() + 999) / 1000));
    co_return r;
  }
  const auto config = context_.runtime()->config;
  LoginCheck check;
  try {
    check = co_await proxy::run_blocking(context_.blocking,
                                         [&] { return check_login(*config, user, password); });
  } catch (...) {
    failed_logins_.failed(address, Clock::now());  // the attempt ends, counted
    throw;
  }
  if (!check.accepted) {
    failed_logins_.failed(address, Clock::now());
    proxy::log(LogLevel::kWarning, "web console: login as \"{}\" from {} refused: {}", user,
               call.peer, check.reason);
    co_return call.error(http::status::unauthorized, "wrong user or password");
  }
  // What the session is checked against from now on (read after the
  // password was accepted: a change in between ends it at the first check).
  std::optional<std::string> state;
  try {
    state =
        co_await proxy::run_blocking(context_.blocking, [&] { return login_state(*config, user); });
  } catch (const std::exception& e) {
    proxy::log(LogLevel::kWarning, "web console: cannot confirm the login of {}: {}", user,
               e.what());
  }
  if (!state) {
    failed_logins_.failed(address, Clock::now());
    co_return call.error(http::status::service_unavailable,
                         "kanon cannot confirm this login with PostgreSQL now; try again");
  }
  failed_logins_.succeeded(address);
  const LoginSession s = sessions_.open(user, Clock::now(), *state);
  proxy::log(LogLevel::kInfo, "web console: {} logged in from {}", user, call.peer);
  Response r = call.json(http::status::ok, Json{{"user", user}, {"csrf", s.csrf}});
  r.set(http::field::set_cookie,
        fmt::format("{}={}; Path=/; HttpOnly; SameSite=Strict; Max-Age={}{}", kCookie, s.id,
                    std::chrono::duration_cast<std::chrono::seconds>(kLifetime).count(),
                    call.tls ? "; Secure" : ""));
  co_return r;
}

asio::awaitable<Response> WebApp::api(Call& call, const LoginSession& session) {
  const bool post = call.request.method() == http::verb::post;
  const std::string_view path = std::string_view(call.path).substr(5);
  const auto param = [&](const char* name) {
    const auto it = call.query.find(name);
    return it == call.query.end() ? std::string() : it->second;
  };
  if (!post && path == "session")
    co_return call.json(
        http::status::ok,
        Json{{"user", session.user},
             {"csrf", session.csrf},
             {"session_timeout_s",
              std::chrono::duration_cast<std::chrono::seconds>(sessions_.timeout()).count()}});
  if (!post && path.starts_with("show/")) {
    // Each view is one console command; table and role stay one word.
    struct View {
      std::vector<std::string> words;
      bool per_table;  // takes ?table=
    };
    static const std::map<std::string, View, std::less<>> kViews = {
        {"policies", {{"SHOW", "POLICIES"}, false}},
        {"stats", {{"SHOW", "STATS"}, false}},
        {"clients", {{"SHOW", "CLIENTS"}, false}},
        {"catalog", {{"SHOW", "CATALOG"}, false}},
        {"snapshots", {{"SHOW", "SNAPSHOTS"}, false}},
        {"audit", {{"SHOW", "AUDIT"}, false}},
        {"exposure", {{"SHOW", "EXPOSURE"}, false}},
        {"exports", {{"SHOW", "EXPORTS"}, false}},
        {"tree", {{"SHOW", "TREE"}, true}},
        {"predicates", {{"SHOW", "PREDICATES"}, true}},
        {"classes", {{"SHOW", "CLASSES"}, true}},
        {"utility", {{"SHOW", "UTILITY"}, true}},
        {"releases", {{"SHOW", "RELEASES"}, true}},
    };
    const auto view = kViews.find(path.substr(5));
    if (view == kViews.end()) co_return call.error(http::status::not_found, "no such view");
    std::vector<std::string> words = view->second.words;
    if (view->second.per_table) {
      if (param("table").empty())
        co_return call.error(http::status::bad_request, "this view needs ?table=");
      words.push_back(param("table"));
    }
    if (words[1] == "EXPOSURE" && !param("role").empty()) words.push_back(param("role"));
    co_return co_await console(call, std::move(words));
  }
  if (!post && path == "tree") {
    proxy::ConsoleAnswer failed;
    const auto snapshot = proxy::AdminConsole(context_).snapshot(param("table"), failed);
    if (!snapshot)
      co_return call.json(status_of(failed.sqlstate), error_json(failed.error, failed.sqlstate));
    co_return make(http::status::ok, call.version(), policy::tree_report_json(*snapshot),
                   "application/json; charset=utf-8");
  }
  if (post && path == "run") {
    Json body;
    try {
      body = Json::parse(call.request.body());
    } catch (const std::exception&) {
      co_return call.error(http::status::bad_request, "expected a JSON object");
    }
    if (!body.is_object()) co_return call.error(http::status::bad_request, "expected an object");
    std::string command, table;
    try {
      command = string_field(body, "command");
      table = string_field(body, "table");
    } catch (const std::exception& e) {
      co_return call.error(http::status::bad_request, e.what());
    }
    if (table.empty()) co_return call.error(http::status::bad_request, "table is missing");
    static const std::map<std::string, std::vector<std::string>, std::less<>> kActions = {
        {"refresh", {"REFRESH"}},
        {"verify", {"VERIFY"}},
        {"verify-history", {"VERIFY", "HISTORY"}},
        {"reanonymize", {"REANONYMIZE"}},
    };
    const auto action = kActions.find(command);
    if (action == kActions.end())
      co_return call.error(http::status::bad_request,
                           "command: expected refresh, verify, verify-history or reanonymize");
    std::vector<std::string> words = action->second;
    words.push_back(table);
    proxy::log(LogLevel::kInfo, "web console: {} runs {} {}", session.user,
               base::join(action->second, " "), table);
    co_return co_await console(call, std::move(words));
  }
  if (post && path == "exports") co_return start_export(call, session);
  if (!post && path == "exports/jobs") {
    Json jobs = Json::array();
    for (const auto& j : jobs_.list()) jobs.push_back(job_json(j));
    co_return call.json(http::status::ok, Json{{"jobs", std::move(jobs)}});
  }
  // exports/jobs/<id>/cancel
  constexpr std::string_view kJobs = "exports/jobs/", kCancel = "/cancel";
  if (post && path.size() > kJobs.size() + kCancel.size() && path.starts_with(kJobs) &&
      path.ends_with(kCancel)) {
    const std::string_view number =
        path.substr(kJobs.size(), path.size() - kJobs.size() - kCancel.size());
    if (!digits(number, 18)) co_return call.error(http::status::not_found, "no such export");
    const uint64_t id = std::stoull(std::string(number));
    if (!jobs_.cancel(id)) co_return call.error(http::status::conflict, "no such running export");
    proxy::log(LogLevel::kInfo, "web console: {} cancels export {}", session.user, id);
    co_return call.json(http::status::ok, Json{{"cancelling", id}});
  }
  co_return call.error(http::status::not_found, "no such API");
}

asio::awaitable<Response> WebApp::console(Call& call, std::vector<std::string> words) {
  const std::string command = base::join(words, " ");
  auto [answer, notices] = co_await proxy::run_blocking(context_.blocking, [&] {
    proxy::ConsoleChannel channel;
    proxy::ConsoleAnswer a = proxy::AdminConsole(context_).answer(words, channel);
    return std::pair(std::move(a), channel.take_notice_texts());
  });
  co_return call.json(answer.ok() ? http::status::ok : status_of(answer.sqlstate),
                      answer_json(command, answer, notices));
}

Response WebApp::start_export(Call& call, const LoginSession& session) {
  Json body;
  try {
    body = Json::parse(call.request.body());
  } catch (const std::exception&) {
    return call.error(http::status::bad_request, "expected a JSON object");
  }
  if (!body.is_object()) return call.error(http::status::bad_request, "expected an object");
  std::string command;
  try {
    command = export_command(body);
  } catch (const std::exception& e) {
    return call.error(http::status::bad_request, e.what());
  }
  const auto id = jobs_.start(session.user, string_field(body, "table"), command);
  if (!id)
    return call.error(http::status::too_many_requests,
                      "two exports are running already; wait for one to end or cancel it");
  proxy::log(LogLevel::kInfo, "web console: {} starts export {}: {}", session.user, *id, command);
  return call.json(http::status::accepted, Json{{"job", *id}, {"command", command}});
}

asio::awaitable<Response> WebApp::export_file(Call& call, const std::string& id,
                                              const std::string& what) {
  // Only files SHOW EXPORTS lists are served: never a path from the request.
  const auto answer = co_await proxy::run_blocking(context_.blocking, [&] {
    proxy::ConsoleChannel channel;
    return proxy::AdminConsole(context_).answer(std::vector<std::string>{"SHOW", "EXPORTS"},
                                                channel);
  });
  if (!answer.ok() || answer.results.empty())
    co_return call.error(status_of(answer.sqlstate), answer.error, answer.sqlstate);
  const auto& r = answer.results.front();
  const auto column = [&](const char* name) {
    for (size_t i = 0; i < r.columns.size(); ++i)
      if (r.columns[i] == name) return i;
    throw std::logic_error(fmt::format("SHOW EXPORTS has no column {}", name));
  };
  const size_t id_col = column("id");
  const size_t file_col = column(what == "report" ? "html_report"
                                 : what == "json" ? "json_report"
                                                  : "target");
  for (const auto& row : r.rows) {
    if (row[id_col] != id) continue;
    const std::string file = row[file_col].value_or("");
    if (what == "csv" && !file.ends_with(".csv"))
      co_return call.error(http::status::not_found, "this export went to a table, not a CSV file");
    std::error_code ec;
    const auto size = std::filesystem::file_size(file, ec);
    if (file.empty() || ec)
      co_return call.error(http::status::not_found,
                           fmt::format("the file of export {} is gone: {}", id, file));
    if (size > kMaxDownload)
      co_return call.error(http::status::payload_too_large,
                           fmt::format("{} is larger than 256 MiB; copy it from the server", file));
    std::ifstream in(file, std::ios::binary);
    std::ostringstream content;
    content << in.rdbuf();
    Response out = make(http::status::ok, call.version(), content.str(),
                        what == "report" ? "text/html; charset=utf-8"
                        : what == "json" ? "application/json; charset=utf-8"
                                         : "text/csv; charset=utf-8");
    if (what == "report") {
      security_headers(out, true);
    } else if (what == "csv") {
      out.set(http::field::content_disposition,
              attachment_disposition(std::filesystem::path(file).filename().string()));
    }
    co_return out;
  }
  co_return call.error(http::status::not_found, fmt::format("no export {}", id));
}

}  // namespace kanon::web
