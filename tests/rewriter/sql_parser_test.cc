#include "rewriter/sql_parser.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "rewriter/json_tree.h"

using kanon::rewriter::parse_sql;
using kanon::rewriter::StatementKind;

TEST_CASE("parse_sql counts the statements of a multi-statement string") {
  const auto out = parse_sql("SELECT 1; SELECT * FROM adult WHERE age = 39");
  REQUIRE(out.ok);
  CHECK(out.statement_count == 2);
}

TEST_CASE("parse_sql reports PostgreSQL's error and its position") {
  const auto out = parse_sql("SELECT FROM WHERE");
  CHECK_FALSE(out.ok);
  CHECK(out.error.find("syntax error") != std::string::npos);
  CHECK(out.error_offset == 13);
}

TEST_CASE("parse_sql reports relations with roles, CTE scope and byte offsets") {
  const std::string sql =
      "WITH people AS (SELECT * FROM people) SELECT * FROM people p JOIN regions r ON true "
      "FOR UPDATE OF r";
  const auto out = parse_sql(sql);
  REQUIRE(out.ok);
  REQUIRE(out.statements.size() == 1);
  const auto& rels = out.statements[0].relations;
  REQUIRE(rels.size() == 4);
  // Inside a non-recursive CTE its own name is the table.
  CHECK(rels[0].name == "people");
  CHECK_FALSE(rels[0].cte);
  CHECK(sql.substr(static_cast<size_t>(rels[0].location), 6) == "people");
  // In the body the CTE shadows it.
  CHECK(rels[1].cte);
  CHECK(rels[1].has_alias);
  CHECK(rels[1].role == kanon::rewriter::RelationRef::Role::kRead);
  CHECK(rels[3].role == kanon::rewriter::RelationRef::Role::kLockTarget);
}

TEST_CASE("parse_sql reports aliases of FROM items and joins, and column renames") {
  const auto plain = parse_sql(
      "SELECT j FROM (people p JOIN regions USING (id) AS u) AS j, LATERAL f() AS g, "
      "(SELECT 1) s");
  REQUIRE(plain.ok);
  CHECK(plain.statements[0].alias_names == std::vector<std::string>{"p", "u", "j", "g", "s"});
  CHECK_FALSE(plain.statements[0].alias_columns);
  for (const char* sql : {"SELECT a FROM people AS t(a, b)", "SELECT 1 FROM (SELECT 1) s(x)",
                          "SELECT c FROM (people CROSS JOIN regions) j(a, b, c)"}) {
    CAPTURE(sql);
    const auto out = parse_sql(sql);
    REQUIRE(out.ok);
    CHECK(out.statements[0].alias_columns);
  }
}

TEST_CASE("parse_sql: RECURSIVE makes every CTE name visible in every CTE") {
  const auto out =
      parse_sql("WITH RECURSIVE a AS (SELECT * FROM b), b AS (SELECT * FROM a) SELECT * FROM a");
  REQUIRE(out.ok);
  for (const auto& r : out.statements[0].relations) CHECK(r.cte);
}

TEST_CASE("parse_sql: statement kinds, inner queries, COPY details, nested writes") {
  const auto out = parse_sql(
      "EXPLAIN SELECT 1; COPY t (a) TO '/tmp/x'; WITH d AS (DELETE FROM t RETURNING *) SELECT * "
      "FROM d; SELECT * INTO n FROM t; SET search_path = x");
  REQUIRE(out.ok);
  REQUIRE(out.statements.size() == 5);
  CHECK(out.statements[0].kind == StatementKind::kExplain);
  CHECK(out.statements[0].inner_kind == StatementKind::kSelect);
  CHECK(out.statements[0].node == "ExplainStmt");
  CHECK(out.statements[0].inner_node == "SelectStmt");
  CHECK(out.statements[1].kind == StatementKind::kCopy);
  CHECK(out.statements[1].copy_to_file);
  CHECK(out.statements[1].copy_has_attlist);
  CHECK_FALSE(out.statements[1].copy_from);
  CHECK(out.statements[2].nested_writes == std::vector<std::string>{"DeleteStmt"});
  CHECK(out.statements[3].select_into);
  CHECK(out.statements[4].setting == "search_path");
  CHECK(out.statements[1].location == 17);  // just after the semicolon
}

