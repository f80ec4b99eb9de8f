#include "catalog/catalog_facts.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <pqxx/pqxx>
#include <stdexcept>
#include <unordered_map>

#include "catalog/catalog_watch.h"
#include "catalog/column_sql.h"
#include "catalog/lock_holders.h"

namespace kanon::catalog {
namespace {

// The schemas whose relations the facts leave out: the system's own and every
// session's temporary schema (pg_temp_N, pg_toast_temp_N).
constexpr const char* kPersistentSchema =
    "n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') "
    "AND n.nspname !~ '^pg_(toast_)?temp_'";

// FirstNormalObjectId: objects created by initdb have smaller oids.
constexpr uint32_t kFirstNormalObjectId = 16384;

uint32_t oid_of(const pqxx::field& f) {
  return f.is_null() ? 0 : static_cast<uint32_t>(std::strtoul(f.c_str(), nullptr, 10));
}

bool bool_of(const pqxx::field& f) {
  return !f.is_null() && f.c_str()[0] == 't';
}

std::string text_of(const pqxx::field& f) {
  return f.is_null() ? std::string() : std::string(f.c_str(), f.size());
}

void add_unique(std::vector<uint32_t>& v, uint32_t oid) {
  if (oid != 0 && std::find(v.begin(), v.end(), oid) == v.end()) v.push_back(oid);
}

std::string relations_sql() {
  return std::string(
             "SELECT c.oid, n.nspname, c.relname, c.relkind, "
             "CASE WHEN c.relkind IN ('v', 'm') THEN pg_catalog.pg_get_viewdef(c.oid) END, "
             "CASE WHEN c.relkind = 'v' THEN (SELECT o.option_value::pg_catalog.bool "
             "  FROM pg_catalog.pg_options_to_table(c.reloptions) o "
             "  WHERE o.option_name = 'security_barrier') END, "
             "CASE WHEN c.relkind = 'v' THEN (SELECT o.option_value::pg_catalog.bool "
             "  FROM pg_catalog.pg_options_to_table(c.reloptions) o "
             "  WHERE o.option_name = 'security_invoker') END, "
             "CASE WHEN c.relkind = 'v' THEN (SELECT pg_catalog.lower(o.option_value) "
             "  FROM pg_catalog.pg_options_to_table(c.reloptions) o "
             "  WHERE o.option_name = 'check_option') END, "
             "ft.ftserver "
             "FROM pg_catalog.pg_class c "
             "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
             "LEFT JOIN pg_catalog.pg_foreign_table ft ON ft.ftrelid = c.oid "
             "WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S', 'c') AND ") +
         kPersistentSchema + " ORDER BY c.oid";
}

std::string columns_sql() {
  return std::string(
             "SELECT a.attrelid, a.attname, pg_catalog.format_type(a.atttypid, NULL), "
             "pg_catalog.format_type(a.atttypid, a.atttypmod), "
             // The type schema-qualified (arrays as element[]), as kanon
             // writes it into SQL a restricted session runs.
             "CASE WHEN t.typelem <> 0 AND t.typlen = -1 "
             "  THEN pg_catalog.quote_ident(en.nspname) || '.' || "
             "       pg_catalog.quote_ident(et.typname) || '[]' "
             "  ELSE pg_catalog.quote_ident(tn.nspname) || '.' || "
             "       pg_catalog.quote_ident(t.typname) END ") +
         kColumnsFrom +
         "WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S', 'c') AND a.attnum > 0 "
         "AND NOT a.attisdropped AND " +
         kPersistentSchema + " ORDER BY a.attrelid, a.attnum";
}

// Every edge between objects, one row each: (what, owner, is_relation, ref,
// system relation name). `what`:
//   i  owner (a relation) inherits from ref (pg_inherits, in inhseqno order)
//   v  owner's _RETURN rule (a view's or materialized view's query) reads ref
//   w  writing owner runs or reaches ref (rules, triggers, defaults,
//      constraints, index expressions, partition keys of owner and of the
//      tables above it, foreign keys; ANALYZE: expressions of extended
//      statistics)
//   s  owner's row security policies reference ref
//   f  owner (a SQL function) reads ref: an atomic body, or an argument's
//      DEFAULT (run in the caller when the argument is left out)
//   o  ref is the function of the operator `owner` created after initdb
//      (its "schema.name" in the last column)
//   c  ref is the function of a cast created after initdb
//   d  a type created after initdb runs ref on its values: a domain's CHECK
//      constraint or DEFAULT calls it, or it is a range's subtype_diff or
//      canonical function
// Expressions are read twice: pg_depend (references to operators become their
// function, oprcode), and the stored node trees, whose :relid, :funcid,
// :opfuncid, ... fields also name the objects initdb created, which are
// pinned and never recorded in pg_depend (pg_catalog.query_to_xml,
// pg_catalog.pg_statistic). Node trees hold oids, never names or literal
// text (constants are printed as bytes), so a match is an object reference;
// a stray match could only add an edge. References to indexes, types and other objects
// are left out.
// Every index of a user table, in the order of its table's oid, with the
// columns it orders or filters by (RelationFacts::indexes); TOAST tables'
// indexes left out (about 4.5 ms for 800 indexes).
constexpr const char* kIndexesSql =
    "SELECT i.indrelid, n.nspname || '.' || c.relname, "
    "ARRAY(SELECT a.attname::pg_catalog.text FROM pg_catalog.pg_attribute a "
    "  WHERE a.attrelid = i.indrelid AND a.attnum > 0 AND (a.attnum IN (SELECT k.attnum "
    "    FROM pg_catalog.unnest(i.indkey::pg_catalog.int2[]) WITH ORDINALITY k(attnum, o) "
    "    WHERE k.o <= i.indnkeyatts) "
    "  OR ((i.indexprs IS NOT NULL OR i.indpred IS NOT NULL) AND EXISTS (SELECT 1 "
    "    FROM pg_catalog.pg_depend d "
    "    WHERE d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass "
    "      AND d.objid = i.indexrelid "
    "      AND d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass "
    "      AND d.refobjid = i.indrelid AND d.refobjsubid = a.attnum))) "
    "  ORDER BY a.attnum), i.indpred IS NOT NULL "
    "FROM pg_catalog.pg_index i "
    "JOIN pg_catalog.pg_class c ON c.oid = i.indexrelid "
    "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
    "WHERE i.indrelid >= 16384 AND n.nspname <> 'pg_toast' ORDER BY i.indrelid, c.oid";

std::string edges_sql(bool atomic_bodies) {
  std::string s =
      // partition keys: a row written to a partitioned table or to a
      // partition runs the key expressions of every table above it
      "WITH keys(owner, partrelid, partexprs) AS ("
      " SELECT c.oid, pt.partrelid, pt.partexprs FROM pg_catalog.pg_class c "
      " CROSS JOIN LATERAL pg_catalog.pg_partition_ancestors(c.oid) a(relid) "
      " JOIN pg_catalog.pg_partitioned_table pt "
      "   ON pt.partrelid = a.relid AND pt.partexprs IS NOT NULL "
      " WHERE c.oid >= 16384 AND (c.relkind = 'p' OR c.relispartition)"
      "), deps(what, owner, classid, objid) AS ("
      // rules: a view's _RETURN rule is what it reads; other rules run on writes
      " SELECT CASE WHEN r.ev_type = '1' THEN 'v' ELSE 'w' END, r.ev_class, "
      "   'pg_catalog.pg_rewrite'::pg_catalog.regclass::pg_catalog.oid, r.oid "
      " FROM pg_catalog.pg_rewrite r WHERE r.ev_class >= 16384"
      // row security policies
      " UNION ALL SELECT 's', p.polrelid, "
      "   'pg_catalog.pg_policy'::pg_catalog.regclass::pg_catalog.oid, p.oid "
      " FROM pg_catalog.pg_policy p"
      // column defaults and generated columns
      " UNION ALL SELECT 'w', a.adrelid, "
      "   'pg_catalog.pg_attrdef'::pg_catalog.regclass::pg_catalog.oid, a.oid "
      " FROM pg_catalog.pg_attrdef a WHERE a.adrelid >= 16384"
      // constraints: CHECK and exclusion expressions, the table a foreign key checks
      " UNION ALL SELECT 'w', c.conrelid, "
      "   'pg_catalog.pg_constraint'::pg_catalog.regclass::pg_catalog.oid, c.oid "
      " FROM pg_catalog.pg_constraint c WHERE c.conrelid >= 16384"
      // index expressions and predicates
      " UNION ALL SELECT 'w', i.indrelid, "
      "   'pg_catalog.pg_class'::pg_catalog.regclass::pg_catalog.oid, i.indexrelid "
      " FROM pg_catalog.pg_index i "
      " WHERE i.indrelid >= 16384 AND (i.indexprs IS NOT NULL OR i.indpred IS NOT NULL)"
      // triggers' WHEN conditions (their function is below)
      " UNION ALL SELECT 'w', t.tgrelid, "
      "   'pg_catalog.pg_trigger'::pg_catalog.regclass::pg_catalog.oid, t.oid "
      " FROM pg_catalog.pg_trigger t WHERE NOT t.tgisinternal AND t.tgqual IS NOT NULL"
      // domains' CHECK constraints and DEFAULT expressions
      " UNION ALL SELECT 'd', 0::pg_catalog.oid, "
      "   'pg_catalog.pg_constraint'::pg_catalog.regclass::pg_catalog.oid, c.oid "
      " FROM pg_catalog.pg_constraint c WHERE c.contypid >= 16384"
      " UNION ALL SELECT 'd', 0::pg_catalog.oid, "
      "   'pg_catalog.pg_type'::pg_catalog.regclass::pg_catalog.oid, t.oid "
      " FROM pg_catalog.pg_type t WHERE t.oid >= 16384 AND t.typdefaultbin IS NOT NULL"
      // functions' argument defaults
      " UNION ALL SELECT 'f', p.oid, "
      "   'pg_catalog.pg_proc'::pg_catalog.regclass::pg_catalog.oid, p.oid "
      " FROM pg_catalog.pg_proc p WHERE p.oid >= 16384 AND p.proargdefaults IS NOT NULL";
  if (atomic_bodies)
    s +=
        // expressions of extended statistics, which ANALYZE evaluates
        // (PostgreSQL 14+, as atomic bodies)
        " UNION ALL SELECT 'w', s.stxrelid, "
        "   'pg_catalog.pg_statistic_ext'::pg_catalog.regclass::pg_catalog.oid, s.oid "
        " FROM pg_catalog.pg_statistic_ext s WHERE s.stxexprs IS NOT NULL"
        // BEGIN ATOMIC / RETURN bodies (PostgreSQL 14+)
        " UNION ALL SELECT 'f', p.oid, "
        "   'pg_catalog.pg_proc'::pg_catalog.regclass::pg_catalog.oid, p.oid "
        " FROM pg_catalog.pg_proc p WHERE p.oid >= 16384 AND p.prosqlbody IS NOT NULL";
  s += "), trees(what, owner, tree) AS ("
       " SELECT CASE WHEN r.ev_type = '1' THEN 'v' ELSE 'w' END, r.ev_class, "
       "   r.ev_action::pg_catalog.text || COALESCE(r.ev_qual::pg_catalog.text, '') "
       " FROM pg_catalog.pg_rewrite r WHERE r.ev_class >= 16384"
       " UNION ALL SELECT 's', p.polrelid, COALESCE(p.polqual::pg_catalog.text, '') || "
       "   COALESCE(p.polwithcheck::pg_catalog.text, '') FROM pg_catalog.pg_policy p"
       " UNION ALL SELECT 'w', a.adrelid, a.adbin::pg_catalog.text "
       " FROM pg_catalog.pg_attrdef a WHERE a.adrelid >= 16384"
       " UNION ALL SELECT 'w', c.conrelid, c.conbin::pg_catalog.text "
       " FROM pg_catalog.pg_constraint c WHERE c.conrelid >= 16384 AND c.conbin IS NOT NULL"
       " UNION ALL SELECT 'w', i.indrelid, COALESCE(i.indexprs::pg_catalog.text, '') || "
       "   COALESCE(i.indpred::pg_catalog.text, '') FROM pg_catalog.pg_index i "
       " WHERE i.indrelid >= 16384 AND (i.indexprs IS NOT NULL OR i.indpred IS NOT NULL)"
       " UNION ALL SELECT 'w', t.tgrelid, t.tgqual::pg_catalog.text "
       " FROM pg_catalog.pg_trigger t WHERE NOT t.tgisinternal AND t.tgqual IS NOT NULL"
       " UNION ALL SELECT 'd', 0::pg_catalog.oid, c.conbin::pg_catalog.text "
       " FROM pg_catalog.pg_constraint c WHERE c.contypid >= 16384 AND c.conbin IS NOT NULL"
       " UNION ALL SELECT 'd', 0::pg_catalog.oid, t.typdefaultbin::pg_catalog.text "
       " FROM pg_catalog.pg_type t WHERE t.oid >= 16384 AND t.typdefaultbin IS NOT NULL"
       " UNION ALL SELECT 'f', p.oid, p.proargdefaults::pg_catalog.text "
       " FROM pg_catalog.pg_proc p WHERE p.oid >= 16384 AND p.proargdefaults IS NOT NULL"
       " UNION ALL SELECT 'w', k.owner, k.partexprs::pg_catalog.text FROM keys k";
  if (atomic_bodies)
    s += " UNION ALL SELECT 'w', s.stxrelid, s.stxexprs::pg_catalog.text "
         " FROM pg_catalog.pg_statistic_ext s WHERE s.stxexprs IS NOT NULL"
         " UNION ALL SELECT 'f', p.oid, p.prosqlbody::pg_catalog.text "
         " FROM pg_catalog.pg_proc p WHERE p.oid >= 16384 AND p.prosqlbody IS NOT NULL";
  s +=
      ") "
      "SELECT x.what, x.owner, x.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass, "
      "CASE WHEN x.refclassid = 'pg_catalog.pg_operator'::pg_catalog.regclass "
      "  THEN o.oprcode::pg_catalog.oid ELSE x.refobjid END, "
      "CASE WHEN x.what = 'o' THEN x.label "
      "  WHEN rn.nspname IN ('pg_catalog', 'information_schema') "
      "  THEN rn.nspname || '.' || rc.relname END "
      "FROM ("
      // pg_inherits
      " SELECT 'i' AS what, i.inhrelid AS owner, "
      "   'pg_catalog.pg_class'::pg_catalog.regclass::pg_catalog.oid AS refclassid, "
      "   i.inhparent AS refobjid, i.inhseqno AS seq, NULL::pg_catalog.text AS label "
      " FROM pg_catalog.pg_inherits i"
      // what pg_depend records for the expressions above
      " UNION ALL SELECT deps.what, deps.owner, d.refclassid, d.refobjid, 0, NULL "
      " FROM deps JOIN pg_catalog.pg_depend d "
      "   ON d.classid = deps.classid AND d.objid = deps.objid "
      "   AND (deps.what <> 'f' OR d.deptype = 'n')"
      // what their node trees name
      // (:relid of range table entries; :funcid, :opfuncid, :hashfuncid,
      // :negfuncid, :aggfnoid, :winfnoid, :tsmhandler of expressions. No
      // capturing group: PostgreSQL's regex engine is ten times slower with
      // one, so the match is split afterwards.)
      " UNION ALL SELECT trees.what, trees.owner, "
      "   CASE WHEN m.m[1] LIKE 'relid %' THEN 'pg_catalog.pg_class'::pg_catalog.regclass "
      "   ELSE 'pg_catalog.pg_proc'::pg_catalog.regclass END::pg_catalog.oid, "
      "   pg_catalog.split_part(m.m[1], ' ', 2)::pg_catalog.oid, 0, NULL "
      " FROM trees, LATERAL pg_catalog.regexp_matches(trees.tree, "
      "   '(?:relid|funcid|fnoid|handler) [0-9]+', 'g') m(m)"
      // triggers' functions
      " UNION ALL SELECT 'w', t.tgrelid, "
      "   'pg_catalog.pg_proc'::pg_catalog.regclass::pg_catalog.oid, t.tgfoid, 0, NULL "
      " FROM pg_catalog.pg_trigger t WHERE NOT t.tgisinternal"
      // foreign keys: an UPDATE or DELETE of the referenced table reads the
      // referencing one by the old key (NO ACTION, RESTRICT: an error that
      // names the key still referenced) or writes it (CASCADE, SET NULL,
      // SET DEFAULT)
      " UNION ALL SELECT 'w', c.confrelid, "
      "   'pg_catalog.pg_class'::pg_catalog.regclass::pg_catalog.oid, c.conrelid, 0, NULL "
      " FROM pg_catalog.pg_constraint c WHERE c.contype = 'f' AND c.confrelid >= 16384"
      // operators and casts created after initdb
      " UNION ALL SELECT 'o', o.oid, "
      "   'pg_catalog.pg_proc'::pg_catalog.regclass::pg_catalog.oid, o.oprcode::pg_catalog.oid, 0, "
      "   o.oprleft || ' ' || o.oprright || ' ' || on_.nspname || '.' || o.oprname "
      " FROM pg_catalog.pg_operator o JOIN pg_catalog.pg_namespace on_ ON on_.oid = o.oprnamespace "
      " WHERE o.oid >= 16384 AND o.oprcode <> 0"
      " UNION ALL SELECT 'c', 0::pg_catalog.oid, "
      "   'pg_catalog.pg_proc'::pg_catalog.regclass::pg_catalog.oid, c.castfunc, 0, NULL "
      " FROM pg_catalog.pg_cast c WHERE c.oid >= 16384 AND c.castfunc <> 0"
      // ranges' subtype_diff and canonical functions
      " UNION ALL SELECT 'd', 0::pg_catalog.oid, "
      "   'pg_catalog.pg_proc'::pg_catalog.regclass::pg_catalog.oid, f.f::pg_catalog.oid, 0, NULL "
      " FROM pg_catalog.pg_range r, "
      "   LATERAL pg_catalog.unnest(ARRAY[r.rngsubdiff, r.rngcanonical]) f(f) "
      " WHERE r.rngtypid >= 16384 AND f.f::pg_catalog.oid <> 0"
      // what partition keys call, by pg_depend (a table depends on a
      // function or operator only through its partition key)
      " UNION ALL SELECT 'w', k.owner, d.refclassid, d.refobjid, 0, NULL "
      " FROM keys k JOIN pg_catalog.pg_depend d "
      "   ON d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass AND d.objid = k.partrelid "
      "   AND d.refclassid IN ('pg_catalog.pg_proc'::pg_catalog.regclass, "
      "     'pg_catalog.pg_operator'::pg_catalog.regclass)"
      ") x "
      "LEFT JOIN pg_catalog.pg_operator o "
      "  ON x.refclassid = 'pg_catalog.pg_operator'::pg_catalog.regclass AND o.oid = x.refobjid "
      "LEFT JOIN pg_catalog.pg_class rc "
      "  ON x.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass AND rc.oid = x.refobjid "
      "LEFT JOIN pg_catalog.pg_namespace rn ON rn.oid = rc.relnamespace "
      "WHERE x.refclassid IN ('pg_catalog.pg_class'::pg_catalog.regclass, "
      "  'pg_catalog.pg_proc'::pg_catalog.regclass, "
      "  'pg_catalog.pg_operator'::pg_catalog.regclass) "
      "AND NOT (x.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass "
      "  AND x.refobjid = x.owner) "
      "AND (rc.oid IS NULL OR rc.relkind IN ('r', 'p', 'v', 'm', 'f', 'S', 'c')) "
      "ORDER BY x.what, x.owner, x.seq, 4";
  return s;
}

// Functions in oid order; with `user_only`, only those created after initdb
// (the built-in ones are then taken from the previous facts).
std::string functions_sql(bool atomic_bodies, bool user_only) {
  const std::string atomic = atomic_bodies ? "p.prosqlbody IS NOT NULL" : "false";
  return "SELECT p.oid, n.nspname, p.proname, l.lanname, p.prokind, p.prosecdef, e.extname, "
         "p.provolatile, "
         "CASE WHEN p.oid >= 16384 AND l.lanname = 'sql' AND NOT (" +
         atomic + ") THEN p.prosrc END, " + atomic +
         ", CASE WHEN g.aggfnoid IS NOT NULL THEN ARRAY[g.aggtransfn, g.aggfinalfn, "
         "g.aggcombinefn, g.aggserialfn, g.aggdeserialfn, g.aggmtransfn, g.aggminvtransfn, "
         "g.aggmfinalfn]::pg_catalog.oid[] END, "
         "NOT p.prosecdef AND p.proconfig IS NULL AND n.nspname = 'kanon' AND ("
         "(l.lanname = 'sql' AND p.proname = 'serial' AND p.prosrc = 'SELECT true' "
         "AND p.provolatile = 'i') OR "
         "(l.lanname = 'plpgsql' AND ((p.proname = 'catalog_is' AND p.prosrc = $kanon_guard$" +
         catalog_guard_body() +
         "$kanon_guard$) OR (p.proname = 'catalog_stays' AND p.prosrc = $kanon_guard$" +
         catalog_holding_guard_body() +
         "$kanon_guard$)))) OR (n.nspname = 'kanon_mask' AND l.lanname = 'c' AND "
         "(p.proname, p.prosrc) IN (('catalog_is', 'kanon_mask_catalog_is'), "
         "('catalog_stays', 'kanon_mask_catalog_stays'), "
         "('copy_current', 'kanon_mask_copy_current'), "
         "('snapshot_sees', 'kanon_mask_snapshot_sees')) AND NOT p.prosecdef "
         "AND p.proconfig IS NULL), "
         "p.prorettype IN ('pg_catalog.trigger'::pg_catalog.regtype, "
         "'pg_catalog.event_trigger'::pg_catalog.regtype), "
         "p.oid >= 16384 AND l.lanname = 'internal' AND p.prosrc IN ('range_constructor2', "
         "'range_constructor3', 'multirange_constructor0', 'multirange_constructor1', "
         "'multirange_constructor2') "
         "FROM pg_catalog.pg_proc p "
         "JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace "
         "JOIN pg_catalog.pg_language l ON l.oid = p.prolang "
         "LEFT JOIN pg_catalog.pg_aggregate g ON g.aggfnoid = p.oid "
         "LEFT JOIN pg_catalog.pg_depend d "
         "  ON d.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND d.objid = p.oid "
         "  AND d.deptype = 'e' "
         "  AND d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass "
         "LEFT JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid " +
         std::string(user_only ? "WHERE p.oid >= 16384 " : "") + "ORDER BY p.oid";
}

// Whether the guards in C (the catalog guard, a masked copy's and a masked
// view's, maskfn/catalog_guard.c) are installed as maskfn/install.sql installs them
// (CatalogFacts::c_guard), callable by every login. Only a superuser creates a C function; the
// schema's owner could drop one and create another, and a role that may
// create in the schema could add a rival, so both are superusers only.
constexpr const char* kCGuardSql =
    "SELECT pg_catalog.count(*) = 4 FROM pg_catalog.pg_proc p "
    "JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace "
    "JOIN pg_catalog.pg_language l ON l.oid = p.prolang "
    "JOIN pg_catalog.pg_roles po ON po.oid = p.proowner "
    "JOIN pg_catalog.pg_roles so ON so.oid = n.nspowner "
    "WHERE n.nspname = 'kanon_mask' AND so.rolsuper AND po.rolsuper AND l.lanname = 'c' "
    "AND (p.proname, p.prosrc, p.proparallel, p.proargtypes) IN "
    "  (('catalog_is', 'kanon_mask_catalog_is', 's', '20'::pg_catalog.oidvector), "
    "   ('catalog_stays', 'kanon_mask_catalog_stays', 'r', '20'::pg_catalog.oidvector), "
    "   ('copy_current', 'kanon_mask_copy_current', 's', '2205 25'::pg_catalog.oidvector), "
    "   ('snapshot_sees', 'kanon_mask_snapshot_sees', 's', '5069 25'::pg_catalog.oidvector)) "
    "AND p.provolatile = 's' AND NOT p.prosecdef AND p.proconfig IS NULL AND NOT p.proretset "
    "AND p.prorettype = 'pg_catalog.bool'::pg_catalog.regtype "
    "AND pg_catalog.has_function_privilege('public', p.oid, 'EXECUTE') "
    "AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_proc o "
    "  JOIN pg_catalog.pg_roles oo ON oo.oid = o.proowner "
    "  WHERE o.pronamespace = n.oid AND NOT oo.rolsuper) "
    "AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles r WHERE NOT r.rolsuper "
    "  AND pg_catalog.has_schema_privilege(r.oid, n.oid, 'CREATE'))";

// Event triggers that fire in ordinary sessions; kanon's own recognized by
// name, function and exact body (only a superuser creates event triggers).
std::string event_triggers_sql() {
  return "SELECT e.evtname, e.evtfoid, e.evtname IN ('kanon_catalog_ddl', 'kanon_catalog_drop') "
         "AND n.nspname = 'kanon' AND p.proname = 'catalog_changed' AND p.prosecdef "
         "AND p.prosrc = $kanon_watch$" +
         catalog_changed_body() +
         "$kanon_watch$ "
         "FROM pg_catalog.pg_event_trigger e "
         "JOIN pg_catalog.pg_proc p ON p.oid = e.evtfoid "
         "JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace "
         "WHERE e.evtenabled IN ('O', 'A') ORDER BY e.evtname";
}

// The database, and a fingerprint of the built-in functions: their number and
// the newest transaction that changed one (ALTER FUNCTION, CREATE OR REPLACE
// by a superuser). While it stays the same, their facts can be reused.
constexpr const char* kHeaderSql =
    "SELECT pg_catalog.current_database(), "
    "(SELECT pg_catalog.count(*) || '/' || "
    "  COALESCE(pg_catalog.max(p.xmin::pg_catalog.text::pg_catalog.int8), 0) "
    "  FROM pg_catalog.pg_proc p WHERE p.oid < 16384)";

constexpr const char* kSystemNamesSql =
    "SELECT DISTINCT c.relname::pg_catalog.text FROM pg_catalog.pg_class c "
    "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
    "WHERE n.nspname IN ('pg_catalog', 'information_schema') "
    "AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S', 'c')";

// Parses an oid[] in text form, "{1,2,0}", leaving out zeros.
std::vector<uint32_t> oid_array(const pqxx::field& f) {
  std::vector<uint32_t> out;
  if (f.is_null()) return out;
  const char* p = f.c_str();
  while (*p) {
    if (*p >= '0' && *p <= '9') {
      char* end = nullptr;
      const auto v = static_cast<uint32_t>(std::strtoul(p, &end, 10));
      if (v != 0 && std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
      p = end;
    } else {
      ++p;
    }
  }
  return out;
}

// Prepared once per connection: the statements have no parameters, so
// PostgreSQL plans each once and reuses the plan (planning the edges query
// costs more than running it).
// Calls `add(relation, row)` for each row of `rows` (relation oid first,
// both in oid order) whose relation is among `relations`.
template <typename Add>
void for_each_owned(std::vector<RelationFacts>& relations, const pqxx::result& rows, Add add) {
  size_t i = 0;
  for (const auto& r : rows) {
    const uint32_t rel = oid_of(r[0]);
    while (i < relations.size() && relations[i].oid < rel) ++i;
    if (i == relations.size()) break;
    if (relations[i].oid == rel) add(relations[i], r);
  }
}

void prepare(pqxx::connection_base& conn, bool atomic_bodies) {
  conn.prepare("kanon_catalog_header", kHeaderSql);
  conn.prepare("kanon_catalog_system_names", kSystemNamesSql);
  conn.prepare("kanon_catalog_relations", relations_sql());
  conn.prepare("kanon_catalog_columns", columns_sql());
  conn.prepare("kanon_catalog_indexes", kIndexesSql);
  conn.prepare("kanon_catalog_edges", edges_sql(atomic_bodies));
  conn.prepare("kanon_catalog_functions", functions_sql(atomic_bodies, false));
  conn.prepare("kanon_catalog_user_functions", functions_sql(atomic_bodies, true));
  conn.prepare("kanon_catalog_c_guard", kCGuardSql);
  conn.prepare("kanon_catalog_event_triggers", event_triggers_sql());
}

// kanon's generation lock (catalog_watch.h), taken for one read of the facts
// when the generation sequence exists, and released when the read is over.
// Taken outside the read's transaction: its snapshot must be newer than
// every DDL that advanced the generation it reads.
class GenerationLock {
 public:
  explicit GenerationLock(pqxx::connection_base& conn) : conn_(conn) {
    const auto exec = [&](const std::string& sql) {
      pqxx::nontransaction tx(conn);
      return tx.exec(sql);
    };
    // Not forever: an administrator's DDL transaction left open holds it.
    exec("SET lock_timeout = '5s'");
    try {
      held_ =
          !exec(fmt::format("SELECT pg_catalog.pg_advisory_lock({}, {}) FROM pg_catalog.pg_class c "
                            "WHERE c.oid OPERATOR(pg_catalog.=) pg_catalog.to_regclass('{}')",
                            kGenerationLockKey1, kGenerationLockKey2, kGenerationSequence))
               .empty();
    } catch (const pqxx::sql_error& e) {
      exec("RESET lock_timeout");
      if (e.sqlstate() != "55P03") throw;
      // Which transactions: DDL that moved the generation holds the lock
      // shared until it ends (catalog_watch.h).
      std::string who;
      {
        pqxx::nontransaction tx(conn);
        who = lock_holders(
            tx,
            fmt::format("l.locktype = 'advisory' AND l.classid = {} AND l.objid = {} AND "
                        "l.objsubid = 2 AND l.database = (SELECT d.oid FROM "
                        "pg_catalog.pg_database d WHERE d.datname = "
                        "pg_catalog.current_database())",
                        kGenerationLockKey1, kGenerationLockKey2),
            false);  // the text reaches restricted sessions' errors
      }
      throw std::runtime_error(fmt::format(
          "kanon waited 5 s to read the catalog for DDL transactions still open ({}): until "
          "they commit or roll back, restricted statements decided before their DDL fail "
          "their catalog check",
          who.empty() ? "they have ended since" : who));
    }
    exec("RESET lock_timeout");
  }
  ~GenerationLock() {
    if (!held_) return;
    try {
      pqxx::nontransaction tx(conn_);
      tx.exec(fmt::format("SELECT pg_catalog.pg_advisory_unlock({}, {})", kGenerationLockKey1,
                          kGenerationLockKey2));
    } catch (const std::exception&) {
      // A broken connection released it.
    }
  }
  GenerationLock(const GenerationLock&) = delete;
  GenerationLock& operator=(const GenerationLock&) = delete;
  bool held() const { return held_; }

 private:
  pqxx::connection_base& conn_;
  bool held_ = false;
};

}  // namespace

const RelationFacts* CatalogFacts::relation(uint32_t oid) const {
  const auto it = relation_by_oid_.find(oid);
  return it == relation_by_oid_.end() ? nullptr : &relations[it->second];
}

const FunctionFacts* CatalogFacts::function(uint32_t oid) const {
  const auto it = function_by_oid_.find(oid);
  return it == function_by_oid_.end() ? nullptr : &functions[it->second];
}

std::vector<const RelationFacts*> CatalogFacts::relations_named(std::string_view name) const {
  std::vector<const RelationFacts*> out;
  const auto [lo, hi] = relation_by_name_.equal_range(name);
  for (auto it = lo; it != hi; ++it) out.push_back(&relations[it->second]);
  return out;
}

std::vector<const FunctionFacts*> CatalogFacts::functions_named(std::string_view name) const {
  std::vector<const FunctionFacts*> out;
  const auto [lo, hi] = function_by_name_.equal_range(name);
  for (auto it = lo; it != hi; ++it) out.push_back(&functions[it->second]);
  return out;
}

void CatalogFacts::index() {
  relation_by_oid_.clear();
  function_by_oid_.clear();
  relation_by_name_.clear();
  function_by_name_.clear();
  for (size_t i = 0; i < relations.size(); ++i) {
    relation_by_oid_.emplace(relations[i].oid, i);
    relation_by_name_.emplace(relations[i].name, i);
  }
  for (size_t i = 0; i < functions.size(); ++i) {
    function_by_oid_.emplace(functions[i].oid, i);
    function_by_name_.emplace(functions[i].name, i);
  }
}

bool c_guards_installed(pqxx::transaction_base& tx) {
  return bool_of(tx.exec(kCGuardSql)[0][0]);
}

CatalogFacts read_catalog_facts(pqxx::connection_base& conn, const CatalogFacts* previous) {
  const auto t0 = std::chrono::steady_clock::now();
  const bool atomic_bodies = conn.server_version() >= 140000;
  prepare(conn, atomic_bodies);
  CatalogFacts facts;
  const GenerationLock lock(conn);
  // One snapshot for every query, so the facts agree with each other; taken
  // by the first one, which reads the generation when the lock is held.
  pqxx::transaction<pqxx::repeatable_read, pqxx::read_only> tx(conn);
  if (lock.held()) {
    const auto g = tx.exec(fmt::format("SELECT s.last_value FROM {} s", kGenerationSequence));
    facts.generation = g[0][0].as<int64_t>();
  }
  // pg_get_viewdef and format_type qualify every name that is not visible:
  // with an empty search_path, everything outside pg_catalog (which is always
  // searched, so the queries need not qualify operators either).
  tx.exec("SET LOCAL search_path = ''");
  const auto header = tx.exec_prepared("kanon_catalog_header");
  facts.database = text_of(header[0][0]);
  facts.builtin_fingerprint = text_of(header[0][1]);
  const bool reuse = previous && previous->database == facts.database &&
                     previous->builtin_fingerprint == facts.builtin_fingerprint &&
                     !previous->builtin_fingerprint.empty();

  for (const auto& r : tx.exec_prepared("kanon_catalog_system_names"))
    facts.system_relation_names.insert(text_of(r[0]));
  const auto rels = tx.exec_prepared("kanon_catalog_relations");
  facts.relations.reserve(rels.size());
  for (const auto& r : rels) {
    RelationFacts f;
    f.oid = oid_of(r[0]);
    f.schema = text_of(r[1]);
    f.name = text_of(r[2]);
    f.kind = r[3].c_str()[0];
    f.definition = text_of(r[4]);
    while (!f.definition.empty() && (f.definition.back() == ';' || f.definition.back() == '\n' ||
                                     f.definition.back() == ' '))
      f.definition.pop_back();
    f.security_barrier = bool_of(r[5]);
    f.security_invoker = bool_of(r[6]);
    f.check_option = text_of(r[7]);
    f.foreign_server = oid_of(r[8]);
    facts.relations.push_back(std::move(f));
  }
  facts.functions.reserve(reuse ? previous->functions.size() + 16 : 4096);
  if (reuse) {
    for (const auto& f : previous->functions) {
      if (!f.builtin) break;  // oid order: the built-in ones come first
      facts.functions.push_back(f);
    }
  }
  for (const auto& r :
       tx.exec_prepared(reuse ? "kanon_catalog_user_functions" : "kanon_catalog_functions")) {
    FunctionFacts f;
    f.oid = oid_of(r[0]);
    f.schema = text_of(r[1]);
    f.name = text_of(r[2]);
    f.language = text_of(r[3]);
    f.kind = r[4].c_str()[0];
    f.security_definer = bool_of(r[5]);
    f.extension = text_of(r[6]);
    f.volatility = r[7].c_str()[0];
    f.body = text_of(r[8]);
    f.atomic = bool_of(r[9]);
    f.support_functions = oid_array(r[10]);
    f.kanon_guard = bool_of(r[11]);
    f.trigger = bool_of(r[12]);
    f.type_constructor = bool_of(r[13]);
    f.builtin = f.oid < kFirstNormalObjectId;
    facts.functions.push_back(std::move(f));
  }
  facts.index();
  facts.c_guard = bool_of(tx.exec_prepared("kanon_catalog_c_guard")[0][0]);
  for (const auto& r : tx.exec_prepared("kanon_catalog_event_triggers"))
    facts.event_triggers.push_back({text_of(r[0]), oid_of(r[1]), bool_of(r[2])});

  // Columns, then indexes: each result is in the order of its relations'
  // oids, as the facts are, so one merge pass each.
  for_each_owned(facts.relations, tx.exec_prepared("kanon_catalog_columns"),
                 [](RelationFacts& f, const pqxx::row& r) {
                   policy::ColumnInfo column{text_of(r[1]), text_of(r[2]), text_of(r[3])};
                   column.sql_type = text_of(r[4]);
                   f.columns.push_back(std::move(column));
                 });
  for_each_owned(facts.relations, tx.exec_prepared("kanon_catalog_indexes"),
                 [](RelationFacts& f, const pqxx::row& r) {
                   RelationFacts::Index index{text_of(r[1]), {}, bool_of(r[3])};
                   auto items = r[2].as_array();
                   for (auto item = items.get_next();
                        item.first != pqxx::array_parser::juncture::done; item = items.get_next())
                     if (item.first == pqxx::array_parser::juncture::string_value)
                       index.columns.push_back(item.second);
                   f.indexes.push_back(std::move(index));
                 });

  // Edges. The facts' vectors are in oid order: look owners up by index.
  std::unordered_map<uint32_t, RelationFacts*> rel_by_oid;
  rel_by_oid.reserve(facts.relations.size());
  for (auto& f : facts.relations) rel_by_oid.emplace(f.oid, &f);
  std::unordered_map<uint32_t, FunctionFacts*> fn_by_oid;
  fn_by_oid.reserve(facts.functions.size());
  for (auto& f : facts.functions) fn_by_oid.emplace(f.oid, &f);
  for (const auto& r : tx.exec_prepared("kanon_catalog_edges")) {
    const char what = r[0].c_str()[0];
    const uint32_t owner = oid_of(r[1]);
    const bool is_relation = bool_of(r[2]);
    const uint32_t ref = oid_of(r[3]);
    if (ref == 0) continue;
    if (what != 'o' && is_relation && !r[4].is_null())
      facts.system_relations.emplace(ref, text_of(r[4]));
    if (what == 'o') {
      // "oprleft oprright schema.name" (no operator's name holds a dot)
      const std::string label = text_of(r[4]);
      const size_t space = label.find(' '), second = label.find(' ', space + 1);
      const size_t dot = label.rfind('.');
      if (space == std::string::npos || second == std::string::npos || dot == std::string::npos ||
          dot < second)
        throw std::runtime_error("unreadable operator in the catalog: " + label);
      facts.operators.push_back({owner, label.substr(second + 1, dot - second - 1),
                                 label.substr(dot + 1), ref,
                                 static_cast<uint32_t>(std::stoul(label.substr(0, space))),
                                 static_cast<uint32_t>(std::stoul(label.substr(space + 1)))});
      continue;
    }
    if (what == 'c') {
      add_unique(facts.cast_functions, ref);
      continue;
    }
    if (what == 'd') {
      if (!is_relation) add_unique(facts.type_functions, ref);
      continue;
    }
    if (what == 'f') {
      const auto it = fn_by_oid.find(owner);
      if (it == fn_by_oid.end()) continue;
      add_unique(is_relation ? it->second->reads_relations : it->second->reads_functions, ref);
      continue;
    }
    const auto it = rel_by_oid.find(owner);
    if (it == rel_by_oid.end()) continue;
    RelationFacts& f = *it->second;
    switch (what) {
      case 'i':
        if (is_relation) add_unique(f.parents, ref);
        break;
      case 'v':
        add_unique(is_relation ? f.reads_relations : f.reads_functions, ref);
        break;
      case 's':
        add_unique(is_relation ? f.policy_relations : f.policy_functions, ref);
        break;
      case 'w':
        add_unique(is_relation ? f.write_relations : f.write_functions, ref);
        break;
      default:
        break;
    }
  }
  tx.commit();
  facts.read_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return facts;
}

namespace {

// A text[] literal: every element double-quoted, " and \ escaped.
std::string text_array(const std::vector<std::string>& names) {
  std::string array = "{";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) array += ',';
    array += '"';
    for (char c : names[i]) {
      if (c == '"' || c == '\\') array += '\\';
      array += c;
    }
    array += '"';
  }
  array += '}';
  return array;
}

constexpr const char* kRelationNamedSql =
    "SELECT 1 FROM pg_catalog.pg_class c "
    "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
    "WHERE c.relname OPERATOR(pg_catalog.=) ANY ($1::pg_catalog.name[]) "
    "AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S', 'c') AND ";

}  // namespace

