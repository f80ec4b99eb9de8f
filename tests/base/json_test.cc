// JSON output: layout, escaping, and non-finite numbers as null.
#include "base/json.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

namespace kanon::base {

TEST_CASE("non-finite numbers are written null, so the text stays valid JSON") {
  Json doc;
  doc["nan"] = std::nan("");
  doc["inf"] = std::numeric_limits<double>::infinity();
  doc["-inf"] = -std::numeric_limits<double>::infinity();
  doc["list"] = Json::array({1.5, std::numeric_limits<double>::infinity()});
  doc["via_number"] = json_number(std::numeric_limits<double>::quiet_NaN());
  const std::string text = json_text(doc);
  CHECK(text ==
        "{\n  \"nan\": null,\n  \"inf\": null,\n  \"-inf\": null,\n  \"list\": [1.5, null],\n"
        "  \"via_number\": null\n}\n");
  const Json back = Json::parse(text);  // throws on invalid JSON
  CHECK(back["nan"].is_null());
  CHECK(back["list"][1].is_null());
}

TEST_CASE("layout: one member per line down to `expand`, then one line") {
  Json doc;
  doc["name"] = "adult";
  doc["levels"] = {{"age", 3}, {"sex", 0}};
  doc["rows"] = Json::array({Json{{"a", 1}}, Json{{"b", Json::array({2, 3})}}});
  doc["empty"] = Json::object();
  doc["none"] = Json::array();
  CHECK(json_text(doc) ==
        "{\n  \"name\": \"adult\",\n  \"levels\": {\"age\": 3, \"sex\": 0},\n"
        "  \"rows\": [{\"a\": 1}, {\"b\": [2, 3]}],\n  \"empty\": {},\n  \"none\": []\n}\n");
  CHECK(json_text(doc, 2) ==
        "{\n  \"name\": \"adult\",\n  \"levels\": {\n    \"age\": 3,\n    \"sex\": 0\n  },\n"
        "  \"rows\": [\n    {\"a\": 1},\n    {\"b\": [2, 3]}\n  ],\n  \"empty\": {},\n"
        "  \"none\": []\n}\n");
  CHECK(json_text(doc, 0).starts_with("{\"name\": \"adult\", \"levels\": {\"age\": 3"));
  CHECK(json_text(Json(7)) == "7\n");
}

TEST_CASE("strings are escaped; bytes that are not UTF-8 become U+FFFD") {
  Json doc;
  doc["s"] = std::string("a\"b\\c\nd\te\x01 \xC3\xA9");
  doc["bad"] = std::string("x\xFFy");
  const std::string text = json_text(doc, 0);
  CHECK(text == "{\"s\": \"a\\\"b\\\\c\\nd\\te\\u0001 \xC3\xA9\", \"bad\": \"x\xEF\xBF\xBDy\"}\n");
  CHECK(Json::parse(text)["s"] == std::string("a\"b\\c\nd\te\x01 \xC3\xA9"));
}

TEST_CASE("json_number: rounding and whole numbers") {
  CHECK(json_number(45.0).dump() == "45");
  CHECK(json_number(0.25).dump() == "0.25");
  CHECK(json_number(12.34567, 3).dump() == "12.346");
  CHECK(json_number(2.0004, 3).dump() == "2");
  CHECK(json_number(-3.0).dump() == "-3");
  CHECK(json_number(1e300).dump() == "1e+300");
  CHECK(json_number(std::numeric_limits<double>::infinity()).is_null());
}

}  // namespace kanon::base
