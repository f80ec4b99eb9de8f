// Session's prepared statements, cursors and portals (prepared_registry.h).
// Every statement kanon saw prepared and every cursor or portal is tied to
// the policy snapshot it was decided under. A use under another snapshot
// decides the client's text again: the same text sent passes; otherwise a
// Bind prepares a Parse's statement again (Close + Parse before it, their
// answers swallowed), and EXECUTE, FETCH, MOVE, a Bind of a PREPARE'd
// statement and an Execute are denied (stale-prepared-statement); a name
// kanon holds nothing of is refused with PostgreSQL's SQLSTATE for a name
// that does not exist (unknown-prepared-statement, unknown-cursor).
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "proxy/log.h"
#include "proxy/session.h"
#include "proxy/wire/frontend_messages.h"
#include "proxy/wire/message_types.h"
#include "rewriter/sql_parser.h"
#include "rewriter/string_literals.h"

namespace kanon::proxy {

namespace {

// Whether a text may hold a statement that names a prepared statement or
// cursor (else it is not parsed again).
bool may_name_prepared(std::string_view text) {
  static constexpr std::string_view kWords[] = {"prepare", "execute", "deallocate", "declare",
                                                "fetch",   "move",    "close",      "discard"};
  // ASCII case folding (the words are ASCII), one pass, no copy.
  const auto fold = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = fold(text[i]);
    for (const auto w : kWords) {
      if (w[0] != c || text.size() - i < w.size()) continue;
      size_t j = 1;
      while (j < w.size() && fold(text[i + j]) == w[j]) ++j;
      if (j == w.size()) return true;
    }
  }
  return false;
}

bool names_prepared(const rewriter::Statement& st) {
  return !st.executed.empty() || st.kind == rewriter::StatementKind::kPrepare ||
         st.kind == rewriter::StatementKind::kDeallocate ||
         st.kind == rewriter::StatementKind::kDeclareCursor ||
         st.kind == rewriter::StatementKind::kFetch ||
         st.kind == rewriter::StatementKind::kClosePortal ||
         st.kind == rewriter::StatementKind::kDiscard;
}

bool allowed(const rewriter::RewriteResult& r) {
  return r.verdict == rewriter::Verdict::kPass || r.verdict == rewriter::Verdict::kRewritten;
}

// What goes to the server for `text` decided as `r` (allowed).
const std::string& sent_for(const rewriter::RewriteResult& r, const std::string& text) {
  return r.verdict == rewriter::Verdict::kRewritten ? r.sql : text;
}

rewriter::RewriteResult stale(Space space, std::string_view name) {
  return rewriter::make_denial(
      rewriter::rules::kStalePrepared,
      fmt::format("{} \"{}\"", space == Space::kStatement ? "prepared statement" : "cursor", name));
}

// A Bind, Execute or Close kanon cannot decode is not forwarded: the server
// may read it (it checks a Bind's format codes only against the parameters
// it has), and kanon could not tell which statement or portal it uses.
StatementGate::Use undecodable(StatementGate::Use& use, const char* message) {
  use.denial = rewriter::make_denial(rewriter::rules::kMalformedMessage,
                                     fmt::format("a {} message kanon cannot decode", message));
  return use;
}

// A name kanon holds nothing of: not passed (the server could hold anything
// under it), with PostgreSQL's SQLSTATE for a name it does not hold.
rewriter::RewriteResult absent(Space space, std::string_view name) {
  return space == Space::kStatement
             ? rewriter::make_denial(rewriter::rules::kUnknownStatement,
                                     fmt::format("prepared statement \"{}\"", name))
             : rewriter::make_denial(rewriter::rules::kUnknownCursor,
                                     fmt::format("cursor \"{}\"", name));
}

// What the server holds under a name whose text kanon could not decide when
// it was prepared: every use is stale.
PreparedEntry undecided_entry() {
  PreparedEntry e;
  e.undecided = true;
  return e;
}

Change removal(Space space, std::string name, bool all = false) {
  Change c;
  c.op = all ? Change::Op::kRemoveAll : Change::Op::kRemove;
  c.space = space;
  c.name = std::move(name);
  return c;
}

// One message's changes, moved: a braced list would copy them (an
// initializer_list's elements are const), each entry's strings with them.
std::vector<std::vector<Change>> one(std::vector<Change> list) {
  std::vector<std::vector<Change>> out;
  out.push_back(std::move(list));
  return out;
}

Change addition(Space space, std::string name, PreparedEntry entry) {
  Change c;
  c.space = space;
  c.name = std::move(name);
  c.entry = std::move(entry);
  return c;
}

}  // namespace

