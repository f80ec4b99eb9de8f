#include "proxy/admin_console.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <pqxx/pqxx>
#include <sstream>

#include "base/sqlstate.h"
#include "base/text.h"
#include "exposure/privileges.h"
#include "policy/policy_file.h"
#include "proxy/admin_export.h"
#include "proxy/admin_risk.h"
#include "proxy/result_set.h"
#include "proxy/wire/backend_messages.h"
#include "proxy/wire/error_fields.h"
#include "publish/export_request.h"
#include "rewriter/protected_index.h"
#include "store/history_build.h"
#include "store/release_store.h"
#include "store/verification.h"

namespace kanon::proxy {

namespace {

// An error the console reports to the user, with its SQLSTATE.
struct ConsoleError : std::runtime_error {
  ConsoleError(std::string state, const std::string& message)
      : std::runtime_error(message), sqlstate(std::move(state)) {}
  std::string sqlstate;
};

std::vector<std::string> split_words(std::string_view text) {
  std::vector<std::string> words;
  std::string current;
  bool quoted = false;
  for (char c : text) {
    if (c == '"') quoted = !quoted;
    if (!quoted && (std::isspace(static_cast<unsigned char>(c)) || c == ';')) {
      if (!current.empty()) words.push_back(std::move(current));
      current.clear();
      continue;
    }
    current += c;
  }
  if (!current.empty()) words.push_back(std::move(current));
  return words;
}

using base::upper;

using base::join;

// A role name as typed: "Name" keeps its case and quotes, name is folded to
// lower case as PostgreSQL folds identifiers.
std::string unquote(const std::string& word) {
  if (word.size() >= 2 && word.front() == '"' && word.back() == '"') {
    std::string out;
    for (size_t i = 1; i + 1 < word.size(); ++i) {
      out += word[i];
      if (word[i] == '"' && i + 2 < word.size() && word[i + 1] == '"') ++i;
    }
    return out;
  }
  std::string out = word;
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string format_time(std::chrono::system_clock::time_point t) {
  return fmt::format("{:%Y-%m-%d %H:%M:%S}Z", std::chrono::floor<std::chrono::seconds>(t));
}

std::string quote_value(const std::string& v) {
  std::string out = "'";
  for (char c : v) {
    if (c == '\'') out += '\'';
    out += c;
  }
  return out + "'";
}

class Commands {
 public:
  Commands(ServerContext& context, std::vector<ResultSet>& out, ConsoleChannel& channel)
      : context_(context), out_(out), channel_(channel) {}

  void run(const std::vector<std::string>& words) {
    for (const Command& c : kCommands) {
      if (words.size() < c.words.size() + c.min_args || words.size() > c.words.size() + c.max_args)
        continue;
      bool match = true;
      for (size_t i = 0; i < c.words.size() && match; ++i) match = upper(words[i]) == c.words[i];
      if (match) return (this->*c.handler)(words);
    }
    throw ConsoleError(sqlstate::kSyntaxError,
                       fmt::format("kanon admin: unknown command \"{}\"; SHOW HELP lists "
                                   "the commands",
                                   join(words, " ")));
  }

  // Every command: its leading words, how many words it takes after them
  // (at least, at most), how SHOW HELP writes it, what it does, and its
  // handler (given all the words). Tried in order: the first match runs.
  struct Command {
    std::vector<std::string> words;
    size_t min_args;
    size_t max_args;
    const char* usage;
    const char* help;
    void (Commands::*handler)(const std::vector<std::string>&);
  };
  static constexpr size_t kAny = 64;
  static const std::vector<Command> kCommands;

  std::shared_ptr<const policy::TableSnapshot> snapshot_of(const std::string& name) {
    return built(find(name));
  }

 private:
  void emit(ResultSet r) { out_.push_back(std::move(r)); }

  void help(const std::vector<std::string>&) {
    ResultSet r{{"command", "what it does"}};
    for (const Command& c : kCommands) r.add({c.usage, c.help});
    emit(r);
  }

  // Handlers by the words they need.
  void policies(const std::vector<std::string>&) { policies(); }
  void stats(const std::vector<std::string>&) { stats(); }
  void clients(const std::vector<std::string>&) { clients(); }
  void audit(const std::vector<std::string>&) { audit(); }
  void catalog(const std::vector<std::string>&) { catalog(); }
  void snapshots(const std::vector<std::string>&) { snapshots(); }
  void show_exports(const std::vector<std::string>&) { show_exports(); }
  void exposure(const std::vector<std::string>& w) { exposure(w.size() == 3 ? w[2] : ""); }
  void tree(const std::vector<std::string>& w) { tree(w[2]); }
  void predicates(const std::vector<std::string>& w) { predicates(w[2]); }
  void reload(const std::vector<std::string>&) { reload(); }
  void shutdown(const std::vector<std::string>&) { shutdown(); }
  void pause(const std::vector<std::string>&) { pause(); }
  void resume(const std::vector<std::string>&) { resume(); }
  void refresh(const std::vector<std::string>& w) { refresh(w[1]); }
  void verify(const std::vector<std::string>& w) { verify(w[1]); }
  void reanonymize(const std::vector<std::string>& w) { reanonymize(w[1]); }

  store::PolicyStores& stores() {
    if (!context_.policies)
      throw ConsoleError(sqlstate::kObjectNotInPrerequisiteState,
                         "kanon admin: no policies are loaded");
    return *context_.policies;
  }

  // The store of `p`'s database.
  store::PolicyStore& store(const policy::TablePolicy& p) {
    const auto s = stores().of(p);
    if (!s)
      throw ConsoleError(sqlstate::kObjectNotInPrerequisiteState,
                         fmt::format("kanon admin: {} has no store", stores().name_of(p)));
    return *s;
  }

  // The service account's connection to `p`'s database.
  std::string conninfo(const policy::TablePolicy& p) {
    return settings::service_conninfo(*context_.runtime()->config, p.database);
  }

  // The policy named by `name` ([database.]schema.table or a bare table
  // name); ConsoleError listing the tables otherwise.
  policy::TablePolicy find(const std::string& name) {
    const auto all = stores().policies();
    try {
      return policy::find_policy(all, name);
    } catch (const std::exception& e) {
      throw ConsoleError(sqlstate::kUndefinedTable, fmt::format("kanon admin: {}", e.what()));
    }
  }

  std::shared_ptr<const policy::TableSnapshot> built(const policy::TablePolicy& p) {
    const auto snapshot = store(p).current();
    const auto it = snapshot->tables.find(p.name());
    if (it == snapshot->tables.end()) {
      const auto err = snapshot->errors.find(p.name());
      throw ConsoleError(sqlstate::kObjectNotInPrerequisiteState,
                         fmt::format("kanon admin: {} has no tree yet{}", p.name(),
                                     err == snapshot->errors.end() ? "" : ": " + err->second));
    }
    return it->second;
  }

  // grants: manage — who kanon manages and whether it could protect them
  // outside the proxy (NULL when kanon does not manage grants).
  static std::optional<std::string> grants_status(const policy::TablePolicy& p,
                                                  const policy::TableSnapshot* t) {
    if (p.grants != policy::GrantPolicy::kManage) return std::nullopt;
    std::string s = "manage: " + join(p.grant_to);
    if (!t) return s + "; not built";
    if (t->grant_warnings.empty()) return s + "; direct access masked for every role";
    for (const auto& w : t->grant_warnings) s += "; WARNING: " + w;
    return s;
  }

  // What the masks of the built table call: "function" or "sql", and for
  // evaluator: auto which it chose (and why not the function).
  static std::string evaluator_status(const policy::TablePolicy& p,
                                      const policy::TableSnapshot& t) {
    const std::string used = t.masks.calls_function ? "function" : "sql";
    if (p.evaluator != policy::MaskEvaluator::kAuto) return used;
    if (t.evaluator_fallback.empty()) return used + " (auto)";
    return used + " (auto: " + t.evaluator_fallback + ")";
  }

  void policies() {
    ResultSet r{{"database",
                 "table",
                 "k",
                 "l",
                 "quasi_identifiers",
                 "mode",
                 "exempt",
                 "refresh",
                 "status",
                 "built_at",
                 "rows",
                 "tree_nodes",
                 "version",
                 "grants",
                 "row_key",
                 "release_version",
                 "released_fraction",
                 "held",
                 "person",
                 "evaluator"}};
    const auto all =
        context_.policies ? context_.policies->policies() : std::vector<policy::TablePolicy>{};
    for (const auto& p : all) {
      const auto owner = stores().of(p);
      const auto snapshot = owner ? owner->current() : nullptr;
      const policy::TableSnapshot* t = snapshot ? snapshot->find(p.name()) : nullptr;
      std::string status = t ? "built" : "not built";
      if (snapshot)
        if (auto e = snapshot->errors.find(p.name()); e != snapshot->errors.end())
          status = (t ? "stale: " : "failed: ") + e->second;
      // Followed by OID: served under its new name, the old one denied.
      const auto renamed =
          snapshot ? rewriter::renamed_tables(*snapshot) : std::map<std::string, std::string>{};
      if (const auto moved = renamed.find(p.name()); moved != renamed.end())
        status += "; renamed to " + moved->second + " (served masked under that name; " + p.name() +
                  " denied until the policy names it)";
      r.add(
          {owner ? owner->database_name() : p.database, policy::display_name(p),
           std::to_string(p.k),
           p.sensitive ? std::optional(std::to_string(p.sensitive->l)) : std::nullopt,
           join(p.quasi_identifiers), policy::to_string(p.mode), join(p.exempt),
           fmt::format("{}s", std::chrono::duration_cast<std::chrono::seconds>(p.refresh).count()),
           status, t ? std::optional(format_time(t->built_at)) : std::nullopt,
           t ? std::optional(std::to_string(t->stats.rows)) : std::nullopt,
           t ? std::optional(std::to_string(t->tree.size())) : std::nullopt,
           snapshot ? std::optional(std::to_string(snapshot->version)) : std::nullopt,
           grants_status(p, t), t ? std::optional(t->release.key.describe()) : std::nullopt,
           t && t->release.version ? std::optional(std::to_string(t->release.version))
                                   : std::nullopt,
           t && t->release.version
               ? std::optional(fmt::format("{:.4f}", t->release.released_fraction))
               : std::nullopt,
           // The keys whose quasi-identifiers the copy masks (kanon.held_keys).
           t && t->release.version && p.mode == policy::EnforcementMode::kMaterialized
               ? std::optional(std::to_string(t->release.held))
               : std::nullopt,
           // person: k counts the distinct values of these columns.
           p.person.empty() ? std::nullopt : std::optional(join(p.person)),
           t ? std::optional(evaluator_status(p, *t)) : std::nullopt});
    }
    emit(r);
  }

  void tree(const std::string& name) {
    const auto t = built(find(name));
    const auto& tree = t->tree;
    ResultSet r{{"cohort", "path", "rows", "released"}};
    for (int leaf : tree.leaves()) {
      std::vector<std::string> conditions;
      for (const auto& c : tree.path(leaf))
        conditions.push_back(fmt::format("{} {} {}", tree.attributes()[c.attribute],
                                         c.equal ? "=" : "<>", quote_value(c.value)));
      std::vector<std::string> released;
      for (size_t a = 0; a < tree.attributes().size(); ++a)
        if (tree.nodes()[leaf].released & (uint64_t{1} << a))
          released.push_back(tree.attributes()[a]);
      r.add({tree.nodes()[leaf].label, conditions.empty() ? "TRUE" : join(conditions, " AND "),
             std::to_string(tree.nodes()[leaf].rows), join(released)});
    }
    emit(r);
  }

  void predicates(const std::string& name) {
    const auto t = built(find(name));
    ResultSet r{{"attribute", "release_rule", "tests", "mask"}};
    for (size_t i = 0; i < t->predicates.size(); ++i) {
      const std::string& column = t->policy.quasi_identifiers[i];
      std::string mask;
      for (const auto& m : t->masks.columns)
        if (m.column == column) mask = m.expression;
      r.add({column, t->predicates[i].rule_text(t->tree.attributes()),
             std::to_string(t->predicates[i].size()), mask});
    }
    emit(r);
  }

  // Shared snapshots (store/shared_snapshots.h): every stored version of
  // every database's tables, newest first.
  void snapshots() {
    ResultSet r{{"database", "table", "version", "built_at", "built_by", "fingerprint",
                 "policy_hash", "served_by", "builder", "here"}};
    for (const auto& store : stores().all()) {
      const auto state = store->sharing_state();
      if (!state.enabled)
        throw ConsoleError(sqlstate::kObjectNotInPrerequisiteState,
                           "kanon admin: snapshots are not shared (snapshots: shared: false)");
      std::string builder;
      std::vector<store::SnapshotListing> listed;
      try {
        listed = store->stored_snapshots(builder);
      } catch (const std::exception& e) {
        throw ConsoleError(sqlstate::kConnectionFailure,
                           fmt::format("kanon admin: cannot read the stored snapshots of {}: {}",
                                       store->database_name(), e.what()));
      }
      const auto current = store->current();
      for (const auto& l : listed) {
        const auto* served = current->find(l.snapshot.table);
        const bool here = served && served->shared_version == l.snapshot.version;
        r.add({store->database_name(), l.snapshot.table, std::to_string(l.snapshot.version),
               l.snapshot.built_at, l.snapshot.built_by, l.snapshot.fingerprint,
               l.snapshot.policy_hash, join(l.served_by, ", "), builder,
               here ? std::optional<std::string>(state.replica) : std::nullopt});
      }
    }
    emit(r);
  }

  // What each database's restricted statements are decided with, and
  // whether DDL that commits meanwhile is caught (docs/security.md, "DDL
  // while a statement runs").
  void catalog() {
    ResultSet r{{"database", "relations", "functions", "generation", "read_ms", "guard", "watcher",
                 "notifications", "refreshes", "error"}};
    for (const auto& store : stores().all()) {
      const auto current = store->current();
      const auto* facts = current->catalog.get();
      const auto watch = store->catalog_watch_state();
      const auto number = [&](auto v) {
        return facts ? std::optional<std::string>(fmt::format("{}", v)) : std::nullopt;
      };
      std::string guard = facts && facts->c_guard ? "on: kanon_mask.catalog_is (C)"
                                                  : "on: kanon.catalog_is (PL/pgSQL)";
      if (!facts)
        guard = "off: the catalog is not read (restricted statements naming objects are denied)";
      else if (facts->generation == 0 || !watch.trigger_installed)
        guard = "off: " + (watch.trigger_error.empty() ? std::string("no DDL event trigger")
                                                       : watch.trigger_error);
      const std::string watcher = watch.listening ? "listening"
                                  : watch.running ? "reconnecting"
                                                  : "not running";
      std::string error = current->catalog_error;
      if (error.empty()) error = watch.error;
      r.add({store->database_name(), number(facts ? facts->relations.size() : 0),
             number(facts ? facts->functions.size() : 0), number(facts ? facts->generation : 0),
             number(facts ? fmt::format("{:.1f}", facts->read_ms) : ""), guard, watcher,
             std::to_string(watch.notifications), std::to_string(watch.refreshes),
             error.empty() ? std::nullopt : std::optional<std::string>(error)});
    }
    emit(r);
  }

  void stats() {
    ResultSet r{{"stat", "value"}};
    const auto& s = context_.stats;
    const auto cache = context_.rewriter.cache_stats();
    const auto add = [&](const std::string& k, const std::string& v) { r.add({k, v}); };
    add("state", context_.shutting_down() ? context_.shutdown_state()
                 : context_.paused.load() ? "paused"
                                          : "serving");
    add("clients_active", std::to_string(context_.active_clients.load()));
    add("statements_running", std::to_string(context_.running_statements.total()));
    add("io_thread_sessions", context_.io_threads.sessions_text());
    add("io_thread_load", context_.io_threads.loads_text());
    add("connections_total", std::to_string(s.connections.load()));
    add("statements_passed", std::to_string(s.statements_passed.load()));
    add("statements_rewritten", std::to_string(s.statements_rewritten.load()));
    add("statements_denied", std::to_string(s.denied_total()));
    add("guard_retries", std::to_string(s.guard_retries.load()));
    for (const auto& [rule, n] : s.denied_by_rule()) add("denied: " + rule, std::to_string(n));
    add("cache_hits", std::to_string(cache.hits));
    add("cache_misses", std::to_string(cache.misses));
    add("cache_entries", std::to_string(cache.entries));
    add("cache_shape_hits", std::to_string(cache.shape_hits));
    const uint64_t lookups = cache.hits + cache.misses;
    add("cache_hit_rate",
        lookups ? fmt::format("{:.3f}", static_cast<double>(cache.hits) / lookups) : "n/a");
    for (double p : {0.5, 0.9, 0.99})
      add(fmt::format("rewrite_p{}_us (bucket bound)", static_cast<int>(p * 100)),
          fmt::format("{:g}", s.rewrite_latency.percentile(p)));
    if (context_.policies)
      for (const auto& s : stores().all())
        add("policy_version: " + (s->database_name().empty() ? "(default)" : s->database_name()),
            std::to_string(s->current()->version));
    if (context_.audit) {
      add("audit_records", std::to_string(context_.audit->records()));
      add("audit_lost", std::to_string(context_.audit->lost()));
    }
    emit(r);
  }

  void clients() {
    ResultSet r{
        {"id", "user", "database", "address", "application", "access", "tls", "connected_since"}};
    for (const auto& c : context_.clients.list())
      r.add({std::to_string(c.id), c.user, c.database, c.peer, c.application, c.access,
             c.tls ? "yes" : "no", format_time(c.since)});
    emit(r);
  }

  // The audit trail's in-memory ring (what the writer thread has handled).
  void audit() {
    if (!context_.audit)
      throw ConsoleError(sqlstate::kObjectNotInPrerequisiteState,
                         "kanon admin: the audit trail is off (no audit: in the configuration)");
    context_.audit->flush();
    ResultSet r{{"time", "user", "database", "client", "application_name", "backend_pid",
                 "protocol", "fingerprint", "decision", "rule", "object", "tables", "snapshot",
                 "rows", "duration_ms", "sqlstate", "text"}};
    const auto opt = [](const std::string& v) {
      return v.empty() ? std::nullopt : std::optional<std::string>(v);
    };
    for (const auto& a : context_.audit->latest()) {
      const AuditSession& s = *a.session;
      r.add({iso8601_ms(a.time), s.user, s.database, s.client, s.application,
             std::to_string(s.backend_pid), a.protocol,
             a.fingerprint ? std::optional(fingerprint_hex(a.fingerprint)) : std::nullopt,
             to_string(a.decision), opt(a.rule), opt(a.object), join(a.tables),
             std::to_string(a.snapshot_version),
             a.rows ? std::optional(std::to_string(*a.rows)) : std::nullopt,
             fmt::format("{:.3f}", a.duration_ms), opt(a.sqlstate), a.text});
    }
    emit(r);
  }

  // Read afresh on a service connection of its own: the grants as they are
  // now. Notes (what was not checked) come as notices.
  void exposure(const std::string& role) {
    const auto runtime = context_.runtime();
    const auto all =
        context_.policies ? context_.policies->policies() : std::vector<policy::TablePolicy>{};
    exposure::CheckOptions options;
    if (!role.empty()) options.exposure.roles.insert(unquote(role));
    if (!runtime->config->audit.table.empty())
      options.internal_tables = {runtime->config->audit.table};
    exposure::ExposureReport report;
    try {
      report = exposure::check_every_database(
          all, settings::default_database(*runtime->config),
          [&](const std::string& database) {
            return settings::service_conninfo(*runtime->config, database);
          },
          options);
    } catch (const std::exception& e) {
      throw ConsoleError(sqlstate::kConnectionFailure,
                         fmt::format("kanon admin: SHOW EXPOSURE failed: {}", e.what()));
    }
    for (const auto& note : report.notes) channel_.notice(note);
    ResultSet r{{"database", "role", "path", "object", "reaches", "detail", "fix"}};
    for (const auto& x : report.rows)
      r.add({x.database, x.role, exposure::to_string(x.path), x.object, join(x.reaches), x.detail,
             x.fix});
    emit(r);
  }

  void reload() {
    if (!context_.reload)
      throw ConsoleError(sqlstate::kObjectNotInPrerequisiteState,
                         "kanon admin: RELOAD is not available");
    std::string summary;
    try {
      summary = context_.reload();
    } catch (const std::exception& e) {
      throw ConsoleError("F0000",
                         fmt::format("kanon admin: RELOAD failed, nothing changed: {}", e.what()));
    }
    ResultSet r{{"reloaded"}};
    r.add({summary});
    r.tag = "RELOAD";
    emit(r);
  }

  void shutdown() {
    if (!context_.shutdown)
      throw ConsoleError(sqlstate::kObjectNotInPrerequisiteState,
                         "kanon admin: SHUTDOWN is not available");
    const auto config = context_.runtime()->config;
    const bool already = context_.shutting_down();
    context_.shutdown();
    std::string what = fmt::format(
        "draining: {} sessions end when idle between transactions, the rest after "
        "shutdown_grace ({} ms)",
        context_.active_clients.load(), config->shutdown_grace.count());
    if (config->shutdown_lame_duck.count() > 0)
      what = fmt::format(
          "lame duck for {} ms (shutdown_lame_duck): /readyz answers 503, new connections are "
          "still served; then {}",
          config->shutdown_lame_duck.count(), what);
    if (already) what = "already shutting down: " + context_.shutdown_state();
    ResultSet r{{"shutdown"}};
    r.add({what});
    r.tag = "SHUTDOWN";
    emit(r);
  }

  void pause() {
    if (!context_.pause)
      throw ConsoleError(sqlstate::kObjectNotInPrerequisiteState,
                         "kanon admin: PAUSE is not available");
    if (context_.shutting_down())
      throw ConsoleError(sqlstate::kObjectNotInPrerequisiteState,
                         "kanon admin: kanon is shutting down");
    size_t sessions = 0;
    if (!context_.pause([this] { return channel_.cancelled(); }, &sessions))
      throw ConsoleError(sqlstate::kQueryCanceled,
                         "kanon admin: PAUSE cancelled before every session was idle; not paused");
    ResultSet r{{"paused"}};
    r.add(
        {fmt::format("paused: {} sessions idle between transactions; new queries and "
                     "connections wait until RESUME",
                     sessions)});
    r.tag = "PAUSE";
    emit(r);
  }

  void resume() {
    const bool was = context_.paused.exchange(false);
    ResultSet r{{"resumed"}};
    r.add({was ? "resumed: held sessions continue" : "not paused"});
    r.tag = "RESUME";
    emit(r);
  }

  void refresh(const std::string& name) {
    const auto p = find(name);
    if (!store(p).refresh(p.name())) {
      const auto snapshot = store(p).current();
      const auto e = snapshot->errors.find(p.name());
      throw ConsoleError("XX000",
                         fmt::format("kanon admin: REFRESH {} failed: {}", p.name(),
                                     e == snapshot->errors.end() ? "unknown error" : e->second));
    }
    const auto t = built(p);
    // E.g. a history stored by an earlier kanon: this release is a baseline.
    if (!t->release.note.empty()) channel_.notice("kanon admin: " + t->release.note);
    ResultSet r{{"table", "rows", "tree_nodes", "load_ms", "tree_ms", "version"}};
    r.add({policy::display_name(p), std::to_string(t->stats.rows), std::to_string(t->tree.size()),
           fmt::format("{:.1f}", t->stats.load_ms), fmt::format("{:.1f}", t->stats.tree_ms),
           std::to_string(store(p).current()->version)});
    r.tag = "REFRESH";
    emit(r);
  }

  // The verification of `p` on a service connection; a population table
  // that cannot be used is said in a notice (its figures are NULL).
  store::VerificationReport verification(const policy::TablePolicy& p,
                                         const policy::TableSnapshot& t, const char* command) {
    store::VerificationReport v;
    try {
      pqxx::connection conn(conninfo(p));
      v = store::verify_table(conn, t, p.risk);
    } catch (const std::exception& e) {
      throw ConsoleError(sqlstate::kConnectionFailure,
                         fmt::format("kanon admin: {} {} failed: {}", command, p.name(), e.what()));
    }
    if (!v.population_error.empty())
      channel_.notice(fmt::format("kanon admin: {} {}: no journalist or marketer risk: {}", command,
                                  p.name(), v.population_error));
    return v;
  }

  void verify(const std::string& name) {
    const auto p = find(name);
    const auto t = built(p);
    const store::VerificationReport v = verification(p, *t, "VERIFY");
    ResultSet r{{"table", "policy_k", "real_k", "groups", "groups_below_k", "rows",
                 "released_fraction", "verdict"}};
    for (auto& c : risk_columns()) r.columns.push_back(std::move(c));
    std::vector<std::optional<std::string>> row = {
        p.name(),
        std::to_string(p.k),
        std::to_string(v.min_group),
        std::to_string(v.groups),
        std::to_string(v.groups_below_k),
        std::to_string(v.rows),
        fmt::format("{:.4f}", v.released_fraction),
        v.rows == 0 || v.min_group >= p.k ? "ok" : "BELOW k: run REFRESH"};
    for (auto& x : risk_values(v, p.risk)) row.push_back(std::move(x));
    r.add(std::move(row));
    r.tag = "VERIFY";
    emit(r);
  }

  void show_classes(const std::vector<std::string>& w) {
    const auto p = find(w[2]);
    emit(classes_result(verification(p, *built(p), "SHOW CLASSES")));
  }

  void show_utility(const std::vector<std::string>& w) {
    const auto p = find(w[2]);
    const auto t = built(p);
    const store::VerificationReport v = verification(p, *t, "SHOW UTILITY");
    std::vector<store::ColumnDistinct> distinct;
    try {
      pqxx::connection conn(conninfo(p));
      distinct = store::distinct_values(conn, *t);
    } catch (const std::exception& e) {
      throw ConsoleError(
          sqlstate::kConnectionFailure,
          fmt::format("kanon admin: SHOW UTILITY {} failed: {}", p.name(), e.what()));
    }
    emit(utility_result(p, v, distinct));
  }

  void reanonymize(const std::string& name) {
    const auto p = find(name);
    channel_.notice(fmt::format(
        "kanon admin: REANONYMIZE {} starts a new release baseline: the releases before it are "
        "no longer taken into account, so an analyst who kept them can intersect them with "
        "this one",
        p.name()));
    if (!store(p).reanonymize(p.name())) {
      const auto snapshot = store(p).current();
      const auto e = snapshot->errors.find(p.name());
      throw ConsoleError(sqlstate::kInternalError,
                         fmt::format("kanon admin: REANONYMIZE {} failed: {}", p.name(),
                                     e == snapshot->errors.end() ? "unknown error" : e->second));
    }
    const auto t = built(p);
    ResultSet r{{"table", "rows", "tree_nodes", "release_version", "released_fraction"}};
    r.add({policy::display_name(p), std::to_string(t->stats.rows), std::to_string(t->tree.size()),
           std::to_string(t->release.version),
           fmt::format("{:.4f}", t->release.released_fraction)});
    r.tag = "REANONYMIZE";
    emit(r);
  }

  // The stored releases (kanon.releases), oldest first: what VERIFY HISTORY
  // found when each was made.
  void releases(const std::vector<std::string>& words) {
    const auto p = find(words[2]);
    std::vector<store::ReleaseSummary> listed;
    try {
      pqxx::connection conn(conninfo(p));
      pqxx::read_transaction tx(conn);
      listed = store::list_releases(tx, p.name());
    } catch (const std::exception& e) {
      throw ConsoleError(
          sqlstate::kConnectionFailure,
          fmt::format("kanon admin: SHOW RELEASES {} failed: {}", p.name(), e.what()));
    }
    ResultSet r{{"version", "built_at", "baseline", "k", "rows", "released_fraction", "linked_rows",
                 "real_k", "rows_below_k", "held"}};
    const auto n = [](uint64_t x) { return std::to_string(x); };
    for (const auto& v : listed)
      // real_k: NULL when no row was linked to an earlier release (a baseline,
      // or a table without a row key): there was nothing to count.
      r.add({n(v.version), v.built_at, v.baseline ? "yes" : "no", n(v.k), n(v.rows),
             fmt::format("{:.4f}", v.released_fraction), n(v.linked_rows),
             v.linked_rows ? std::optional(n(v.min_candidates)) : std::nullopt, n(v.rows_below_k),
             n(v.held_rows)});
    emit(r);
  }

  // VERIFY HISTORY <table> [SINCE <version>]
  void verify_history(const std::vector<std::string>& words) {
    std::optional<uint64_t> since;
    if (words.size() == 5 && upper(words[3]) == "SINCE") {
      try {
        size_t used = 0;
        since = std::stoull(words[4], &used);
        if (used != words[4].size()) throw std::invalid_argument(words[4]);
      } catch (const std::exception&) {
        throw ConsoleError(sqlstate::kInvalidParameterValue,
                           fmt::format("kanon admin: VERIFY HISTORY: SINCE needs a release "
                                       "version number, not \"{}\"",
                                       words[4]));
      }
    } else if (words.size() != 3) {
      throw ConsoleError(sqlstate::kSyntaxError,
                         "kanon admin: usage: VERIFY HISTORY <table> [SINCE <version>]");
    }
    const auto p = find(words[2]);
    store::HistoryVerification v;
    try {
      pqxx::connection conn(conninfo(p));
      v = store::verify_history(conn, p, since);
    } catch (const std::exception& e) {
      throw ConsoleError(
          sqlstate::kConnectionFailure,
          fmt::format("kanon admin: VERIFY HISTORY {} failed: {}", p.name(), e.what()));
    }
    ResultSet r{{"table", "row_key", "since_version", "last_version", "releases", "policy_k",
                 "real_k", "linked_rows", "new_rows", "rows_below_k",
                 "rows_below_k_through_updates", "rows_below_k_arrived_late",
                 "rows_below_k_through_deletions", "verdict"}};
    exposure::HistoryStatus status;
    status.table = p.name();
    status.linkable = v.key.linkable();
    status.releases = v.releases;
    status.take(v.check);
    const auto n = [](uint64_t x) { return std::to_string(x); };
    r.add({policy::display_name(p), v.key.describe(), n(v.since), n(v.last_version), n(v.releases),
           n(p.k), n(v.check.min_candidates), n(v.check.linked_rows), n(v.check.new_rows),
           n(v.check.rows_below_k), n(v.check.updated_rows_below_k), n(v.check.late_rows_below_k),
           n(v.check.deleted_rows_below_k), status.verdict()});
    r.tag = "VERIFY";
    emit(r);
  }

  void show_exports() {
    std::vector<std::pair<std::string, std::string>> databases;
    const auto& config = *context_.runtime()->config;
    for (const auto& s : stores().all())
      databases.emplace_back(s->database(), settings::service_conninfo(config, s->database()));
    emit(run_show_exports(databases));
  }

  void export_table(const std::vector<std::string>& words) {
    const auto p = find(words[1]);
    std::vector<std::string> reserved;
    for (const auto& other : stores().policies()) reserved.push_back(other.name());
    // audit.table is schema.table (the configuration checks it).
    const auto& audit = context_.runtime()->config->audit.table;
    if (!audit.empty()) reserved.push_back(audit);
    emit(run_export_command(conninfo(p), p, join(words, " "), std::move(reserved), channel_));
  }

  ServerContext& context_;
  std::vector<ResultSet>& out_;
  ConsoleChannel& channel_;  // notices and cancel for long commands (EXPORT)
};

const std::vector<Commands::Command> Commands::kCommands = {
    {{"SHOW", "HELP"}, 0, 0, "SHOW HELP", "the commands", &Commands::help},
    {{"SHOW", "POLICIES"},
     0,
     0,
     "SHOW POLICIES",
     "protected tables, their policies and build state",
     &Commands::policies},
    {{"SHOW", "TREE"},
     1,
     1,
     "SHOW TREE <table>",
     "the cohorts of the disclosure tree: path, rows, released",
     &Commands::tree},
    {{"SHOW", "PREDICATES"},
     1,
     1,
     "SHOW PREDICATES <table>",
     "the release rule of every quasi-identifier",
     &Commands::predicates},
    {{"SHOW", "STATS"},
     0,
     0,
     "SHOW STATS",
     "statements passed, rewritten and denied; cache; latency",
     &Commands::stats},
    {{"SHOW", "CLIENTS"}, 0, 0, "SHOW CLIENTS", "connected clients", &Commands::clients},
    {{"SHOW", "SNAPSHOTS"},
     0,
     0,
     "SHOW SNAPSHOTS",
     "stored snapshot versions per table, the builder, and which replica serves which",
     &Commands::snapshots},
    {{"SHOW", "CATALOG"},
     0,
     0,
     "SHOW CATALOG",
     "per database: the catalog kanon decides with, its generation, the DDL watcher and "
     "whether restricted statements carry the catalog guard",
     &Commands::catalog},
    {{"SHOW", "AUDIT"},
     0,
     0,
     "SHOW AUDIT",
     "the latest audit records of restricted statements, oldest first",
     &Commands::audit},
    {{"SHOW", "EXPOSURE"},
     0,
     1,
     "SHOW EXPOSURE [<role>]",
     "paths restricted logins have to protected tables outside kanon, with fixes",
     &Commands::exposure},
    {{"RELOAD"},
     0,
     0,
     "RELOAD",
     "re-read the configuration and the policies (also SIGHUP)",
     &Commands::reload},
    {{"PAUSE"},
     0,
     0,
     "PAUSE",
     "wait until every session is idle between transactions, then hold them",
     &Commands::pause},
    {{"RESUME"}, 0, 0, "RESUME", "release the sessions PAUSE holds", &Commands::resume},
    {{"SHUTDOWN"},
     0,
     0,
     "SHUTDOWN",
     "lame duck (shutdown_lame_duck), then drain: no new connections, end sessions as their "
     "transactions end",
     &Commands::shutdown},
    {{"REFRESH"},
     1,
     1,
     "REFRESH <table>",
     "rebuild the table's tree from the data now",
     &Commands::refresh},
    // Before VERIFY <table>: VERIFY HISTORY t is this one (VERIFY HISTORY
    // alone verifies a table named history).
    {{"VERIFY", "HISTORY"},
     1,
     3,
     "VERIFY HISTORY <table> [SINCE <version>]",
     "the real k of every release since the baseline (or version) taken together",
     &Commands::verify_history},
    {{"VERIFY"},
     1,
     1,
     "VERIFY <table>",
     "the real k, groups and released fraction, as the server sees it, and the "
     "re-identification risk (prosecutor; journalist and marketer with risk.population; "
     "docs/risk.md)",
     &Commands::verify},
    {{"REANONYMIZE"},
     1,
     1,
     "REANONYMIZE <table>",
     "rebuild afresh as a new history baseline (earlier releases become linkable)",
     &Commands::reanonymize},
    {{"EXPORT"},
     1,
     Commands::kAny,
     "EXPORT <table> [TO ...] [WITH (...)]",
     "publish an anonymized copy (docs/export.md)",
     &Commands::export_table},
    {{"SHOW", "RELEASES"},
     1,
     1,
     "SHOW RELEASES <table>",
     "the stored releases, oldest first, with the real k over time each one had",
     &Commands::releases},
    {{"SHOW", "CLASSES"},
     1,
     1,
     "SHOW CLASSES <table>",
     "the class sizes restricted users see: classes and rows per size, each size's risk",
     &Commands::show_classes},
    {{"SHOW", "UTILITY"},
     1,
     1,
     "SHOW UTILITY <table>",
     "per quasi-identifier: rows released unmasked, distinct values before and after masking",
     &Commands::show_utility},
    {{"SHOW", "EXPORTS"},
     0,
     0,
     "SHOW EXPORTS",
     "the published exports and their reports",
     &Commands::show_exports},
};

}  // namespace

void ConsoleChannel::notice(std::string_view message) {
  const std::lock_guard lock(mu_);
  pending_.emplace_back(message);
}

wire::Buffer ConsoleChannel::take_notices() {
  wire::Buffer out;
  for (const auto& m : take_notice_texts())
    wire::encode_notice(out, "NOTICE", sqlstate::kSuccessfulCompletion, m);
  return out;
}

std::vector<std::string> ConsoleChannel::take_notice_texts() {
  const std::lock_guard lock(mu_);
  std::vector<std::string> out;
  out.swap(pending_);
  return out;
}

ConsoleAnswer AdminConsole::answer(const std::vector<std::string>& words, ConsoleChannel& channel) {
  ConsoleAnswer a;
  try {
    Commands(context_, a.results, channel).run(words);
  } catch (const ConsoleError& e) {
    a.fail(e.sqlstate, e.what());
  } catch (const publish::ExportError& e) {
    a.fail(e.sqlstate, e.what());
  } catch (const std::exception& e) {
    a.fail("XX000", fmt::format("kanon admin: {}", e.what()));
  }
  return a;
}

std::shared_ptr<const policy::TableSnapshot> AdminConsole::snapshot(const std::string& table,
                                                                    ConsoleAnswer& error) {
  std::vector<ResultSet> unused;
  ConsoleChannel channel;
  try {
    return Commands(context_, unused, channel).snapshot_of(table);
  } catch (const ConsoleError& e) {
    error.fail(e.sqlstate, e.what());
  } catch (const std::exception& e) {
    error.fail("XX000", fmt::format("kanon admin: {}", e.what()));
  }
  return nullptr;
}

ConsoleAnswer AdminConsole::answer(std::string_view command, ConsoleChannel& channel) {
  return answer(split_words(command), channel);
}

void AdminConsole::execute(std::string_view command, wire::Buffer& out, ConsoleChannel& channel) {
  const auto words = split_words(command);
  if (words.empty()) {
    wire::encode(wire::EmptyQueryResponse{}, out);
    return;
  }
  const ConsoleAnswer a = answer(words, channel);
  if (!a.ok()) {
    wire::encode_error(out, "ERROR", a.sqlstate, a.error);
    return;
  }
  for (const ResultSet& r : a.results) encode(r, out);
}

}  // namespace kanon::proxy