bool any_persistent_relation_named(pqxx::connection_base& conn,
                                   const std::vector<std::string>& names) {
  if (names.empty()) return false;
  pqxx::nontransaction tx(conn);
  const auto r =
      tx.exec_params(std::string("SELECT EXISTS (") + kRelationNamedSql + kPersistentSchema + ")",
                     text_array(names));
  return bool_of(r[0][0]);
}

bool any_persistent_object_named(pqxx::connection_base& conn,
                                 const std::vector<std::string>& names) {
  if (names.empty()) return false;
  pqxx::nontransaction tx(conn);
  const auto r =
      tx.exec_params(std::string("SELECT EXISTS (") + kRelationNamedSql + kPersistentSchema +
                         ") OR EXISTS (SELECT 1 FROM pg_catalog.pg_proc p "
                         "JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace "
                         "WHERE p.proname OPERATOR(pg_catalog.=) ANY ($1::pg_catalog.name[]) "
                         "AND n.nspname !~ '^pg_(toast_)?temp_')",
                     text_array(names));
  return bool_of(r[0][0]);
}

// Whether dependency `d` refers to an object of another schema than
// pg_catalog (a function, operator, type, collation, operator class, ...):
// code PostgreSQL runs that is not the server's own. Relations, schemas,
// constraints and defaults are left out (a table's own columns, a sequence
// a default calls nextval on, the schema it is in, the constraint a primary
// key's index belongs to: their own dependencies are looked at).
constexpr const char* kDependsOnUserCode = R"(
  d.refclassid OPERATOR(pg_catalog.<>) 'pg_catalog.pg_class'::pg_catalog.regclass
  AND d.refclassid OPERATOR(pg_catalog.<>) 'pg_catalog.pg_namespace'::pg_catalog.regclass
  AND d.refclassid OPERATOR(pg_catalog.<>) 'pg_catalog.pg_constraint'::pg_catalog.regclass
  AND d.refclassid OPERATOR(pg_catalog.<>) 'pg_catalog.pg_attrdef'::pg_catalog.regclass
  AND NOT COALESCE((pg_catalog.pg_identify_object(d.refclassid, d.refobjid, 0)).schema
                       OPERATOR(pg_catalog.=) 'pg_catalog', false))";

