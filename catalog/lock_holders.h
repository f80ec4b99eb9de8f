// Who holds a lock kanon waited for, in words for an error message.
#pragma once

#include <string>

namespace pqxx {
class transaction_base;
}

namespace kanon::catalog {

// "pid 9030 (analyst, idle in transaction, transaction open 42 s); pid ..."
// for every other session holding a granted lock that `lock_condition` (SQL
// over pg_locks, aliased l) selects, in pid order; "" when none does. Without
// `activity` only "pid 9030 (analyst)": what pg_stat_activity shows every
// role, for text that may reach a restricted session (state and transaction
// start are for the session's own role and pg_read_all_stats).
std::string lock_holders(pqxx::transaction_base& tx, const std::string& lock_condition,
                         bool activity = true);

}  // namespace kanon::catalog
