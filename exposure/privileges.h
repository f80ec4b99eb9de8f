// Reading what exposure/exposure.h judges from PostgreSQL, over kanon's service
// connection: roles and their memberships, who holds SELECT or EXECUTE on
// the objects that reach protected tables (has_*_privilege, so inheritance,
// pg_read_all_data and PUBLIC are PostgreSQL's own answer) with their ACLs,
// and pg_hba.conf when the connection may read pg_hba_file_rules
// (superusers).
//
// Blocking; pqxx errors pass through.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "exposure/exposure.h"

namespace pqxx {
class connection_base;
}

namespace kanon::exposure {

// Three statements in one read-only transaction (header and roles; the
// privileges and ACLs of the objects of `paths`; pg_hba_file_rules when
// readable).
PrivilegeFacts read_privilege_facts(pqxx::connection_base& conn,
                                    const rewriter::PrivilegePaths& paths);

struct CheckOptions {
  ExposureOptions exposure;
  // Where kanon connects from, when not from where `conn` does (kanon check
  // run on another host than the proxy). Empty: the connection's own address.
  std::string kanon_address;
  // "schema.table" of tables kanon writes for itself outside schema kanon
  // (the audit trail's, server config audit.table): reported like kanon's
  // own (rewriter::Rewriter::set_internal_tables).
  std::vector<std::string> internal_tables;
};

// The whole check: reads the catalog facts (catalog/catalog_facts.h), builds
// the ObjectCatalog for the policies' tables, reads the privileges and
// judges them.
ExposureReport check_exposure(pqxx::connection_base& conn,
                              const std::vector<policy::TablePolicy>& policies,
                              const CheckOptions& options = {});

// check_exposure for each database: `default_database` and every one the
// policies name, each on a connection of its own (`conninfo_of(database)`)
// with that database's policies, merged into one report whose rows carry
// their database; with several databases, `database` lists them and the
// history's tables are named database.schema.table.
ExposureReport check_every_database(
    const std::vector<policy::TablePolicy>& policies, const std::string& default_database,
    const std::function<std::string(const std::string& database)>& conninfo_of,
    const CheckOptions& options = {});

}  // namespace kanon::exposure