// Every temporary relation of every session, and whether it is a plain
// table (or sequence) that runs nothing but pg_catalog's code when read or
// written: no trigger, rule or row security, every column of a pg_catalog
// type, and nothing of it — the table itself (partition keys), its
// defaults, constraints, indexes (expressions and predicates) and extended
// statistics (expressions ANALYZE evaluates) — depends on a function,
// operator or type outside pg_catalog (an adversarial probe hid a
// temporary function reading a view in an index expression). Not
// materialized: PostgreSQL then computes `plain` only for the relations the
// statement names and those a view of such a name reads, not for every
// temporary relation of every session (with 2,000 temporary tables, each
// with a key and a default: 3-5 ms instead of 90-110 ms; before the
// dependencies were read through indexes, 11 s).
const std::string kTemporaryRelationsSql = std::string(R"(
WITH temp_rel AS NOT MATERIALIZED (
  SELECT c.oid, c.relname, c.relkind, c.relnamespace, n.nspname,
    c.relkind IN ('r', 'S') AND NOT c.relhastriggers AND NOT c.relhasrules
    AND NOT c.relrowsecurity
    AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a
      JOIN pg_catalog.pg_type t ON t.oid OPERATOR(pg_catalog.=) a.atttypid
      WHERE a.attrelid OPERATOR(pg_catalog.=) c.oid AND a.attnum OPERATOR(pg_catalog.>) 0
        AND NOT a.attisdropped
        AND t.typnamespace OPERATOR(pg_catalog.<>) 'pg_catalog'::pg_catalog.regnamespace)
    AND NOT EXISTS (SELECT 1 FROM (
        SELECT 'pg_catalog.pg_class'::pg_catalog.regclass::pg_catalog.oid AS classid, c.oid AS objid
        UNION ALL SELECT 'pg_catalog.pg_class'::pg_catalog.regclass::pg_catalog.oid, i.indexrelid
          FROM pg_catalog.pg_index i WHERE i.indrelid OPERATOR(pg_catalog.=) c.oid
        UNION ALL SELECT 'pg_catalog.pg_attrdef'::pg_catalog.regclass::pg_catalog.oid, ad.oid
          FROM pg_catalog.pg_attrdef ad WHERE ad.adrelid OPERATOR(pg_catalog.=) c.oid
        UNION ALL SELECT 'pg_catalog.pg_constraint'::pg_catalog.regclass::pg_catalog.oid, co.oid
          FROM pg_catalog.pg_constraint co WHERE co.conrelid OPERATOR(pg_catalog.=) c.oid
        UNION ALL SELECT 'pg_catalog.pg_statistic_ext'::pg_catalog.regclass::pg_catalog.oid, st.oid
          FROM pg_catalog.pg_statistic_ext st WHERE st.stxrelid OPERATOR(pg_catalog.=) c.oid) o
      JOIN pg_catalog.pg_depend d ON d.classid OPERATOR(pg_catalog.=) o.classid
        AND d.objid OPERATOR(pg_catalog.=) o.objid
      WHERE )") + kDependsOnUserCode + R"() AS plain
  FROM pg_catalog.pg_class c
  JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
  WHERE n.nspname ~ '^pg_temp_')
)";

