// PreparedRegistry: additions take effect at the backend's answer, removals
// at once; errors skip what PostgreSQL skips; portals without HOLD end with
// their transaction; a use sees every entry a name may hold.
#include "proxy/prepared_registry.h"

#include <doctest/doctest.h>

#include "proxy/wire/message_types.h"

using namespace kanon;
using proxy::Change;
using proxy::PreparedEntry;
using proxy::PreparedRegistry;
using proxy::Space;

namespace {

namespace fe = wire::frontend;
namespace be = wire::backend;

Change add(Space space, const std::string& name, const std::string& text, bool hold = false) {
  Change c;
  c.space = space;
  c.name = name;
  c.entry.text = text;
  c.entry.sent = text;
  c.entry.hold = hold;
  return c;
}

Change remove(Space space, const std::string& name, bool all = false) {
  Change c;
  c.op = all ? Change::Op::kRemoveAll : Change::Op::kRemove;
  c.space = space;
  c.name = name;
  return c;
}

std::vector<std::string> texts(const PreparedRegistry& r, Space space, const std::string& name) {
  std::vector<std::string> out;
  for (const PreparedEntry* e : r.candidates(space, name)) out.push_back(e->text);
  return out;
}

using Texts = std::vector<std::string>;

}  // namespace

TEST_CASE("a Query's PREPARE is pending until its CommandComplete, then confirmed") {
  PreparedRegistry r;
  r.on_backend(be::kReadyForQuery, 'I');  // start-up's: nothing owed
  r.sent(fe::kQuery, {{add(Space::kStatement, "p", "A")}});
  CHECK(texts(r, Space::kStatement, "p") == Texts{"A"});  // a pipelined use sees it
  CHECK(r.size(Space::kStatement) == 0);
  r.on_backend(be::kCommandComplete);
  r.on_backend(be::kReadyForQuery, 'I');
  CHECK(r.size(Space::kStatement) == 1);
  CHECK(r.pending() == 0);
  CHECK(texts(r, Space::kStatement, "p") == Texts{"A"});
}

TEST_CASE("a failed PREPARE of an existing name keeps the old entry") {
  PreparedRegistry r;
  r.sent(fe::kQuery, {{add(Space::kStatement, "p", "A")}});
  r.on_backend(be::kCommandComplete);
  r.on_backend(be::kReadyForQuery, 'I');
  r.sent(fe::kQuery, {{add(Space::kStatement, "p", "B")}});
  CHECK(texts(r, Space::kStatement, "p") == Texts{"A", "B"});  // either, until answered
  r.on_backend(be::kErrorResponse);                            // 42P05
  r.on_backend(be::kReadyForQuery, 'I');
  CHECK(texts(r, Space::kStatement, "p") == Texts{"A"});
}

TEST_CASE("an error skips the rest of a Query: later statements add nothing") {
  PreparedRegistry r;
  r.sent(fe::kQuery, {{add(Space::kStatement, "a", "A")}, {}, {add(Space::kStatement, "c", "C")}});
  r.on_backend(be::kCommandComplete);  // a
  r.on_backend(be::kErrorResponse);    // the second statement
  r.on_backend(be::kReadyForQuery, 'I');
  CHECK(texts(r, Space::kStatement, "a") == Texts{"A"});
  CHECK(texts(r, Space::kStatement, "c").empty());
}

TEST_CASE("removals are at once and drop additions still waiting") {
  PreparedRegistry r;
  r.sent(fe::kQuery, {{add(Space::kStatement, "p", "A")}});
  r.on_backend(be::kCommandComplete);
  r.on_backend(be::kReadyForQuery, 'I');
  r.sent(fe::kQuery, {{add(Space::kStatement, "q", "Q")}});
  r.sent(fe::kQuery, {{remove(Space::kStatement, "p"), remove(Space::kStatement, "q")}});
  CHECK(texts(r, Space::kStatement, "p").empty());
  CHECK(texts(r, Space::kStatement, "q").empty());
  // Even when the DEALLOCATE then fails, kanon knows nothing under the
  // names (it denies their use): forgetting is safe.
  r.on_backend(be::kCommandComplete);
  r.on_backend(be::kReadyForQuery, 'I');
  r.on_backend(be::kErrorResponse);
  r.on_backend(be::kReadyForQuery, 'I');
  CHECK(r.size(Space::kStatement) == 0);
  r.sent(fe::kQuery, {{add(Space::kStatement, "p", "A"), add(Space::kStatement, "q", "Q")}});
  r.sent(fe::kQuery, {{remove(Space::kStatement, "", true)}});  // DEALLOCATE ALL
  CHECK(texts(r, Space::kStatement, "p").empty());
}

TEST_CASE("extended: a failed Parse stores nothing and the backend skips to Sync") {
  PreparedRegistry r;
  r.sent(fe::kParse, {{add(Space::kStatement, "s1", "A")}});
  r.sent(fe::kParse, {{add(Space::kStatement, "s2", "B")}});
  r.sent(fe::kBind, {{add(Space::kPortal, "", "A")}});
  r.sent(fe::kSync);
  r.on_backend(be::kParseComplete);
  r.on_backend(be::kErrorResponse);  // s2's Parse
  r.on_backend(be::kReadyForQuery, 'I');
  CHECK(texts(r, Space::kStatement, "s1") == Texts{"A"});
  CHECK(texts(r, Space::kStatement, "s2").empty());
  CHECK(texts(r, Space::kPortal, "").empty());
  CHECK(r.pending() == 0);
}

