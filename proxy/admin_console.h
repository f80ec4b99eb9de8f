// AdminConsole: the commands of the virtual admin database (PgBouncer
// style), each answered as result rows a psql user reads as a table:
//
//   SHOW HELP | SHOW POLICIES | SHOW TREE <table> | SHOW PREDICATES <table>
//   SHOW STATS | SHOW CLIENTS | RELOAD | REFRESH <table> | VERIFY <table>
//
// <table> is "schema.table" or a bare name that only one policy has.
// execute() may block (REFRESH, VERIFY and RELOAD talk to the backend): call
// it from the blocking pool. Thread-safe.
#pragma once

#include <string_view>

#include "proxy/server_context.h"
#include "proxy/wire/framing.h"

namespace kanon::proxy {

class AdminConsole {
 public:
  explicit AdminConsole(ServerContext& context) : context_(context) {}

  // One command (a trailing ';' is fine). Appends the answer — result
  // messages or an ErrorResponse — without ReadyForQuery.
  void execute(std::string_view command, wire::Buffer& out);

 private:
  ServerContext& context_;
};

}  // namespace kanon::proxy
