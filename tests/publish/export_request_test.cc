// EXPORT command parsing and the settings merged over the policy.
#include "publish/export_request.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "tests/support/scratch_dir.h"

using namespace kanon::publish;

namespace {

kanon::policy::TablePolicy adult_policy() {
  kanon::policy::TablePolicy p;
  p.schema = "public";
  p.table = "adult";
  p.k = 5;
  p.quasi_identifiers = {"sex", "age", "marital-status"};
  p.export_options.suppression = 0.02;
  p.export_options.metric = "dm";
  return p;
}

std::string error_of(const std::string& command) {
  try {
    resolve_settings(parse_export_command(command), adult_policy());
  } catch (const ExportError& e) {
    return e.sqlstate + ": " + e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("EXPORT with target and options") {
  const auto r = parse_export_command(
      "export adult TO public.adult_pub WITH (k = 10, algorithm = bfs, time_limit = '2m', "
      "\"hierarchy.marital-status\" = '/tmp/x''y.csv', suppressed = mask);");
  CHECK(r.source == "adult");
  CHECK(r.target_table == "public.adult_pub");
  CHECK(r.csv_path.empty());
  CHECK(r.with.at("k") == "10");
  CHECK(r.with.at("algorithm") == "bfs");
  CHECK(r.with.at("time_limit") == "2m");
  CHECK(r.with.at("hierarchy.marital-status") == "/tmp/x'y.csv");
  CHECK(r.with.at("suppressed") == "mask");
  CHECK(r.command.back() == ')');
}

TEST_CASE("defaults come from the policy; WITH overrides them") {
  const auto p = adult_policy();
  const auto d = resolve_settings(parse_export_command("EXPORT public.adult"), p);
  CHECK(d.k == 5);
  CHECK(d.suppression == doctest::Approx(0.02));
  CHECK(d.metric == kanon::engine::MetricKind::kDiscernibility);
  CHECK(d.algorithm == kanon::engine::Algorithm::kFlash);
  CHECK(d.target_schema == "public");
  CHECK(d.target_table == "adult_anonymized");
  CHECK(d.drop_suppressed);
  CHECK_FALSE(d.l.has_value());

  const auto o = resolve_settings(
      parse_export_command("EXPORT adult TO other.t WITH (k = 3, suppression = 0, metric = "
                           "loss, time_limit = 30s, replace = true)"),
      p);
  CHECK(o.k == 3);
  CHECK(o.suppression == 0);
  CHECK(o.metric == kanon::engine::MetricKind::kLoss);
  CHECK(o.time_limit_s == doctest::Approx(30));
  CHECK(o.replace);
  CHECK_FALSE(o.dry_run);
  CHECK(o.target_schema == "other");
  CHECK(resolve_settings(parse_export_command("EXPORT adult WITH (dry_run = true)"), p).dry_run);
  CHECK(o.target_table == "t");

  const auto g = resolve_settings(
      parse_export_command("EXPORT adult WITH (grant = 'analyst, bi_team ,x')"), p);
  CHECK(g.grant == std::vector<std::string>{"analyst", "bi_team", "x"});

  const auto c = resolve_settings(parse_export_command("EXPORT adult TO '/tmp/out file.csv'"), p);
  CHECK(c.csv_path == "/tmp/out file.csv");
  CHECK(c.target_table.empty());
}

TEST_CASE("hierarchy files are found by column name in the hierarchies directory") {
  namespace fs = std::filesystem;
  const fs::path dir = kanon::testing::scratch_dir() / "h";
  fs::create_directories(dir);
  std::ofstream(dir / "adult_hierarchy_age.csv") << "1;*\n";
  std::ofstream(dir / "sex.yaml") << "type: mask\n";
  const auto s = resolve_settings(
      parse_export_command("EXPORT adult WITH (hierarchies = '" + dir.string() + "')"),
      adult_policy());
  CHECK(hierarchy_file(s, "age") == (dir / "adult_hierarchy_age.csv").string());
  CHECK(hierarchy_file(s, "sex") == (dir / "sex.yaml").string());
  CHECK(hierarchy_file(s, "marital-status").empty());
  fs::remove_all(dir);
}

TEST_CASE("bad commands and options get clear errors") {
  CHECK(error_of("EXPORT") ==
        "42601: kanon export: missing the table to export; usage: EXPORT <table> [TO "
        "<schema.table> | TO '<path.csv>'] [WITH (option = value, ...)]");
  CHECK(error_of("EXPORT adult WITH (k = 1)") ==
        "22023: kanon export: option k: '1' must be a whole number of at least 2");
  CHECK(error_of("EXPORT adult WITH (k = five)") ==
        "22023: kanon export: option k: 'five' is not a number");
  CHECK(error_of("EXPORT adult WITH (suppression = 1.5)").find("between 0 and 1") !=
        std::string::npos);
  CHECK(error_of("EXPORT adult WITH (metric = fast)") ==
        "22023: kanon export: option metric: unknown metric 'fast' (loss, dm, entropy, precision, "
        "height, aecs)");
  CHECK(error_of("EXPORT adult WITH (algorithm = genetic)").find("'genetic' is not supported") !=
        std::string::npos);
  CHECK(error_of("EXPORT adult WITH (colour = red)").find("unknown option 'colour'") !=
        std::string::npos);
  CHECK(error_of("EXPORT adult WITH (k = 3, k = 4)").find("option k given twice") !=
        std::string::npos);
  CHECK(error_of("EXPORT adult WITH (k = 3").find("42601") == 0);
  CHECK(error_of("EXPORT adult WITH (hierarchy.age = '/nonexistent/age.csv')") ==
        "22023: kanon export: option hierarchy.age: file '/nonexistent/age.csv' does not exist");
  CHECK(error_of("EXPORT adult WITH (hierarchy.race = '/etc/hostname')")
            .find("hierarchy for 'race': not a quasi-identifier of public.adult") !=
        std::string::npos);
  CHECK(error_of("EXPORT adult WITH (l = 2)").find("has no sensitive attribute") !=
        std::string::npos);
  CHECK(error_of("EXPORT adult TO public.adult").find("the target is the source table") !=
        std::string::npos);
  CHECK(error_of("EXPORT adult TO 'x.csv' WITH (grant = bi)") ==
        "22023: kanon export: option grant: only a table target can be granted");
  CHECK(error_of("EXPORT adult WITH (grant = 'a,,b')").find("empty role name") !=
        std::string::npos);
  CHECK(error_of("EXPORT adult TO 'x.csv' extra").find("unexpected 'extra'") != std::string::npos);
}

// The export writes as kanon's service account, dropping the target first
// with replace: never kanon's own schemas, a protected table or the audit
// trail (found by a security probe: an export from the web console replaced
// kanon_audit.trail, deleting its records and breaking the sink).
TEST_CASE("an export may not write kanon's schemas, a protected table or the audit trail") {
  auto request = parse_export_command("EXPORT adult TO kanon_audit.trail WITH (replace = true)");
  request.reserved_targets = {"public.people", "kanon_audit.trail"};
  const auto refused = [&](const std::string& target) {
    auto r = request;
    r.target_table = target;
    try {
      resolve_settings(r, adult_policy());
    } catch (const ExportError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(refused("kanon_audit.trail").find("is a protected table or the audit trail's") !=
        std::string::npos);
  CHECK(refused("public.people").find("is a protected table") != std::string::npos);
  CHECK(refused("kanon.exports").find("kanon's own schema") != std::string::npos);
  CHECK(refused("kanon_mask.released").find("kanon's own schema") != std::string::npos);
  CHECK(refused("public.adult_copy") == "no error");
  CHECK(refused("\"People\"") == "no error");  // public.People is another table
}

TEST_CASE("algorithm = mondrian and its attribute choice; the policy's algorithm and grant") {
  const auto p = adult_policy();
  const auto m = resolve_settings(
      parse_export_command("EXPORT adult WITH (algorithm = Mondrian, choice = max-entropy)"), p);
  CHECK(m.algorithm == kanon::engine::Algorithm::kMondrian);
  CHECK(m.choice == kanon::engine::MondrianChoice::kMaxEntropy);
  CHECK(resolve_settings(parse_export_command("EXPORT adult WITH (algorithm = mondrian)"), p)
            .choice == kanon::engine::MondrianChoice::kSpan);
  CHECK(error_of("EXPORT adult WITH (algorithm = mondrian, choice = widest)") ==
        "22023: kanon export: option choice: 'widest' is not span, max-entropy or min-entropy");
  CHECK(error_of("EXPORT adult WITH (choice = span)") ==
        "22023: kanon export: option choice: only algorithm = mondrian chooses cut attributes");

  auto q = p;
  q.export_options.algorithm = "mondrian";
  q.export_options.grant = {"analyst", "bi"};
  const auto d = resolve_settings(parse_export_command("EXPORT adult"), q);
  CHECK(d.algorithm == kanon::engine::Algorithm::kMondrian);
  CHECK(d.grant == std::vector<std::string>{"analyst", "bi"});
  // WITH replaces the policy's values; a CSV target has nobody to grant.
  const auto w =
      resolve_settings(parse_export_command("EXPORT adult WITH (algorithm = bfs, grant = x)"), q);
  CHECK(w.algorithm == kanon::engine::Algorithm::kBestFirst);
  CHECK(w.grant == std::vector<std::string>{"x"});
  CHECK(resolve_settings(parse_export_command("EXPORT adult TO '/tmp/a.csv'"), q).grant.empty());
}

TEST_CASE("risk options: threshold and population over the policy's risk:, none drops it") {
  auto p = adult_policy();
  const auto plain = resolve_settings(parse_export_command("EXPORT adult"), p);
  CHECK(plain.risk_threshold == doctest::Approx(1.0 / p.k));
  CHECK(plain.population_table.empty());
  p.risk.threshold = 0.1;
  p.risk.population_schema = "stats";
  p.risk.population_table = "census";
  const auto from_policy = resolve_settings(parse_export_command("EXPORT adult"), p);
  CHECK(from_policy.risk_threshold == doctest::Approx(0.1));
  CHECK(from_policy.population_schema == "stats");
  CHECK(from_policy.population_table == "census");
  const auto given = resolve_settings(
      parse_export_command("EXPORT adult WITH (risk_threshold = 0.25, population = 'x.y')"), p);
  CHECK(given.risk_threshold == doctest::Approx(0.25));
  CHECK(given.population_schema == "x");
  CHECK(given.population_table == "y");
  const auto none =
      resolve_settings(parse_export_command("EXPORT adult WITH (population = none)"), p);
  CHECK(none.population_table.empty());
  CHECK(error_of("EXPORT adult WITH (risk_threshold = 0)").find("option risk_threshold") !=
        std::string::npos);
  CHECK(error_of("EXPORT adult WITH (risk_threshold = 1.5)").find("option risk_threshold") !=
        std::string::npos);
  CHECK(error_of("EXPORT adult WITH (population = census)")
            .find("option population: 'census' is not a schema-qualified table name") !=
        std::string::npos);
}
