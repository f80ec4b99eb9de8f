#include "exposure/exposure.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>

#include "access/direct_access.h"
#include "base/text.h"
#include "policy/sql_text.h"

namespace kanon::exposure {
namespace {

using rewriter::CatalogFunction;
using rewriter::CatalogRelation;
using rewriter::ObjectCatalog;
using rewriter::RelationClass;

constexpr const char* kReadAllData = "pg_read_all_data";
constexpr const char* kWriteAllData = "pg_write_all_data";

using base::join;

bool contains(const std::vector<std::string>& items, const std::string& item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

ExposurePath attribute_path(access::Attribute a) {
  switch (a) {
    case access::Attribute::kSuperuser:
      return ExposurePath::kSuperuser;
    case access::Attribute::kCreateRole:
      return ExposurePath::kCreateRole;
    case access::Attribute::kBypassRls:
      return ExposurePath::kBypassRls;
    case access::Attribute::kReplication:
      return ExposurePath::kReplication;
    case access::Attribute::kNone:
      break;
  }
  return ExposurePath::kServerFiles;
}

// Every role a login is a member of (itself included) and, for each, the
// role granted to the login directly on the way there.
using Membership = std::map<std::string, std::string>;

class Roles {
 public:
  explicit Roles(const std::vector<RoleFacts>& roles) {
    for (const auto& r : roles) by_name_[r.name] = &r;
  }

  const RoleFacts* find(const std::string& name) const {
    const auto it = by_name_.find(name);
    return it == by_name_.end() ? nullptr : it->second;
  }

  std::string quoted(const std::string& name) const {
    if (name.empty()) return "PUBLIC";
    const RoleFacts* r = find(name);
    return r ? r->quoted : policy::quote_identifier(name);
  }

  // Breadth-first over pg_auth_members, whatever INHERIT says (SET ROLE
  // works without it).
  Membership membership(const std::string& login) const {
    Membership out{{login, login}};
    std::deque<std::string> queue{login};
    while (!queue.empty()) {
      const std::string q = queue.front();
      queue.pop_front();
      const RoleFacts* r = find(q);
      if (!r) continue;
      for (const auto& g : r->member_of) {
        if (out.count(g)) continue;
        out[g] = q == login ? g : out[q];
        queue.push_back(g);
      }
    }
    return out;
  }

  // The SQL that takes `target` away from `login` (a member of it).
  std::string revoke_membership(const std::string& login, const Membership& m,
                                const std::string& target) const {
    const RoleFacts* self = find(login);
    if (self && contains(self->member_of, target))
      return fmt::format("REVOKE {} FROM {}", quoted(target), quoted(login));
    // The member that holds `target` directly, nearest the login first.
    std::string holder;
    for (const auto& [name, hop] : m) {
      const RoleFacts* r = find(name);
      if (r && contains(r->member_of, target) && (holder.empty() || name == hop)) holder = name;
    }
    const auto hop = m.find(holder);
    if (holder.empty() || hop == m.end())
      return fmt::format("REVOKE {} FROM {}", quoted(target), quoted(login));
    return fmt::format("REVOKE {} FROM {} (which {} belongs to), or REVOKE {} FROM {}",
                       quoted(target), quoted(holder), login, quoted(hop->second), quoted(login));
  }

 private:
  std::map<std::string, const RoleFacts*> by_name_;
};

const char* relation_keyword(char kind) {
  switch (kind) {
    case 'v':
      return "VIEW";
    case 'm':
      return "MATERIALIZED VIEW";
    case 'f':
      return "FOREIGN TABLE";
    default:
      return "TABLE";
  }
}

const char* function_keyword(char kind) {
  switch (kind) {
    case 'p':
      return "PROCEDURE";
    case 'a':
      return "AGGREGATE";
    default:
      return "FUNCTION";
  }
}

std::string relation_noun(char kind) {
  switch (kind) {
    case 'v':
      return "view";
    case 'm':
      return "materialized view";
    case 'f':
      return "foreign table";
    case 'p':
      return "partitioned table";
    default:
      return "table";
  }
}

// "<login> can <verb> <relation><why> without kanon: <what it holds>" for a
// relation that is, or reaches through `reach`, one of kanon's own tables or
// the audit trail's (rewriter::CatalogRelation::internal).
std::string internal_detail(const std::string& login, const char* verb,
                            const rewriter::CatalogRelation& r, const rewriter::Reach& reach,
                            const std::string& name, const std::string& why) {
  if (r.internal)
    return fmt::format(
        "{} can {} {}{} without kanon: one of kanon's own tables (what it derived from the "
        "protected rows: trees with their row counts, snapshots, the release history; or the "
        "audit trail's records of every analyst's statements)",
        login, verb, name, why);
  return fmt::format(
      "{} can {} the {} {}{} without kanon: it reaches one of kanon's own tables "
      "(via {})",
      login, verb, relation_noun(r.facts->kind), name, why, reach.via);
}

// Why a login holds a privilege on an object, and what takes it away.
struct Sources {
  std::vector<std::string> why;
  std::vector<std::string> fixes;
};

class Judge {
 public:
  Judge(const ObjectCatalog& catalog, const std::vector<policy::TablePolicy>& policies,
        const PrivilegeFacts& facts)
      : catalog_(catalog),
        facts_(facts),
        roles_(facts.roles),
        policy_list_(policies),
        paths_(rewriter::privilege_paths(catalog, policies)) {
    for (const auto& p : policies) policies_[p.name()] = &p;
  }

  void check(const RoleFacts& login, ExposureReport& report) {
    const Membership m = roles_.membership(login.name);
    std::vector<std::string> restricted;
    std::map<std::string, std::vector<std::string>> through;  // exempt role -> tables
    for (const auto& [name, p] : policies_) {
      if (contains(p->exempt, login.name)) continue;
      const auto e = std::find_if(p->exempt.begin(), p->exempt.end(),
                                  [&](const std::string& r) { return m.count(r) > 0; });
      if (e != p->exempt.end()) {
        through[*e].push_back(name);
        continue;
      }
      restricted.push_back(name);
    }
    for (const auto& [role, tables] : through) {
      Exposure x = row(login, ExposurePath::kExemptThroughRole, role, tables);
      x.detail = fmt::format(
          "{} sees raw data through kanon: it is exempt only as a member of {}, which exempt: "
          "names",
          login.name, role);
      x.fix = fmt::format("nothing if it is meant to; otherwise {}",
                          roles_.revoke_membership(login.name, m, role));
      report.rows.push_back(std::move(x));
    }
    if (restricted.empty()) return;

    // What the login holds whatever its grants say (access/direct_access.h).
    // A superuser's other paths are left out: its row's fix comes first.
    for (const auto& a : access::direct_access()) {
      if (a.kind == access::Kind::kAttribute) {
        if (attribute(login, m, a, restricted, report) &&
            a.attribute == access::Attribute::kSuperuser)
          return;
      } else if (a.kind == access::Kind::kRole && m.count(a.name)) {
        Exposure x = row(login, ExposurePath::kServerFiles, a.name, restricted);
        x.detail = fmt::format("{} is a member of {}: {}", login.name, a.name, a.gives);
        x.fix = roles_.revoke_membership(login.name, m, a.name);
        report.rows.push_back(std::move(x));
      }
    }

    if (!login.connect) return;  // no session at all, with or without kanon
    std::vector<Exposure> grants;
    for (uint32_t oid : paths_.read) relation(login, m, restricted, oid, grants);
    for (uint32_t oid : paths_.written) written(login, m, restricted, oid, grants);
    for (uint32_t oid : paths_.definer) function(login, m, restricted, oid, grants);
    for (uint32_t oid : paths_.server_files) function(login, m, restricted, oid, grants);
    if (grants.empty()) return;
    if (facts_.hba) {
      std::vector<std::string> reached;
      for (const auto& g : grants)
        reached.insert(reached.end(), g.reaches.begin(), g.reaches.end());
      std::sort(reached.begin(), reached.end());
      reached.erase(std::unique(reached.begin(), reached.end()), reached.end());
      const auto connects = connect_rows(login, m, reached);
      if (connects.empty()) return;  // only through kanon: the grants are what kanon uses
      report.rows.insert(report.rows.end(), connects.begin(), connects.end());
    }
    report.rows.insert(report.rows.end(), grants.begin(), grants.end());
  }

 private:
  Exposure row(const RoleFacts& login, ExposurePath path, std::string object,
               std::vector<std::string> reaches) const {
    Exposure x;
    x.database = facts_.database;
    x.role = login.name;
    x.path = path;
    x.object = std::move(object);
    std::sort(reaches.begin(), reaches.end());
    x.reaches = std::move(reaches);
    return x;
  }

  // The rows of attribute `a` (kAttribute) for the login: its own, or every
  // role it belongs to that has it (only the first for SUPERUSER). True
  // when there is one.
  bool attribute(const RoleFacts& login, const Membership& m, const access::DirectAccess& a,
                 const std::vector<std::string>& restricted, ExposureReport& report) const {
    const ExposurePath path = attribute_path(a.attribute);
    const bool superuser = a.attribute == access::Attribute::kSuperuser;
    if (login.has(a.attribute)) {
      Exposure x = row(login, path, login.name, restricted);
      if (superuser) {
        const bool exempt_anyway = std::any_of(restricted.begin(), restricted.end(), [&](auto& t) {
          const auto& ex = policies_.at(t)->exempt;
          return std::any_of(ex.begin(), ex.end(), [&](auto& r) { return roles_.find(r); });
        });
        x.detail = fmt::format("{} is a superuser: {}{}", login.name, a.gives,
                               exempt_anyway ? "; through kanon it is exempt too (PostgreSQL "
                                               "counts a superuser as a member of every role)"
                                             : "");
        x.fix = access::fix(a, login.quoted) +
                ", or list it under exempt: if it is meant to see raw data (its other paths are "
                "listed once it is no superuser)";
      } else {
        x.detail = fmt::format("{} has {}: {}", login.name, a.name, a.gives);
        x.fix = access::fix(a, login.quoted);
      }
      report.rows.push_back(std::move(x));
      return true;
    }
    bool found = false;
    for (const auto& [g, hop] : m) {
      const RoleFacts* r = roles_.find(g);
      if (g == login.name || !r || !r->has(a.attribute)) continue;
      Exposure x = row(login, path, g, restricted);
      if (superuser) {
        x.detail =
            fmt::format("{} is a member of the superuser role {}: {}", login.name, g, a.through);
        x.fix = roles_.revoke_membership(login.name, m, g);
        report.rows.push_back(std::move(x));
        return true;
      }
      x.detail =
          fmt::format("{} is a member of {}, which has {}: {}", login.name, g, a.name, a.through);
      x.fix = fmt::format("{}, or {}", access::fix(a, r->quoted),
                          roles_.revoke_membership(login.name, m, g));
      report.rows.push_back(std::move(x));
      found = true;
    }
    return found;
  }

  // A role that may own an object over `tables`: an exempt role of the first
  // table's policy, or kanon's service account.
  std::string trusted_owner(const std::vector<std::string>& tables) const {
    for (const auto& t : tables)
      if (const auto it = policies_.find(t); it != policies_.end())
        for (const auto& r : it->second->exempt)
          if (roles_.find(r)) return roles_.quoted(r);
    if (!facts_.service_role.empty()) return roles_.quoted(facts_.service_role);
    return "<a trusted role>";
  }

  // `privilege` is "SELECT" or "EXECUTE"; `on` the object as REVOKE names it
  // ("public.t", "FUNCTION public.f(integer)"); `alter` as ALTER names it.
  // " (granted to it; ...)": where the privilege comes from, and whether
  // the login may use the object's schema (USAGE) today.
  std::string because(const Sources& s, const Membership& m, uint32_t oid) const {
    std::vector<std::string> why = s.why;
    if (!holds(m, facts_.usable, oid))
      why.push_back("it has no USAGE on the schema today, which alone keeps it out");
    return why.empty() ? "" : " (" + join(why, "; ") + ")";
  }

  Sources sources(const RoleFacts& login, const Membership& m, const ObjectAcl& acl,
                  const std::string& privilege, const std::string& on, const std::string& alter,
                  const char* all_data, const std::vector<std::string>& tables) const {
    Sources s;
    bool owner_done = false;
    for (const auto& g : acl.grants) {
      const std::string cols = g.columns.empty() ? "" : fmt::format(" ({})", join(g.columns, ", "));
      const std::string what =
          g.columns.empty()
              ? ""
              : fmt::format("column{} {} ", g.columns.size() == 1 ? "" : "s", join(g.columns));
      const std::string revoke =
          fmt::format("REVOKE {}{} ON {} FROM ",
                      g.privileges.empty() ? privilege : join(g.privileges, ", "), cols, on);
      if (g.grantee.empty()) {
        s.why.push_back(what + "granted to PUBLIC");
        s.fixes.push_back(revoke + "PUBLIC");
      } else if (g.grantee == acl.owner && m.count(g.grantee)) {
        if (owner_done) continue;
        owner_done = true;
        owner(login, m, acl, alter, tables, s);
      } else if (g.grantee == login.name) {
        s.why.push_back(what + "granted to it");
        s.fixes.push_back(revoke + login.quoted);
      } else if (m.count(g.grantee)) {
        s.why.push_back(what + fmt::format("granted to {}, which it belongs to", g.grantee));
        s.fixes.push_back(fmt::format("{}{}, or {}", revoke, roles_.quoted(g.grantee),
                                      roles_.revoke_membership(login.name, m, g.grantee)));
      }
    }
    if (!owner_done && m.count(acl.owner)) owner(login, m, acl, alter, tables, s);
    if (all_data && m.count(all_data)) {
      s.why.push_back(fmt::format("through {}", all_data));
      s.fixes.push_back(roles_.revoke_membership(login.name, m, all_data));
    }
    if (s.fixes.empty())
      s.fixes.push_back(fmt::format("REVOKE {} ON {} FROM {}", privilege, on, login.quoted));
    return s;
  }

  void owner(const RoleFacts& login, const Membership& m, const ObjectAcl& acl,
             const std::string& alter, const std::vector<std::string>& tables, Sources& s) const {
    const std::string to = fmt::format("{} OWNER TO {}", alter, trusted_owner(tables));
    if (acl.owner == login.name) {
      s.why.push_back("as its owner");
      s.fixes.push_back(to);
    } else {
      s.why.push_back(fmt::format("as a member of its owner {}", acl.owner));
      s.fixes.push_back(
          fmt::format("{}, or {}", to, roles_.revoke_membership(login.name, m, acl.owner)));
    }
  }

  bool holds(const Membership& m, const std::set<std::pair<std::string, uint32_t>>& privileges,
             uint32_t oid) const {
    for (const auto& [g, hop] : m)
      if (privileges.count({g, oid})) return true;
    return false;
  }

  // A relation the login holds `privileges` on (or owns), with its ACL in
  // `acls` and the restricted tables its `reach` reaches; nullopt otherwise.
  struct HeldRelation {
    const CatalogRelation* relation;
    const ObjectAcl* acl;
    std::vector<std::string> tables;
  };
  std::optional<HeldRelation> held_relation(
      const Membership& m, const std::vector<std::string>& restricted, uint32_t oid,
      const std::map<uint32_t, ObjectAcl>& acls,
      const std::set<std::pair<std::string, uint32_t>>& privileges,
      rewriter::Reach CatalogRelation::*reach) const {
    const CatalogRelation* r = catalog_.relation(oid);
    const auto acl = acls.find(oid);
    if (!r || acl == acls.end()) return std::nullopt;
    std::vector<std::string> tables = rewriter::tables_reached(r->*reach, policy_list_, restricted);
    if (tables.empty()) return std::nullopt;
    if (!holds(m, privileges, oid) && !m.count(acl->second.owner)) return std::nullopt;
    return HeldRelation{r, &acl->second, std::move(tables)};
  }

  void relation(const RoleFacts& login, const Membership& m,
                const std::vector<std::string>& restricted, uint32_t oid,
                std::vector<Exposure>& out) const {
    const auto held = held_relation(m, restricted, oid, facts_.relation_acls, facts_.select,
                                    &CatalogRelation::read);
    if (!held) return;
    const auto& [r, acl, tables] = *held;
    const auto& f = *r->facts;
    const std::string name = f.schema + "." + f.name;
    const bool table = r->cls == RelationClass::kProtected || r->cls == RelationClass::kChild;
    Exposure x = row(login, table ? ExposurePath::kSelectTable : ExposurePath::kSelectRelation,
                     name, tables);
    const Sources s = sources(login, m, *acl, "SELECT", acl->quoted,
                              fmt::format("ALTER {} {}", relation_keyword(f.kind), acl->quoted),
                              kReadAllData, tables);
    const std::string why = because(s, m, oid);
    std::string fix = join(s.fixes, "; ");
    if (r->cls == RelationClass::kProtected) {
      x.detail = fmt::format("{} can SELECT the protected table {} without kanon{}", login.name,
                             name, why);
    } else if (r->cls == RelationClass::kChild) {
      x.detail = fmt::format(
          "{} can SELECT {}, an inheritance child or partition of the protected table {}, "
          "without kanon{}",
          login.name, name, r->protected_parent, why);
    } else if (f.kind == 'f') {
      x.detail = fmt::format(
          "{} can SELECT the foreign table {}{}: kanon cannot see what it reads (its server may "
          "point back at this database)",
          login.name, name, why);
    } else if (r->read.internal) {
      x.detail = internal_detail(login.name, "SELECT", *r, r->read, name, why);
    } else if (r->read.tables.empty()) {
      x.detail = fmt::format("{} can SELECT the {} {}{}: kanon cannot see what it reads ({})",
                             login.name, relation_noun(f.kind), name, why, r->read.via);
    } else if (f.kind == 'v') {
      x.detail =
          fmt::format("{} can SELECT the view {}{}, which reads {} (via {}){} with {} rights",
                      login.name, name, why, join(r->read.tables), r->read.via,
                      r->read.opaque ? " and runs code kanon cannot analyse" : "",
                      f.security_invoker ? "the reader's" : "its owner's");
      fix += " (sessions through kanon do not need it: kanon expands the view in place)";
    } else if (f.kind == 'm') {
      x.detail =
          fmt::format("{} can SELECT the materialized view {}{}, a stored copy of rows of {}",
                      login.name, name, why, join(r->read.tables));
      fix += "; or give it a policy of its own";
    } else {
      x.detail =
          fmt::format("{} can SELECT the {} {}{}, and reading it reads {} (via {})", login.name,
                      relation_noun(f.kind), name, why, join(r->read.tables), r->read.via);
    }
    if (table)
      fix += fmt::format(
          " — or, if {0} reads {1} through kanon (kanon reads it as {0}), keep the grant and "
          "admit {0} to PostgreSQL only from kanon's address (pg_hba.conf)",
          login.name, join(tables));
    x.fix = std::move(fix);
    out.push_back(std::move(x));
  }

  // A relation whose writing reaches a protected table (its read reach, its
  // rules, triggers, defaults, constraints: ObjectCatalog's write reach), as
  // the proxy counts it.
  void written(const RoleFacts& login, const Membership& m,
               const std::vector<std::string>& restricted, uint32_t oid,
               std::vector<Exposure>& out) const {
    const auto held =
        held_relation(m, restricted, oid, facts_.write_acls, facts_.write, &CatalogRelation::write);
    if (!held) return;
    const auto& [r, acl, tables] = *held;
    const auto& f = *r->facts;
    const std::string name = f.schema + "." + f.name;
    Exposure x = row(login, ExposurePath::kWriteRelation, name, tables);
    const Sources s = sources(login, m, *acl, rewriter::kWritePrivileges, acl->quoted,
                              fmt::format("ALTER {} {}", relation_keyword(f.kind), acl->quoted),
                              kWriteAllData, tables);
    const std::string why = because(s, m, oid);
    const char* counts = "the row counts of UPDATE and DELETE with a WHERE clause tell its values";
    if (r->cls == RelationClass::kProtected) {
      x.detail = fmt::format("{} can write the protected table {}{} without kanon: {}", login.name,
                             name, why, counts);
    } else if (r->cls == RelationClass::kChild) {
      x.detail = fmt::format(
          "{} can write {}, an inheritance child or partition of the protected table {}, without "
          "kanon{}: {}",
          login.name, name, r->protected_parent, why, counts);
    } else if (r->write.internal) {
      x.detail = internal_detail(login.name, "write", *r, r->write, name, why);
    } else if (r->write.tables.empty()) {
      x.detail = fmt::format(
          "{} can write the {} {}{} without kanon: writing it runs code kanon cannot see into ({})",
          login.name, relation_noun(f.kind), name, why, r->write.via);
    } else {
      x.detail = fmt::format(
          "{} can write the {} {}{} without kanon, and writing it reads {} (via {}){}: rules run "
          "with their owner's rights",
          login.name, relation_noun(f.kind), name, why, join(r->write.tables), r->write.via,
          r->write.opaque ? " and runs code kanon cannot analyse" : "");
    }
    x.fix = join(s.fixes, "; ");
    out.push_back(std::move(x));
  }

  void function(const RoleFacts& login, const Membership& m,
                const std::vector<std::string>& restricted, uint32_t oid,
                std::vector<Exposure>& out) const {
    const CatalogFunction* fn = catalog_.function(oid);
    const auto acl = facts_.function_acls.find(oid);
    if (!fn || acl == facts_.function_acls.end()) return;
    const auto& f = *fn->facts;
    const std::string name = f.schema + "." + f.name;
    const access::DirectAccess* files = rewriter::server_file_function(f);
    // Server files: every table's data files.
    const std::vector<std::string> tables =
        files ? restricted : rewriter::tables_reached(fn->reach, policy_list_, restricted, name);
    if (tables.empty()) return;
    if (!holds(m, facts_.execute, oid) && !m.count(acl->second.owner)) return;
    if (files) {
      Exposure x = row(login, ExposurePath::kServerFiles, acl->second.quoted, tables);
      const Sources s = sources(login, m, acl->second, "EXECUTE", "FUNCTION " + acl->second.quoted,
                                "ALTER FUNCTION " + acl->second.quoted, nullptr, tables);
      const std::string why = because(s, m, oid);
      x.detail =
          fmt::format("{} can EXECUTE {}{}: {}", login.name, acl->second.quoted, why, files->gives);
      x.fix = join(s.fixes, "; ");
      out.push_back(std::move(x));
      return;
    }
    Exposure x = row(login, ExposurePath::kExecuteFunction, acl->second.quoted, tables);
    const std::string keyword = function_keyword(f.kind);
    const Sources s =
        sources(login, m, acl->second, "EXECUTE",
                fmt::format("{} {}", f.kind == 'p' ? "PROCEDURE" : "FUNCTION", acl->second.quoted),
                fmt::format("ALTER {} {}", keyword, acl->second.quoted), nullptr, tables);
    const std::string why = because(s, m, oid);
    const std::string reads =
        fn->reach.tables.empty()
            ? fmt::format("kanon cannot see what it reads ({})", fn->reach.via)
            : fmt::format("it reads {} (via {}){}", join(fn->reach.tables), fn->reach.via,
                          fn->reach.opaque ? " and runs code kanon cannot analyse" : "");
    x.detail = fmt::format(
        "{} can EXECUTE {}{} without kanon: {}, with its owner's rights (SECURITY DEFINER)",
        login.name, acl->second.quoted, why, reads);
    x.fix = join(s.fixes, "; ");
    out.push_back(std::move(x));
  }

  bool database_matches(const HbaRule& rule, const std::string& login, const Membership& m) const {
    for (const auto& d : rule.databases) {
      if (d == "all" || d == facts_.database) return true;
      if (d == "sameuser" && facts_.database == login) return true;
      if ((d == "samerole" || d == "samegroup") && m.count(facts_.database)) return true;
    }
    return false;
  }

  static bool user_matches(const HbaRule& rule, const std::string& login, const Membership& m) {
    for (const auto& u : rule.users) {
      if (u == "all" || u == login) return true;
      if (u.size() > 1 && u[0] == '+' && m.count(u.substr(1))) return true;
    }
    return false;
  }

  static bool full_mask(const std::string& mask) {
    if (mask == "255.255.255.255") return true;
    int groups = 0;
    size_t start = 0;
    while (start <= mask.size()) {
      const size_t end = std::min(mask.find(':', start), mask.size());
      const std::string g = mask.substr(start, end - start);
      if (g != "ffff" && g != "FFFF") return false;
      ++groups;
      start = end + 1;
    }
    return groups == 8;
  }

  static bool any_address(const HbaRule& rule) {
    return rule.address == "all" || rule.netmask == "0.0.0.0" || rule.netmask == "::";
  }

  bool admits_elsewhere(const HbaRule& rule) const {
    if (rule.type == "local") return !facts_.kanon_address.empty();
    if (rule.netmask.empty()) return true;  // all, samehost, samenet, a host name
    return !(rule.address == facts_.kanon_address && full_mask(rule.netmask));
  }

  static std::string rule_text(const HbaRule& rule) {
    std::string s =
        fmt::format("{} {} {}", rule.type, join(rule.databases, ","), join(rule.users, ","));
    if (!rule.address.empty()) s += " " + rule.address;
    if (!rule.netmask.empty()) s += " " + rule.netmask;
    return s + " " + rule.method;
  }

  // pg_hba.conf rules that let the login into this database from elsewhere
  // than kanon's address: for each connection type, the first matching rule
  // decides, so a rule after a matching rule for every address is left out.
  std::vector<Exposure> connect_rows(const RoleFacts& login, const Membership& m,
                                     const std::vector<std::string>& reaches) const {
    std::vector<Exposure> out;
    bool local_decided = false;
    bool host_decided = false;
    std::set<std::string> decided;  // hostssl, hostnossl, ... decided by an earlier rule
    const std::string& kanon = facts_.kanon_address;
    for (const HbaRule& rule : *facts_.hba) {
      if (!database_matches(rule, login.name, m) || !user_matches(rule, login.name, m)) continue;
      if (rule.type == "local") {
        if (local_decided) continue;
        local_decided = true;
      } else {
        if (host_decided || decided.count(rule.type)) continue;
        if (any_address(rule)) {
          if (rule.type == "host")
            host_decided = true;
          else
            decided.insert(rule.type);
        }
      }
      if (rule.method == "reject" || !admits_elsewhere(rule)) continue;
      Exposure x =
          row(login, ExposurePath::kConnect, fmt::format("pg_hba.conf:{}", rule.line), reaches);
      x.detail = fmt::format(
          "pg_hba.conf line {} ({}) admits {} to {} {}, so each grant listed for it is a path "
          "to the data",
          rule.line, rule_text(rule), login.name, facts_.database,
          rule.type == "local" ? "over the Unix socket, without kanon"
                               : "from other addresses than kanon's");
      const std::string db = facts_.database;
      if (rule.type == "local") {
        x.fix = fmt::format(
            "pg_hba.conf: add `local {0} {1} reject` above line {2} (or narrow line {2} so it "
            "leaves {1} out), then SELECT pg_reload_conf()",
            db, login.name, rule.line);
      } else if (kanon.empty()) {
        x.fix = fmt::format(
            "pg_hba.conf: add `host {0} {1} all reject` above line {2} (kanon connects over the "
            "Unix socket), then SELECT pg_reload_conf()",
            db, login.name, rule.line);
      } else {
        x.fix = fmt::format(
            "pg_hba.conf: admit {1} only from kanon's address: add `host {0} {1} {3}/{4} {5}` "
            "and then `host {0} {1} all reject` above line {2} (or narrow line {2} so it leaves "
            "{1} out), then SELECT pg_reload_conf()",
            db, login.name, rule.line, kanon, kanon.find(':') == std::string::npos ? 32 : 128,
            rule.method);
      }
      out.push_back(std::move(x));
    }
    return out;
  }

  const ObjectCatalog& catalog_;
  const PrivilegeFacts& facts_;
  Roles roles_;
  const std::vector<policy::TablePolicy>& policy_list_;
  const rewriter::PrivilegePaths paths_;
  std::map<std::string, const policy::TablePolicy*> policies_;  // by name, sorted
};

bool loopback(const std::string& address) {
  return address.starts_with("127.") || address == "::1";
}

}  // namespace

bool RoleFacts::has(access::Attribute a) const {
  switch (a) {
    case access::Attribute::kSuperuser:
      return superuser;
    case access::Attribute::kCreateRole:
      return createrole;
    case access::Attribute::kBypassRls:
      return bypassrls;
    case access::Attribute::kReplication:
      return replication;
    case access::Attribute::kNone:
      break;
  }
  return false;
}

const char* to_string(ExposurePath path) {
  switch (path) {
    case ExposurePath::kSuperuser:
      return "superuser";
    case ExposurePath::kCreateRole:
      return "createrole";
    case ExposurePath::kBypassRls:
      return "bypassrls";
    case ExposurePath::kReplication:
      return "replication";
    case ExposurePath::kServerFiles:
      return "server-files";
    case ExposurePath::kConnect:
      return "connect";
    case ExposurePath::kSelectTable:
      return "select-table";
    case ExposurePath::kSelectRelation:
      return "select-relation";
    case ExposurePath::kWriteRelation:
      return "write-relation";
    case ExposurePath::kExecuteFunction:
      return "execute-function";
    case ExposurePath::kPartialIndex:
      return "partial-index";
    case ExposurePath::kIndexSize:
      return "index-size";
    case ExposurePath::kExemptThroughRole:
      return "exempt-through-role";
  }
  return "?";
}

size_t ExposureReport::exposures() const {
  return static_cast<size_t>(std::count_if(rows.begin(), rows.end(),
                                           [](const Exposure& x) { return !x.informational(); }));
}

size_t ExposureReport::history_findings() const {
  return static_cast<size_t>(std::count_if(history.begin(), history.end(),
                                           [](const HistoryStatus& h) { return h.finding(); }));
}

void HistoryStatus::take(const policy::HistoryCheck& check) {
  linked_rows = check.linked_rows;
  new_rows = check.new_rows;
  min_candidates = check.min_candidates;
  rows_below_k = check.rows_below_k;
  updated_rows_below_k = check.updated_rows_below_k;
  late_rows_below_k = check.late_rows_below_k;
  deleted_rows_below_k = check.deleted_rows_below_k;
}

std::string HistoryStatus::verdict() const {
  if (!error.empty()) return "could not be checked: " + error;
  if (!linkable) return "not linkable";
  if (releases == 0) return "no release stored";
  std::string out;
  const auto add = [&](uint64_t n, std::string_view why) {
    if (n == 0) return;
    out += fmt::format("{}{} row{} below k{}", out.empty() ? "" : "; ", n, n == 1 ? "" : "s", why);
  };
  add(rows_below_k, ": run REANONYMIZE " + table);
  add(updated_rows_below_k,
      " through updates of quasi-identifiers, which a live mode shows at once: use mode: "
      "materialized");
  add(late_rows_below_k,
      " among rows that arrived after the first release (a live mode shows a new row at once; "
      "mode: materialized holds new rows until k arrived together)");
  add(deleted_rows_below_k,
      " through deletions (an analyst sees rows of their cohort disappear; no later release "
      "undoes it)");
  return out.empty() ? "ok" : out;
}

ExposureReport find_exposures(const ObjectCatalog& catalog,
                              const std::vector<policy::TablePolicy>& policies,
                              const PrivilegeFacts& facts, const ExposureOptions& options) {
  ExposureReport report;
  report.database = facts.database;
  report.tables = policies.size();
  Judge judge(catalog, policies, facts);
  std::vector<const RoleFacts*> logins;
  for (const auto& r : facts.roles)
    if (r.login) logins.push_back(&r);
  std::sort(logins.begin(), logins.end(),
            [](const RoleFacts* a, const RoleFacts* b) { return a->name < b->name; });
  for (const RoleFacts* login : logins) {
    if (!options.roles.empty() && !options.roles.count(login->name)) continue;
    if (login->name == facts.service_role) {
      report.notes.push_back(fmt::format(
          "{} is kanon's service account: trusted (docs/security.md), not checked", login->name));
      continue;
    }
    ++report.logins_checked;
    judge.check(*login, report);
  }
  for (const auto& name : options.roles)
    if (std::none_of(logins.begin(), logins.end(),
                     [&](const RoleFacts* r) { return r->name == name; }))
      report.notes.push_back(fmt::format("no login role is named {}", name));
  // A partial index whose columns (keys or predicate) hold a
  // quasi-identifier: pg_class.reltuples and its size count raw values, and
  // every login may read the catalog, through kanon or not.
  // Any other index on one: B-tree deduplication makes its size follow how
  // often raw values repeat (an index of 200,000 rows on a text column
  // took 1.4 MB with 5 or 5,000 distinct values, 5.0 MB with 100,000).
  for (const auto& policy : policies)
    for (const auto* index : catalog.tree_indexes(policy.name())) {
      const auto qi =
          std::find_first_of(index->columns.begin(), index->columns.end(),
                             policy.quasi_identifiers.begin(), policy.quasi_identifiers.end());
      if (qi == index->columns.end()) continue;
      Exposure x;
      x.database = facts.database;
      x.role = "PUBLIC";
      x.path = index->partial ? ExposurePath::kPartialIndex : ExposurePath::kIndexSize;
      x.object = index->name;
      x.reaches = {policy.name()};
      x.detail =
          index->partial
              ? fmt::format(
                    "the partial index {} reads the quasi-identifier {}: its row count "
                    "(pg_class.reltuples) and size, which every login may read, count the raw "
                    "rows its predicate holds",
                    index->name, *qi)
              : fmt::format(
                    "the index {} reads the quasi-identifier {}: its size (pg_relation_size), "
                    "which every login may read, follows how often its raw values repeat",
                    index->name, *qi);
      x.fix = fmt::format("DROP INDEX {}", index->name);
      report.rows.push_back(std::move(x));
    }
  std::stable_sort(report.rows.begin(), report.rows.end(),
                   [](const Exposure& a, const Exposure& b) {
                     if (a.role != b.role) return a.role < b.role;
                     if (a.path != b.path) return a.path < b.path;
                     return a.object < b.object;
                   });
  if (!facts.hba) {
    report.notes.push_back(fmt::format(
        "pg_hba.conf was not read ({}): every grant is reported as if its login could connect "
        "without kanon; run kanon check as a superuser (--conninfo) to check pg_hba.conf",
        facts.hba_error.empty() ? "pg_hba_file_rules needs a superuser" : facts.hba_error));
  } else if (facts.kanon_address.empty()) {
    report.notes.push_back(
        "kanon connects over the Unix socket: pg_hba.conf `local` rules are taken to be kanon's "
        "way in, although they admit every program on the database server");
  } else {
    report.notes.push_back(fmt::format(
        "kanon connects from {}: pg_hba.conf rules for that address alone are taken to be "
        "kanon's, although they admit every other program on that host{}",
        facts.kanon_address,
        loopback(facts.kanon_address)
            ? " (here the database server itself, so also dblink and postgres_fdw from its other "
              "databases)"
            : ""));
  }
  return report;
}

}  // namespace kanon::exposure
