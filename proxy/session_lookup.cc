// Session::look_up_unknown_names: the catalog side of a restricted statement.
// The rewriter answers kLookup when a statement names relations or functions
// the snapshot's catalog does not know. They are either objects created since
// the catalog was read (a new view, a child attached later, a function
// replaced by another name), or the session's own temporary objects, or
// missing ones. One catalog query tells: if a persistent object of that name
// exists, the catalog is re-read (a new snapshot version) and the statement
// planned again; if none does, the names are passed back as absent, and a
// statement naming a temporary object that runs code (a view, a function, a
// table with triggers, rules or code in its defaults) is denied
// (rules::kTemporaryObject). PostgreSQL searches the temporary schema first
// for relation names without a schema, so once the session may have made
// temporary objects (Session::defines_) the names a statement uses
// without a schema are looked up too, known ones included: a temporary view
// named like a persistent table is read instead of it. A denial is decided
// again first when the catalog generation moved past kanon's catalog.
#include <algorithm>

#include "proxy/blocking.h"
#include "proxy/log.h"
#include "proxy/session.h"
#include "proxy/wire/frontend_messages.h"
#include "proxy/wire/message_types.h"
#include "rewriter/statement_rules.h"
#include "rewriter/string_literals.h"

namespace kanon::proxy {

boost::asio::awaitable<void> Session::look_up_unknown_names(const wire::Frame& frame) {
  prepared_.reset();
  access_.absent_names.clear();
  access_.event_triggers_confirmed = false;
  // The gate decides the frame with this context too: a Parse's parameter
  // types (restriction_filter.h).
  access_.parse_message = false;
  access_.parameter_types.clear();
  std::string sql;
  if (frame.type == wire::frontend::kQuery) {
    auto q = wire::decode_query(frame.body);
    if (!q.ok()) co_return;
    sql = std::move(q.value().sql);
  } else {
    auto p = wire::decode_parse(frame.body);
    if (!p.ok()) co_return;
    sql = std::move(p.value().query);
    access_.parse_message = true;
    access_.parameter_types = std::move(p.value().param_types);
  }
  // In another client encoding, Session::rewrite decides the text converted
  // to UTF-8 (encoding_guard.h); text it refuses needs no look-up.
  auto read = encoding_->read(sql);
  if (read.read == EncodingGuard::Read::kRefused) co_return;
  if (read.read == EncodingGuard::Read::kConverted) sql = std::move(read.utf8);
  // With a backslash, Session::rewrite decides the text with E'...'
  // constants (rewriter/string_literals.h): look its names up.
  if (sql.find('\\') != std::string::npos)
    if (auto text = rewriter::standard_text(sql, backend_stream_.standard_conforming_strings()))
      sql = std::move(*text);
  // Plan, refresh the catalog if a name now exists, plan again, pass the
  // remaining names back as absent, plan a last time. A name that is still
  // unknown then (e.g. created and dropped meanwhile) is denied by the gate.
  const auto own = store();
  if (!own) co_return;                   // nothing protected here, and no catalog to ask
  std::optional<std::string> temporary;  // an absent name's temporary object that runs code
  bool rechecked = false;                // a denial's catalog confirmed (below)
  for (int attempt = 0; attempt < 4; ++attempt) {
    const auto decided_with = snapshot();
    auto result = context_.rewriter.rewrite(sql, *decided_with, access_);
    // A denial decided with a catalog a DDL has since moved past (the
    // watcher's notification is on its way) would deny what the database
    // now allows, e.g. a read right after the index that denied it was
    // dropped: the generation is asked, and the catalog read again and the
    // statement decided again when it moved (or when the watcher read it
    // since this decision: found on busy cores). Also in a transaction block,
    // unless the session may have run DDL since it was last idle: its own
    // DDL would hold the read until the block ends (a failed block runs
    // nothing anyway).
    const bool own_ddl_open =
        defines_ > 0 && backend_stream_.last_idle_ready() <= defined_at_ready_;
    if (result.verdict == rewriter::Verdict::kDenied && !rechecked &&
        result.rule != rewriter::rules::kSyntax.id && !own_ddl_open &&
        backend_stream_.transaction_status() != wire::kTxFailed) {
      rechecked = true;
      const int64_t decided = decided_with->catalog ? decided_with->catalog->generation : 0;
      bool reread = false;
      try {
        reread = co_await run_blocking(context_.blocking,
                                       [&] { return own->refresh_catalog_if_moved(decided); });
      } catch (const std::exception& e) {
        log(LogLevel::kWarning, "client {}: catalog generation look-up failed: {}", peer_,
            e.what());
      }
      if (reread) continue;
    }
    if (result.verdict != rewriter::Verdict::kLookup) {
      // It, or a SQL function body it runs, names a relation without a
      // schema: a temporary view of that name would be read instead. Only
      // the session's own temporary schema is searched, and it has one only
      // after a statement that may define something (defines_).
      if (!temporary && defines_ > 0 && result.verdict != rewriter::Verdict::kDenied &&
          !result.shadowable.empty() && !access_.reads_nothing_protected) {
        try {
          temporary = co_await run_blocking(
              context_.blocking, [&] { return own->unsafe_temporary_object(result.shadowable); });
        } catch (const std::exception& e) {
          log(LogLevel::kWarning, "client {}: catalog look-up failed: {}", peer_, e.what());
          temporary = "(kanon could not look its names up: " + std::string(e.what()) + ")";
        }
      }
      if (temporary && result.verdict != rewriter::Verdict::kDenied) {
        const uint64_t fingerprint = result.fingerprint;
        result = rewriter::make_denial(rewriter::rules::kTemporaryObject, *temporary);
        result.fingerprint = fingerprint;
      }
      prepared_sql_ = std::move(sql);
      prepared_ = std::move(result);
      prepared_at_ = {decided_with->store, decided_with->version};
      co_return;
    }
    if (result.event_triggers) {
      // DDL fires the event triggers of the moment, which the catalog
      // watch does not hear of: the catalog is read again when they differ.
      // A transaction keeps the snapshot of its first statement: if that is
      // what the session still decides with, nothing is confirmed (denied).
      const auto facts = snapshot()->catalog;
      bool same = false;
      try {
        same = facts && co_await run_blocking(context_.blocking,
                                              [&] { return own->event_triggers_as_read(*facts); });
        if (!same) co_await run_blocking(context_.blocking, [&] { return own->refresh_catalog(); });
      } catch (const std::exception& e) {
        log(LogLevel::kWarning, "client {}: event trigger look-up failed: {}", peer_, e.what());
        co_return;  // not confirmed: denied
      }
      if (!same && snapshot()->catalog == facts) co_return;
      access_.event_triggers_confirmed = true;
      if (result.unknown.empty() || !same) continue;  // decided again (with the new catalog)
    }
    bool exists = true;
    try {
      exists = co_await run_blocking(
          context_.blocking, [&] { return own->any_persistent_object_named(result.unknown); });
    } catch (const std::exception& e) {
      log(LogLevel::kWarning, "client {}: catalog look-up failed: {}", peer_, e.what());
      co_return;  // the names stay unknown: denied
    }
    if (!exists) {
      // Not persistent: a session's temporary objects, or missing. kanon's
      // catalog has no temporary schema, so a temporary view, function or
      // table that runs code is denied (what it reads may have changed since
      // it was made: found by an adversarial probe).
      // A login PostgreSQL keeps from protected data reads none through them.
      try {
        if (!access_.reads_nothing_protected && !result.unknown_used.empty())
          temporary = co_await run_blocking(
              context_.blocking, [&] { return own->unsafe_temporary_object(result.unknown_used); });
      } catch (const std::exception& e) {
        log(LogLevel::kWarning, "client {}: catalog look-up failed: {}", peer_, e.what());
        co_return;  // the names stay unknown: denied
      }
      access_.absent_names = result.unknown;
      continue;  // planned once more with the names known to be absent
    }
    try {
      co_await run_blocking(context_.blocking, [&] { return own->refresh_catalog(); });
    } catch (const std::exception& e) {
      log(LogLevel::kWarning, "client {}: catalog refresh failed: {}", peer_, e.what());
      co_return;
    }
  }
}

boost::asio::awaitable<void> Session::look_up_prepared_names() {
  if (defines_ == 0 || access_.reads_nothing_protected) co_return;
  const DecidedAt now = decided_now();
  if (temporary_clear_.at == now && temporary_clear_.defines == defines_) co_return;
  const auto own = store();
  if (!own) co_return;
  TemporaryClear clear{now, defines_, registry_.shadowable_not_decided_at(now)};
  if (!clear.names.empty()) {
    try {
      if (co_await run_blocking(context_.blocking,
                                [&] { return own->unsafe_temporary_object(clear.names); }))
        clear.names.clear();  // one of them runs code: decided again, they are stale
    } catch (const std::exception& e) {
      log(LogLevel::kWarning, "client {}: catalog look-up failed: {}", peer_, e.what());
      clear.names.clear();
    }
  }
  temporary_clear_ = std::move(clear);
}

bool Session::clear_of_temporary(const std::vector<std::string>& names) {
  const auto& c = temporary_clear_;
  return c.defines != 0 && c.at == decided_now() && c.defines == defines_ &&
         std::includes(c.names.begin(), c.names.end(), names.begin(), names.end());
}

}  // namespace kanon::proxy
