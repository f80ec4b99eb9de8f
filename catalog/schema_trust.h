// Whether kanon may trust a schema it keeps its own objects in: `kanon`
// (release histories, shared snapshots, the catalog guard) and
// `kanon_masked` (mode: materialized copies, mode: view views).
//
// PostgreSQL lets a schema's owner drop any object in it, whoever owns the
// object, and a role that may create in a schema may put objects there
// under names kanon would look for. So a role that created `kanon` before
// kanon did (any role with CREATE on the database may) could drop kanon's
// tables and put its own in their place: forge the snapshots replicas adopt
// as their masks, read the release history, drop the catalog guard's event
// triggers; owning `kanon_masked`, it could replace the masked copy
// restricted sessions are pointed at. kanon trusts a schema only when the
// schema, and every relation, function and type in it, belongs to the
// service account (the current user) or a superuser, and no other role
// (PUBLIC included) may create in it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace pqxx {
class transaction_base;
}

namespace kanon::catalog {

// What makes `schema` untrustworthy, one phrase per finding ("schema kanon
// belongs to analyst", "PUBLIC may create in schema kanon", "kanon.snapshots
// belongs to analyst"), in a stable order; empty when it is trusted or does
// not exist. Reads pg_catalog only.
std::vector<std::string> schema_distrust(pqxx::transaction_base& tx, std::string_view schema);

// The error kanon gives for such a schema: the findings and the fix.
std::string schema_distrust_error(std::string_view schema,
                                  const std::vector<std::string>& findings);

}  // namespace kanon::catalog
