// Materialized enforcement (policy key `mode: materialized`): kanon keeps a
// masked copy of the table in its own schema, kanon_masked, built with the
// same masks as the inline form.
//
// Each refresh builds a new table (with the policy's `indexes:`, one
// single-column index each) in one transaction and swaps it in within a
// second, which first waits for the old copy's readers briefly
// (brief_lock.h): readers see the old copy until the commit. The new copy's SELECT rights mirror
// the base table's: every role holding SELECT on the base table (an explicit grant, PUBLIC, or the
// owner's default rights) gets SELECT on the copy, every column-level SELECT grant becomes the same
// column-level grant, and those roles get USAGE on kanon_masked. Members of those roles read the
// copy through their membership, as they read the base table. Rows changed after the refresh are
// not visible until the next one. Keys the release history holds (kanon.held_keys,
// history_refresh.h) have every quasi-identifier masked in the copy. The service user must be able
// to create the schema (or own it).
//
// Names in kanon_masked (at most 63 bytes, PostgreSQL's limit):
//   public.t            -> t          when t has no "__" and is short enough
//   s.t                 -> s__t       when s and t have no "__", s does not end
//                                     and t does not start with "_", and it fits
//   anything else       -> <readable prefix>___<16 hex digits of a hash of s, t>
// Plain names never contain "___", so the three shapes cannot collide; each
// copy carries a COMMENT naming its base table, and a refresh refuses to
// replace a copy that belongs to another table (a hash collision), so a
// collision is an error, never a leak.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "catalog/table_catalog.h"
#include "policy/table_policy.h"
#include "policy/table_snapshot.h"
#include "store/brief_lock.h"

namespace pqxx {
class connection_base;
}

namespace kanon::store {

using base::ConfigError;

inline constexpr const char* kMaterializedSchema = "kanon_masked";

// The copy's table name inside kanon_masked (see above).
std::string materialized_table(const policy::TablePolicy& policy);
// "kanon_masked"."<materialized_table>"
std::string materialized_name(const policy::TablePolicy& policy);
// The name of the copy's index on `column`.
std::string materialized_index(const policy::TablePolicy& policy, std::string_view column);

// The condition, over the base table's row, that the last release holds its
// key (kanon.held_keys): the copy masks every quasi-identifier of such a row.
// Empty when nothing can be held (no release yet, or a table without keys).
std::string held_condition(const policy::TableSnapshot& snapshot);

// Every `indexes:` column must exist in the table; throws ConfigError
// "file:line: key: column 'x' does not exist in schema.table".
void check_indexes(const policy::TablePolicy& policy, const policy::TableInfo& info);

struct MaskedView {
  std::string name;                   // "kanon_masked"."<materialized_table>"
  std::vector<std::string> warnings;  // grants: manage roles left unprotected
};

// mode: view. In one transaction: CREATE OR REPLACE VIEW <name> AS SELECT
// <masks> FROM schema.table WHERE <snapshot guard> (dropped and made again
// when its columns changed type or name; a copy left by mode: materialized
// is dropped), its COMMENT,
// the base table's SELECT rights mirrored as for the copy, and for
// grants: manage, SELECT on the view and USAGE on kanon_masked granted to
// every grant_to role and SELECT on the base table revoked from it. Roles that
// still read the base table directly (superuser, pg_read_all_data, owner,
// PUBLIC or another role's grant) come back as warnings. The view is owned by
// the service user and is not security_invoker: granted roles read it with
// the owner's rights. The snapshot guard raises for a reader whose snapshot
// is older than this transaction (a repeatable-read transaction begun before
// it, an imported snapshot): PostgreSQL gives every reader the newest view,
// whose masks were built for the rows as they are now, not as that snapshot
// shows them. Replacing the view waits for its readers as materialize() does.
// Throws like materialize().
MaskedView build_masked_view(pqxx::connection_base& conn, const policy::TableSnapshot& snapshot,
                             const BriefLockWait& wait = {});

// Builds and swaps in the copy; returns its qualified name. Dropping the old
// copy waits for the sessions that read it only as brief_lock.h says (`wait`),
// so a session idle in a transaction over the copy fails the refresh instead
// of stalling every other reader. Throws pqxx errors or std::runtime_error
// (the transaction rolls back and the previous copy stays).
std::string materialize(pqxx::connection_base& conn, const policy::TableSnapshot& snapshot,
                        const BriefLockWait& wait = {});

}  // namespace kanon::store
