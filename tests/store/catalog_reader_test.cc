// What CatalogReader (store/catalog_reader.h) does without a database: a
// store without a conninfo reads nothing; a database that cannot be reached
// gives one published failure per read (after a second attempt on a new
// connection), covers no notification, and reaches any_persistent_object_named
// and on_connection's callers as an exception. The reads themselves run
// against PostgreSQL in store_catalog_reader_pg_test.
#include "store/catalog_reader.h"

#include <doctest/doctest.h>

#include <pqxx/pqxx>
#include <string>
#include <vector>

using namespace kanon::store;

namespace {

// The reader's hooks, recording what it asks and publishes.
struct Recorder {
  int served = 0;                      // times the served facts were asked for
  int notifications = 0;               // times the notifications were counted
  uint64_t received = 4;               // what the watcher has received
  std::vector<std::string> published;  // each publish: "facts" or "error: ..."

  CatalogReader::Hooks hooks() {
    CatalogReader::Hooks h;
    h.served = [this] {
      ++served;
      return CatalogReader::Facts();
    };
    h.notifications = [this] {
      ++notifications;
      return received;
    };
    h.publish = [this](CatalogReader::Facts facts, const std::string& error) {
      published.push_back(facts ? "facts" : "error: " + error);
    };
    return h;
  }
};

// A socket directory that does not exist: libpq fails at once.
const char* const kUnreachable = "host=/nonexistent/kanon-catalog-reader-test port=1";

}  // namespace

TEST_CASE("without a conninfo nothing is read or published") {
  Recorder r;
  CatalogReader reader("", r.hooks());
  CHECK_FALSE(reader.enabled());
  CHECK_FALSE(reader.refresh());
  bool published = false;
  CHECK_FALSE(reader.read([&](CatalogReader::Facts, const std::string&) { published = true; }));
  CHECK_FALSE(published);
  CHECK(reader.refresh_covering(0));        // nothing to cover
  CHECK_FALSE(reader.refresh_covering(1));  // cannot be covered
  CHECK(r.published.empty());
  CHECK(r.served == 0);
  CHECK(reader.coverage().covered() == 0);
  CHECK(reader.any_persistent_object_named({"people"}));  // nobody can tell: not absent
}

TEST_CASE("an unreachable database: each read publishes its failure once") {
  Recorder r;
  CatalogReader reader(kUnreachable, r.hooks());
  CHECK(reader.enabled());
  CHECK_FALSE(reader.refresh());
  REQUIRE(r.published.size() == 1);
  CHECK(r.published[0].rfind("error: ", 0) == 0);
  CHECK(r.published[0].size() > 7);  // the connection's error
  CHECK(r.served == 1);
  CHECK(r.notifications == 1);
  CHECK(reader.coverage().covered() == 0);  // a failed read covers nothing

  // A build's read publishes with its own callback, and counts nothing.
  std::vector<std::string> with_table;
  CHECK_FALSE(reader.read([&](CatalogReader::Facts facts, const std::string& error) {
    with_table.push_back(facts ? "facts" : error);
  }));
  REQUIRE(with_table.size() == 1);
  CHECK_FALSE(with_table[0].empty());
  CHECK(r.published.size() == 1);
  CHECK(r.notifications == 1);
}

TEST_CASE("refresh_covering reads only what the published facts do not cover") {
  Recorder r;
  CatalogReader reader(kUnreachable, r.hooks());
  CHECK(reader.refresh_covering(0));
  CHECK(r.published.empty());
  CHECK_FALSE(reader.refresh_covering(3));
  CHECK(r.published.size() == 1);
  CHECK_FALSE(reader.refresh_covering(3));  // still not covered: read again
  CHECK(r.published.size() == 2);
}

TEST_CASE("an unreachable database reaches the kept connection's users") {
  Recorder r;
  CatalogReader reader(kUnreachable, r.hooks());
  CHECK_THROWS_AS(reader.any_persistent_object_named({"people"}), pqxx::broken_connection);
  bool used = false;
  CHECK_THROWS_AS(reader.on_connection([&](pqxx::connection_base&) { used = true; }),
                  pqxx::broken_connection);
  CHECK_FALSE(used);
  reader.drop_connection();  // nothing kept: nothing to drop
  CHECK(r.published.empty());
}
