// The REANONYMIZE baselines (store/baseline_requests.h): a marked table's
// next build takes the mark once; a build that failed without taking it
// does not leave it for the next refresh. No database.
#include "store/baseline_requests.h"

#include <doctest/doctest.h>

#include <thread>
#include <vector>

using kanon::store::BaselineRequests;

TEST_CASE("nothing marked: no build is a baseline") {
  BaselineRequests b;
  CHECK_FALSE(b.take("public.people"));
  b.erase("public.people");  // nothing to clear
  CHECK_FALSE(b.take("public.people"));
}

TEST_CASE("a marked table's build takes the baseline once") {
  BaselineRequests b;
  b.insert("public.people");
  CHECK_FALSE(b.take("public.adult"));  // another table's build
  CHECK(b.take("public.people"));
  CHECK_FALSE(b.take("public.people"));  // the next refresh is an ordinary one
  CHECK_FALSE(b.take("public.adult"));
}

TEST_CASE("a failed build does not leave the baseline pending") {
  BaselineRequests b;
  b.insert("public.people");
  b.erase("public.people");  // the build failed before it took the mark
  CHECK_FALSE(b.take("public.people"));
}

TEST_CASE("marks are per table and one per table") {
  BaselineRequests b;
  b.insert("public.people");
  b.insert("public.people");  // asked twice before the build: one baseline
  b.insert("public.adult");
  b.erase("public.adult");
  CHECK(b.take("public.people"));
  CHECK_FALSE(b.take("public.people"));
  CHECK_FALSE(b.take("public.adult"));
}

TEST_CASE("marks taken from several threads are taken once") {
  BaselineRequests b;
  for (int i = 0; i < 100; ++i) b.insert(std::to_string(i));
  std::vector<int> taken(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 100; ++i)
        if (b.take(std::to_string(i))) ++taken[t];
    });
  for (auto& thread : threads) thread.join();
  CHECK(taken[0] + taken[1] + taken[2] + taken[3] == 100);
}