DecidedAt Session::decided_now() {
  const auto s = snapshot();
  return {s->store, s->version};
}

rewriter::RewriteResult Session::decide_again(const PreparedEntry& entry, std::string& sent,
                                              bool looked_up) {
  rewriter::PlanContext context = access_;
  context.search_path = entry.search_path;
  context.absent_names = entry.absent_names;
  // Checked when it was prepared; a newer snapshot has read them again.
  context.event_triggers_confirmed = true;
  context.serial_masks = entry.serial_masks;
  context.parse_message = !entry.sql_level;
  context.parameter_types = entry.param_types;
  std::string text = entry.text;
  if (text.find('\\') != std::string::npos) {
    auto respelled = rewriter::standard_text(text, backend_stream_.standard_conforming_strings());
    if (!respelled)
      return rewriter::make_denial(
          rewriter::rules::kStandardConformingStrings,
          "a string constant kanon cannot respell (N'...' with a backslash)");
    text = std::move(*respelled);
  }
  auto result = context_.rewriter.rewrite(text, *snapshot(), context);
  if (allowed(result)) sent = sent_for(result, text);
  if (result.verdict == rewriter::Verdict::kLookup) return lookup_denial(result);
  // PostgreSQL looks the names of a prepared statement up again whenever it
  // analyses it again (after DDL on what it reads, new statistics), the
  // session's temporary schema first. Decided again without the look-up
  // session_lookup.cc makes (a catalog query) or the one
  // look_up_prepared_names() made before this message: a statement that
  // uses names without a schema in a session that may have made temporary
  // objects is prepared again by the client, and looked up then.
  if (!looked_up && defines_ > 0 && allowed(result) && !result.shadowable.empty() &&
      !access_.reads_nothing_protected && !clear_of_temporary(result.shadowable))
    return rewriter::make_denial(
        rewriter::rules::kStalePrepared,
        fmt::format("it names \"{}\" without a schema, and a temporary object of that name "
                    "may be read instead since it was prepared",
                    result.shadowable.front()));
  return result;
}

void Session::read_before_use(StatementGate::Use& use, bool runs) {
  use.read_invalidations_first = read_before(runs);
  if (use.read_invalidations_first > 0)
    cycle_read_ = {gate_->cycle(), use.read_invalidations_first};
}

std::optional<PreparedEntry> Session::entry_now(std::string_view text, bool sql_level,
                                                const rewriter::RewriteResult* decided) {
  PreparedEntry entry;
  entry.text = std::string(text);
  entry.sql_level = sql_level;
  if (!sql_level) entry.param_types = access_.parameter_types;  // the Parse's
  entry.search_path = access_.search_path;
  entry.absent_names = access_.absent_names;
  entry.serial_masks = access_.serial_masks;
  entry.decided = decided_now();
  // Just decided with its look-up (session_lookup.cc), or by the caller
  // with the context decide_again() gives: the same search_path, absent
  // names, parameters and masks, under the same snapshot. Only its event
  // triggers differ, confirmed here: a decision that needed them confirmed
  // was a look-up (never allowed), and one that did not is the same either way.
  rewriter::RewriteResult again;
  if (!decided) again = decide_again(entry, entry.sent, true);
  const rewriter::RewriteResult& result = decided ? *decided : again;
  if (!allowed(result)) return std::nullopt;  // denied at use
  if (decided) entry.sent = sent_for(result, entry.text);
  entry.shadowable = result.shadowable;
  entry.reads_protected = !result.tables.empty();
  entry.runs = !result.transaction_control;
  return entry;
}

std::optional<rewriter::RewriteResult> Session::check_use(
    Space space, const std::string& name, const std::vector<const PreparedEntry*>& candidates) {
  if (candidates.empty()) return absent(space, name);
  const DecidedAt now = decided_now();
  for (const PreparedEntry* c : candidates) {
    if (c->undecided) return stale(space, name);
    if (c->decided == now) continue;
    std::string sent;
    if (c->text.empty() || !allowed(decide_again(*c, sent)) || sent != c->sent)
      return stale(space, name);
  }
  if (candidates.size() == 1) registry_.confirm_decision(space, name, now);
  return std::nullopt;
}

