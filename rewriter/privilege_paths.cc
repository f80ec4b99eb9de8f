#include "rewriter/privilege_paths.h"

#include <algorithm>
#include <set>

#include "store/materializer.h"

namespace kanon::rewriter {

std::vector<std::string> tables_reached(const Reach& reach,
                                        const std::vector<policy::TablePolicy>& policies,
                                        const std::vector<std::string>& within,
                                        std::string_view function) {
  std::vector<std::string> out;
  for (const auto& table : within) {
    if (!reach.opaque && !std::binary_search(reach.tables.begin(), reach.tables.end(), table))
      continue;
    if (std::find(out.begin(), out.end(), table) != out.end()) continue;
    const auto p = std::find_if(policies.begin(), policies.end(),
                                [&](const policy::TablePolicy& x) { return x.name() == table; });
    if (!function.empty() && p != policies.end() &&
        std::find(p->allowed_functions.begin(), p->allowed_functions.end(), function) !=
            p->allowed_functions.end())
      continue;
    out.push_back(table);
  }
  return out;
}

const access::DirectAccess* server_file_function(const catalog::FunctionFacts& f) {
  return access::path_function(f.name, f.builtin, f.language, f.extension);
}

PrivilegePaths privilege_paths(const ObjectCatalog& catalog,
                               const std::vector<policy::TablePolicy>& policies) {
  std::vector<std::string> all;
  std::set<std::string> released;  // "kanon_masked.<name>", unquoted
  for (const auto& p : policies) {
    all.push_back(p.name());
    if (p.mode != policy::EnforcementMode::kInline)
      released.insert(std::string(store::kMaterializedSchema) + "." + store::materialized_table(p));
  }
  PrivilegePaths out;
  for (const auto& r : catalog.facts().relations) {
    const CatalogRelation* c = catalog.relation(r.oid);
    if (!c || released.count(r.schema + "." + r.name)) continue;
    if (c->read.any()) out.read.push_back(r.oid);
    if (c->write.any()) out.written.push_back(r.oid);
  }
  for (const auto& f : catalog.facts().functions) {
    if (server_file_function(f)) {
      out.server_files.push_back(f.oid);
      continue;
    }
    const CatalogFunction* c = catalog.function(f.oid);
    if (!c || !f.security_definer || f.trigger || !c->reach.any()) continue;
    // The catalog may know protected tables these policies do not list
    // (other databases' tables, old names): they allow nothing.
    std::vector<std::string> within = all;
    within.insert(within.end(), c->reach.tables.begin(), c->reach.tables.end());
    if (!tables_reached(c->reach, policies, within, f.schema + "." + f.name).empty())
      out.definer.push_back(f.oid);
  }
  return out;
}

namespace {

// What privilege_paths reads of the policies, as one string.
std::string policies_key(const std::vector<policy::TablePolicy>& policies) {
  std::string key;
  for (const auto& p : policies) {
    key += p.name();
    key += '\x1f';
    key += std::to_string(static_cast<int>(p.mode));
    key += '\x1f';
    key += store::materialized_table(p);
    for (const auto& f : p.allowed_functions) {
      key += '\x1f';
      key += f;
    }
    key += '\x1e';
  }
  return key;
}

}  // namespace

std::shared_ptr<const PrivilegePaths> PrivilegePathsCache::paths(
    const std::shared_ptr<const ObjectCatalog>& catalog,
    const std::vector<policy::TablePolicy>& policies) {
  std::string key = policies_key(policies);
  {
    const std::lock_guard lock(mu_);
    if (catalog_ == catalog && policies_key_ == key) return paths_;
  }
  auto fresh = std::make_shared<const PrivilegePaths>(privilege_paths(*catalog, policies));
  const std::lock_guard lock(mu_);
  catalog_ = catalog;
  policies_key_ = std::move(key);
  paths_ = fresh;
  return fresh;
}

}  // namespace kanon::rewriter
