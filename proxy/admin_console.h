// AdminConsole: the commands of the virtual admin database (PgBouncer
// style), each answered as result rows a psql user reads as a table:
//
// The commands are one table (kCommands in admin_console.cc: words,
// arguments, usage, help, handler); SHOW HELP prints it, so the list lives
// there only. EXPORT and SHOW EXPORTS are in admin_export.h. The web console
// (web/) runs the same commands through answer().
// Risk and utility (VERIFY's columns, SHOW CLASSES, SHOW UTILITY) are
// formatted in admin_risk.h.
//
// <table> is "schema.table" or a bare name that only one policy has.
// execute() may block (REFRESH, VERIFY, RELOAD and SHOW EXPOSURE talk to the
// backend): call it from the blocking pool. Thread-safe.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "proxy/result_set.h"
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
  void cancel() { cancel_->store(true); }
  // The share of a long command done, 0 to 1 (EXPORT; the web console's
  // progress bar). Negative until the command reports any.
  void set_progress(double done) { progress_.store(done); }
  double progress() const { return progress_.load(); }

  // Session side: the queued notices as NoticeResponse messages, or (web
  // console) as text. Each notice is taken once, by one of them.
  wire::Buffer take_notices();
  std::vector<std::string> take_notice_texts();

 private:
  std::shared_ptr<std::atomic<bool>> cancel_;
  std::atomic<double> progress_{-1};
  std::mutex mu_;
  std::vector<std::string> pending_;
};

// A command's answer as data: its result tables, or the error it failed
// with (the web console shows both; the SQL console encodes them).
struct ConsoleAnswer {
  std::vector<ResultSet> results;
  std::string sqlstate;  // empty: succeeded
  std::string error;

  bool ok() const { return sqlstate.empty(); }
  void fail(std::string state, std::string message) {
    results.clear();
    sqlstate = std::move(state);
    error = std::move(message);
  }
};

class AdminConsole {
 public:
  explicit AdminConsole(ServerContext& context) : context_(context) {}

  // One command, already split into words (a word is never split again, so
  // a table name given by the web console stays one argument).
  ConsoleAnswer answer(const std::vector<std::string>& words, ConsoleChannel& channel);
  // One command as typed.
  ConsoleAnswer answer(std::string_view command, ConsoleChannel& channel);
  // The built snapshot of `table` as SHOW TREE finds it; null when there is
  // none, with the console's error in `error`.
  std::shared_ptr<const policy::TableSnapshot> snapshot(const std::string& table,
                                                        ConsoleAnswer& error);

  // One command (a trailing ';' is fine). Appends the answer — result
  // messages or an ErrorResponse — without ReadyForQuery.
  void execute(std::string_view command, wire::Buffer& out, ConsoleChannel& channel);

 private:
  ServerContext& context_;
};

}  // namespace kanon::proxy
