// array_equals: an array value's test reads alike whatever the session's
// array_nulls (policy/array_value.h); session_state_test runs the masks
// under array_nulls = off through kanon.
#include "policy/array_value.h"

#include <doctest/doctest.h>

using kanon::policy::array_equals;

namespace {

const char* const kEq = "OPERATOR(pg_catalog.=)";

std::string test(const std::string& text, const std::string& type = "pg_catalog.text[]") {
  return array_equals("\"t\"", kEq, text, type);
}

}  // namespace

TEST_CASE("values without NULL elements stay literals") {
  CHECK(test("{a,b}") == "\"t\" OPERATOR(pg_catalog.=) '{a,b}'::pg_catalog.text[]");
  CHECK(test("{\"NULL\",b}") == "\"t\" OPERATOR(pg_catalog.=) '{\"NULL\",b}'::pg_catalog.text[]");
  CHECK(test("{}") == "\"t\" OPERATOR(pg_catalog.=) '{}'::pg_catalog.text[]");
  CHECK(test("{NULLS,xNULL}") == "\"t\" OPERATOR(pg_catalog.=) '{NULLS,xNULL}'::pg_catalog.text[]");
}

TEST_CASE("NULL elements: ARRAY[...] of typed elements, nested for more dimensions") {
  CHECK(test("{a,NULL}") ==
        "\"t\" OPERATOR(pg_catalog.=) ARRAY['a'::pg_catalog.text, "
        "NULL::pg_catalog.text]::pg_catalog.text[]");
  CHECK(test("{\"NULL\",null,\"a\\\"b\",\"c,d\"}") ==
        "\"t\" OPERATOR(pg_catalog.=) ARRAY['NULL'::pg_catalog.text, NULL::pg_catalog.text, "
        "'a\"b'::pg_catalog.text, 'c,d'::pg_catalog.text]::pg_catalog.text[]");
  CHECK(test("{{1,NULL},{3,4}}", "pg_catalog.int4[]") ==
        "\"t\" OPERATOR(pg_catalog.=) ARRAY[ARRAY['1'::pg_catalog.int4, NULL::pg_catalog.int4], "
        "ARRAY['3'::pg_catalog.int4, '4'::pg_catalog.int4]]::pg_catalog.int4[]");
  // Backslashes in an element: E'' (quote_literal).
  CHECK(test("{\"a\\\\b\",NULL}") ==
        "\"t\" OPERATOR(pg_catalog.=) ARRAY[E'a\\\\b'::pg_catalog.text, "
        "NULL::pg_catalog.text]::pg_catalog.text[]");
}

TEST_CASE("what ARRAY[...] cannot write is tested twice; what does not read is false") {
  CHECK(test("[0:1]={a,NULL}") ==
        "(\"t\" OPERATOR(pg_catalog.=) '[0:1]={a,NULL}'::pg_catalog.text[] AND NOT \"t\" "
        "OPERATOR(pg_catalog.=) '[0:1]={a,\"NULL\"}'::pg_catalog.text[])");
  CHECK(test("{{NULL},{}}") ==
        "(\"t\" OPERATOR(pg_catalog.=) '{{NULL},{}}'::pg_catalog.text[] AND NOT \"t\" "
        "OPERATOR(pg_catalog.=) '{{\"NULL\"},{}}'::pg_catalog.text[])");
  CHECK(test("{a,NULL") == "false");
  CHECK(test("{a,b") == "\"t\" OPERATOR(pg_catalog.=) '{a,b'::pg_catalog.text[]");
}