TEST_CASE("extended: after an error, messages sent before the Sync are ignored too") {
  PreparedRegistry r;
  r.sent(fe::kParse, {{add(Space::kStatement, "s1", "A")}});
  r.on_backend(be::kErrorResponse);
  r.sent(fe::kParse, {{add(Space::kStatement, "s2", "B")}});  // ignored by the backend
  r.sent(fe::kQuery, {{add(Space::kStatement, "p", "P")}});   // so is a Query
  CHECK(texts(r, Space::kStatement, "s2").empty());
  r.sent(fe::kSync);
  r.on_backend(be::kReadyForQuery, 'I');
  r.sent(fe::kParse, {{add(Space::kStatement, "s3", "C")}});
  r.sent(fe::kSync);
  r.on_backend(be::kParseComplete);
  r.on_backend(be::kReadyForQuery, 'I');
  CHECK(texts(r, Space::kStatement, "s3") == Texts{"C"});
  CHECK(texts(r, Space::kStatement, "p").empty());
  CHECK(r.pending() == 0);
}

TEST_CASE("answers are matched in order: Describe, Execute and untracked statements") {
  PreparedRegistry r;
  r.sent(fe::kParse, {{add(Space::kStatement, "s", "A")}});
  r.sent(fe::kDescribe);
  r.sent(fe::kBind, {{add(Space::kPortal, "por", "A")}});
  r.sent(fe::kExecute);
  r.sent(fe::kSync);
  r.on_backend(be::kParseComplete);
  r.on_backend(be::kParameterDescription);
  r.on_backend(be::kRowDescription);
  r.on_backend(be::kBindComplete);
  r.on_backend(be::kDataRow);
  r.on_backend(be::kPortalSuspended);
  r.on_backend(be::kReadyForQuery, 'T');
  CHECK(texts(r, Space::kPortal, "por") == Texts{"A"});
  // A Query's statements after the last tracked one answer nothing kanon waits for.
  r.sent(fe::kQuery, {{add(Space::kStatement, "p", "P")}});
  r.on_backend(be::kRowDescription);
  r.on_backend(be::kCommandComplete);
  r.on_backend(be::kRowDescription);
  r.on_backend(be::kCommandComplete);
  r.on_backend(be::kReadyForQuery, 'T');
  CHECK(texts(r, Space::kStatement, "p") == Texts{"P"});
  CHECK(r.pending() == 0);
}

TEST_CASE("portals and cursors without HOLD end with the transaction") {
  PreparedRegistry r;
  r.sent(fe::kQuery, {{add(Space::kPortal, "c", "C")}, {add(Space::kPortal, "h", "H", true)}});
  r.on_backend(be::kCommandComplete);
  r.on_backend(be::kCommandComplete);
  r.on_backend(be::kReadyForQuery, 'T');
  CHECK(r.size(Space::kPortal) == 2);
  r.sent(fe::kQuery);  // COMMIT
  r.on_backend(be::kCommandComplete);
  r.on_backend(be::kReadyForQuery, 'I');
  CHECK(texts(r, Space::kPortal, "c").empty());
  CHECK(texts(r, Space::kPortal, "h") == Texts{"H"});
}

TEST_CASE("confirm_decision records a decision that did not change") {
  PreparedRegistry r;
  r.sent(fe::kQuery, {{add(Space::kStatement, "p", "A")}});
  r.on_backend(be::kCommandComplete);
  r.on_backend(be::kReadyForQuery, 'I');
  r.confirm_decision(Space::kStatement, "p", {7, 3});
  REQUIRE(r.candidates(Space::kStatement, "p").size() == 1);
  CHECK(r.candidates(Space::kStatement, "p").front()->decided == proxy::DecidedAt{7, 3});
}

// Whether a ReadyForQuery is still owed decides when a session is idle
// (and its policy snapshot released): PostgreSQL answers none for a Sync
// a COPY FROM STDIN reads, nor for a Query skipped after a failed extended
// message. A script: ">" sends the messages after it (frontend type
// bytes), "<" receives them (backend type bytes, Z idle), "+" checks that
// a ReadyForQuery is owed and "-" that none is.
void play(const std::string& script) {
  PreparedRegistry r;
  bool sending = true;
  for (char c : script) {
    CAPTURE(c);
    if (c == ' ') continue;
    if (c == '>' || c == '<') {
      sending = c == '>';
    } else if (c == '+') {
      CHECK(r.ready_owed());
    } else if (c == '-') {
      CHECK_FALSE(r.ready_owed());
      CHECK(r.pending() == 0);
    } else if (sending) {
      r.sent(c);
    } else {
      r.on_backend(c, c == be::kReadyForQuery ? 'I' : 0);
    }
  }
}

TEST_CASE("ready_owed: Syncs read by COPY FROM STDIN and skipped Queries owe nothing") {
  // libpq's PQexecParams COPY: the Sync after Execute is read by the COPY.
  play("> P B D E S + < 1 2 n G > d c S < C + Z -");
  // A simple COPY, its CopyDone sent before the CopyInResponse arrived.
  play("> Q S d c S < G C Z + Z -");
  // A COPY that fails before it reads anything: its CopyDone is ignored.
  play("> Q c Q < E Z + C Z -");
  // A Query skipped after a failed Bind.
  play("> P B Q S < 1 E + Z -");
  // A COPY that fails while reading: a Sync after the error is answered.
  play("> P B E < 1 2 G > d < E > S + < Z -");
}
