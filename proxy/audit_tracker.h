// AuditTracker: the audit records of one restricted session, without
// sockets. The session tells it what the gate decided and which frames went
// each way; it pairs the backend's answers with the messages that caused
// them and submits one record per statement to the AuditTrail:
//
//   Query         one record per message (all its statements), ended by
//                 ReadyForQuery; rows summed over its CommandCompletes;
//   Parse         no record when passed or rewritten: the decision is kept
//                 under the statement name for the Executes of portals bound
//                 to it; a denied Parse (or one kanon cannot parse) is one
//                 record, ended by its error;
//   Execute       one record, ended by its CommandComplete (rows from the
//                 tag), EmptyQueryResponse, PortalSuspended (rows counted)
//                 or error;
//   FunctionCall  one record, ended by ReadyForQuery.
//
// A message the backend skipped because an earlier extended message failed
// (everything up to Sync, Query and FunctionCall included) gets that error's
// SQLSTATE. Runs on the session's thread only.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "proxy/audit_trail.h"
#include "proxy/statement_gate.h"
#include "proxy/wire/framing.h"
#include "rewriter/rewriter.h"

namespace kanon::proxy {

class AuditTracker {
 public:
  // `session`: backend_pid may still be 0; set_backend_pid() fills it in.
  // `exempt`: the session is relayed untouched (audit.exempt: true); its
  // statements are recorded with decision exempt.
  AuditTracker(AuditTrail& trail, AuditSession session, bool exempt = false)
      : trail_(trail),
        session_(std::make_shared<AuditSession>(std::move(session))),
        exempt_(exempt) {}
  // Statements still unanswered (the client or the backend went away) are
  // recorded with SQLSTATE 08006.
  ~AuditTracker();
  AuditTracker(const AuditTracker&) = delete;
  AuditTracker& operator=(const AuditTracker&) = delete;

  void set_backend_pid(int32_t pid);
  // A client frame arrived (call before the gate sees it).
  void received();
  // What the gate decided for the Query, Parse or FunctionCall being handled.
  // `text`: the statement as kanon read it (UTF-8), when that is not the
  // message's bytes as they are (another client encoding).
  void decided(const rewriter::RewriteResult& result, uint64_t snapshot_version,
               std::optional<std::string> text = std::nullopt);
  // The client frame and what the gate did with it.
  void on_client_frame(const wire::Frame& frame, StatementGate::Action action);
  // A backend frame as the client gets it: `error_sqlstate` is the SQLSTATE
  // of an ErrorResponse (the replacement's, when kanon replaced it).
  void on_backend_frame(char type, wire::Bytes body, std::string_view error_sqlstate = {});
  // The current syntax probe turned out to be a parser mismatch.
  void probe_was_mismatch();

 private:
  // What a Parse decided, kept for the Executes of its statement.
  struct Prepared {
    AuditDecision decision = AuditDecision::kPassed;
    uint64_t fingerprint = 0;
    std::optional<std::string> text;
    std::vector<std::string> tables;
    uint64_t snapshot_version = 0;
  };
  struct Pending {
    AuditRecord record;
    std::chrono::steady_clock::time_point started;
    uint64_t data_rows = 0;
  };
  // What the backend owes for a message that went to it.
  enum class Owes {
    kCycle,   // Query, FunctionCall: everything up to ReadyForQuery
    kAnswer,  // Parse, Bind, Describe, Execute, Close: one answer or an error
    kSync,    // Sync: ReadyForQuery
  };
  struct Entry {
    Owes owes;
    std::optional<Pending> pending;
  };

  // Queues what the backend owes for the frame (a record when it is one).
  void on_message(const wire::Frame& frame);
  Pending start(const char* protocol, std::optional<std::string> text);
  // A Query's or Parse's text for its record: as kanon read it, or as sent.
  std::string statement_text(std::string_view sent) const;
  void finish(Pending& p, std::string_view sqlstate = {});
  void on_error(std::string_view sqlstate);
  void on_ready();

  AuditTrail& trail_;
  std::shared_ptr<AuditSession> session_;
  const bool exempt_;
  std::chrono::system_clock::time_point received_at_;
  std::chrono::steady_clock::time_point received_steady_;
  // What the gate decided for the frame being handled (not the whole
  // RewriteResult: its rewritten SQL can be large).
  struct Decided {
    AuditDecision decision = AuditDecision::kPassed;
    uint64_t fingerprint = 0;
    std::string rule;
    std::string object;
    std::vector<std::string> tables;
    std::optional<std::string> text;
  };
  std::optional<Decided> decision_;
  uint64_t decision_version_ = 0;
  // A FIFO that keeps its storage: it empties at every ReadyForQuery, so
  // steady use allocates nothing (a deque would, for entries this large).
  class Owed {
   public:
    bool empty() const { return head_ == items_.size(); }
    Entry& front() { return items_[head_]; }
    void push_back(Entry e) { items_.push_back(std::move(e)); }
    void pop_front() {
      if (++head_ == items_.size()) {
        items_.clear();
        head_ = 0;
      }
    }

   private:
    std::vector<Entry> items_;
    size_t head_ = 0;
  };
  Owed owed_;
  // Set after an extended message failed while its Sync had not been sent
  // yet: what the client sends until that Sync is skipped by the backend.
  std::optional<std::string> skipping_;
  std::unordered_map<std::string, std::shared_ptr<const Prepared>> statements_;
  std::unordered_map<std::string, std::shared_ptr<const Prepared>> portals_;
};

}  // namespace kanon::proxy
