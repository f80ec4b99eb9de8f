#include "store/verification.h"

#include <fmt/format.h>

#include <algorithm>
#include <pqxx/pqxx>

#include "policy/sql_text.h"
#include "store/materializer.h"
#include "store/table_loader.h"

namespace kanon::store {

namespace {

// What restricted users read, as one derived table's select list: the
// snapshot's compiled masks over the base table (inline), or the masked
// copy's columns as they are (materialized), aliased q1..qn, plus `person`
// with `person:`. When a person column is a direct identifier (masked in the
// copy) persons are read from the base table through the copy's own select
// list: the masks, and the holds of the last release.
struct MaskedSource {
  std::string select;  // "<value> AS q1, ..., [<person> AS person]"
  std::string from;    // the relation to read
  size_t qis = 0;
  std::vector<std::string> columns;  // the quasi-identifier of q1..qn (table order)
};

MaskedSource masked_source(const policy::TableSnapshot& snapshot) {
  const auto& policy = snapshot.policy;
  bool person_masked = false;
  for (const auto& d : policy.direct_identifiers)
    for (const auto& c : policy.person) person_masked = person_masked || d.column == c;
  const bool materialized = !snapshot.materialized_name.empty();
  const bool copy = materialized && !person_masked;
  const std::string held = materialized && !copy ? held_condition(snapshot) : std::string();
  MaskedSource m;
  for (const auto& c : snapshot.masks.columns) {
    if (c.role != policy::ColumnMask::Role::kQuasiIdentifier) continue;
    std::string value = copy ? policy::quote_identifier(c.column) : c.expression;
    if (!held.empty()) value = fmt::format("CASE WHEN {} THEN NULL ELSE {} END", held, value);
    m.select += fmt::format("{}{} AS q{}", m.select.empty() ? "" : ", ", value, ++m.qis);
    m.columns.push_back(c.column);
  }
  if (!policy.person.empty()) m.select += ", " + person_expression(policy) + " AS person";
  m.from = copy ? snapshot.materialized_name : policy::qualified_name(policy.schema, policy.table);
  return m;
}

// The masks alone over `relation` (a population table with the same columns).
std::string population_select(const policy::TableSnapshot& snapshot, bool person) {
  std::string select;
  size_t i = 0;
  for (const auto& c : snapshot.masks.columns)
    if (c.role == policy::ColumnMask::Role::kQuasiIdentifier)
      select += fmt::format("{}{} AS q{}", select.empty() ? "" : ", ", c.expression, ++i);
  if (person) select += ", NULL AS person";
  return select;
}

std::string quoted_population(const policy::RiskOptions& risk) {
  return risk.has_population()
             ? policy::qualified_name(risk.population_schema, risk.population_table)
             : std::string();
}

}  // namespace

std::string verification_query(const policy::TableSnapshot& snapshot,
                               const std::string& population) {
  // Released rows are src 0, population rows src 1; GROUP BY puts equal
  // masked tuples (NULLs alike) in one class, so each released class meets
  // its population class. With `person:`, a class's size is its distinct
  // persons (population rows have none).
  const MaskedSource m = masked_source(snapshot);
  const bool person = !snapshot.policy.person.empty();
  const bool with_population = !population.empty();
  const std::string mine = with_population ? " FILTER (WHERE src = 0)" : "";
  std::string groups, released, sums;
  for (size_t i = 1; i <= m.qis; ++i) {
    groups += fmt::format("{}q{}", i > 1 ? ", " : "", i);
    released += fmt::format(", pg_catalog.count(q{}){} AS c{}", i, mine, i);
    sums += fmt::format(", sum(c{})", i);
  }
  std::string source = fmt::format("SELECT {}, 0 AS src FROM {}", m.select, m.from);
  if (with_population)
    source += fmt::format(" UNION ALL SELECT {}, 1 FROM {}", population_select(snapshot, person),
                          population);
  const std::string size =
      person ? "pg_catalog.count(DISTINCT person)" : fmt::format("pg_catalog.count(*){}", mine);
  const std::string population_size =
      with_population ? "pg_catalog.count(*) FILTER (WHERE src = 1)" : "0::bigint";
  return fmt::format(
      "SELECT f, pf, pg_catalog.count(*), sum(r){} FROM (SELECT {} AS f, {} AS pf, "
      "pg_catalog.count(*){} AS r{} FROM ({}) AS m GROUP BY {}) AS g WHERE r > 0 "
      "GROUP BY f, pf ORDER BY f, pf",
      sums, size, population_size, mine, released, source, groups);
}

std::string check_population(pqxx::connection_base& conn, const policy::TableSnapshot& snapshot,
                             const policy::RiskOptions& risk) {
  if (!risk.has_population()) return "";
  const std::string population = quoted_population(risk);
  const std::string table = policy::qualified_name(snapshot.policy.schema, snapshot.policy.table);
  pqxx::read_transaction tx(conn);
  if (tx.exec_params1("SELECT pg_catalog.to_regclass($1) IS NULL", population)[0].as<bool>())
    return fmt::format("population table {} does not exist", risk.population());
  for (const auto& q : snapshot.policy.quasi_identifiers) {
    const auto r = tx.exec_params(
        "SELECT pg_catalog.format_type(p.atttypid, NULL), pg_catalog.format_type(s.atttypid, "
        "NULL) FROM pg_catalog.pg_attribute s LEFT JOIN pg_catalog.pg_attribute p ON "
        "p.attrelid = pg_catalog.to_regclass($2) AND p.attname = s.attname AND p.attnum > 0 "
        "AND NOT p.attisdropped WHERE s.attrelid = pg_catalog.to_regclass($1) AND s.attname = $3 "
        "AND NOT s.attisdropped",
        table, population, q);
    if (r.empty()) continue;  // the snapshot's own table changed: verification reports it
    if (r[0][0].is_null())
      return fmt::format("population table {} has no column {}", risk.population(), q);
    if (r[0][0].as<std::string>() != r[0][1].as<std::string>())
      return fmt::format("column {} of population table {} is {}, not {} as in {}", q,
                         risk.population(), r[0][0].as<std::string>(), r[0][1].as<std::string>(),
                         snapshot.policy.name());
  }
  return "";
}

namespace {

VerificationReport read_report(pqxx::connection_base& conn, const policy::TableSnapshot& snapshot,
                               const std::string& population) {
  pqxx::read_transaction tx(conn);
  tx.exec("SET LOCAL jit = off");
  const auto result = tx.exec(verification_query(snapshot, population));
  VerificationReport rep;
  const auto& qis = snapshot.policy.quasi_identifiers;
  for (const auto& q : qis) rep.columns.push_back({q, 0});
  // q1..qn are in table order, the report's columns in policy order.
  std::vector<size_t> of_q;
  for (const auto& c : masked_source(snapshot).columns)
    of_q.push_back(static_cast<size_t>(std::find(qis.begin(), qis.end(), c) - qis.begin()));
  double cells = 0;
  for (const auto& row : result) {
    ClassSizeCount c;
    c.size = row[0].as<uint64_t>();
    c.population = row[1].as<uint64_t>();
    c.classes = row[2].as<uint64_t>();
    c.rows = row[3].as<uint64_t>();
    rep.class_sizes.push_back(c);
    rep.groups += c.classes;
    rep.rows += c.rows;
    if (rep.min_group == 0 || c.size < rep.min_group) rep.min_group = c.size;
    if (c.size < snapshot.policy.k) rep.groups_below_k += c.classes;
    for (size_t q = 0; q < of_q.size() && of_q[q] < qis.size(); ++q) {
      const auto released = row[static_cast<int>(q + 4)].as<uint64_t>();
      rep.columns[of_q[q]].released_rows += released;
      cells += static_cast<double>(released);
    }
  }
  const double total = static_cast<double>(rep.rows) * static_cast<double>(qis.size());
  rep.released_fraction = total > 0 ? cells / total : 0.0;
  return rep;
}

std::vector<policy::ClassSizes> risk_classes(const VerificationReport& rep) {
  std::vector<policy::ClassSizes> out;
  for (const auto& c : rep.class_sizes) out.push_back({c.size, c.population, c.classes});
  return out;
}

}  // namespace

VerificationReport verify_table(pqxx::connection_base& conn, const policy::TableSnapshot& snapshot,
                                const policy::RiskOptions& risk) {
  const double threshold = risk.threshold.value_or(1.0 / snapshot.policy.k);
  std::string why = check_population(conn, snapshot, risk);
  if (risk.has_population() && why.empty()) {
    VerificationReport rep;
    try {
      rep = read_report(conn, snapshot, quoted_population(risk));
    } catch (const pqxx::sql_error& e) {
      why = fmt::format("reading population table {}: {}", risk.population(), e.what());
    }
    if (why.empty()) {
      why = policy::population_mismatch(risk_classes(rep));
      if (why.empty()) {
        rep.risk = policy::assess_risk(risk_classes(rep), threshold, true);
        return rep;
      }
      why = fmt::format("population table {}: {}", risk.population(), why);
    }
  }
  VerificationReport rep = read_report(conn, snapshot, "");
  rep.risk = policy::assess_risk(risk_classes(rep), threshold, false);
  rep.population_error = why;
  return rep;
}

VerificationReport verify_table(pqxx::connection_base& conn,
                                const policy::TableSnapshot& snapshot) {
  return verify_table(conn, snapshot, snapshot.policy.risk);
}

std::vector<ColumnDistinct> distinct_values(pqxx::connection_base& conn,
                                            const policy::TableSnapshot& snapshot) {
  const MaskedSource m = masked_source(snapshot);
  const auto& qis = m.columns;
  std::string released, raw;
  for (size_t i = 0; i < qis.size(); ++i) {
    released += fmt::format("{}pg_catalog.count(DISTINCT q{})", i ? ", " : "", i + 1);
    raw += fmt::format("{}pg_catalog.count(DISTINCT {})", i ? ", " : "",
                       policy::quote_identifier(qis[i]));
  }
  pqxx::read_transaction tx(conn);
  tx.exec("SET LOCAL jit = off");
  const auto r = tx.exec1(fmt::format(
      "SELECT * FROM (SELECT {} FROM (SELECT {} FROM {}) AS m) AS a, (SELECT {} FROM {}) AS b",
      released, m.select, m.from, raw,
      policy::qualified_name(snapshot.policy.schema, snapshot.policy.table)));
  std::vector<ColumnDistinct> out;
  for (size_t i = 0; i < qis.size(); ++i)
    out.push_back({qis[i], r[static_cast<int>(qis.size() + i)].as<uint64_t>(),
                   r[static_cast<int>(i)].as<uint64_t>()});
  return out;
}

}  // namespace kanon::store
