// What a published catalog read covers (store/catalog_coverage.h): the
// notifications received before it began, only when it succeeded, and
// never less than an earlier read covered. No database.
#include "store/catalog_coverage.h"

#include <doctest/doctest.h>

#include <thread>
#include <vector>

using kanon::store::CatalogCoverage;

TEST_CASE("nothing read: only no notifications are covered") {
  CatalogCoverage c;
  CHECK(c.covered() == 0);
  CHECK(c.covers(0));
  CHECK_FALSE(c.covers(1));
}

TEST_CASE("a published read covers what was received before it began") {
  CatalogCoverage c;
  c.published(3, true);
  CHECK(c.covered() == 3);
  CHECK(c.covers(2));
  CHECK(c.covers(3));
  CHECK_FALSE(c.covers(4));  // received after the read began: read again
}

TEST_CASE("a failed read covers nothing new") {
  CatalogCoverage c;
  c.published(5, false);
  CHECK(c.covered() == 0);
  CHECK_FALSE(c.covers(1));
  c.published(2, true);
  c.published(7, false);
  CHECK(c.covered() == 2);
  CHECK_FALSE(c.covers(3));
}

TEST_CASE("an older read published later does not lower the coverage") {
  CatalogCoverage c;
  c.published(6, true);
  c.published(4, true);
  CHECK(c.covered() == 6);
  c.published(6, true);
  CHECK(c.covered() == 6);
  c.published(9, true);
  CHECK(c.covered() == 9);
}

TEST_CASE("reads published from several threads keep the largest") {
  CatalogCoverage c;
  std::vector<std::thread> threads;
  for (uint64_t t = 0; t < 4; ++t)
    threads.emplace_back([&c, t] {
      for (uint64_t n = t; n <= 1000 + t; n += 4) c.published(n, true);
    });
  for (auto& thread : threads) thread.join();
  CHECK(c.covered() == 1003);
}
