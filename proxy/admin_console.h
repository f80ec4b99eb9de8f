// AdminConsole: the commands of the virtual admin database (PgBouncer
// style), each answered as result rows a psql user reads as a table:
//
//   SHOW HELP | SHOW POLICIES | SHOW TREE <table> | SHOW PREDICATES <table>
//   SHOW STATS | SHOW CLIENTS | SHOW AUDIT | SHOW EXPOSURE [<role>] | RELOAD | REFRESH <table>
//   VERIFY <table> | PAUSE | RESUME | SHUTDOWN   (ServerContext::pause, ::paused, ::shutdown)
//   SHOW CLASSES <table> | SHOW UTILITY <table>   (risk and utility: admin_risk.h)
//   EXPORT <table> [TO ...] [WITH (...)] | SHOW EXPORTS   (admin_export.h)
//
// <table> is "schema.table" or a bare name that only one policy has.
// execute() may block (REFRESH, VERIFY, RELOAD and SHOW EXPOSURE talk to the
// backend): call it from the blocking pool. Thread-safe.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string_view>

#include "proxy/server_context.h"
#include "proxy/wire/framing.h"

namespace kanon::proxy {

// What a command may use while it runs on the blocking pool: notices for
// the client (psql prints them as they come: progress of long runs) and the
// cancel flag (set by a CancelRequest, i.e. Ctrl-C in psql, or when the
// client goes away). Thread-safe.
class ConsoleChannel {
 public:
  // `cancel`: the flag a CancelRequest for the session sets.
  explicit ConsoleChannel(
      std::shared_ptr<std::atomic<bool>> cancel = std::make_shared<std::atomic<bool>>(false))
      : cancel_(std::move(cancel)) {}

  // Queues a NoticeResponse with severity NOTICE.
  void notice(std::string_view message);
  bool cancelled() const { return cancel_->load(); }

  // Session side.
  wire::Buffer take_notices();

 private:
  std::shared_ptr<std::atomic<bool>> cancel_;
  std::mutex mu_;
  wire::Buffer pending_;
};

class AdminConsole {
 public:
  explicit AdminConsole(ServerContext& context) : context_(context) {}

  // One command (a trailing ';' is fine). Appends the answer — result
  // messages or an ErrorResponse — without ReadyForQuery.
  void execute(std::string_view command, wire::Buffer& out, ConsoleChannel& channel);

 private:
  ServerContext& context_;
};

}  // namespace kanon::proxy
