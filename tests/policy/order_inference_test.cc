// The order rows are stored in, against the values a release hides
// (policy/order_inference.h): a table sorted or grouped by a column tells
// its hidden values through their neighbours; one in random order, or
// whose neighbours are copies of the hidden row (hidden alike), does not.
#include "policy/order_inference.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <random>

using namespace kanon::policy;

namespace {

// `prefix` and the number n (by fmt: GCC 12's -Wrestrict misreads operator+).
std::string named(const char* prefix, size_t n) {
  return fmt::format("{}{}", prefix, n);
}

// `values` stored in this order, 50 rows a block, each hidden where
// `hide(i)` says.
template <typename Hide>
StoredRows stored(const std::vector<std::string>& values, Hide hide) {
  StoredRows rows;
  rows.columns.push_back({"city", {}, {}});
  for (size_t i = 0; i < values.size(); ++i) {
    rows.block.push_back(static_cast<int64_t>(i / 50));
    rows.columns[0].raw.push_back(values[i]);
    rows.columns[0].shown.push_back(!hide(i));
  }
  return rows;
}

// 2,000 rows of eight cities of different sizes; every seventh row hidden.
std::vector<std::string> cities() {
  std::vector<std::string> v;
  for (size_t i = 0; i < 2000; ++i) v.push_back(named("c", (i * i) % 8));
  return v;
}

bool seventh(size_t i) {
  return i % 7 == 3;
}

}  // namespace

TEST_CASE("order inference: a table sorted by a column tells its hidden values") {
  auto values = cities();
  std::sort(values.begin(), values.end());
  const auto g = guess_from_order(stored(values, seventh)).at(0);
  CHECK(g.column == "city");
  CHECK(g.hidden == 286);
  CHECK(g.rate() > 0.95);
  CHECK(g.expected < 0.4);
  CHECK(g.leaks());
}

TEST_CASE("order inference: random order tells nothing") {
  auto values = cities();
  std::mt19937 rng(20261128);
  std::shuffle(values.begin(), values.end(), rng);
  const auto g = guess_from_order(stored(values, seventh)).at(0);
  CHECK(g.hidden == 286);
  CHECK(std::abs(g.rate() - g.expected) < 0.1);
  CHECK_FALSE(g.leaks());
}

TEST_CASE("order inference: neighbours are rows stored next to each other, shown and not NULL") {
  // Runs of one value, each in a block of its own, blocks not adjacent: the
  // nearest shown row is in another run, never across the gap.
  StoredRows rows;
  rows.columns.push_back({"city", {}, {}});
  for (int64_t b = 0; b < 40; ++b)
    for (int r = 0; r < 3; ++r) {
      rows.block.push_back(2 * b);  // every other block: no two adjacent
      rows.columns[0].raw.push_back(named("v", static_cast<size_t>(b)));
      rows.columns[0].shown.push_back(r != 1);
    }
  CHECK(guess_from_order(rows).at(0).leaks());
  // Only the hidden row in each block: no shown neighbour at all.
  for (size_t i = 0; i < rows.block.size(); ++i) rows.columns[0].shown[i] = i % 3 == 5;
  CHECK(guess_from_order(rows).at(0).hidden == 0);
  // A shown NULL is no neighbour: it reads as a hidden value.
  StoredRows nulls;
  nulls.columns.push_back({"city", {}, {}});
  for (int64_t i = 0; i < 30; ++i) {
    nulls.block.push_back(0);
    nulls.columns[0].raw.push_back(i % 2 ? std::optional<std::string>("x") : std::nullopt);
    nulls.columns[0].shown.push_back(i % 2 == 0);
  }
  CHECK(guess_from_order(nulls).at(0).hidden == 0);
}

TEST_CASE("order inference: copies hidden alike tell nothing about each other") {
  // Each row stored 32 times in a row (ADULT x 32 as the benchmarks make
  // it): a hidden row's copies are hidden too, the nearest shown row is
  // another row's.
  auto base = cities();
  base.resize(200);
  std::mt19937 rng(7);
  std::shuffle(base.begin(), base.end(), rng);
  std::vector<std::string> values;
  for (const auto& v : base)
    for (int c = 0; c < 32; ++c) values.push_back(v);
  const auto g = guess_from_order(stored(values, [](size_t i) { return (i / 32) % 5 == 2; })).at(0);
  CHECK(g.hidden > 1000);
  CHECK_FALSE(g.leaks());
  // Fewer than ten hidden values: too few to tell.
  auto sorted = cities();
  std::sort(sorted.begin(), sorted.end());
  CHECK_FALSE(
      guess_from_order(stored(sorted, [](size_t i) { return i % 250 == 7; })).at(0).leaks());
}
