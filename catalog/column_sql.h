// SQL both readers of columns share (table_catalog.cc for one protected
// table, catalog_facts.cc for every relation): pg_attribute with its
// relation, the relation's schema, the column's type and the type's schema,
// and for arrays the element type and its schema (aliases a, c, n, t, tn,
// et, en).
#pragma once

namespace kanon::catalog {

inline constexpr const char* kColumnsFrom =
    "FROM pg_catalog.pg_attribute a "
    "JOIN pg_catalog.pg_class c ON c.oid = a.attrelid "
    "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
    "JOIN pg_catalog.pg_type t ON t.oid = a.atttypid "
    "JOIN pg_catalog.pg_namespace tn ON tn.oid = t.typnamespace "
    "LEFT JOIN pg_catalog.pg_type et ON et.oid = t.typelem "
    "LEFT JOIN pg_catalog.pg_namespace en ON en.oid = et.typnamespace ";

}  // namespace kanon::catalog
