// WatchersPaused: stops the backends of kanon's catalog watchers (SIGSTOP;
// a watcher's connection runs nothing but its LISTENs) until it ends
// (SIGCONT, also when a check failed): no DDL notification reaches kanon
// meanwhile, so its catalog stays behind the database's as long as the test
// needs, however fast or slow the machine.
#pragma once

#include <signal.h>

#include <pqxx/pqxx>
#include <vector>

#include "tests/support/pg_sandbox.h"

namespace kanon::testing {

struct WatchersPaused {
  WatchersPaused() {
    pqxx::connection c(PgSandbox::shared().conninfo("postgres"));
    for (const auto& row :
         pqxx::nontransaction(c).exec("SELECT pid FROM pg_catalog.pg_stat_activity "
                                      "WHERE application_name = 'kanon' AND query LIKE 'LISTEN %'"))
      pids.push_back(row[0].as<int>());
    for (const int pid : pids) ::kill(pid, SIGSTOP);
  }
  ~WatchersPaused() {
    for (const int pid : pids) ::kill(pid, SIGCONT);
  }
  WatchersPaused(const WatchersPaused&) = delete;
  WatchersPaused& operator=(const WatchersPaused&) = delete;
  std::vector<int> pids;
};

}  // namespace kanon::testing
