// The BI corpus the rewriter benchmarks share: statements as Metabase,
// Superset, Tableau, Looker and Power BI send them (0.2-4 KB), over the demo
// tables public.people and public.adult.
#pragma once

#include <fmt/format.h>

#include <string>
#include <vector>

namespace kanon::bench {

inline std::string pad_filters(int n) {
  std::string s;
  for (int i = 0; i < n; ++i)
    s += fmt::format(" AND (\"a\".\"education\" <> 'level-{}' OR \"a\".\"age\" > {})", i, 17 + i);
  return s;
}

inline std::vector<std::string> bi_corpus() {
  std::vector<std::string> q = {
      // Metabase question: grouped count with quoted identifiers.
      "SELECT \"public\".\"people\".\"state\" AS \"state\", count(*) AS \"count\" FROM "
      "\"public\".\"people\" WHERE \"public\".\"people\".\"occupation\" IS NOT NULL GROUP BY "
      "\"public\".\"people\".\"state\" ORDER BY \"public\".\"people\".\"state\" ASC LIMIT 2000",
      // Superset: time-series-like aggregate with a CTE.
      "WITH base AS (SELECT \"sex\", \"age\", \"education\", \"occupation\" FROM public.adult "
      "WHERE \"age\" BETWEEN 25 AND 60) SELECT \"sex\", \"education\", count(*) AS cnt, "
      "avg(\"age\") AS avg_age FROM base GROUP BY \"sex\", \"education\" HAVING count(*) > 5 "
      "ORDER BY cnt DESC LIMIT 100",
      // Tableau: join of two protected tables with a CASE dimension.
      "SELECT CASE WHEN \"a\".\"age\" < 30 THEN 'young' WHEN \"a\".\"age\" < 50 THEN 'middle' "
      "ELSE 'senior' END AS \"age_band\", \"p\".\"state\" AS \"state\", SUM(1) AS "
      "\"number_of_records\" FROM \"public\".\"adult\" \"a\" INNER JOIN \"public\".\"people\" "
      "\"p\" ON (\"a\".\"occupation\" = \"p\".\"occupation\") GROUP BY 1, 2",
      // Looker: window functions over a filtered subquery.
      "SELECT state, city, n, rank() OVER (PARTITION BY state ORDER BY n DESC) AS r, "
      "dense_rank() OVER (ORDER BY n) AS d, "
      "sum(n) OVER (PARTITION BY state) AS total FROM "
      "(SELECT state, city, count(*) AS n FROM people WHERE state IS NOT NULL GROUP BY state, "
      "city) t ORDER BY state, r",
      // Power BI: nested derived tables and EXISTS.
      "select \"_\".\"occupation\", \"_\".\"c\" from (select \"occupation\", count(1) as \"c\" "
      "from \"public\".\"adult\" \"$Table\" where exists (select 1 from \"public\".\"people\" "
      "\"p\" where \"p\".\"occupation\" = \"$Table\".\"occupation\") group by \"occupation\") "
      "\"_\" where \"_\".\"c\" > 10 limit 1001",
      // Set operation and scalar subquery.
      "SELECT state AS \"State\", 'detail' AS \"Level\" FROM people UNION SELECT 'total', "
      "'summary' UNION SELECT (SELECT max(state) FROM people p2 WHERE p2.city = 'Hamlet'), "
      "'max' UNION SELECT 'none', 'empty' WHERE false ORDER BY 1",
  };
  // Long dashboard filters, 1-4 KB.
  for (int n : {10, 25, 45, 70}) {
    q.push_back(
        "SELECT \"a\".\"workclass\", \"a\".\"race\", count(*) AS \"n\", min(\"a\".\"age\") "
        "FROM \"public\".\"adult\" \"a\" WHERE \"a\".\"sex\" IN ('Male', 'Female')" +
        pad_filters(n) + " GROUP BY \"a\".\"workclass\", \"a\".\"race\" ORDER BY 3 DESC LIMIT 500");
  }
  q.push_back(
      "WITH p AS (SELECT * FROM people WHERE state = 'OH'), a AS (SELECT occupation, "
      "count(*) AS n FROM adult a WHERE a.age > 30" +
      pad_filters(20) +
      " GROUP BY occupation) SELECT p.city, a.n, row_number() OVER (ORDER BY a.n DESC) FROM p "
      "LEFT JOIN a ON a.occupation = p.occupation ORDER BY 3");
  return q;
}

}  // namespace kanon::bench
