// find_exposures on hand-built catalog and privilege facts: who is
// restricted, which grants are paths and what fixes them, how pg_hba.conf
// rules decide whether grants count, and the text and JSON reports.
#include <doctest/doctest.h>

#include <algorithm>

#include "access/direct_access.h"
#include "exposure/exposure.h"
#include "rewriter/privilege_paths.h"
#include "rewriter/statement_rules.h"

using kanon::catalog::CatalogFacts;
using kanon::catalog::FunctionFacts;
using kanon::catalog::RelationFacts;
using kanon::exposure::Exposure;
using kanon::exposure::ExposureOptions;
using kanon::exposure::ExposurePath;
using kanon::exposure::ExposureReport;
using kanon::exposure::Grant;
using kanon::exposure::HbaRule;
using kanon::exposure::ObjectAcl;
using kanon::exposure::PrivilegeFacts;
using kanon::exposure::RoleFacts;
using kanon::policy::TablePolicy;
using kanon::rewriter::ObjectCatalog;

namespace {

// A database with public.people (protected, exempt: [postgres, auditors])
// and whatever a test adds; roles postgres (superuser, the service
// account), auditors (no login) and pg_read_all_data.
class World {
 public:
  World() {
    people_ = table("public", "people");
    role("postgres", true).superuser = true;
    role("auditors", false);
    role("pg_read_all_data", false);
    for (const char* r :
         {"pg_read_server_files", "pg_write_server_files", "pg_execute_server_program"})
      role(r, false);
    priv_.database = "shop";
    priv_.service_role = "postgres";
    priv_.kanon_address = "10.0.0.5";
    TablePolicy p;
    p.schema = "public";
    p.table = "people";
    p.exempt = {"postgres", "auditors"};
    policies_.push_back(p);
  }

  uint32_t people() const { return people_; }
  CatalogFacts& facts() { return *facts_; }
  PrivilegeFacts& priv() { return priv_; }
  TablePolicy& policy() { return policies_.front(); }

  RoleFacts& role(const std::string& name, bool login = true) {
    RoleFacts r;
    r.name = name;
    r.quoted = name == "Mixed" ? "\"Mixed\"" : name;
    r.login = login;
    priv_.roles.push_back(r);
    return priv_.roles.back();
  }
  RoleFacts& R(const std::string& name) {
    for (auto& r : priv_.roles)
      if (r.name == name) return r;
    FAIL("no role " << name);
    return priv_.roles.front();
  }
  void grant_role(const std::string& role, const std::string& member) {
    R(member).member_of.push_back(role);
  }

  uint32_t table(const std::string& schema, const std::string& name, char kind = 'r',
                 std::vector<uint32_t> reads = {}) {
    RelationFacts r;
    r.oid = next_++;
    r.schema = schema;
    r.name = name;
    r.kind = kind;
    r.reads_relations = std::move(reads);
    facts_->relations.push_back(r);
    priv_.relation_acls[r.oid] = {schema + "." + name, "owner", {{"owner", {}}}};
    return r.oid;
  }
  uint32_t function(const std::string& name, const std::string& language,
                    const std::string& body = "") {
    FunctionFacts f;
    f.oid = next_++;
    f.schema = "public";
    f.name = name;
    f.language = language;
    f.body = body;
    facts_->functions.push_back(f);
    // The default ACL: PUBLIC and the owner.
    priv_.function_acls[f.oid] = {"public." + name + "()", "owner", {{"", {}}, {"owner", {}}}};
    return f.oid;
  }
  void inherit(uint32_t child, uint32_t parent) {
    for (auto& r : facts_->relations)
      if (r.oid == child) r.parents.push_back(parent);
  }
  FunctionFacts& F(uint32_t oid) {
    for (auto& f : facts_->functions)
      if (f.oid == oid) return f;
    FAIL("no function " << oid);
    return facts_->functions.front();
  }

  // `role` holds SELECT on the relation because of `grant` (grantee "" for
  // PUBLIC); has_*_privilege's answer is recorded for `role`.
  void select(const std::string& role, uint32_t oid, Grant grant) {
    priv_.select.emplace(role, oid);
    priv_.relation_acls[oid].grants.push_back(std::move(grant));
  }

  void hba(std::vector<HbaRule> rules) { priv_.hba = std::move(rules); }
  // Tables kanon writes outside schema kanon (the audit trail's).
  void internal(std::string table) { internal_.push_back(std::move(table)); }

  // Every privilege recorded comes with USAGE on its object's schema unless
  // this says otherwise.
  void without_usage(const std::string& role, uint32_t oid) { unusable_.emplace(role, oid); }

  ExposureReport run(const ExposureOptions& options = {}) {
    priv_.usable.clear();
    for (const auto* held : {&priv_.select, &priv_.write, &priv_.execute})
      for (const auto& p : *held)
        if (!unusable_.count(p)) priv_.usable.insert(p);
    facts_->index();
    std::vector<std::string> tables;
    for (const auto& p : policies_) tables.push_back(p.name());
    catalog_ = std::make_unique<ObjectCatalog>(facts_, tables, internal_);
    return find_exposures(*catalog_, policies_, priv_, options);
  }

