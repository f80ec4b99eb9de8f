// A refresh replaces what restricted sessions read (the masked copy of mode:
// materialized, the masked view of mode: view) with DDL that needs an ACCESS
// EXCLUSIVE lock on the old object. A session that read it keeps its lock
// until its transaction ends, and PostgreSQL queues every later reader behind
// the waiting DDL: one analyst idle in a transaction would stop the refresh
// and, behind it, every other session reading the table.
//
// exec_locking_briefly runs such a statement in a savepoint with a short
// lock_timeout, so readers wait at most `attempt` behind it, and tries again
// after `pause` until `deadline`; then it fails naming the sessions that hold
// the object (the refresh fails, the previous release stays served).
#pragma once

#include <chrono>
#include <string>
#include <string_view>

namespace pqxx {
class dbtransaction;
}

namespace kanon::store {

struct BriefLockWait {
  std::chrono::milliseconds attempt{100};     // lock_timeout of one try
  std::chrono::milliseconds pause{400};       // between tries
  std::chrono::milliseconds deadline{30000};  // since the first try; then fail
};

// Runs `sql` (whose first lock is the one on `relation`, a qualified name)
// as above. Errors other than a lock timeout (SQLSTATE 55P03) are rethrown as
// they came, with the savepoint rolled back; after `deadline` a
// std::runtime_error says what `purpose` waited for and which sessions hold
// `relation` (pid, user, state, how long their transaction has run). The
// transaction's lock_timeout is what it was before, either way.
void exec_locking_briefly(pqxx::dbtransaction& tx, const std::string& sql,
                          const std::string& relation, std::string_view purpose,
                          const BriefLockWait& wait = {});

}  // namespace kanon::store