std::optional<rewriter::RewriteResult> Session::track_names(
    std::string_view text, std::vector<std::vector<Change>>& changes, bool* runs_names) {
  // Skipped by the backend, so nothing to check (and nothing it changes).
  if (!may_name_prepared(text) || registry_.ignoring_till_sync()) return std::nullopt;
  // With a backslash the rewriter decided the respelled text (decide()).
  std::string respelled;
  if (text.find('\\') != std::string_view::npos) {
    auto standard = rewriter::standard_text(text, backend_stream_.standard_conforming_strings());
    if (!standard) return stale(Space::kStatement, "(a text kanon cannot respell)");
    respelled = std::move(*standard);
    text = respelled;
  }
  const auto parsed = rewriter::parse_sql(text);
  // The rewriter allowed it, so it parses; if not, fail closed.
  if (!parsed.ok) return stale(Space::kStatement, "(a text kanon cannot parse)");
  // What earlier statements of the same text did: they ran if this one runs.
  std::vector<Change> earlier;
  const auto check = [&](Space space, const std::string& name) {
    for (auto it = earlier.rbegin(); it != earlier.rend(); ++it) {
      if (it->space != space) continue;
      if (it->op == Change::Op::kRemoveAll || (it->op == Change::Op::kRemove && it->name == name))
        return std::optional(absent(space, name));
      if (it->op == Change::Op::kAdd && it->name == name)
        return check_use(space, name, {&it->entry});
    }
    return check_use(space, name, registry_.candidates(space, name));
  };
  for (const auto& st : parsed.statements) {
    if (runs_names && names_prepared(st)) *runs_names = true;
    if (runs_names) continue;  // a Parse: decided at each Execute of it
    std::vector<Change> list;
    for (const auto& name : st.executed) {
      if (auto denial = check(Space::kStatement, name)) return denial;
      // CREATE TABLE AS EXECUTE: DDL that captures what it reads, denied
      // for protected tables as CREATE TABLE AS SELECT is. EXPLAIN ANALYZE
      // EXECUTE: the executor's figures follow the raw statistics.
      const rewriter::Rule* rule =
          st.kind == rewriter::StatementKind::kCreateTableAs ? &rewriter::rules::kDdlProtected
          : st.kind == rewriter::StatementKind::kExplain && st.explain_analyze
              ? &rewriter::rules::kExplainAnalyze
              : nullptr;
      if (rule)
        for (const PreparedEntry* c : registry_.candidates(Space::kStatement, name))
          if (c->reads_protected)
            return rewriter::make_denial(*rule, fmt::format("prepared statement \"{}\"", name));
    }
    const auto statement_text = text.substr(st.location, st.length);
    if (st.kind == rewriter::StatementKind::kPrepare ||
        st.kind == rewriter::StatementKind::kDeclareCursor) {
      const Space space =
          st.kind == rewriter::StatementKind::kPrepare ? Space::kStatement : Space::kPortal;
      if (auto entry = entry_now(statement_text, true)) {
        entry->hold = st.cursor_hold;
        list.push_back(addition(space, st.object_name, std::move(*entry)));
      } else {
        auto held = undecided_entry();
        held.sql_level = true;
        held.hold = st.cursor_hold;
        list.push_back(addition(space, st.object_name, std::move(held)));
      }
    } else if (st.kind == rewriter::StatementKind::kDeallocate) {
      list.push_back(removal(Space::kStatement, st.object_name, st.object_name.empty()));
    } else if (st.kind == rewriter::StatementKind::kFetch) {
      if (auto denial = check(Space::kPortal, st.object_name)) return denial;
    } else if (st.kind == rewriter::StatementKind::kClosePortal) {
      list.push_back(removal(Space::kPortal, st.object_name, st.object_name.empty()));
    } else if (st.kind == rewriter::StatementKind::kDiscard && st.subkind == "DISCARD_ALL") {
      list.push_back(removal(Space::kStatement, "", true));
      list.push_back(removal(Space::kPortal, "", true));
    }
    earlier.insert(earlier.end(), list.begin(), list.end());
    changes.push_back(std::move(list));
  }
  while (!changes.empty() && changes.back().empty()) changes.pop_back();
  return std::nullopt;
}

