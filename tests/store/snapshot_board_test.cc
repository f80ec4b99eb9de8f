// Publishing PolicyStore's snapshots (store/snapshot_board.h), without a
// database: every publish is a new version, a failure keeps the table's
// previous snapshot, a stored version is never replaced by an older one,
// a renamed table's tree is never replaced by a build of whatever now holds
// its name, RELOAD drops unlisted tables, the listener runs outside the lock
// and waiters wake on a publish. No sleeps: waits are on conditions.
#include "store/snapshot_board.h"

#include <doctest/doctest.h>

#include <thread>

using namespace kanon;
using namespace kanon::store;

namespace {

std::shared_ptr<const policy::TableSnapshot> built(const std::string& table, uint32_t oid,
                                                   uint64_t shared_version = 0) {
  auto s = std::make_shared<policy::TableSnapshot>();
  s->policy.schema = "public";
  s->policy.table = table;
  s->info.schema = "public";
  s->info.table = table;
  s->info.oid = oid;
  s->shared_version = shared_version;
  return s;
}

// The catalog names relation `oid` schema.name.
std::shared_ptr<const catalog::CatalogFacts> facts(uint32_t oid, const std::string& name) {
  auto f = std::make_shared<catalog::CatalogFacts>();
  catalog::RelationFacts r;
  r.oid = oid;
  r.schema = "public";
  r.name = name;
  f->relations.push_back(r);
  f->index();
  return f;
}

}  // namespace

TEST_CASE("versions, failures and the catalog") {
  SnapshotBoard board({"public.a", "public.b"});
  const auto first = board.current();
  CHECK(first->version == 0);
  CHECK(first->store > 0);
  CHECK(first->listed == std::vector<std::string>{"public.a", "public.b"});
  CHECK(first->find("public.a") == nullptr);

  board.publish("public.a", built("a", 10), "");
  auto s = board.current();
  CHECK(s->version == 1);
  CHECK(s->store == first->store);
  REQUIRE(s->find("public.a"));
  CHECK(first->find("public.a") == nullptr);  // published snapshots never change

  // A failure keeps the previous snapshot and records the error.
  board.publish("public.a", nullptr, "boom");
  s = board.current();
  CHECK(s->version == 2);
  CHECK(s->find("public.a"));
  CHECK(s->errors.at("public.a") == "boom");
  board.publish("public.a", built("a", 10), "ignored after a success");
  CHECK(board.current()->errors.count("public.a") == 0);

  board.publish_catalog(nullptr, "no database");
  CHECK(board.current()->catalog_error == "no database");
  CHECK(board.current()->catalog == nullptr);
  board.publish_catalog(facts(10, "a"), "");
  CHECK(board.current()->catalog_error.empty());
  CHECK(board.current()->catalog);
  CHECK(board.current()->version == 5);

  // With the catalog read after a build, in the same version.
  const std::string catalog_error = "catalog read failed";
  board.publish("public.b", built("b", 11), "", nullptr, &catalog_error);
  s = board.current();
  CHECK(s->version == 6);
  CHECK(s->find("public.b"));
  CHECK(s->catalog);  // the previous facts are kept
  CHECK(s->catalog_error == catalog_error);
}

TEST_CASE("a stored version is not replaced by one no newer") {
  SnapshotBoard board({"public.a"});
  board.publish("public.a", built("a", 10, 3), "");
  board.publish("public.a", built("a", 10, 3), "");
  board.publish("public.a", built("a", 10, 2), "");
  CHECK(board.current()->version == 1);
  CHECK(board.current()->find("public.a")->shared_version == 3);
  board.publish("public.a", built("a", 10, 4), "");
  CHECK(board.current()->version == 2);
  CHECK(board.current()->find("public.a")->shared_version == 4);
}

TEST_CASE("a renamed table keeps its tree") {
  SnapshotBoard board({"public.a"});
  board.publish("public.a", built("a", 10), "", facts(10, "a"));
  // Relation 10 is now public.a_old; a new relation 20 holds the name.
  board.publish("public.a", built("a", 20), "", facts(10, "a_old"));
  const auto s = board.current();
  CHECK(s->find("public.a")->info.oid == 10);
  CHECK(s->errors.at("public.a").find("renamed to public.a_old") != std::string::npos);
  CHECK(refused_rename(*s->find("public.a"), *s->catalog) == s->errors.at("public.a"));
  CHECK(renamed_to(*s->find("public.a"), *facts(10, "a")).empty());
}

TEST_CASE("relist drops the tables no longer listed") {
  SnapshotBoard board({"public.a", "public.b"});
  board.publish("public.a", built("a", 10), "");
  board.publish("public.b", nullptr, "failed");
  board.relist({"public.a", "public.c"});
  const auto s = board.current();
  CHECK(s->version == 3);
  CHECK(s->listed == std::vector<std::string>{"public.a", "public.c"});
  CHECK(s->find("public.a"));
  CHECK(s->errors.count("public.b") == 0);
}

TEST_CASE("the listener hears each table publish, outside the lock") {
  SnapshotBoard board({"public.a"});
  board.publish("public.a", built("a", 10), "");  // before the listener: not heard
  std::vector<std::string> heard;
  board.set_publish_listener(
      [&](const std::string& table, const policy::TableSnapshot* in_force, const std::string& e) {
        // current() takes the board's lock: the listener is called outside it.
        heard.push_back(table + " v" + std::to_string(board.current()->version) + " " +
                        (in_force ? "served" : "none") + " '" + e + "'");
      });
  board.publish("public.a", nullptr, "");
  board.publish("public.b", nullptr, "x");
  board.publish_catalog(nullptr, "not heard");
  board.publish("public.a", built("a", 10), "");
  CHECK(heard == std::vector<std::string>{"public.a v2 served 'unknown error'",
                                          "public.b v3 none 'x'", "public.a v5 served ''"});
}

TEST_CASE("a waiter wakes on a publish") {
  SnapshotBoard board({"public.a"});
  const auto has_a = [](const PolicySnapshot& s) { return s.find("public.a") != nullptr; };
  CHECK_FALSE(board.wait_for(std::chrono::seconds(0), has_a));
  std::thread publisher([&] { board.publish("public.a", built("a", 10), ""); });
  CHECK(board.wait_for(std::chrono::hours(1), has_a));
  publisher.join();
  CHECK(board.wait_for(std::chrono::seconds(0), has_a));  // holds already: no wait
}
