// CatalogReader (store/catalog_reader.h) against a real PostgreSQL from the
// sandbox: reads on one kept connection, built-ins reused from the served
// facts, a second attempt on a new connection when the kept one was
// terminated, the coverage of a published read, and the kept connection's
// other users, and refresh_if_moved against the generation sequence.
#include <doctest/doctest.h>

#include <pqxx/pqxx>
#include <string>

#include "catalog/catalog_watch.h"
#include "store/catalog_reader.h"
#include "tests/support/pg_sandbox.h"

using namespace kanon::store;
using kanon::testing::PgSandbox;

namespace {

// A store's side of the reader: the served facts are the last published.
struct Served {
  CatalogReader::Facts facts;
  std::string error;
  uint64_t received = 0;
  int publishes = 0;

  CatalogReader::Hooks hooks() {
    CatalogReader::Hooks h;
    h.served = [this] { return facts; };
    h.notifications = [this] { return received; };
    h.publish = [this](CatalogReader::Facts read, const std::string& read_error) {
      ++publishes;
      if (read) facts = std::move(read);  // a failed read keeps the facts
      error = read_error;
    };
    return h;
  }
};

bool has_relation(const kanon::catalog::CatalogFacts& facts, const std::string& name) {
  for (const auto* r : facts.relations_named(name))
    if (r->schema == "public") return true;
  return false;
}

// The backend of the reader's kept connection.
int backend(CatalogReader& reader) {
  int pid = 0;
  reader.on_connection([&](pqxx::connection_base& conn) { pid = conn.backendpid(); });
  return pid;
}

}  // namespace

TEST_CASE("reads on the kept connection, once more on a new one when it broke") {
  auto& pg = PgSandbox::shared();
  Served served;
  served.received = 3;
  CatalogReader reader(pg.conninfo("postgres", "postgres"), served.hooks());
  REQUIRE(reader.refresh());
  REQUIRE(served.facts != nullptr);
  CHECK(served.error.empty());
  CHECK(served.publishes == 1);
  CHECK(has_relation(*served.facts, "people"));
  CHECK(served.facts->database == "postgres");
  CHECK(reader.coverage().covered() == 3);

  // The same connection for every read and for on_connection's users.
  const int pid = backend(reader);
  CHECK(pid > 0);
  const auto first = served.facts;
  pg.psql("DROP TABLE IF EXISTS catalog_reader_t; CREATE TABLE catalog_reader_t (a int)");
  served.received = 5;
  REQUIRE(reader.refresh());
  CHECK(backend(reader) == pid);
  CHECK(served.facts != first);
  CHECK(has_relation(*served.facts, "catalog_reader_t"));
  CHECK_FALSE(has_relation(*first, "catalog_reader_t"));
  CHECK(served.facts->builtin_fingerprint == first->builtin_fingerprint);
  CHECK(served.facts->functions.size() > 2000);  // built-ins reused, still there
  CHECK(reader.coverage().covered() == 5);
  CHECK(reader.refresh_covering(5));  // covered: no read
  CHECK(served.publishes == 2);

  // A build's read publishes with its own callback and covers nothing new.
  served.received = 9;
  CatalogReader::Facts with_table;
  CHECK(reader.read([&](CatalogReader::Facts facts, const std::string& error) {
    CHECK(error.empty());
    with_table = std::move(facts);
  }));
  CHECK(with_table != nullptr);
  CHECK(served.publishes == 2);
  CHECK(reader.coverage().covered() == 5);

  // The server ends the kept connection: the read is made on a new one.
  CHECK(pg.psql("SELECT pg_terminate_backend(" + std::to_string(pid) + ", 5000)") == "t\n");
  REQUIRE(reader.refresh());
  CHECK(served.error.empty());
  const int renewed = backend(reader);
  CHECK(renewed != pid);
  CHECK(reader.coverage().covered() == 9);

  // The same for any_persistent_object_named.
  CHECK(pg.psql("SELECT pg_terminate_backend(" + std::to_string(renewed) + ", 5000)") == "t\n");
  CHECK(reader.any_persistent_object_named({"catalog_reader_t"}));
  CHECK_FALSE(reader.any_persistent_object_named({"catalog_reader_no_such_name"}));
  CHECK(backend(reader) != renewed);

  // drop_connection: the next user gets a new connection.
  const int kept = backend(reader);
  reader.drop_connection();
  CHECK(backend(reader) != kept);
  pg.psql("DROP TABLE catalog_reader_t");
}

TEST_CASE("a read that fails publishes its error and keeps the coverage") {
  auto& pg = PgSandbox::shared();
  pg.psql(
      "DROP ROLE IF EXISTS catalog_reader_gone; CREATE ROLE catalog_reader_gone LOGIN SUPERUSER");
  Served served;
  served.received = 2;
  CatalogReader reader(pg.conninfo("catalog_reader_gone", "postgres"), served.hooks());
  REQUIRE(reader.refresh());
  const auto before = served.facts;
  pg.psql(
      "ALTER ROLE catalog_reader_gone NOLOGIN; "
      "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity "
      "WHERE usename = 'catalog_reader_gone'");
  served.received = 4;
  CHECK_FALSE(reader.refresh());
  CHECK(served.publishes == 2);
  CHECK(served.facts == before);
  CHECK_FALSE(served.error.empty());
  MESSAGE("error: " << served.error);
  CHECK(reader.coverage().covered() == 2);
  CHECK_FALSE(reader.refresh_covering(4));  // not covered: read (and fail) again
  CHECK(served.publishes == 3);
  pg.psql("ALTER ROLE catalog_reader_gone LOGIN");
  CHECK(reader.refresh_covering(4));
  CHECK(served.error.empty());
  CHECK(reader.coverage().covered() == 4);
  CHECK(served.publishes == 4);
  pg.psql(
      "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity "
      "WHERE usename = 'catalog_reader_gone'");
  pg.psql("DROP ROLE catalog_reader_gone");
}

// A denial is decided again when the facts it was decided with are behind
// the generation sequence (proxy/session_lookup.cc). Facts read by someone
// else since that decision (the watcher's refresh, on busy cores between
// the decision and the question) count as moved: the statement is decided
// again with them, with no second read.
TEST_CASE("refresh_if_moved: read when the generation moved, or newer since the decision") {
  auto& pg = PgSandbox::shared();
  {
    pqxx::connection conn(pg.conninfo("postgres", "postgres"));
    std::string error;
    REQUIRE_MESSAGE(kanon::catalog::install_catalog_event_trigger(conn, &error), error);
  }
  Served served;
  CatalogReader reader(pg.conninfo("postgres", "postgres"), served.hooks());
  REQUIRE(reader.refresh());
  const int64_t first = served.facts->generation;
  REQUIRE(first > 0);
  CHECK_FALSE(reader.refresh_if_moved(first));  // nothing moved: no read
  CHECK(served.publishes == 1);

  pg.psql("DROP TABLE IF EXISTS if_moved_t; CREATE TABLE if_moved_t (a int)");
  CHECK(reader.refresh_if_moved(first));  // moved: read again
  CHECK(served.publishes == 2);
  const int64_t second = served.facts->generation;
  CHECK(second > first);
  CHECK(has_relation(*served.facts, "if_moved_t"));

  // Decided with the first facts, the second served by now: decided again,
  // nothing read.
  CHECK(reader.refresh_if_moved(first));
  CHECK(served.publishes == 2);
  CHECK_FALSE(reader.refresh_if_moved(second));
  CHECK(served.publishes == 2);
  pg.psql("DROP TABLE if_moved_t");
}