TEST_CASE("parse_sql: functions and column references") {
  const auto out =
      parse_sql("SELECT pg_catalog.query_to_xml('x', true, false, ''), s.t.c, t.* FROM t");
  REQUIRE(out.ok);
  const auto& st = out.statements[0];
  REQUIRE(st.functions.size() == 1);
  CHECK(st.functions[0].schema == "pg_catalog");
  CHECK(st.functions[0].name == "query_to_xml");
  REQUIRE(st.columns.size() == 2);
  CHECK(st.columns[0].fields == std::vector<std::string>{"s", "t", "c"});
  CHECK(st.columns[1].star);
}

TEST_CASE("raw parse helpers agree on validity") {
  CHECK(kanon::rewriter::raw_parse_json("SELECT 1"));
  CHECK(kanon::rewriter::raw_parse_protobuf("SELECT 1"));
  CHECK_FALSE(kanon::rewriter::raw_parse_json("SELEC 1"));
  CHECK_FALSE(kanon::rewriter::raw_parse_protobuf("SELEC 1"));
}

TEST_CASE("JsonTree: nesting, escapes, numbers, malformed input") {
  kanon::rewriter::JsonTree t;
  REQUIRE(t.parse(R"({"a": [1, -2, {"b": "x\"y\\z\u00e9\ud83d\ude00"}], "c": true, "d": null})"));
  const int32_t a = t.member(t.root(), "a");
  REQUIRE(a >= 0);
  const int32_t one = t.at(a).first_child;
  CHECK(t.at(one).number == 1);
  CHECK(t.at(t.at(one).next_sibling).number == -2);
  const int32_t obj = t.at(t.at(one).next_sibling).next_sibling;
  CHECK(t.at(t.member(obj, "b")).text == "x\"y\\z\xC3\xA9\xF0\x9F\x98\x80");
  CHECK(t.at(t.member(t.root(), "c")).boolean);
  CHECK(t.member(t.root(), "missing") == -1);
  CHECK_FALSE(t.parse(R"({"a": [1, 2)"));
  CHECK_FALSE(t.parse(R"({"a" 1})"));
  CHECK_FALSE(t.parse(R"("\q")"));
}

TEST_CASE("parse_sql: identifiers the grammar decodes reach our types decoded") {
  const auto out = parse_sql("SELECT * FROM U&\"p\\00e9ople\", \"Mixed Case\"");
  REQUIRE(out.ok);
  const auto& rels = out.statements[0].relations;
  REQUIRE(rels.size() == 2);
  CHECK(rels[0].name == "p\xC3\xA9ople");
  CHECK(rels[1].name == "Mixed Case");
}

TEST_CASE("statement_kind: every kind a rule names, from its node name; others kOther") {
  using kanon::rewriter::statement_kind;
  CHECK(statement_kind("SelectStmt") == StatementKind::kSelect);
  CHECK(statement_kind("CreateStmt") == StatementKind::kCreateTable);
  CHECK(statement_kind("DoStmt") == StatementKind::kDo);
  CHECK(statement_kind("AlterExtensionContentsStmt") == StatementKind::kAlterExtensionContents);
  CHECK(statement_kind("AlterTableStmt") == StatementKind::kOther);
  CHECK(statement_kind("") == StatementKind::kOther);
  // A statement of a kind no rule names keeps its node name for messages.
  const auto out = parse_sql("ALTER TABLE t ADD COLUMN c int");
  REQUIRE(out.ok);
  CHECK(out.statements[0].kind == StatementKind::kOther);
  CHECK(out.statements[0].node == "AlterTableStmt");
}

namespace {

// "col op value" per comparison of the restrictions of the relation at
// `index`, "|" between restrictions, "any:" before an IN's.
std::string restrictions_of(const std::string& sql, size_t index = 0) {
  const auto out = parse_sql(sql);
  REQUIRE(out.ok);
  const auto& rels = out.statements.at(0).relations;
  REQUIRE(index < rels.size());
  std::string s;
  for (const auto& r : rels[index].restrictions) {
    s += (s.empty() ? "" : " | ") + std::string(r.any ? "any:" : "");
    for (const auto& c : r.comparisons) {
      const std::string value =
          c.array           ? fmt::format("{}(${})", c.op == "=" ? "ANY" : "ALL", c.parameter)
          : c.parameter > 0 ? fmt::format("${}", c.parameter)
          : c.string        ? "'" + c.value + "'"
                            : c.value;
      s += (c.column_first ? r.column + " " + c.op + " " + value
                           : value + " " + c.op + " " + r.column) +
           ";";
    }
  }
  return s;
}

}  // namespace