void Session::track_decided(std::string_view text, const char* protocol,
                            rewriter::RewriteResult& result, bool fresh) {
  staged_.clear();
  if (!allowed(result)) return;
  if (std::strcmp(protocol, "extended") == 0) {
    // Named and parameter types when the Parse is sent (note_sent).
    bool runs_names = false;
    auto entry = entry_now(text, false, fresh ? &result : nullptr);
    std::vector<Change> list;
    if (entry) {
      std::vector<std::vector<Change>> unused;
      // Unreadable here: decided (and denied) at each Execute.
      if (track_names(text, unused, &runs_names)) runs_names = true;
      entry->runs_names = runs_names;
      list.push_back(addition(Space::kStatement, "", std::move(*entry)));
    } else {
      list.push_back(addition(Space::kStatement, "", undecided_entry()));
    }
    staged_.push_back({wire::frontend::kParse, one(std::move(list))});
    return;
  }
  std::vector<std::vector<Change>> changes;
  if (auto denial = track_names(text, changes, nullptr)) {
    const uint64_t fingerprint = result.fingerprint;
    result = std::move(*denial);
    result.fingerprint = fingerprint;
    return;
  }
  staged_.push_back({wire::frontend::kQuery, std::move(changes)});
}

StatementGate::Use Session::use_prepared(const wire::Frame& frame) {
  StatementGate::Use use;
  staged_.clear();
  if (registry_.ignoring_till_sync()) return use;  // the backend skips it: nothing runs
  if (frame.type == wire::frontend::kClose) {
    auto close = wire::decode_close(frame.body);
    if (!close.ok()) return undecodable(use, "Close");
    const Space space =
        close.value().target == wire::kTargetStatement ? Space::kStatement : Space::kPortal;
    staged_.push_back({frame.type, {{removal(space, close.value().name)}}});
    return use;
  }
  if (frame.type == wire::frontend::kExecute) {
    auto execute = wire::decode_execute(frame.body);
    if (!execute.ok()) return undecodable(use, "Execute");
    const std::string& portal = execute.value().portal;
    const auto candidates = registry_.candidates(Space::kPortal, portal);
    if (auto denial = check_use(Space::kPortal, portal, candidates)) {
      use.denial = std::move(*denial);
      return use;
    }
    std::vector<std::vector<Change>> changes;
    for (const PreparedEntry* c : candidates) {
      if (!c->runs_names) continue;
      if (candidates.size() > 1) {
        use.denial = stale(Space::kPortal, portal);
        return use;
      }
      const std::string text = c->text;  // track_names may change the registry's entries
      if (auto denial = track_names(text, changes, nullptr)) {
        use.denial = std::move(*denial);
        return use;
      }
    }
    const bool runs =
        std::any_of(candidates.begin(), candidates.end(), [](const auto* c) { return c->runs; });
    read_before_use(use, runs);
    if (!changes.empty()) staged_.push_back({frame.type, one(std::move(changes.front()))});
    return use;
  }
  // Bind.
  auto bind = wire::decode_bind(frame.body);
  if (!bind.ok()) return undecodable(use, "Bind");
  const std::string& name = bind.value().statement;
  const std::string& portal = bind.value().portal;
  const auto candidates = registry_.candidates(Space::kStatement, name);
  if (candidates.empty()) {
    use.denial = absent(Space::kStatement, name);
    return use;
  }
  const DecidedAt now = decided_now();
  std::optional<rewriter::RewriteResult> again;  // the differing decision
  std::string again_sent;
  for (const PreparedEntry* c : candidates) {
    if (c->undecided) {
      use.denial = stale(Space::kStatement, name);
      return use;
    }
    if (c->decided == now) continue;
    std::string sent;
    auto result = c->text.empty() ? stale(Space::kStatement, name) : decide_again(*c, sent);
    if (allowed(result) && sent == c->sent) continue;
    again = std::move(result);
    again_sent = std::move(sent);
    break;
  }
  PreparedEntry bound = *candidates.front();
  bound.decided = now;
  for (const PreparedEntry* c : candidates)
    if (c->text != bound.text || c->sent != bound.sent) bound.text.clear();  // never re-decided
  std::vector<Change> portal_changes;
  if (portal.empty()) portal_changes.push_back(removal(Space::kPortal, ""));
  if (!again) {
    read_before_use(use, bound.runs);
    if (candidates.size() == 1) registry_.confirm_decision(Space::kStatement, name, now);
    portal_changes.push_back(addition(Space::kPortal, portal, std::move(bound)));
    staged_.push_back({frame.type, one(std::move(portal_changes))});
    return use;
  }
  const PreparedEntry& old = *candidates.front();
  if (!allowed(*again) || candidates.size() > 1 || old.sql_level) {
    use.denial = allowed(*again) ? stale(Space::kStatement, name) : std::move(*again);
    return use;
  }
  // Prepared again under the current snapshot, transparently.
  // The text in the client's encoding (UTF-8 and ASCII are sent as they are).
  std::string bytes = again_sent;
  const bool ascii = std::all_of(bytes.begin(), bytes.end(),
                                 [](char c) { return static_cast<unsigned char>(c) < 0x80; });
  if (!ascii && backend_stream_.client_encoding() != "UTF8") {
    auto back = encoding_->write(again_sent);
    if (!back) {
      use.denial = stale(Space::kStatement, name);
      return use;
    }
    bytes = std::move(*back);
  }
  PreparedEntry renewed = old;
  renewed.sent = again_sent;
  renewed.decided = now;
  // What it reads and names now (a table protected since, say).
  renewed.shadowable = again->shadowable;
  renewed.reads_protected = !again->tables.empty();
  renewed.runs = !again->transaction_control;
  bound = renewed;
  read_before_use(use, renewed.runs);
  wire::encode(wire::Close{wire::kTargetStatement, name}, use.prefix);
  wire::encode(wire::Parse{name, bytes, old.param_types}, use.prefix);
  use.prefix_answers = 2;
  staged_.push_back({wire::frontend::kClose, {{removal(Space::kStatement, name)}}});
  staged_.push_back(
      {wire::frontend::kParse, {{addition(Space::kStatement, name, std::move(renewed))}}});
  portal_changes.push_back(addition(Space::kPortal, portal, std::move(bound)));
  staged_.push_back({frame.type, one(std::move(portal_changes))});
  log(LogLevel::kInfo, "client {}: statement \"{}\" prepared again under snapshot {}", peer_, name,
      now.version);
  return use;
}

