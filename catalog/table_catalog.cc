#include "catalog/table_catalog.h"

#include <fmt/format.h>

#include <pqxx/pqxx>
#include <stdexcept>
#include <string>

#include "catalog/column_sql.h"

namespace kanon::catalog {

using base::ConfigError;

namespace {

// For the column `a` (kColumnsFrom's aliases): the nearest type inside its
// type (domain base, array element, range subtype, composite field, at most
// 16 levels) whose text form depends on a session's settings, qualified, or
// NULL: money (lc_monetary) and the reg* types (search_path).
constexpr const char* kSettingDependentType =
    "(WITH RECURSIVE inner_types(oid, depth) AS ("
    "  SELECT a.atttypid, 0"
    "  UNION ALL"
    "  SELECT x.oid, i.depth + 1 FROM inner_types i"
    "  JOIN pg_catalog.pg_type ty ON ty.oid = i.oid"
    "  CROSS JOIN LATERAL ("
    "    SELECT ty.typbasetype WHERE ty.typbasetype <> 0"
    "    UNION ALL SELECT ty.typelem WHERE ty.typelem <> 0 AND ty.typlen = -1"
    "    UNION ALL SELECT g.rngsubtype FROM pg_catalog.pg_range g WHERE g.rngtypid = ty.oid"
    "    UNION ALL SELECT f.atttypid FROM pg_catalog.pg_attribute f"
    "      WHERE ty.typrelid <> 0 AND f.attrelid = ty.typrelid AND f.attnum > 0"
    "      AND NOT f.attisdropped) x(oid)"
    "  WHERE i.depth < 16)"
    " SELECT 'pg_catalog.' || st.typname FROM inner_types i"
    " JOIN pg_catalog.pg_type st ON st.oid = i.oid"
    " WHERE st.typnamespace = 'pg_catalog'::pg_catalog.regnamespace AND st.typname IN ("
    "   'money', 'regproc', 'regprocedure', 'regoper', 'regoperator', 'regclass', 'regtype',"
    "   'regrole', 'regnamespace', 'regconfig', 'regdictionary', 'regcollation')"
    " ORDER BY i.depth LIMIT 1)";

// Per column of the relation $1: whether its `=` implies identical values,
// judged as PostgreSQL's B-tree deduplication judges it (the default B-tree
// operator class's equalimage support function: btequalimage, or
// btvarstrequalimage under a deterministic collation), for the scalar inside
// the column's type (a domain's base, an array's element, a range's
// subtype); that scalar's qualified name; whether it sits in an array or
// range; whether it is the citext extension's type; the typmod (numeric(p,
// s) has one scale).
constexpr const char* kValueFormsSql =
    "WITH cols AS ("
    "  SELECT a.attnum, a.attcollation, "
    "    CASE WHEN a.atttypmod >= 0 THEN a.atttypmod ELSE t.typtypmod END AS typmod, "
    "    COALESCE(NULLIF(t.typbasetype, 0), t.oid) AS t0 "
    "  FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_type t ON t.oid = a.atttypid "
    "  WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped), "
    "inner1 AS ("
    "  SELECT c.*, (b.typelem <> 0 AND b.typlen = -1) OR g.rngsubtype IS NOT NULL AS wrapped, "
    "    CASE WHEN b.typelem <> 0 AND b.typlen = -1 THEN b.typelem "
    "         WHEN g.rngsubtype IS NOT NULL THEN g.rngsubtype ELSE b.oid END AS s1 "
    "  FROM cols c JOIN pg_catalog.pg_type b ON b.oid = c.t0 "
    "  LEFT JOIN pg_catalog.pg_range g ON g.rngtypid = b.oid), "
    "inner2 AS ("
    "  SELECT i.*, COALESCE(NULLIF(x.typbasetype, 0), x.oid) AS s "
    "  FROM inner1 i JOIN pg_catalog.pg_type x ON x.oid = i.s1) "
    "SELECT i.attnum, i.wrapped, "
    // The type's own default class first (citext has one, without
    // equalimage, besides its binary cast to text).
    "  COALESCE((SELECT CASE pr.proname WHEN 'btequalimage' THEN true "
    "      WHEN 'btvarstrequalimage' THEN COALESCE((SELECT co.collisdeterministic "
    "        FROM pg_catalog.pg_collation co WHERE co.oid = i.attcollation), true) "
    "      ELSE false END "
    "    FROM (SELECT oc.opcfamily, oc.opcintype FROM pg_catalog.pg_opclass oc "
    "      JOIN pg_catalog.pg_am am ON am.oid = oc.opcmethod AND am.amname = 'btree' "
    "      WHERE oc.opcdefault AND (oc.opcintype = i.s "
    "        OR (oc.opcintype = 'pg_catalog.anyenum'::pg_catalog.regtype AND st.typtype = 'e') "
    "        OR EXISTS (SELECT 1 FROM pg_catalog.pg_cast k WHERE k.castsource = i.s "
    "          AND k.casttarget = oc.opcintype AND k.castmethod = 'b')) "
    "      ORDER BY oc.opcintype = i.s DESC LIMIT 1) oc "
    "    LEFT JOIN pg_catalog.pg_amproc ap ON ap.amprocfamily = oc.opcfamily "
    "      AND ap.amproclefttype = oc.opcintype AND ap.amprocrighttype = oc.opcintype "
    "      AND ap.amprocnum = 4 "
    "    LEFT JOIN pg_catalog.pg_proc pr ON pr.oid = ap.amproc "
    "      AND pr.pronamespace = 'pg_catalog'::pg_catalog.regnamespace), false), "
    "  COALESCE((SELECT NOT co.collisdeterministic FROM pg_catalog.pg_collation co "
    "    WHERE co.oid = i.attcollation), false), "
    "  pg_catalog.quote_ident(sn.nspname) || '.' || pg_catalog.quote_ident(st.typname), "
    "  st.typname = 'citext' AND EXISTS (SELECT 1 FROM pg_catalog.pg_depend d "
    "    JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid "
    "    WHERE d.classid = 'pg_catalog.pg_type'::pg_catalog.regclass AND d.objid = i.s "
    "      AND d.deptype = 'e' AND e.extname = 'citext'), "
    "  i.typmod "
    "FROM inner2 i JOIN pg_catalog.pg_type st ON st.oid = i.s "
    "JOIN pg_catalog.pg_namespace sn ON sn.oid = st.typnamespace ORDER BY i.attnum";

// ColumnInfo::released_form / not_canonical from a row of kValueFormsSql.
void set_value_form(policy::ColumnInfo& col, const pqxx::row& r) {
  const bool wrapped = r[1].as<bool>(), image = r[2].as<bool>();
  const bool nondeterministic = r[3].as<bool>(), citext = r[5].as<bool>();
  const std::string scalar = r[4].as<std::string>();
  const int typmod = r[6].is_null() ? -1 : r[6].as<int>();
  const bool numeric = scalar == "pg_catalog.\"numeric\"" || scalar == "pg_catalog.numeric";
  // A length-less bpchar keeps the trailing blanks it was given ('a' = 'a  ',
  // printed apart), which PostgreSQL's deduplication does not mind; to text
  // they go. bpchar(n) pads every value to n.
  if (scalar == "pg_catalog.bpchar" && typmod < 0 && !nondeterministic) {
    if (wrapped)
      col.not_canonical = "an array or range of length-less bpchar values";
    else
      col.released_form = "{}::pg_catalog.text";
    return;
  }
  // numeric(p, s): every value has the column's scale.
  if (image || (numeric && typmod >= 0)) return;
  if (nondeterministic) {
    col.not_canonical =
        "under a nondeterministic collation (use a deterministic one, e.g. COLLATE \"C\" or the "
        "database's default)";
    return;
  }
  if (wrapped) {
    col.not_canonical = "an array or range of " + scalar + " values";
    return;
  }
  if (numeric)
    col.released_form = "pg_catalog.trim_scale({})";
  else if (scalar == "pg_catalog.float8" || scalar == "pg_catalog.float4")
    // -0 + 0 is 0; every NaN (its sign and payload kept by arithmetic) is
    // written as the one 'NaN' reads as.
    col.released_form = "CASE WHEN {} OPERATOR(pg_catalog.=) 'NaN'::" + scalar +
                        " THEN 'NaN'::" + scalar +
                        " ELSE ({} OPERATOR(pg_catalog.+) '0'::" + scalar + ") END";
  else if (scalar == "pg_catalog.\"interval\"" || scalar == "pg_catalog.interval")
    col.released_form = "pg_catalog.justify_interval({})";
  else if (citext)
    col.released_form = "pg_catalog.lower({}::pg_catalog.text)";
  else
    col.not_canonical = "whose `=` does not imply identical values (" + scalar + ")";
}

}  // namespace

policy::TableInfo read_table_info(pqxx::connection_base& conn, const policy::TablePolicy& policy) {
  pqxx::read_transaction tx(conn);
  // Types by their schema-qualified names (arrays as element[]), the
  // modifiers format_type prints, and the schema of the equality operator:
  // pg_catalog's when it has one for the (base) type, otherwise one the
  // type's owner defined in the type's own schema (an extension type's).
  const auto rows = tx.exec_params(
      "SELECT a.attname, pg_catalog.format_type(a.atttypid, NULL), "
      "pg_catalog.format_type(a.atttypid, a.atttypmod), "
      "CASE WHEN t.typelem <> 0 AND t.typlen = -1 "
      "  THEN pg_catalog.quote_ident(en.nspname) || '.' || pg_catalog.quote_ident(et.typname) "
      "  ELSE pg_catalog.quote_ident(tn.nspname) || '.' || pg_catalog.quote_ident(t.typname) END, "
      "CASE WHEN a.atttypmod >= 0 THEN pg_catalog.substring("
      "  pg_catalog.format_type(a.atttypid, a.atttypmod), '\\([^)]*\\)') END, "
      "t.typelem <> 0 AND t.typlen = -1, "
      "(SELECT pg_catalog.quote_ident(n2.nspname) FROM pg_catalog.pg_operator o "
      "  JOIN pg_catalog.pg_namespace n2 ON n2.oid = o.oprnamespace "
      "  JOIN pg_catalog.pg_type b ON b.oid = COALESCE(NULLIF(t.typbasetype, 0), t.oid) "
      "  WHERE o.oprname = '=' AND o.oprleft = b.oid AND o.oprright = b.oid "
      "  AND (n2.nspname = 'pg_catalog' OR (o.oprnamespace = b.typnamespace "
      "       AND o.oprowner = b.typowner)) "
      "  ORDER BY n2.nspname = 'pg_catalog' DESC LIMIT 1), "
      "c.oid, " +
          std::string(kSettingDependentType) + " " + std::string(kColumnsFrom) +
          "WHERE n.nspname = $1 AND c.relname = $2 AND c.relkind IN ('r', 'p', 'v', 'm', 'f') "
          "AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
      policy.schema, policy.table);
  if (rows.empty())
    throw ConfigError(fmt::format("{}:{}: {}: table {} does not exist (or has no columns)",
                                  policy.where.file, policy.where.line, policy.where.key,
                                  policy.name()));
  policy::TableInfo info{policy.schema, policy.table, {}, {}};
  info.oid = rows[0][7].as<uint32_t>();
  for (const auto& r : rows) {
    policy::ColumnInfo col{r[0].as<std::string>(), r[1].as<std::string>(), r[2].as<std::string>()};
    const bool array = r[5].as<bool>();
    const std::string base = r[3].as<std::string>();
    col.sql_type = base + (array ? "[]" : "");
    col.sql_full_type = base + (r[4].is_null() ? "" : r[4].as<std::string>()) + (array ? "[]" : "");
    // Arrays compare with pg_catalog's anyarray `=`, which compares the
    // elements with their type's default equality (by OID, not by name).
    const std::string schema = array || r[6].is_null() ? "pg_catalog" : r[6].as<std::string>();
    col.equality = "OPERATOR(" + schema + ".=)";
    if (!r[8].is_null()) col.setting_dependent = r[8].as<std::string>();
    info.columns.push_back(std::move(col));
  }
  // The same columns in the same (attnum) order as `rows`.
  const auto forms = tx.exec_params(kValueFormsSql, info.oid);
  if (forms.size() != info.columns.size())
    throw std::runtime_error(
        fmt::format("{}: the columns changed while kanon read them", policy.name()));
  for (size_t i = 0; i < info.columns.size(); ++i) set_value_form(info.columns[i], forms[i]);
  const auto children = tx.exec_params(
      "WITH RECURSIVE tree(oid) AS ("
      "  SELECT i.inhrelid FROM pg_catalog.pg_inherits i"
      "  WHERE i.inhparent = (SELECT c.oid FROM pg_catalog.pg_class c"
      "    JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace"
      "    WHERE n.nspname = $1 AND c.relname = $2)"
      "  UNION SELECT i.inhrelid FROM pg_catalog.pg_inherits i JOIN tree t ON i.inhparent = t.oid)"
      "SELECT n.nspname, c.relname FROM tree JOIN pg_catalog.pg_class c ON c.oid = tree.oid "
      "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace ORDER BY 1, 2",
      policy.schema, policy.table);
  for (const auto& r : children)
    info.children.push_back(r[0].as<std::string>() + "." + r[1].as<std::string>());
  // A generated column's expression (its pg_attrdef) depends on the columns
  // it reads (pg_depend; on its own column too, internally).
  for (const auto& r : tx.exec_params(
           "SELECT a.attname, pg_catalog.array_agg(DISTINCT s.attname::pg_catalog.text) "
           "FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_attrdef ad ON ad.adrelid = "
           "a.attrelid AND ad.adnum = a.attnum JOIN pg_catalog.pg_depend d ON d.classid = "
           "'pg_catalog.pg_attrdef'::pg_catalog.regclass AND d.objid = ad.oid AND d.refclassid = "
           "'pg_catalog.pg_class'::pg_catalog.regclass AND d.refobjid = a.attrelid AND "
           "d.refobjsubid > 0 AND d.refobjsubid <> a.attnum JOIN pg_catalog.pg_attribute s ON "
           "s.attrelid = a.attrelid AND s.attnum = d.refobjsubid WHERE a.attrelid = $1 AND "
           "a.attgenerated <> '' AND NOT a.attisdropped GROUP BY a.attname ORDER BY 1",
           info.oid)) {
    policy::TableInfo::Generated g{r[0].as<std::string>(), {}};
    auto items = r[1].as_array();
    for (auto item = items.get_next(); item.first != pqxx::array_parser::juncture::done;
         item = items.get_next())
      if (item.first == pqxx::array_parser::juncture::string_value) g.from.push_back(item.second);
    info.generated.push_back(std::move(g));
  }
  for (const auto& r : tx.exec_params(
           "WITH RECURSIVE tree(oid) AS (SELECT $1::pg_catalog.oid UNION SELECT i.inhrelid "
           "FROM pg_catalog.pg_inherits i JOIN tree t ON i.inhparent = t.oid) "
           "SELECT n.nspname || '.' || c.relname, ARRAY(SELECT a.attname::pg_catalog.text "
           "FROM pg_catalog.unnest(p.partattrs::pg_catalog.int2[]) WITH ORDINALITY k(attnum, i) "
           "JOIN pg_catalog.pg_attribute a ON a.attrelid = p.partrelid AND a.attnum = k.attnum "
           "ORDER BY k.i), 0 = ANY (p.partattrs::pg_catalog.int2[]) "
           "FROM tree JOIN pg_catalog.pg_partitioned_table p ON p.partrelid = tree.oid "
           "JOIN pg_catalog.pg_class c ON c.oid = tree.oid "
           "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace ORDER BY 1",
           info.oid)) {
    policy::TableInfo::PartitionKey k{r[0].as<std::string>(), {}, r[2].as<bool>()};
    auto items = r[1].as_array();
    for (auto item = items.get_next(); item.first != pqxx::array_parser::juncture::done;
         item = items.get_next())
      if (item.first == pqxx::array_parser::juncture::string_value)
        k.columns.push_back(item.second);
    info.partition_keys.push_back(std::move(k));
  }
  return info;
}

}  // namespace kanon::catalog
