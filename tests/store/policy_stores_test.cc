// PolicyStores: one store per database, found by the session's database.
// Stores built with a Builder (no database): what is checked here is which
// store serves which database and which tables, not the builds.
#include "store/policy_stores.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <stdexcept>
#include <string>

using namespace kanon::policy;
using namespace kanon::store;

namespace {

TablePolicy policy(const std::string& database, const std::string& table, uint32_t k) {
  TablePolicy p;
  p.database = database;
  p.schema = "public";
  p.table = table;
  p.k = k;
  p.quasi_identifiers = {"city"};
  return p;
}

// Builds every table as a snapshot that remembers its policy (and so its k).
PolicyStores::Factory factory(std::vector<std::string>* made = nullptr) {
  return [made](const std::string& database, std::vector<TablePolicy> tables) {
    if (made) made->push_back(database);
    return std::make_shared<PolicyStore>(std::move(tables), [](const TablePolicy& p) {
      auto s = std::make_shared<TableSnapshot>();
      s->policy = p;
      return std::shared_ptr<const TableSnapshot>(std::move(s));
    });
  };
}

uint32_t built_k(const PolicyStore& store, const std::string& table) {
  const auto* t = store.current()->find(table);
  return t ? t->policy.k : 0;
}

}  // namespace

TEST_CASE("a store per database: the same table name never shares a tree") {
  std::vector<std::string> made;
  PolicyStores stores(
      "main",
      {policy("main", "people", 5), policy("shop", "people", 7), policy("shop", "orders", 3)},
      factory(&made));
  CHECK(made == std::vector<std::string>{"main", "shop"});
  REQUIRE(stores.refresh_all());

  const auto main = stores.find("main");
  const auto shop = stores.find("shop");
  REQUIRE(main);
  REQUIRE(shop);
  CHECK(main != shop);
  CHECK(built_k(*main, "public.people") == 5);
  CHECK(built_k(*shop, "public.people") == 7);
  CHECK(main->current()->find("public.orders") == nullptr);
  CHECK(main->current()->listed == std::vector<std::string>{"public.people"});
  CHECK(shop->current()->listed == std::vector<std::string>{"public.people", "public.orders"});
  // Distinct stores, distinct identities for the rewriter's caches.
  CHECK(main->current()->store != shop->current()->store);
  CHECK(main->current()->store != 0);

  CHECK_FALSE(stores.find("other"));  // no policy names it
  CHECK_FALSE(stores.find(""));
  CHECK(stores.of(policy("shop", "orders", 3)) == shop);
  const auto all = stores.all();
  REQUIRE(all.size() == 2);
  CHECK(all[0] == main);  // the default database first
  CHECK(stores.policies().size() == 3);
  CHECK(stores.policies()[0].database == "main");
  CHECK(stores.default_store() == main);
  CHECK_FALSE(stores.only_default_protects());
}

TEST_CASE("the default database has a store without policies") {
  PolicyStores stores("main", {}, factory());
  REQUIRE(stores.find("main"));
  CHECK(stores.find("main")->policies().empty());
  CHECK(stores.all().size() == 1);
  CHECK(stores.only_default_protects());
}

TEST_CASE("RELOAD: new databases get a store that denies until built; removed ones stay") {
  std::vector<std::string> made;
  PolicyStores stores("main", {policy("main", "people", 5), policy("shop", "people", 7)},
                      factory(&made));
  REQUIRE(stores.refresh_all());
  const auto shop = stores.find("shop");

  REQUIRE(stores.reload({policy("main", "people", 6), policy("archive", "old", 4)}));
  CHECK(made == std::vector<std::string>{"main", "shop", "archive"});
  const auto archive = stores.find("archive");
  REQUIRE(archive);
  CHECK(built_k(*archive, "public.old") == 4);
  CHECK(built_k(*stores.find("main"), "public.people") == 6);
  // shop keeps its store, now with nothing listed: its sessions are still
  // decided from its catalog, and nothing of the old tree is served.
  CHECK(stores.find("shop") == shop);
  CHECK(shop->policies().empty());
  CHECK(shop->current()->tables.empty());
  CHECK(shop->current()->listed.empty());
  CHECK_FALSE(stores.only_default_protects());  // archive has policies
  REQUIRE(stores.reload({policy("main", "people", 6)}));
  CHECK(stores.only_default_protects());  // shop and archive stay, empty
}

TEST_CASE("the publish listener hears every build and failure, of stores RELOAD makes too") {
  // A table whose policy asks for k = 99 fails to build.
  PolicyStores::Factory failing = [](const std::string&, std::vector<TablePolicy> tables) {
    return std::make_shared<PolicyStore>(std::move(tables), [](const TablePolicy& p) {
      if (p.k == 99) throw std::runtime_error("relation is gone");
      auto s = std::make_shared<TableSnapshot>();
      s->policy = p;
      return std::shared_ptr<const TableSnapshot>(std::move(s));
    });
  };
  PolicyStores stores("main", {policy("main", "people", 5), policy("shop", "orders", 3)}, failing);
  std::vector<std::string> heard;
  stores.set_publish_listener([&](const std::string& name, const TableSnapshot* in_force,
                                  const std::string& error) {
    heard.push_back(name + " k=" + std::to_string(in_force ? in_force->policy.k : 0) + " " + error);
  });
  REQUIRE(stores.refresh_all());
  std::sort(heard.begin(), heard.end());
  // Named as name_of names them (several databases: with the database).
  CHECK(heard == std::vector<std::string>{"main.public.people k=5 ", "shop.public.orders k=3 "});

  // A failed rebuild: the previous tree stays in force and is reported with
  // the error; a store RELOAD makes is heard from its first build.
  heard.clear();
  CHECK_FALSE(stores.reload({policy("main", "people", 99), policy("archive", "old", 4)}, failing));
  std::sort(heard.begin(), heard.end());
  CHECK(heard == std::vector<std::string>{"archive.public.old k=4 ",
                                          "main.public.people k=5 relation is gone"});
  CHECK(built_k(*stores.find("main"), "public.people") == 5);
}

TEST_CASE("a stored version already served is not published again") {
  // As when a replica's watcher loads the version its own build just stored.
  PolicyStore store({policy("main", "people", 5)}, [](const TablePolicy& p) {
    auto s = std::make_shared<TableSnapshot>();
    s->policy = p;
    s->shared_version = 7;
    return std::shared_ptr<const TableSnapshot>(std::move(s));
  });
  int heard = 0;
  store.set_publish_listener(
      [&](const std::string&, const TableSnapshot*, const std::string&) { ++heard; });
  REQUIRE(store.refresh("public.people"));
  const auto version = store.current()->version;
  REQUIRE(store.refresh("public.people"));
  CHECK(heard == 1);
  CHECK(store.current()->version == version);
}

TEST_CASE("a store whose database is not configured serves the one its catalog names") {
  // Without a catalog (a Builder store) its name is not known: it serves no
  // session, so they are refused or served as unprotected by the listing.
  PolicyStores stores("", {policy("", "people", 5)}, factory());
  CHECK_FALSE(stores.find("postgres"));
  CHECK_FALSE(stores.find(""));
  REQUIRE(stores.all().size() == 1);
  CHECK(stores.of(policy("", "people", 5)) == stores.all()[0]);
}
