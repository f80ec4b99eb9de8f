// Who holds a lock kanon waited for, in words for an error message.
#pragma once

#include <string>

namespace pqxx {
class transaction_base;
}

namespace kanon::catalog {

// "pid 9030 (analyst, idle in transaction, transaction open 42 s); pid ..."
// for every other session holding a granted lock that `lock_condition` (SQL
// over pg_locks, aliased l) selects, in pid order; "" when none does.
std::string lock_holders(pqxx::transaction_base& tx, const std::string& lock_condition);

}  // namespace kanon::catalog