TEST_CASE("parse_sql: what a SELECT's WHERE restricts its only FROM item's columns to") {
  CHECK(restrictions_of("SELECT count(*) FROM adult WHERE age = 39") == "age = 39;");
  CHECK(restrictions_of("SELECT * FROM public.adult a WHERE 'Female' = a.sex AND a.age >= 30 "
                        "AND (age <= 40 AND occupation IN ('Sales', 'Tech-support'))") ==
        "'Female' = sex; | age >= 30; | age <= 40; | any:occupation = 'Sales';occupation = "
        "'Tech-support';");
  CHECK(restrictions_of("SELECT 1 FROM adult WHERE age BETWEEN 30 AND '35' AND race NOT IN "
                        "('White') AND age OPERATOR(pg_catalog.<>) 7 AND adult.sex != 'Male'") ==
        "age >= 30;age <= '35'; | race <> 'White'; | age <> 7; | sex <> 'Male';");
  // Parameters the text uses nowhere else (their use here types them).
  CHECK(restrictions_of("SELECT 1 FROM adult WHERE age = $1 AND $2 < age AND sex IN ($3, 'F') "
                        "AND age BETWEEN $4 AND $5") ==
        "age = $1; | $2 < age; | any:sex = $3;sex = 'F'; | age >= $4;age <= $5;");
  // PREPARE's parameters, by the types its list declares as the grammar
  // writes integer, smallint, bigint and character varying, or not at all.
  const auto prepared = parse_sql(
      "PREPARE p(integer, bigint, character varying, smallint) AS SELECT 1 FROM adult WHERE age "
      "= $1 AND age < $2 AND sex = $3 AND race = $5");
  REQUIRE(prepared.ok);
  std::string declared;
  for (const auto& r : prepared.statements.at(0).relations.at(0).restrictions)
    for (const auto& c : r.comparisons)
      declared += fmt::format("{}:{}:{} ", c.parameter, c.prepared, c.declared);
  CHECK(declared == "1:true:23 2:true:20 3:true:1043 5:true:0 ");
  // Lists as drivers write them: = ANY and <> ALL of a parameter (an
  // array) or of an ARRAY of constants (IN and NOT IN).
  CHECK(restrictions_of("SELECT 1 FROM adult WHERE age = ANY($1) AND sex <> ALL($2) AND race = "
                        "ANY(ARRAY['a', 'b']) AND age <> ALL(ARRAY[3])") ==
        "age = ANY($1); | sex <> ALL($2); | any:race = 'a';race = 'b'; | age <> 3;");
  // LIKE and NOT LIKE of a constant pattern, the column on the left, at
  // most 256 bytes.
  CHECK(restrictions_of("SELECT 1 FROM adult WHERE sex LIKE 'M%' AND race NOT LIKE '_hi%'") ==
        "sex ~~ 'M%'; | race !~~ '_hi%';");
  CHECK(restrictions_of("SELECT 1 FROM adult WHERE sex LIKE '" + std::string(256, '%') + "'") ==
        "sex ~~ '" + std::string(256, '%') + "';");
  CHECK(restrictions_of("SELECT 1 FROM adult WHERE sex LIKE '" + std::string(257, '%') + "'")
            .empty());
  for (const char* sql : {
           "SELECT 1 FROM adult WHERE age = ANY(ARRAY[$1]) AND age = ANY($2::int[])",
           "SELECT 1 FROM adult WHERE age > ANY($1) AND age = ALL($2) AND age <> ANY($3)",
           "SELECT 1 FROM adult WHERE age = ANY('{1,2}') AND age = ANY(ARRAY[1, age])",
           "PREPARE p(integer[]) AS SELECT 1 FROM adult WHERE age = ANY($1)",
       }) {
    CAPTURE(std::string(sql));
    CHECK(restrictions_of(sql).empty());
  }
  // Not restrictions: OR, NOT, functions, other operators, parameters used
  // twice or cast, columns of other items, 0 and negative numbers (libpg_query writes them
  // alike), decimals, non-ASCII or backslashed strings, an alias that renames
  // columns, a bare name beside other FROM items (another's column, a USING
  // column), a table a join alias hides or another item's name shadows, a
  // join's ON, a qualifier that is not the item's name.
  for (const char* sql : {
           "SELECT 1 FROM adult WHERE age = 39 OR sex = 'Male'",
           "SELECT 1 FROM adult WHERE NOT age = 39",
           "SELECT 1 FROM adult WHERE abs(age) = 39 AND age + 1 = 40 AND age = age",
           "SELECT 1 FROM adult WHERE sex ILIKE 'M%' AND age ~ '3' AND age IS NULL",
           "SELECT 1 FROM adult WHERE 'M%' LIKE sex AND sex LIKE $1 AND sex LIKE 'M#%' ESCAPE '#'",
           "SELECT 1 FROM adult WHERE sex LIKE 'M%' COLLATE \"C\" AND sex ~~ 'M%' AND sex "
           "SIMILAR TO 'M%'",
           "SELECT 1 FROM adult WHERE sex LIKE 'a\\%' AND sex LIKE 'M\xc3\xa4%' AND sex LIKE 7",
           "SELECT 1 FROM adult WHERE age = 0 AND age = -5 AND age = 39.5 AND age = $1::int",
           "SELECT $1 FROM adult WHERE age = $1 AND sex = $2 AND sex <> $2",
           "SELECT 1 FROM adult WHERE age = $1 AND id IN (SELECT $1)",
           "PREPARE p(numeric) AS SELECT 1 FROM adult WHERE age = $1",
           "PREPARE p(int4) AS SELECT 1 FROM adult WHERE age = $1",
           "PREPARE p(text, varchar(9), int[]) AS SELECT 1 FROM adult WHERE sex = $1 AND sex = "
           "$2 AND age = $3",
           "SELECT 1 FROM adult WHERE sex = 'M\xc3\xa4' AND sex = 'a\\b' AND sex = E'\\n'",
           "SELECT 1 FROM adult AS t(a, b) WHERE a = 39",
           "SELECT 1 FROM adult a JOIN other o USING (age) WHERE age = 39",
           "SELECT 1 FROM adult a, other o WHERE age = 39",
           "SELECT 1 FROM (adult a JOIN other o ON true) j WHERE a.age = 39",
           "SELECT 1 FROM adult a JOIN other o USING (id) AS a WHERE a.age = 39",
           "SELECT 1 FROM adult a, (SELECT 1) a WHERE a.age = 39",
           "SELECT 1 FROM adult a JOIN other o ON a.age = 39 LEFT JOIN x ON true",
           "SELECT 1 FROM adult a WHERE adult.age = 39 AND public.a.age = 39",
           "SELECT 1 FROM adult WHERE age OPERATOR(public.=) 39 AND age NOT BETWEEN 1 AND 2",
           "SELECT 1 FROM adult WHERE age BETWEEN SYMMETRIC 1 AND 2",
       }) {
    CAPTURE(sql);
    CHECK(restrictions_of(sql).empty());
  }
  // In joins and beside other FROM items, qualified by the name the
  // relation goes by.
  CHECK(restrictions_of("SELECT 1 FROM other o LEFT JOIN adult a ON a.id = o.id "
                        "JOIN x USING (id) WHERE a.age = 39 AND o.age = 40",
                        1) == "age = 39;");
  CHECK(restrictions_of("SELECT 1 FROM other, public.adult WHERE adult.sex = 'F'", 1) ==
        "sex = 'F';");
  CHECK(restrictions_of("SELECT 1 FROM other, public.adult WHERE adult.sex = 'F'", 0).empty());
  // Through subqueries that pass a table's rows on unchanged (what BI tools
  // wrap a dataset's SQL in), to the table's column: by * or by name,
  // renamed, nested, beside the subquery's own WHERE.
  CHECK(restrictions_of("SELECT count(*) FROM (SELECT * FROM adult) s WHERE s.age = 39") ==
        "age = 39;");
  CHECK(restrictions_of("SELECT 1 FROM (SELECT a.age AS years, sex FROM adult a WHERE race = "
                        "'x') v WHERE years > 30 AND v.sex = 'F'") ==
        "age > 30; | sex = 'F'; | race = 'x';");
  CHECK(restrictions_of("SELECT 1 FROM (SELECT * FROM (SELECT age FROM public.adult) i) o, x "
                        "WHERE o.age IN (1, 2)") == "any:age = 1;age = 2;");
  // Computed columns beside them, each under an alias (a Superset virtual
  // dataset's `age / 10 AS decade`; a set-returning function repeats kept
  // rows only).
  CHECK(restrictions_of("SELECT decade, count(*) FROM (SELECT *, age / 10 AS decade FROM adult) "
                        "v WHERE v.age = 39 GROUP BY 1") == "age = 39;");
  CHECK(restrictions_of("SELECT 1 FROM (SELECT sex, upper(race) AS r, generate_series(1, 2) AS n "
                        "FROM adult) v WHERE sex = 'F' AND r = 'X'") == "sex = 'F';");
  // Not through: a computed column of that name, one without an alias, a
  // window function, grouping, DISTINCT, LIMIT, a set operation, a join
  // inside, * beside a column of that name, an ambiguous name, an
  // alias renaming columns, LATERAL, a bare name beside other items.
  for (const char* sql : {
           "SELECT 1 FROM (SELECT age + 0 AS age FROM adult) s WHERE s.age = 39",
           "SELECT 1 FROM (SELECT *, age + 0 AS age FROM adult) s WHERE s.age = 39",
           "SELECT 1 FROM (SELECT age, age::text FROM adult) s WHERE s.age = 39",
           "SELECT 1 FROM (SELECT age, sum(id) OVER (ORDER BY id) AS n FROM adult) s WHERE s.age "
           "= 39",
           "SELECT 1 FROM (SELECT age, id - lag(id) OVER w AS n FROM adult WINDOW w AS (ORDER BY "
           "id)) s WHERE s.age = 39",
           "SELECT 1 FROM (SELECT age FROM adult GROUP BY age) s WHERE s.age = 39",
           "SELECT 1 FROM (SELECT DISTINCT age FROM adult) s WHERE s.age = 39",
           "SELECT 1 FROM (SELECT age FROM adult LIMIT 5) s WHERE s.age = 39",
           "SELECT 1 FROM (SELECT age FROM adult UNION SELECT 1) s WHERE s.age = 39",
           "SELECT 1 FROM (SELECT age FROM adult a JOIN b USING (id)) s WHERE s.age = 39",
           "SELECT 1 FROM (SELECT *, sex AS age FROM adult) s WHERE s.age = 39",
           "SELECT 1 FROM (SELECT age, sex AS age FROM adult) s WHERE s.age = 39",
           "SELECT 1 FROM (SELECT age FROM adult) s(a) WHERE s.a = 39",
           "SELECT 1 FROM x, LATERAL (SELECT age FROM adult) s WHERE s.age = 39",
           "SELECT 1 FROM (SELECT age FROM adult) s, x WHERE age = 39",
           "SELECT 1 FROM (SELECT age FROM adult TABLESAMPLE SYSTEM (5)) s WHERE s.age = 39",
           "SELECT 1 FROM (SELECT age FROM adult FOR UPDATE) s WHERE s.age = 39",
       }) {
    CAPTURE(sql);
    const auto out = parse_sql(sql);
    REQUIRE(out.ok);
    for (const auto& r : out.statements.at(0).relations) CHECK(r.restrictions.empty());
  }
  // Through a CTE the statement names once (Looker's and hand-written SQL's
  // form), the same way, also chained and from a subquery.
  CHECK(restrictions_of("WITH s AS (SELECT * FROM adult) SELECT count(*) FROM s WHERE age = 39") ==
        "age = 39;");
  CHECK(restrictions_of("WITH a AS MATERIALIZED (SELECT age AS years FROM public.adult WHERE sex "
                        "= 'F'), b AS (SELECT * FROM a) SELECT 1 FROM b x, other WHERE x.years "
                        "BETWEEN 30 AND 40") == "age >= 30;age <= 40; | sex = 'F';");
  CHECK(restrictions_of("WITH s AS (SELECT * FROM adult) SELECT 1 FROM (SELECT * FROM s) v "
                        "WHERE v.age = $1") == "age = $1;");
  CHECK(restrictions_of("WITH s AS (SELECT * FROM adult) SELECT 1 FROM other WHERE age = 1 "
                        "UNION ALL SELECT 1 FROM s WHERE age = 39") == "age = 39;");
  // Not through a CTE named twice (both would lose the rows), defined twice,
  // RECURSIVE, renaming its columns or not passing rows on; nor is such a
  // name taken for a table.
  for (const char* sql : {
           "WITH s AS (SELECT * FROM adult) SELECT 1 FROM s WHERE age = 39 UNION ALL SELECT 1 "
           "FROM s",
           "WITH s AS (SELECT * FROM adult) SELECT 1 FROM s WHERE age = 39 AND id IN (SELECT id "
           "FROM s)",
           "WITH s AS (SELECT * FROM adult) SELECT 1 FROM s, (WITH s AS (SELECT 1) SELECT * FROM "
           "s) z WHERE s.age = 39",
           "WITH RECURSIVE s AS (SELECT * FROM adult) SELECT 1 FROM s WHERE age = 39",
           "WITH s(a) AS (SELECT age FROM adult) SELECT 1 FROM s WHERE a = 39",
           "WITH s AS (SELECT DISTINCT age FROM adult) SELECT 1 FROM s WHERE age = 39",
           "WITH s AS (SELECT age FROM adult LIMIT 3) SELECT 1 FROM s WHERE age = 39",
           "WITH adult AS (SELECT * FROM adult) SELECT 1 FROM adult WHERE age = 39",
       }) {
    CAPTURE(std::string(sql));
    const auto out = parse_sql(sql);
    REQUIRE(out.ok);
    for (const auto& r : out.statements.at(0).relations) CHECK(r.restrictions.empty());
  }
  // A schema names a table, never a CTE.
  CHECK(restrictions_of("WITH s AS (SELECT * FROM adult) SELECT 1 FROM public.s WHERE age = 39",
                        1) == "age = 39;");
  CHECK(restrictions_of("WITH s AS (SELECT * FROM adult) SELECT 1 FROM public.s WHERE age = 39", 0)
            .empty());
  // What a SELECT (a view's definition) passes on: its plain output columns,
  // by the relation's column.
  const auto passed = [](const std::string& sql) {
    CHECK(parse_sql(sql).statements.at(0).passed_on.empty());  // only when asked for
    const auto out = parse_sql(sql, true);
    REQUIRE(out.ok);
    std::string s;
    const auto& st = out.statements.at(0);
    for (const auto& p : st.passed_on)
      s += p.output + "=" + st.relations.at(p.relation).name + "." + p.column + " ";
    return s;
  };
  CHECK(passed("SELECT adult.age AS years, adult.sex FROM public.adult WHERE adult.race = 'x'") ==
        "years=adult.age sex=adult.sex ");
  // Plain columns; computed ones beside them only under an alias (without
  // one PostgreSQL names them, maybe as a column), with no window function.
  CHECK(passed("SELECT adult.age, adult.id + 1 AS n FROM public.adult") == "age=adult.age ");
  CHECK(passed("SELECT adult.age, adult.id::int FROM public.adult").empty());
  CHECK(passed("SELECT age, count(*) OVER () AS n FROM adult").empty());
  CHECK(passed("SELECT s.years FROM (SELECT age AS years FROM adult) s") == "years=adult.age ");
  CHECK(passed("SELECT age FROM adult GROUP BY age").empty());
  CHECK(passed("SELECT a.age FROM adult a JOIN other o USING (id)").empty());
  // Each SELECT its own: a subquery's WHERE restricts its own item.
  const std::string nested =
      "SELECT * FROM adult WHERE age = 39 AND id IN (SELECT id FROM adult WHERE sex = 'Male')";
  CHECK(restrictions_of(nested, 0) == "age = 39;");
  CHECK(restrictions_of(nested, 1) == "sex = 'Male';");
  CHECK(restrictions_of("SELECT age FROM adult WHERE age = 39 UNION SELECT age FROM adult", 1)
            .empty());
}