// A temporary view passes when its query reads only plain temporary tables
// of its own schema and pg_catalog's functions, operators, types and
// collations (pg_depend of its _RETURN rule), and it has no other rule.
const std::string kTemporaryObjectSql = std::string(R"(
SELECT v.nspname || '.' || v.relname || ' (' || CASE v.relkind WHEN 'v' THEN 'a view'
  WHEN 'm' THEN 'a materialized view' WHEN 'r' THEN 'a table that runs code'
  ELSE 'a relation of kind ' || v.relkind::pg_catalog.text END || ')'
FROM temp_rel v
WHERE v.relname OPERATOR(pg_catalog.=) ANY ($1::pg_catalog.name[])
  AND NOT v.plain
  AND NOT (v.relkind OPERATOR(pg_catalog.=) 'v'
    AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_rewrite rw
      WHERE rw.ev_class OPERATOR(pg_catalog.=) v.oid
        AND rw.rulename OPERATOR(pg_catalog.<>) '_RETURN')
    AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend d
      JOIN pg_catalog.pg_rewrite rw ON rw.oid OPERATOR(pg_catalog.=) d.objid
      WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_rewrite'::pg_catalog.regclass
        AND rw.ev_class OPERATOR(pg_catalog.=) v.oid
        AND d.refobjid OPERATOR(pg_catalog.<>) v.oid
        AND ((d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
              AND NOT EXISTS (SELECT 1 FROM temp_rel t
                WHERE t.oid OPERATOR(pg_catalog.=) d.refobjid
                  AND t.relnamespace OPERATOR(pg_catalog.=) v.relnamespace AND t.plain))
          OR ()") + kDependsOnUserCode + R"())))
UNION ALL
SELECT n.nspname || '.' || p.proname || ' (a function)' FROM pg_catalog.pg_proc p
JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) p.pronamespace
WHERE n.nspname ~ '^pg_temp_' AND p.proname OPERATOR(pg_catalog.=) ANY ($1::pg_catalog.name[])
LIMIT 1
)";

std::optional<std::string> unsafe_temporary_object(pqxx::connection_base& conn,
                                                   const std::vector<std::string>& names) {
  if (names.empty()) return std::nullopt;
  // Any session's temporary objects of these names (kanon cannot tell the
  // session's own schema from here: one of another session's denies too).
  pqxx::nontransaction tx(conn);
  const auto r = tx.exec_params(kTemporaryRelationsSql + kTemporaryObjectSql, text_array(names));
  if (r.empty()) return std::nullopt;
  return text_of(r[0][0]);
}

std::vector<EventTriggerFacts> read_event_triggers(pqxx::connection_base& conn) {
  pqxx::nontransaction tx(conn);
  std::vector<EventTriggerFacts> out;
  for (const auto& r : tx.exec(event_triggers_sql()))
    out.push_back({text_of(r[0]), oid_of(r[1]), bool_of(r[2])});
  return out;
}

}  // namespace kanon::catalog