 private:
  std::shared_ptr<CatalogFacts> facts_ = std::make_shared<CatalogFacts>();
  std::unique_ptr<ObjectCatalog> catalog_;
  PrivilegeFacts priv_;
  std::vector<TablePolicy> policies_;
  std::set<std::pair<std::string, uint32_t>> unusable_;
  std::vector<std::string> internal_;
  uint32_t next_ = 20000;
  uint32_t people_ = 0;
};

std::vector<const Exposure*> rows(const ExposureReport& r, const std::string& role,
                                  ExposurePath path) {
  std::vector<const Exposure*> out;
  for (const auto& x : r.rows)
    if (x.role == role && x.path == path) out.push_back(&x);
  return out;
}

const Exposure& one(const ExposureReport& r, const std::string& role, ExposurePath path) {
  const auto found = rows(r, role, path);
  REQUIRE_MESSAGE(found.size() == 1, role << " " << to_string(path) << ":\n"
                                          << exposure_report_text(r));
  return *found.front();
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

using Tables = std::vector<std::string>;

}  // namespace

TEST_CASE("a restricted login with pg_read_all_data: select-table, the fix names both ways") {
  World w;
  w.role("analyst");
  w.grant_role("pg_read_all_data", "analyst");
  w.priv().select.emplace("analyst", w.people());
  w.priv().select.emplace("pg_read_all_data", w.people());
  const auto r = w.run();
  CHECK(r.database == "shop");
  CHECK(r.tables == 1);
  CHECK(r.logins_checked == 1);  // postgres is the service account
  const auto& x = one(r, "analyst", ExposurePath::kSelectTable);
  CHECK(x.object == "public.people");
  CHECK(x.reaches == Tables{"public.people"});
  CHECK(x.database == "shop");
  CHECK(has(x.detail,
            "can SELECT the protected table public.people without kanon (through "
            "pg_read_all_data)"));
  CHECK(
      x.fix.starts_with("REVOKE pg_read_all_data FROM analyst — or, if analyst reads "
                        "public.people through kanon"));
  CHECK(has(x.fix, "pg_hba.conf"));
  CHECK(r.exposures() == 1);
  CHECK_FALSE(r.clean());
  // pg_hba.conf was not read: the note says so.
  CHECK(std::any_of(r.notes.begin(), r.notes.end(),
                    [](auto& n) { return has(n, "pg_hba.conf was not read"); }));
  CHECK(std::any_of(r.notes.begin(), r.notes.end(),
                    [](auto& n) { return has(n, "postgres is kanon's service account"); }));
}

TEST_CASE("kanon's own tables, the audit trail's and a view over it: reported for what they hold") {
  World w;
  w.role("analyst");
  const uint32_t releases = w.table("kanon", "releases");
  const uint32_t snapshots = w.table("kanon", "snapshots");
  const uint32_t trail = w.table("audit", "trail");
  const uint32_t mine = w.table("public", "my_trail", 'v', {trail});
  w.internal("audit.trail");
  w.select("analyst", releases, {"analyst", {}});
  w.select("analyst", trail, {"analyst", {}});
  w.select("analyst", mine, {"analyst", {}});
  w.priv().write_acls[snapshots] = {"kanon.snapshots", "owner", {{"analyst", {}, {"INSERT"}}}};
  w.priv().write.emplace("analyst", snapshots);
  const auto r = w.run();
  std::map<std::string, std::string> detail;
  for (const auto& x : r.rows)
    if (x.role == "analyst") detail[x.object] = x.detail;
  CHECK_MESSAGE(has(detail["kanon.releases"],
                    "analyst can SELECT kanon.releases (granted to it) without kanon: one of "
                    "kanon's own tables (what it derived from the protected rows"),
                exposure_report_text(r));
  CHECK(has(detail["audit.trail"], "can SELECT audit.trail (granted to it) without kanon: one of"));
  CHECK(has(detail["audit.trail"], "the audit trail's records"));
  CHECK(has(detail["public.my_trail"],
            "can SELECT the view public.my_trail (granted to it) without kanon: it reaches one "
            "of kanon's own tables (via audit.trail)"));
  CHECK(has(detail["kanon.snapshots"], "analyst can write kanon.snapshots"));
  CHECK(has(detail["kanon.snapshots"], "without kanon: one of kanon's own tables"));
  CHECK(r.exposures() == 4);
}

TEST_CASE("grants to PUBLIC, to the login, to a group, on columns, and ownership") {
  World w;
  w.role("alice");
  w.role("bob");
  w.role("carol");
  w.role("dave");
  w.role("readers", false);
  w.grant_role("readers", "carol");
  w.select("alice", w.people(), {"alice", {}});
  w.select("bob", w.people(), {"bob", {"city", "\"State\""}});
  w.select("readers", w.people(), {"readers", {}});
  w.priv().relation_acls[w.people()].owner = "dave";
  w.priv().relation_acls[w.people()].grants.push_back({"dave", {}});
  w.priv().select.emplace("dave", w.people());
  const auto r = w.run();
  CHECK(one(r, "alice", ExposurePath::kSelectTable)
            .fix.starts_with("REVOKE SELECT ON public.people FROM alice — "));
  CHECK(has(one(r, "alice", ExposurePath::kSelectTable).detail, "(granted to it)"));
  CHECK(one(r, "bob", ExposurePath::kSelectTable)
            .fix.starts_with("REVOKE SELECT (city, \"State\") ON public.people FROM bob"));
  CHECK(has(one(r, "bob", ExposurePath::kSelectTable).detail,
            "columns city, \"State\" granted to it"));
  const auto& c = one(r, "carol", ExposurePath::kSelectTable);
  CHECK(has(c.detail, "granted to readers, which it belongs to"));
  CHECK(
      c.fix.starts_with("REVOKE SELECT ON public.people FROM readers, or REVOKE readers FROM "
                        "carol"));
  const auto& d = one(r, "dave", ExposurePath::kSelectTable);
  CHECK(has(d.detail, "as its owner"));
  // The new owner: the first exempt role that exists.
  CHECK(d.fix.starts_with("ALTER TABLE public.people OWNER TO postgres"));
  CHECK(rows(r, "readers", ExposurePath::kSelectTable).empty());  // not a login

  // PUBLIC: every login.
  World p;
  p.role("erin");
  p.select("erin", p.people(), {"", {}});
  CHECK(one(p.run(), "erin", ExposurePath::kSelectTable)
            .fix.starts_with("REVOKE SELECT ON public.people FROM PUBLIC"));
}

TEST_CASE("exempt by name, exempt through a role (informational), restricted") {
  World w;
  w.role("boss");
  w.role("auditor1");
  w.role("teamlead");
  w.role("team", false);
  w.grant_role("auditors", "auditor1");
  w.grant_role("team", "teamlead");
  w.grant_role("auditors", "team");
  w.policy().exempt.push_back("boss");
  for (const char* r : {"boss", "auditor1", "teamlead"}) w.select(r, w.people(), {r, {}});
  const auto r = w.run();
  CHECK(std::none_of(r.rows.begin(), r.rows.end(), [](auto& x) { return x.role == "boss"; }));
  const auto& a = one(r, "auditor1", ExposurePath::kExemptThroughRole);
  CHECK(a.informational());
  CHECK(a.object == "auditors");
  CHECK(a.reaches == Tables{"public.people"});
  CHECK(has(a.detail, "exempt only as a member of auditors"));
  CHECK(a.fix == "nothing if it is meant to; otherwise REVOKE auditors FROM auditor1");
  CHECK(rows(r, "auditor1", ExposurePath::kSelectTable).empty());
  const auto& t = one(r, "teamlead", ExposurePath::kExemptThroughRole);
  CHECK(has(t.fix,
            "REVOKE auditors FROM team (which teamlead belongs to), or REVOKE team FROM "
            "teamlead"));
  CHECK(r.exposures() == 0);
  CHECK(r.clean());
}

TEST_CASE("superusers: the login itself, or a superuser role it belongs to") {
  World w;
  w.role("root").superuser = true;
  w.role("admins", false).superuser = true;
  w.role("ops");
  w.grant_role("admins", "ops");
  const auto r = w.run();
  const auto& s = one(r, "root", ExposurePath::kSuperuser);
  CHECK(s.object == "root");
  CHECK(has(s.detail, "reads every table without kanon"));
  CHECK(has(s.detail, "through kanon it is exempt too"));
  CHECK(s.fix.starts_with("ALTER ROLE root NOSUPERUSER"));
  CHECK(rows(r, "root", ExposurePath::kSelectTable).empty());  // collapsed into the superuser row
  const auto& o = one(r, "ops", ExposurePath::kSuperuser);
  CHECK(o.object == "admins");
  CHECK(o.fix == "REVOKE admins FROM ops");
  // A superuser listed under exempt: is trusted.
  w.policy().exempt.push_back("root");
  CHECK(w.run().rows.size() == 1);
}

TEST_CASE("role attributes and server-file roles are reported whatever pg_hba.conf says") {
  World w;
  auto& m = w.role("mallory");
  m.createrole = true;
  m.bypassrls = true;
  m.replication = true;
  w.role("Mixed");
  w.role("files", false);
  w.grant_role("files", "Mixed");
  w.grant_role("pg_read_server_files", "files");
  w.grant_role("pg_execute_server_program", "Mixed");
  w.hba({});  // read, and nobody may connect: attributes still count
  const auto r = w.run();
  CHECK(one(r, "mallory", ExposurePath::kCreateRole).fix == "ALTER ROLE mallory NOCREATEROLE");
  CHECK(one(r, "mallory", ExposurePath::kBypassRls).fix == "ALTER ROLE mallory NOBYPASSRLS");
  CHECK(one(r, "mallory", ExposurePath::kReplication).fix == "ALTER ROLE mallory NOREPLICATION");
  const auto files = rows(r, "Mixed", ExposurePath::kServerFiles);
  REQUIRE(files.size() == 2);
  CHECK(files[0]->object == "pg_execute_server_program");
  CHECK(files[0]->fix == "REVOKE pg_execute_server_program FROM \"Mixed\"");
  CHECK(files[1]->object == "pg_read_server_files");
  CHECK(files[1]->fix ==
        "REVOKE pg_read_server_files FROM files (which Mixed belongs to), or "
        "REVOKE files FROM \"Mixed\"");
  CHECK(r.exposures() == 5);
}

TEST_CASE("views, materialized views, foreign tables and parents that reach the table") {
  World w;
  w.role("analyst");
  const uint32_t v = w.table("public", "v_people", 'v', {w.people()});
  const uint32_t v2 = w.table("s", "v2", 'v', {v});
  const uint32_t mv = w.table("public", "mv", 'm', {w.people()});
  const uint32_t ft = w.table("public", "remote", 'f');
  const uint32_t plain = w.table("public", "notes");
  const uint32_t pv = w.table("public", "v_notes", 'v', {plain});
  for (uint32_t oid : {v, v2, mv, ft, plain, pv}) w.select("analyst", oid, {"analyst", {}});
  const auto r = w.run();
  const auto rel = rows(r, "analyst", ExposurePath::kSelectRelation);
  REQUIRE(rel.size() == 4);  // not notes, not v_notes
  CHECK(rel[0]->object == "public.mv");
  CHECK(has(rel[0]->detail,
            "materialized view public.mv (granted to it), a stored copy of rows "
            "of public.people"));
  CHECK(rel[0]->fix == "REVOKE SELECT ON public.mv FROM analyst; or give it a policy of its own");
  CHECK(rel[1]->object == "public.remote");
  CHECK(has(rel[1]->detail, "foreign table public.remote"));
  CHECK(rel[1]->reaches == Tables{"public.people"});
  CHECK(rel[2]->object == "public.v_people");
  CHECK(has(rel[2]->detail,
            "which reads public.people (via public.people) with its owner's "
            "rights"));
  CHECK(has(rel[2]->fix, "kanon expands the view in place"));
  CHECK(rel[3]->object == "s.v2");
  CHECK(has(rel[3]->detail, "(via public.v_people)"));
  CHECK(rows(r, "analyst", ExposurePath::kSelectTable).empty());
}

TEST_CASE("inheritance: a child or partition is the table itself, a parent reaches it") {
  World w;
  w.role("analyst");
  const uint32_t parent = w.table("public", "persons", 'p');
  const uint32_t child = w.table("public", "people_2024");
  w.inherit(w.people(), parent);
  w.inherit(child, w.people());
  w.select("analyst", parent, {"", {}});
  w.select("analyst", child, {"", {}});
  const auto r = w.run();
  const auto& c = one(r, "analyst", ExposurePath::kSelectTable);
  CHECK(c.object == "public.people_2024");
  CHECK(has(c.detail, "an inheritance child or partition of the protected table public.people"));
  CHECK(has(c.fix,
            "REVOKE SELECT ON public.people_2024 FROM PUBLIC — or, if analyst reads "
            "public.people through kanon"));
  const auto& p = one(r, "analyst", ExposurePath::kSelectRelation);
  CHECK(p.object == "public.persons");
  CHECK(has(p.detail,
            "the partitioned table public.persons (granted to PUBLIC), and reading it "
            "reads public.people"));
}

TEST_CASE("functions: SECURITY DEFINER ones that reach a protected table are paths; the rest not") {
  World w;
  w.role("analyst");
  const uint32_t invoker = w.function("count_people", "sql", "SELECT count(*) FROM people");
  const uint32_t reads = w.function("count_people_def", "sql", "SELECT count(*) FROM people");
  const uint32_t opaque = w.function("plfn", "plpgsql");
  const uint32_t harmless = w.function("add1", "sql", "SELECT $1 + 1");
  const uint32_t allowed = w.function("people_total", "sql", "SELECT count(*) FROM public.people");
  const uint32_t trig = w.function("audit_trg", "plpgsql");
  for (uint32_t oid : {reads, opaque, harmless, allowed, trig}) w.F(oid).security_definer = true;
  w.F(trig).trigger = true;
  w.policy().allowed_functions = {"public.people_total"};
  for (uint32_t oid : {invoker, reads, opaque, harmless, allowed, trig})
    w.priv().execute.emplace("analyst", oid);
  const auto r = w.run();
  const auto fns = rows(r, "analyst", ExposurePath::kExecuteFunction);
  // Not the caller's-rights function (it reads only what its caller may),
  // not the harmless one, not the allowed one, not the trigger function.
  REQUIRE(fns.size() == 2);
  CHECK(fns[0]->object == "public.count_people_def()");
  CHECK(fns[0]->reaches == Tables{"public.people"});
  CHECK(has(fns[0]->detail,
            "can EXECUTE public.count_people_def() (granted to PUBLIC) without kanon: "
            "it reads public.people (via public.people), with its owner's rights "
            "(SECURITY DEFINER)"));
  CHECK(fns[0]->fix == "REVOKE EXECUTE ON FUNCTION public.count_people_def() FROM PUBLIC");
  CHECK(fns[1]->object == "public.plfn()");
  CHECK(has(fns[1]->detail, "kanon cannot see what it reads (public.plfn)"));
  // The same list the proxy asks about (rewriter/privilege_paths.h).
  w.facts().index();
  const ObjectCatalog catalog(std::shared_ptr<const CatalogFacts>(&w.facts(), [](auto*) {}),
                              {"public.people"});
  const auto paths = kanon::rewriter::privilege_paths(catalog, {w.policy()});
  CHECK(paths.definer == std::vector<uint32_t>{reads, opaque});
  // Kept per catalog and policies (each restricted session's start asks).
  kanon::rewriter::PrivilegePathsCache cache;
  const auto shared = std::make_shared<const ObjectCatalog>(
      std::shared_ptr<const CatalogFacts>(&w.facts(), [](auto*) {}),
      std::vector<std::string>{"public.people"});
  const auto first = cache.paths(shared, {w.policy()});
  CHECK(first->definer == paths.definer);
  CHECK(cache.paths(shared, {w.policy()}) == first);
  // Other policies (allowed_functions), or another catalog: worked out again.
  auto allowing = w.policy();
  allowing.allowed_functions.push_back("public.count_people_def");
  const auto other = cache.paths(shared, {allowing});
  CHECK(other != first);
  CHECK(other->definer == std::vector<uint32_t>{opaque});
  const auto again = std::make_shared<const ObjectCatalog>(
      std::shared_ptr<const CatalogFacts>(&w.facts(), [](auto*) {}),
      std::vector<std::string>{"public.people"});
  CHECK(cache.paths(again, {allowing}) != other);
  CHECK(cache.paths(again, {allowing})->definer == other->definer);
  // Revoked from PUBLIC: gone.
  w.priv().execute.clear();
  CHECK(rows(w.run(), "analyst", ExposurePath::kExecuteFunction).empty());
}

TEST_CASE("a privilege counts without USAGE on the schema, and the report says USAGE is all") {
  World w;
  w.role("analyst");
  w.role("other");
  w.select("analyst", w.people(), {"analyst", {}});
  w.select("other", w.people(), {"other", {}});
  w.without_usage("analyst", w.people());
  const auto r = w.run();
  CHECK(has(one(r, "analyst", ExposurePath::kSelectTable).detail,
            "analyst can SELECT the protected table public.people without kanon (granted to "
            "it; it has no USAGE on the schema today, which alone keeps it out)"));
  CHECK(has(one(r, "other", ExposurePath::kSelectTable).detail,
            "other can SELECT the protected table public.people without kanon (granted to it)"));
}

TEST_CASE("pg_hba.conf: grants count only for logins admitted from elsewhere than kanon") {
  const auto rule = [](int line, std::string type, std::vector<std::string> db,
                       std::vector<std::string> users, std::string address, std::string mask,
                       std::string method) {
    return HbaRule{line,
                   std::move(type),
                   std::move(db),
                   std::move(users),
                   std::move(address),
                   std::move(mask),
                   std::move(method)};
  };
  World w;
  w.role("inside");   // admitted only from kanon's address
  w.role("outside");  // admitted from a network too
  w.role("local");    // over the Unix socket
  w.role("rejected");
  w.role("grouped");
  w.role("staff", false);
  w.grant_role("staff", "grouped");
  for (const char* r : {"inside", "outside", "local", "rejected", "grouped"})
    w.select(r, w.people(), {r, {}});
  w.hba({
      rule(1, "local", {"all"}, {"postgres"}, "", "", "peer"),
      rule(2, "local", {"shop"}, {"local"}, "", "", "trust"),
      rule(3, "host", {"all"}, {"rejected"}, "all", "", "reject"),
      rule(4, "host", {"all"}, {"all"}, "10.0.0.5", "255.255.255.255", "scram-sha-256"),
      rule(5, "hostssl", {"other"}, {"outside"}, "0.0.0.0", "0.0.0.0", "md5"),
      rule(6, "hostssl", {"shop"}, {"outside"}, "192.168.0.0", "255.255.0.0", "md5"),
      rule(7, "host", {"samerole"}, {"+staff"}, "all", "", "md5"),
      rule(8, "host", {"sameuser"}, {"+staff"}, "all", "", "md5"),
      rule(9, "local", {"all"}, {"all"}, "", "", "reject"),
      rule(10, "host", {"all"}, {"rejected"}, "192.168.0.0", "255.255.0.0", "md5"),
  });
  auto r = w.run();
  CHECK(rows(r, "inside", ExposurePath::kSelectTable).empty());  // only through kanon
  CHECK(rows(r, "inside", ExposurePath::kConnect).empty());
  CHECK(
      rows(r, "rejected", ExposurePath::kConnect).empty());  // line 10 comes after a reject for all
  CHECK(rows(r, "rejected", ExposurePath::kSelectTable).empty());
  CHECK(rows(r, "grouped", ExposurePath::kConnect).empty());  // database shop is no role of it
  const auto& o = one(r, "outside", ExposurePath::kConnect);
  CHECK(o.object == "pg_hba.conf:6");
  CHECK(o.reaches == Tables{"public.people"});
  CHECK(has(o.detail,
            "pg_hba.conf line 6 (hostssl shop outside 192.168.0.0 255.255.0.0 md5) "
            "admits outside to shop from other addresses than kanon's"));
  CHECK(o.fix ==
        "pg_hba.conf: admit outside only from kanon's address: add `host shop outside "
        "10.0.0.5/32 md5` and then `host shop outside all reject` above line 6 (or "
        "narrow line 6 so it leaves outside out), then SELECT pg_reload_conf()");
  CHECK(rows(r, "outside", ExposurePath::kSelectTable).size() == 1);
  const auto& l = one(r, "local", ExposurePath::kConnect);
  CHECK(l.object == "pg_hba.conf:2");
  CHECK(has(l.fix, "add `local shop local reject` above line 2"));
  CHECK(std::any_of(r.notes.begin(), r.notes.end(), [](auto& n) {
    return has(n, "kanon connects from 10.0.0.5: pg_hba.conf rules for that address alone");
  }));

  // samerole: a database named like a role the login belongs to.
  w.priv().database = "staff";
  r = w.run();
  CHECK(one(r, "grouped", ExposurePath::kConnect).object == "pg_hba.conf:7");
  // Without a privilege path, no connect row either.
  w.priv().select.clear();
  w.priv().relation_acls[w.people()].grants = {{"owner", {}}};
  CHECK(w.run().rows.empty());
}

TEST_CASE("a login without CONNECT on the database has no privilege path") {
  World w;
  w.role("nocon").connect = false;
  w.R("nocon").bypassrls = true;
  w.select("nocon", w.people(), {"nocon", {}});
  const auto r = w.run();
  CHECK(rows(r, "nocon", ExposurePath::kSelectTable).empty());
  CHECK(rows(r, "nocon", ExposurePath::kBypassRls).size() == 1);  // attributes still count
}

TEST_CASE("--role keeps the named logins; unknown names get a note") {
  World w;
  w.role("a");
  w.role("b");
  w.select("a", w.people(), {"", {}});
  w.priv().select.emplace("b", w.people());
  ExposureOptions o;
  o.roles = {"b", "nobody"};
  const auto r = w.run(o);
  CHECK(r.logins_checked == 1);
  REQUIRE(r.rows.size() == 1);
  CHECK(r.rows[0].role == "b");
  CHECK(std::any_of(r.notes.begin(), r.notes.end(),
                    [](auto& n) { return n == "no login role is named nobody"; }));
}

TEST_CASE("text and JSON reports") {
  World w;
  w.role("analyst");
  w.role("auditor1");
  w.grant_role("auditors", "auditor1");
  w.select("analyst", w.people(), {"", {}});
  const auto r = w.run();
  const std::string text = exposure_report_text(r);
  CHECK(text.starts_with("kanon check: database shop, 1 protected table, 2 logins checked\n"));
  CHECK(has(text, "\nROLE      PATH                 OBJECT         REACHES\n"));
  CHECK(has(text,
            "\nanalyst   select-table         public.people  public.people\n"
            "    analyst can SELECT"));
  CHECK(has(text, "\n    fix: REVOKE SELECT ON public.people FROM PUBLIC"));
  CHECK(has(text, "\n1 exposure for 1 login; 1 informational row (exempt through a role)\n"));
  CHECK(has(text, "\nnote: pg_hba.conf was not read"));
  const std::string json = exposure_report_json(r);
  CHECK(
      json.starts_with("{\n  \"database\": \"shop\",\n  \"tables\": 1,\n  \"logins_checked\": "
                       "2,\n  \"exposures\": 1,\n  \"rows\": [\n    {\"role\": \"analyst\", "
                       "\"path\": \"select-table\", \"object\": \"public.people\", "
                       "\"reaches\": [\"public.people\"]"));
  CHECK(has(json, "\"informational\": true}"));
  CHECK(has(json, "\"notes\": [\n    \""));

  World clean;
  const auto c = clean.run();
  CHECK(has(exposure_report_text(c), "no exposures: no restricted login has a path"));
  CHECK(has(exposure_report_json(c), "\"rows\": [],"));
}

// access/direct_access.h is the one table of what gives a login protected
// data whatever its grants say. Every entry must reach each consumer: the
// report (a row with the entry's path and fix, held directly and through a
// role), the rewriter (denied by name) and the proxy's SQL. An entry added
// to the table and left out of a consumer fails here.
TEST_CASE("every entry of the direct-access table is a report row, a denial and proxy SQL") {
  namespace access = kanon::access;
  const std::string proxy_sql = access::holds_sql("m");
  size_t paths = 0;
  for (const auto& a : access::direct_access()) {
    CAPTURE(a.name);
    World w;
    w.hba({});  // read, and nobody may connect: attributes and roles still count
    ExposurePath path = ExposurePath::kServerFiles;
    std::string object = a.name;
    std::string fix;
    if (a.kind == access::Kind::kAttribute) {
      RoleFacts& holder = w.role("holder");
      REQUIRE(!holder.has(a.attribute));
      switch (a.attribute) {
        case access::Attribute::kSuperuser:
          holder.superuser = true;
          path = ExposurePath::kSuperuser;
          break;
        case access::Attribute::kCreateRole:
          holder.createrole = true;
          path = ExposurePath::kCreateRole;
          break;
        case access::Attribute::kBypassRls:
          holder.bypassrls = true;
          path = ExposurePath::kBypassRls;
          break;
        case access::Attribute::kReplication:
          holder.replication = true;
          path = ExposurePath::kReplication;
          break;
        case access::Attribute::kNone:
          FAIL("an attribute entry without its attribute");
      }
      CHECK(w.R("holder").has(a.attribute));
      object = "holder";
      fix = std::string("ALTER ROLE holder NO") + a.name;
      CHECK(has(proxy_sql, std::string("m.") + a.column));
    } else if (a.kind == access::Kind::kRole) {
      if (std::none_of(w.priv().roles.begin(), w.priv().roles.end(),
                       [&](const RoleFacts& r) { return r.name == a.name; }))
        w.role(a.name, false);
      w.role("holder");
      w.grant_role(a.name, "holder");
      fix = std::string("REVOKE ") + a.name + " FROM holder";
      CHECK(has(proxy_sql, std::string("'") + a.name + "'"));
      CHECK(access::role_named(a.name) == &a);
    } else {
      // Every function of the table is denied by name through kanon.
      // dblink_connect_u: dblink*'s sql-text-function comes first.
      const bool server_file =
          kanon::rewriter::denied_function(a.name) == &kanon::rewriter::rules::kServerFileFunction;
      CHECK((server_file || std::string_view(a.name).starts_with("dblink")));
      CHECK(kanon::rewriter::denied_function(std::string(a.name) + (a.prefix ? "x" : "")) !=
            nullptr);
      CHECK(access::function_named(a.name) == &a);
      CHECK(has(proxy_sql, std::string("'") + a.name + "'") == a.execute_is_path);
      // A built-in function of that name, EXECUTE granted to holder.
      w.role("holder");
      const uint32_t fn = w.function(a.name, "internal");
      w.F(fn).schema = "pg_catalog";
      w.F(fn).builtin = true;
      auto& acl = w.priv().function_acls[fn];
      acl.quoted = std::string("pg_catalog.") + a.name + "(text)";
      acl.grants = {{"holder", {}}};
      w.priv().execute.emplace("holder", fn);
      w.priv().hba = std::nullopt;  // a privilege path: counted when pg_hba.conf is not read
      object = acl.quoted;
      fix = "REVOKE EXECUTE ON FUNCTION " + acl.quoted + " FROM holder";
      if (!a.execute_is_path) {
        CHECK(access::path_function(a.name, true, "internal", "") == nullptr);
        CHECK(w.run().rows.empty());
        continue;
      }
      CHECK(access::path_function(a.name, true, "internal", "") == &a);
      // A user's function of that name is judged by its body, not by its name.
      CHECK(access::path_function(a.name, false, "sql", "") == nullptr);
      CHECK(access::path_function(a.name, false, "c", "dblink") == &a);
    }
    ++paths;
    CHECK(access::fix(a, "holder", object) == fix);
    const auto r = w.run();
    const auto& x = one(r, "holder", path);
    CHECK(x.object == object);
    CHECK(x.reaches == Tables{"public.people"});
    CHECK(has(x.detail, a.gives));
    CHECK(x.fix.starts_with(fix));
    CHECK(r.exposures() == 1);
  }
  CHECK(paths == 14);  // 4 attributes, 3 roles, 7 functions
}

TEST_CASE("attributes of a role the login belongs to count, as the proxy counts them") {
  World w;
  w.role("ops");
  w.role("admins", false).createrole = true;
  w.R("admins").bypassrls = true;
  w.role("replicators", false).replication = true;
  w.role("team", false);
  w.grant_role("admins", "ops");
  w.grant_role("team", "ops");
  w.grant_role("replicators", "team");
  w.hba({});
  const auto r = w.run();
  const auto& c = one(r, "ops", ExposurePath::kCreateRole);
  CHECK(c.object == "admins");
  CHECK(c.detail ==
        "ops is a member of admins, which has CREATEROLE: after SET ROLE it can grant itself an "
        "exempt role or pg_read_all_data, even through kanon");
  CHECK(c.fix == "ALTER ROLE admins NOCREATEROLE, or REVOKE admins FROM ops");
  const auto& b = one(r, "ops", ExposurePath::kBypassRls);
  CHECK(b.fix == "ALTER ROLE admins NOBYPASSRLS, or REVOKE admins FROM ops");
  const auto& p = one(r, "ops", ExposurePath::kReplication);
  CHECK(p.object == "replicators");
  CHECK(has(p.detail, "decode every table's changes"));
  CHECK(p.fix ==
        "ALTER ROLE replicators NOREPLICATION, or REVOKE replicators FROM team (which ops "
        "belongs to), or REVOKE team FROM ops");
  CHECK(r.exposures() == 3);
  // Not a member any more: nothing.
  w.R("ops").member_of.clear();
  CHECK(w.run().rows.empty());
}

TEST_CASE("write privileges on a relation whose writing reaches the table, as the proxy counts") {
  World w;
  w.role("writer");
  w.role("clerk");
  w.role("reader");
  // rule_tab's rule copies people; notes reaches nothing.
  const uint32_t rule_tab = w.table("app", "rule_tab");
  const uint32_t notes = w.table("app", "notes");
  for (auto& r : w.facts().relations)
    if (r.oid == rule_tab) r.write_relations = {w.people()};
  w.priv().write_acls[rule_tab] = {"app.rule_tab", "owner", {{"writer", {}, {"INSERT", "UPDATE"}}}};
  w.priv().write.emplace("writer", rule_tab);
  w.priv().write_acls[notes] = {"app.notes", "owner", {{"writer", {}, {"INSERT"}}}};
  w.priv().write.emplace("writer", notes);
  // clerk may write the protected table itself, through pg_write_all_data.
  w.role("pg_write_all_data", false);
  w.grant_role("pg_write_all_data", "clerk");
  w.priv().write_acls[w.people()] = {"public.people", "owner", {}};
  w.priv().write.emplace("clerk", w.people());
  w.priv().write.emplace("pg_write_all_data", w.people());
  const auto r = w.run();
  const auto& x = one(r, "writer", ExposurePath::kWriteRelation);
  CHECK(x.object == "app.rule_tab");
  CHECK(x.reaches == Tables{"public.people"});
  CHECK(x.detail ==
        "writer can write the table app.rule_tab (granted to it) without kanon, and writing it "
        "reads public.people (via public.people): rules run with their owner's rights");
  CHECK(x.fix == "REVOKE INSERT, UPDATE ON app.rule_tab FROM writer");
  const auto& c = one(r, "clerk", ExposurePath::kWriteRelation);
  CHECK(c.object == "public.people");
  CHECK(c.detail ==
        "clerk can write the protected table public.people (through pg_write_all_data) without "
        "kanon: the row counts of UPDATE and DELETE with a WHERE clause tell its values");
  CHECK(c.fix == "REVOKE pg_write_all_data FROM clerk");
  CHECK(rows(r, "reader", ExposurePath::kWriteRelation).empty());
  CHECK(r.exposures() == 2);
  // Only through kanon (pg_hba.conf admits nobody from elsewhere): not counted.
  w.hba({});
  CHECK(w.run().rows.empty());
}

TEST_CASE("an index reading a quasi-identifier is a path for every login") {
  World w;
  w.role("analyst");
  w.policy().quasi_identifiers = {"city", "state"};
  const uint32_t child = w.table("public", "people_2024");
  w.inherit(child, w.people());
  for (auto& r : w.facts().relations) {
    if (r.oid == w.people())
      r.indexes = {{"public.people_city_part", {"id", "city"}, true},
                   {"public.people_state", {"state"}, false},
                   {"public.people_id_part", {"id"}, true}};
    if (r.oid == child) r.indexes = {{"public.people_2024_part", {"state"}, true}};
  }
  const auto r = w.run();
  std::vector<std::string> objects;
  for (const auto& x : r.rows)
    if (x.path == ExposurePath::kPartialIndex) {
      objects.push_back(x.object);
      CHECK(x.role == "PUBLIC");
      CHECK(x.reaches == std::vector<std::string>{"public.people"});
      CHECK(has(x.fix, "DROP INDEX " + x.object));
      CHECK(has(x.detail, "pg_class.reltuples"));
    }
  std::sort(objects.begin(), objects.end());
  // Not the partial one over the key alone.
  CHECK(objects == std::vector<std::string>{"public.people_2024_part", "public.people_city_part"});
  CHECK(!r.clean());
  CHECK(has(kanon::exposure::exposure_report_text(r), "partial-index"));
  // The plain index on a quasi-identifier: its size, by deduplication.
  std::vector<std::string> sized;
  for (const auto& x : r.rows)
    if (x.path == ExposurePath::kIndexSize) {
      sized.push_back(x.object);
      CHECK(x.role == "PUBLIC");
      CHECK(has(x.detail, "pg_relation_size"));
      CHECK(has(x.fix, "DROP INDEX " + x.object));
    }
  CHECK(sized == std::vector<std::string>{"public.people_state"});
  CHECK(has(kanon::exposure::exposure_report_text(r), "index-size"));
}
