// What ReplicaSync (store/replica_sync.h) tells without a database: whether
// sharing is on, SHOW SNAPSHOTS' state and the last error noted; an
// adoption whose connection cannot be had serves nothing new and notes why.
// The rest (the builder's lock, storing, adopting) runs against PostgreSQL
// in tests/integration/replicas_test.
#include "store/replica_sync.h"

#include <doctest/doctest.h>

#include <pqxx/pqxx>
#include <stdexcept>

using namespace kanon;
using namespace kanon::store;

namespace {

settings::SharingOptions options(bool enabled) {
  settings::SharingOptions o;
  o.enabled = enabled;
  o.replica = "r1";
  return o;
}

}  // namespace

TEST_CASE("sharing needs the option and a database") {
  CHECK_FALSE(ReplicaSync("", options(true)).enabled());
  CHECK_FALSE(ReplicaSync("dbname=x", options(false)).enabled());
  CHECK(ReplicaSync("dbname=x", options(true)).enabled());
  CHECK(ReplicaSync("dbname=x", options(true)).replica() == "r1");
}

TEST_CASE("the state shows the options and the last error noted") {
  ReplicaSync sync("", options(true));
  auto s = sync.state();
  CHECK(s.enabled);
  CHECK(s.replica == "r1");
  CHECK_FALSE(s.leading);  // no lock taken
  CHECK(s.error.empty());
  sync.note_error("first");
  sync.note_error("second");
  CHECK(sync.state().error == "second");
}

TEST_CASE("an adoption without a connection keeps what is served") {
  ReplicaSync sync("", options(true));
  policy::TablePolicy a;
  a.schema = "public";
  a.table = "a";
  policy::TablePolicy b = a;
  b.table = "b";
  ReplicaSync::Adoption how;
  how.served_version = [](const std::string& table) { return table == "public.a" ? 3 : 0; };
  how.on_connection = [](const auto&) { throw std::runtime_error("no database"); };
  bool dropped = false;
  how.drop_connection = [&] { dropped = true; };
  how.serve = [](const std::string&, std::shared_ptr<const policy::TableSnapshot>) {
    FAIL("nothing to serve");
  };
  const auto serving = sync.adopt({{"public.a", a}, {"public.b", b}}, how);
  CHECK(serving == std::set<std::string>{"public.a"});
  CHECK_FALSE(dropped);  // not a broken connection
  CHECK(sync.state().error == "cannot load stored snapshots: no database");

  how.on_connection = [](const auto&) { throw pqxx::broken_connection("gone"); };
  sync.adopt({{"public.b", b}}, how);
  CHECK(dropped);  // the kept connection broke: the store opens a new one
}
