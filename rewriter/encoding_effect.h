// EncodingEffect: what running a restricted statement may do to the
// session's client_encoding. PostgreSQL converts every later message's text
// from that encoding, so the proxy must know it before it reads the next
// statement (proxy/encoding_guard.h): after a statement that may change it,
// the proxy relies on the encoding again only once that statement's cycle has
// ended and the server has reported the value (ParameterStatus).
//
// Conservative by construction: anything that can run code kanon has not
// read is kAny. A statement that runs only built-in code (a SELECT over
// tables and views whose functions, row security policies, operators, casts
// and domain checks are built in, SHOW, BEGIN, SET of another setting, ...)
// cannot change it. Computed with the plan and cached with it (the catalog is
// part of the snapshot the cache keys on).
#pragma once

#include <string>
#include <string_view>

namespace kanon::rewriter {

class ObjectCatalog;
struct ParseOutcome;

struct EncodingEffect {
  enum class Kind {
    kNone,  // cannot change it
    // SET [LOCAL] client_encoding / SET NAMES to `value` (as written: PostgreSQL
    // accepts aliases, e.g. 'latin1', 'ISO-8859-1')
    kSet,
    // back to the value the session started with: RESET client_encoding,
    // SET client_encoding TO DEFAULT, SET NAMES, RESET ALL, DISCARD ALL
    kReset,
    // COMMIT, ROLLBACK, ABORT, END, ROLLBACK TO SAVEPOINT, PREPARE TRANSACTION
    // (and the prepared-transaction forms): they undo SET LOCAL, and every SET
    // of a transaction that failed
    kTransactionEnd,
    // anything: set_config(), code that is not built in (functions, views,
    // row security, operators, casts, domain checks), writes (triggers,
    // defaults), EXECUTE, FETCH, DDL, several changes in one string
    kAny,
  };
  Kind kind = Kind::kNone;
  std::string value;  // kSet

  bool operator==(const EncodingEffect&) const = default;
};

// The effect of running every statement of `parsed` (the text `sql`). Without
// a catalog (a database kanon does not protect, or not read yet) every
// statement that names a relation or function is kAny.
EncodingEffect encoding_effect(const ParseOutcome& parsed, std::string_view sql,
                               const ObjectCatalog* catalog);

}  // namespace kanon::rewriter
