// PreparedRegistry: what a restricted session's prepared statements,
// cursors and portals were decided as, and under which policy snapshot.
// No sockets.
//
// PostgreSQL keeps two namespaces per session: statements (SQL PREPARE and
// the extended protocol's Parse share it) and portals (DECLARE CURSOR and
// Bind share it). kanon records every name it saw created in them with the
// client's text, the text it sent and the snapshot (store, version) it
// decided that under, so a later use (EXECUTE, FETCH, MOVE, Bind, Execute)
// under a newer snapshot can be decided again (proxy/session_prepared.cc).
//
// What a name holds in the backend is learned from the backend's answers:
// the session reports every message it sends (sent()) and every message the
// backend answers (on_backend()), in order. An addition (a PREPARE, a
// Parse, a DECLARE, a Bind) takes effect when the answer that confirms it
// arrives, and is dropped when the backend skips or refuses the message; a
// removal (DEALLOCATE, CLOSE, DISCARD ALL, Close, an unnamed Parse or Bind)
// takes effect at once, and so does forgetting the portals that end with a
// transaction. Until an addition is answered, a use sees every entry the
// name may hold (candidates()). Fail closed: the registry may know less than
// the backend (a removal that failed, a cursor the backend already dropped),
// never an entry the backend does not hold under that name, and a name it
// does not know is never passed.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kanon::proxy {

// A policy snapshot's identity: PolicySnapshot::store and ::version.
struct DecidedAt {
  uint64_t store = 0;
  uint64_t version = 0;
  bool operator==(const DecidedAt&) const = default;
};

struct PreparedEntry {
  std::string text;  // the client's text as kanon decided it (UTF-8)
  std::string sent;  // what kanon sent for it (UTF-8)
  // What the decision depended on besides the snapshot.
  std::string search_path;
  std::vector<std::string> absent_names;
  bool serial_masks = false;          // rewriter::PlanContext::serial_masks
  std::vector<uint32_t> param_types;  // a Parse's parameter type OIDs
  DecidedAt decided;
  // A PREPARE or DECLARE statement's text (else a Parse's query): a Bind
  // cannot prepare it again.
  bool sql_level = false;
  bool hold = false;  // DECLARE ... WITH HOLD: outlives its transaction
  // Relation names it uses without a schema (rewriter::RewriteResult::
  // shadowable): a temporary object of one of them would be read instead
  // when PostgreSQL analyses it again.
  std::vector<std::string> shadowable;
  // It reads a protected table (through masks): CREATE TABLE AS EXECUTE of
  // it would capture protected rows (rules::kDdlProtectedTable).
  bool reads_protected = false;
  // The text itself prepares, executes, declares, fetches or removes
  // something: decided again at every Execute of a portal bound to it.
  bool runs_names = false;
  // It is more than transaction control (rewriter::RewriteResult::
  // transaction_control): a Bind or Execute of it may go after
  // kReadInvalidations (Session::read_before).
  bool runs = true;
  // The server holds it but kanon could not decide its text when it was
  // prepared: every use is stale (rules::kStalePrepared), never unknown.
  bool undecided = false;
};

enum class Space { kStatement, kPortal };

struct Change {
  enum class Op { kAdd, kRemove, kRemoveAll };
  Op op = Op::kAdd;
  Space space = Space::kStatement;
  std::string name;
  PreparedEntry entry;  // kAdd
};

class PreparedRegistry {
 public:
  // A message sent to the backend (its frontend type byte) with the changes
  // it makes when it succeeds. A Query's `changes` are per statement, in
  // order (fewer than its statements is fine); another message's at most
  // one list. Removals take effect now.
  void sent(char frontend_type, std::vector<std::vector<Change>> changes = {});
  // Every message the backend sends, in order; `status` is ReadyForQuery's.
  void on_backend(char backend_type, char status = 0);

  // What `name` may hold when the next message sent uses it: the confirmed
  // entry and every addition still waiting for its answer. Empty: kanon
  // does not know the name.
  std::vector<const PreparedEntry*> candidates(Space space, const std::string& name) const;
  // The confirmed entry was decided again under `at` with the same result.
  void confirm_decision(Space space, const std::string& name, DecidedAt at);
  // The union of PreparedEntry::shadowable over every entry (confirmed or
  // waiting) not decided under `now`: what deciding them again may need
  // looked up (sorted, unique).
  std::vector<std::string> shadowable_not_decided_at(DecidedAt now) const;

  // The backend ignores every message up to the next Sync (an extended
  // message failed): nothing sent now runs.
  bool ignoring_till_sync() const { return ignoring_till_sync_; }

  size_t size(Space space) const { return confirmed(space).size(); }
  size_t pending() const { return expected_.size(); }
  // A ReadyForQuery is still owed for something sent (a Query, a Sync, a
  // FunctionCall the backend does not skip). PostgreSQL answers none for a
  // Query or FunctionCall it skips after a failed extended message, nor for
  // a Sync (or Flush) it reads while a COPY FROM STDIN is running: counting
  // sent messages instead left a session that did either never idle again.
  bool ready_owed() const;

 private:
  struct Expected {
    // kCopyEnd: a CopyDone or CopyFail sent; it ends a COPY FROM STDIN the
    // backend is running (CopyInResponse), and Syncs sent before it are
    // read by that COPY, which ignores them.
    enum class Kind { kAnswer, kStatement, kQueryReady, kSyncReady, kCopyEnd };
    Kind kind = Kind::kAnswer;
    std::vector<Change> additions;
  };

  std::map<std::string, PreparedEntry>& confirmed(Space space) {
    return space == Space::kStatement ? statements_ : portals_;
  }
  const std::map<std::string, PreparedEntry>& confirmed(Space space) const {
    return space == Space::kStatement ? statements_ : portals_;
  }
  void push(Expected::Kind kind, std::vector<Change> changes);
  void remove(const Change& change);
  void confirm_head();
  // Drops expectations up to (not including) one of kind `until`; false
  // when there is none.
  bool skip_until(Expected::Kind until);

  std::map<std::string, PreparedEntry> statements_;
  std::map<std::string, PreparedEntry> portals_;
  std::deque<Expected> expected_;
  // After an extended message failed, the backend ignores everything up
  // to the next Sync not sent yet.
  bool ignoring_till_sync_ = false;
  // The backend runs a COPY FROM STDIN whose CopyDone or CopyFail is not
  // sent yet: a Sync sent now gets no answer.
  bool copy_in_ = false;
};

}  // namespace kanon::proxy