void Session::note_sent(const wire::Frame& frame, StatementGate::Action action) {
  if (action == StatementGate::Action::kDrop) return staged_.clear();
  const auto feed = [&](char type, wire::Bytes body) {
    std::vector<std::vector<Change>> changes;
    if (!staged_.empty() && staged_.front().first == type) {
      changes = std::move(staged_.front().second);
      staged_.pop_front();
    }
    // The Query's first statement is kanon's (StatementGate::decide_query):
    // its CommandComplete comes first and changes nothing.
    if (type == wire::frontend::kQuery && !changes.empty() &&
        gate_->replacement_reads_invalidations())
      changes.insert(changes.begin(), std::vector<Change>{});
    if (type == wire::frontend::kParse) {
      auto parse = wire::decode_parse(body);
      if (!parse.ok()) return;
      const std::string& name = parse.value().statement;
      if (!changes.empty())
        for (auto& c : changes.front()) {
          c.name = name;
          c.entry.param_types = parse.value().param_types;
        }
      // A Parse of the unnamed statement drops the one before, even when it fails.
      if (name.empty()) {
        if (changes.empty()) changes.emplace_back();
        changes.front().insert(changes.front().begin(), removal(Space::kStatement, ""));
      }
    }
    registry_.sent(type, std::move(changes));
  };
  if (action == StatementGate::Action::kForward) {
    feed(frame.type, frame.body);
  } else {
    wire::Bytes rest(gate_->replacement());
    size_t own = gate_->replacement_own_bytes();  // kanon's: answers owed, no names
    for (;;) {
      const wire::Frame f = wire::frame_typed(rest, UINT32_MAX);
      if (f.status != wire::FrameStatus::kFrame) break;
      if (own >= f.size) {
        registry_.sent(f.type, {});
        own -= f.size;
      } else {
        feed(f.type, f.body);
      }
      rest = rest.subspan(f.size);
    }
  }
  staged_.clear();
}

wire::Buffer Session::close_prepared_by(const GuardedQuery& query, uint64_t& closes) {
  wire::Buffer out;
  closes = 0;
  for (const auto& [name, answer] : query.named_parses) {
    if (answer > query.answers_before_error) continue;  // skipped or refused: not there
    wire::encode(wire::Close{wire::kTargetStatement, name}, out);
    registry_.sent(wire::frontend::kClose, {{removal(Space::kStatement, name)}});
    ++closes;
  }
  return out;
}

}  // namespace kanon::proxy
