// A protected table's columns as the catalog describes them
// (catalog/table_catalog.h reads them), and the check of a policy against
// them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/config_error.h"
#include "policy/table_policy.h"

namespace kanon::policy {

using base::ConfigError;

struct ColumnInfo {
  std::string name;
  std::string type;       // format_type(atttypid, NULL), e.g. "character varying"
  std::string full_type;  // with modifiers, e.g. "character varying(20)"
  // The same types as kanon writes them into SQL a restricted session runs:
  // schema-qualified, so no search_path can make them mean another type
  // (pg_catalog."varchar", pg_catalog."varchar"(20), public.mood[]).
  // Empty when unknown (hand-made infos): then type / full_type are written.
  std::string sql_type;
  std::string sql_full_type;
  // The equality operator the masks compare this column with, qualified:
  // OPERATOR(pg_catalog.=), or the type's own schema's `=` for a type
  // whose owner defines one there (citext, ...). Empty: pg_catalog's.
  std::string equality;
  // The first type inside the column's type (itself, a domain's base, an
  // array's element, a range's subtype, a composite's fields) whose text
  // form depends on a session's settings, qualified (pg_catalog.money:
  // lc_monetary; pg_catalog.regclass and the other reg* types:
  // search_path); empty when there is none. kanon cannot write a literal
  // of such a type that means the same value in every restricted session.
  std::string setting_dependent;
  // Rows equal under the column's `=` may hold different values (1.0 and
  // 1.00 for an unconstrained numeric, 0 and -0 for floats, '1 day' and
  // '24:00:00' for interval, 'Hamlet' and 'HAMLET' for citext or text under
  // a nondeterministic collation): a mask that released the raw value would
  // show each row's own spelling, and a spelling few rows share singles them
  // out. `released_form` writes one value for all of them, over "{}" (the
  // quoted column), cast back to the column's type by the mask
  // ("pg_catalog.trim_scale({})"); empty when `=` implies identical values,
  // or when `not_canonical` says why kanon has no such form (a
  // nondeterministic collation, jsonb, an array or range of such values):
  // check_against_catalog refuses that column as a quasi-identifier.
  std::string released_form;
  std::string not_canonical;

  // `released_form` over `expression` (every "{}" replaced), or `expression`
  // itself when the column has none. The masks release this form, and the
  // builds load it (store::loaded_expression): the tree counts values as
  // the masks' `=` tells them apart.
  std::string released(const std::string& expression) const;

  const std::string& written_type() const { return sql_type.empty() ? type : sql_type; }
  const std::string& written_full_type() const {
    return sql_full_type.empty() ? full_type : sql_full_type;
  }
};

struct TableInfo {
  std::string schema;
  std::string table;
  std::vector<ColumnInfo> columns;  // in attnum order, dropped columns left out
  // Every inheritance child and partition, recursively, as "schema.table"
  // (unquoted, like policy names). The rewriter masks references to them too.
  std::vector<std::string> children;
  // pg_class.oid when read from the catalog (0 for hand-made infos): the
  // rewriter follows the table by it when it is renamed or moved.
  uint32_t oid = 0;
  // Generated columns and the columns their expressions read.
  struct Generated {
    std::string column;
    std::vector<std::string> from;
  };
  std::vector<Generated> generated;
  // The partition keys of the table and of its partitioned descendants:
  // which partition holds a row follows from the raw key (EXPLAIN ANALYZE's
  // rows per partition, the order Append reads them in).
  struct PartitionKey {
    std::string relation;              // "schema.table"
    std::vector<std::string> columns;  // the plain columns of the key
    bool expression = false;           // the key has an expression
  };
  std::vector<PartitionKey> partition_keys;

  const ColumnInfo* find(const std::string& name) const;
};

// Every column the policy names must exist in the table; throws ConfigError
// "file:line: key: column 'x' does not exist in schema.table". A
// quasi-identifier must not be of a type whose text form depends on the
// session's settings (ColumnInfo::setting_dependent): its masks compare
// with literals, which a restricted session could make mean another value;
// nor one whose equal values kanon cannot write alike
// (ColumnInfo::not_canonical). A generated column computed from a
// quasi-identifier or a direct identifier must be one itself (else
// restricted sessions read it raw), and no partition key may hold one or an
// expression (the partition a row is in shows its raw value).
void check_against_catalog(const TablePolicy& policy, const TableInfo& info);

}  // namespace kanon::policy
