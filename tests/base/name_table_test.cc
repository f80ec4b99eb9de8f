// NameTable: parsing, printing and listing the names of an enum's values.
#include "base/name_table.h"

#include <doctest/doctest.h>

namespace kanon::base {
namespace {

enum class Color { kRed, kGreen, kBlue };

const NameTable<Color> kColors{{Color::kRed, "red"},
                               {Color::kGreen, "green"},
                               {Color::kGreen, "vert", true},
                               {Color::kBlue, "blue"}};

}  // namespace

TEST_CASE("parse names and aliases; unknown names are nullopt") {
  CHECK(kColors.parse("red") == Color::kRed);
  CHECK(kColors.parse("vert") == Color::kGreen);
  CHECK(kColors.parse("blue") == Color::kBlue);
  CHECK_FALSE(kColors.parse("Red"));
  CHECK_FALSE(kColors.parse(""));
  CHECK_FALSE(kColors.parse("purple"));
}

TEST_CASE("names print without aliases") {
  CHECK(std::string(kColors.name(Color::kGreen)) == "green");
  CHECK(kColors.names() == std::vector<std::string>{"red", "green", "blue"});
  CHECK(kColors.list() == "red, green, blue");
  CHECK(kColors.list(" or ") == "red, green or blue");
  CHECK(kColors.unknown("purple") == "'purple' is not one of red, green, blue");
  const NameTable<Color> one{{Color::kRed, "red"}};
  CHECK(one.list(" or ") == "red");
  CHECK(std::string(one.name(Color::kBlue)) == "?");
}

}  // namespace kanon::base
