// StatementGate and ResponseFilter: enforcement for one restricted session,
// without sockets.
//
// StatementGate sees every frame the client sends after start-up. Query and
// Parse texts go through the rewriter: passed frames are forwarded, rewritten
// ones replaced by a re-encoded message, denied ones never reach the backend.
// A denial must reach the client in protocol order, after the answers to the
// messages before it, so the gate does not answer itself: it sends the
// backend something that yields a ReadyForQuery at the right point and queues
// a Denial that the backend pump's ResponseFilter turns into an ErrorResponse
// just before that ReadyForQuery:
//   - simple Query / FunctionCall: an empty Query instead (its
//     EmptyQueryResponse is dropped);
//   - extended Parse: nothing; every message up to Sync is discarded, as
//     PostgreSQL does after an error, and the Sync is forwarded.
// If the backend reports an error of its own in the same cycle (an earlier
// message of the pipeline failed), PostgreSQL would never have looked at the
// denied message, so the queued error is dropped.
//
// Both run on the session's thread; they share the queue, nothing else.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <string_view>

#include "proxy/wire/framing.h"
#include "rewriter/rewriter.h"

namespace kanon::proxy {

struct Denial {
  uint64_t ready_ordinal = 0;  // the ReadyForQuery it precedes (1 = start-up's)
  bool swallow_empty_query = false;
  wire::Buffer error;  // an encoded ErrorResponse frame
};

using DenialQueue = std::deque<Denial>;

class StatementGate {
 public:
  // Called for every Query/Parse text; `protocol` is "simple" or "extended".
  using RewriteFn =
      std::function<rewriter::RewriteResult(std::string_view sql, const char* protocol)>;

  enum class Action { kForward, kReplace, kDrop };

  StatementGate(RewriteFn rewrite, DenialQueue& denials)
      : rewrite_(std::move(rewrite)), denials_(denials) {}

  // REQUIRES: frame.status == kFrame, a frontend message after start-up.
  // On kReplace the backend gets replacement() instead of the frame.
  Action on_frame(const wire::Frame& frame);
  const wire::Buffer& replacement() const { return replacement_; }

  bool discarding() const { return discarding_; }

 private:
  void deny(const rewriter::RewriteResult& result, bool swallow_empty_query);

  RewriteFn rewrite_;
  DenialQueue& denials_;
  wire::Buffer replacement_;
  uint64_t ready_expected_ = 1;  // ReadyForQuery messages the backend owes so far
  bool discarding_ = false;
};

class ResponseFilter {
 public:
  enum class Action { kForward, kDrop, kInsertBefore };

  explicit ResponseFilter(DenialQueue& denials) : denials_(denials) {}

  // REQUIRES: frame.status == kFrame, a backend message. On kInsertBefore
  // the client gets insertion() and then the frame.
  Action on_frame(const wire::Frame& frame);
  const wire::Buffer& insertion() const { return insertion_; }

 private:
  DenialQueue& denials_;
  wire::Buffer insertion_;
  uint64_t ready_seen_ = 0;
  bool error_in_cycle_ = false;
};

}  // namespace kanon::proxy
