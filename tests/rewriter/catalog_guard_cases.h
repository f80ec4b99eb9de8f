// Statements and where the catalog guard goes in each (generation 5), shared
// by the unit test (the text) and the PostgreSQL test (it runs both forms).
#pragma once

#include <string>
#include <vector>

namespace kanon::testing {

// GuardCase::guarded of a statement that needs a guard and has no place for
// one: kanon denies it (GuardPlacement::kNoPlace).
inline constexpr const char* kNoPlace = "(no place: denied)";

struct GuardCase {
  const char* sql;
  const char* guarded;           // nullptr: no guard; kNoPlace: denied
  const char* values_cast = "";  // GuardCall::values_cast (the first item's column type)
  bool at_offset = false;        // GuardCall::at_offset (the statement gathers rows)
};

// The OFFSET form of the guard (a statement that gathers rows).
#define KANON_GUARD_OFFSET " OFFSET (CASE WHEN @G THEN 0 ELSE -1 END)"

// @G is "kanon"."catalog_is"(5::pg_catalog.int8).
inline const std::vector<GuardCase>& guard_cases() {
  static const std::vector<GuardCase> cases = {
      {"SELECT * FROM t", "SELECT * FROM t WHERE @G"},
      {"SELECT a FROM t WHERE a > 1 ORDER BY a", "SELECT a FROM t WHERE @G AND (a > 1) ORDER BY a"},
      {"SELECT a FROM t JOIN u ON t.a = u.b WHERE a IS DISTINCT FROM 2 GROUP BY a",
       "SELECT a FROM t JOIN u ON t.a = u.b WHERE @G AND (a IS DISTINCT FROM 2) GROUP BY a"},
      {"SELECT count(*) FROM t GROUP BY a HAVING count(*) > 1",
       "SELECT count(*) FROM t WHERE @G GROUP BY a HAVING count(*) > 1"},
      {"SELECT a FROM t LIMIT 1 -- trailing", "SELECT a FROM t WHERE @G LIMIT 1 -- trailing"},
      {"SELECT a FROM t FOR UPDATE", "SELECT a FROM t WHERE @G FOR UPDATE"},
      {"SELECT length('x')", "SELECT length('x') WHERE @G"},
      // Naming nothing is no proof of running no code that DDL can change.
      {"SELECT 1", "SELECT 1 WHERE @G"},
      {"SELECT 2 + 2 AS four, 'x'::text", "SELECT 2 + 2 AS four, 'x'::text WHERE @G"},
      {"WITH w AS (SELECT a FROM t WHERE a = 1) SELECT * FROM w",
       "WITH w AS (SELECT a FROM t WHERE a = 1) SELECT * FROM w WHERE @G"},
      {"SELECT a FROM t UNION SELECT b FROM u ORDER BY 1",
       "SELECT * FROM (SELECT a FROM t UNION SELECT b FROM u ORDER BY 1) AS \"kanon query\" "
       "WHERE @G"},
      {"VALUES (1), (length('x'))",
       "SELECT * FROM (VALUES (1), (length('x'))) AS \"kanon query\" WHERE @G"},
      {"TABLE t", "SELECT * FROM (TABLE t) AS \"kanon query\" WHERE @G"},
      {"SELECT a INTO TEMP v FROM t", "SELECT a INTO TEMP v FROM t WHERE @G"},
      {"INSERT INTO t SELECT b FROM u WHERE b > 0 ON CONFLICT DO NOTHING",
       "INSERT INTO t SELECT b FROM u WHERE @G AND (b > 0) ON CONFLICT DO NOTHING"},
      {"INSERT INTO t (a) SELECT length('x') RETURNING a",
       "INSERT INTO t (a) SELECT length('x') WHERE @G RETURNING a"},
      // One VALUES row becomes a SELECT (its literals still take the
      // target columns' types); several rows, or DEFAULT: the first item
      // that is not DEFAULT is wrapped (a string constant or NULL cast to
      // its column's type, which typed it).
      {"INSERT INTO t VALUES (length('x'))", "INSERT INTO t SELECT length('x') WHERE @G"},
      {"INSERT INTO t (a) VALUES ((SELECT max(b) FROM u)) RETURNING a",
       "INSERT INTO t (a) SELECT (SELECT max(b) FROM u) WHERE @G RETURNING a"},
      {"INSERT INTO v VALUES ('2020-01-01', '1.234') RETURNING d, n",
       "INSERT INTO v SELECT '2020-01-01', '1.234' WHERE @G RETURNING d, n"},
      {"INSERT INTO t (a) VALUES ('7') ON CONFLICT DO NOTHING",
       "INSERT INTO t (a) SELECT '7' WHERE @G ON CONFLICT DO NOTHING"},
      {"INSERT INTO t VALUES (1), (2) RETURNING a",
       "INSERT INTO t VALUES ((CASE WHEN @G THEN 1 END)), (2) RETURNING a"},
      {"INSERT INTO t (a) VALUES (length('xy')), ('3') ON CONFLICT DO NOTHING RETURNING a",
       "INSERT INTO t (a) VALUES ((CASE WHEN @G THEN length('xy') END)), ('3') "
       "ON CONFLICT DO NOTHING RETURNING a"},
      {"INSERT INTO t VALUES ((SELECT max(b) FROM u)), (5) RETURNING a",
       "INSERT INTO t VALUES ((CASE WHEN @G THEN (SELECT max(b) FROM u) END)), (5) RETURNING a"},
      {"INSERT INTO v VALUES (DEFAULT, round(1.234, 2)), (NULL, 3) RETURNING d, n",
       "INSERT INTO v VALUES (DEFAULT, (CASE WHEN @G THEN round(1.234, 2) END)), (NULL, 3) "
       "RETURNING d, n"},
      {"INSERT INTO v (d, n) VALUES ('2020-01-01', '1.234'), ('2020-02-02', 2) RETURNING d, n",
       "INSERT INTO v (d, n) VALUES ((CASE WHEN @G THEN '2020-01-01'::pg_catalog.date END), "
       "'1.234'), ('2020-02-02', 2) RETURNING d, n",
       "pg_catalog.date"},
      {"INSERT INTO v (n, d) VALUES (DEFAULT, NULL), ('2.345', '2021-03-04') RETURNING d, n",
       "INSERT INTO v (n, d) VALUES (DEFAULT, (CASE WHEN @G THEN NULL::pg_catalog.date END)), "
       "('2.345', '2021-03-04') RETURNING d, n",
       "pg_catalog.date"},
      {"INSERT INTO v (n) VALUES ('1.234'), ('2.345') RETURNING n",
       "INSERT INTO v (n) VALUES ((CASE WHEN @G THEN '1.234'::pg_catalog.\"numeric\" END)), "
       "('2.345') RETURNING n",
       "pg_catalog.\"numeric\""},
      // A string constant whose column kanon cannot tell, or a first row of
      // DEFAULT only: no place, denied (fail closed; docs/security.md).
      {"INSERT INTO t VALUES ('1'), ('2')", kNoPlace},
      {"INSERT INTO t VALUES (DEFAULT)", kNoPlace},
      {"INSERT INTO t VALUES (DEFAULT), (3)", kNoPlace},
      {"UPDATE t SET a = a + 1 WHERE a = 1 RETURNING a",
       "UPDATE t SET a = a + 1 WHERE @G AND (a = 1) RETURNING a"},
      {"UPDATE t SET a = u.b FROM u", "UPDATE t SET a = u.b FROM u WHERE @G"},
      {"DELETE FROM t USING u WHERE t.a = u.b", "DELETE FROM t USING u WHERE @G AND (t.a = u.b)"},
      {"DELETE FROM t", "DELETE FROM t WHERE @G"},
      // A plain EXPLAIN too: the plan it shows is the one the statement runs.
      {"EXPLAIN SELECT * FROM t", "EXPLAIN SELECT * FROM t WHERE @G"},
      {"EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT a FROM t",
       "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT a FROM t WHERE @G"},
      {"PREPARE p (int) AS SELECT a FROM t WHERE a = $1",
       "PREPARE p (int) AS SELECT a FROM t WHERE @G AND (a = $1)"},
      {"DECLARE c CURSOR WITH HOLD FOR SELECT a FROM t UNION ALL SELECT 2",
       "DECLARE c CURSOR WITH HOLD FOR SELECT * FROM (SELECT a FROM t UNION ALL SELECT 2) AS "
       "\"kanon query\" WHERE @G"},
      {"COPY (SELECT a FROM t) TO STDOUT", "COPY (SELECT a FROM t WHERE @G) TO STDOUT"},
      {"COPY (SELECT a FROM t UNION SELECT 3) TO STDOUT",
       "COPY (SELECT * FROM (SELECT a FROM t UNION SELECT 3) AS \"kanon query\" WHERE @G) TO "
       "STDOUT"},
      {"COPY t TO STDOUT", nullptr},
      {"CREATE TEMP TABLE x AS SELECT a FROM t UNION SELECT 3 WITH NO DATA",
       "CREATE TEMP TABLE x AS SELECT * FROM (SELECT a FROM t UNION SELECT 3) AS \"kanon "
       "query\" WHERE @G WITH NO DATA"},
      {"SELECT 1 FROM t; SELECT 2 FROM u", "SELECT 1 FROM t WHERE @G; SELECT 2 FROM u WHERE @G"},
      // A statement that gathers rows (GROUP BY, DISTINCT, an aggregate):
      // an OFFSET of its top level, evaluated once by the Limit node above
      // everything; where that level has LIMIT, OFFSET, FETCH or FOR ...,
      // or is a set operation, the forms above.
      {"SELECT a, count(*) FROM t GROUP BY a HAVING count(*) > 1",
       "SELECT a, count(*) FROM t GROUP BY a HAVING count(*) > 1" KANON_GUARD_OFFSET, "", true},
      {"SELECT a, count(*) FROM t JOIN u ON t.a = u.b WHERE a > 0 GROUP BY a ORDER BY a;",
       "SELECT a, count(*) FROM t JOIN u ON t.a = u.b WHERE a > 0 GROUP BY a ORDER BY "
       "a" KANON_GUARD_OFFSET ";",
       "", true},
      {"SELECT DISTINCT a FROM t ORDER BY a -- trailing",
       "SELECT DISTINCT a FROM t ORDER BY a" KANON_GUARD_OFFSET " -- trailing", "", true},
      {"SELECT count(*) FROM t", "SELECT count(*) FROM t" KANON_GUARD_OFFSET, "", true},
      {"WITH w AS (SELECT a FROM t LIMIT 2) SELECT max(a) FROM w",
       "WITH w AS (SELECT a FROM t LIMIT 2) SELECT max(a) FROM w" KANON_GUARD_OFFSET, "", true},
      {"(SELECT a FROM t GROUP BY a) ORDER BY 1",
       "(SELECT a FROM t GROUP BY a) ORDER BY 1" KANON_GUARD_OFFSET, "", true},
      {"SELECT a, count(*) FROM t GROUP BY a ORDER BY a LIMIT 2",
       "SELECT a, count(*) FROM t WHERE @G GROUP BY a ORDER BY a LIMIT 2", "", true},
      {"SELECT count(*) FROM t OFFSET 0", "SELECT count(*) FROM t WHERE @G OFFSET 0", "", true},
      {"SELECT a, count(*) FROM t GROUP BY a FETCH FIRST 1 ROW ONLY",
       "SELECT a, count(*) FROM t WHERE @G GROUP BY a FETCH FIRST 1 ROW ONLY", "", true},
      {"SELECT count(*) FROM t; SELECT max(b) FROM u /* two */",
       "SELECT count(*) FROM t" KANON_GUARD_OFFSET "; SELECT max(b) FROM u" KANON_GUARD_OFFSET
       " /* two */",
       "", true},
      {"SELECT a FROM t GROUP BY a UNION SELECT b FROM u",
       "SELECT * FROM (SELECT a FROM t GROUP BY a UNION SELECT b FROM u) AS \"kanon query\" "
       "WHERE @G",
       "", true},
      {"SELECT a, count(*) INTO TEMP v FROM t GROUP BY a",
       "SELECT a, count(*) INTO TEMP v FROM t GROUP BY a" KANON_GUARD_OFFSET, "", true},
      {"EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT count(*) FROM t",
       "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT count(*) FROM "
       "t" KANON_GUARD_OFFSET,
       "", true},
      {"PREPARE p (int) AS SELECT count(*) FROM t WHERE a > $1",
       "PREPARE p (int) AS SELECT count(*) FROM t WHERE a > $1" KANON_GUARD_OFFSET, "", true},
      {"DECLARE c CURSOR FOR SELECT a, count(*) FROM t GROUP BY a",
       "DECLARE c CURSOR FOR SELECT a, count(*) FROM t GROUP BY a" KANON_GUARD_OFFSET, "", true},
      {"COPY (SELECT count(*) FROM t) TO STDOUT",
       "COPY (SELECT count(*) FROM t" KANON_GUARD_OFFSET ") TO STDOUT", "", true},
      {"CREATE TEMP TABLE x AS SELECT a, count(*) FROM t GROUP BY a WITH DATA",
       "CREATE TEMP TABLE x AS SELECT a, count(*) FROM t GROUP BY a" KANON_GUARD_OFFSET
       " WITH DATA",
       "", true},
      {"INSERT INTO t SELECT count(*) FROM u", "INSERT INTO t SELECT count(*) FROM u WHERE @G", "",
       true},
  };
  return cases;
}

}  // namespace kanon::testing
