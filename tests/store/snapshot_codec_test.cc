// The stored form of a snapshot (store/snapshot_codec.h): what one replica
// stores, another decodes into the same tree, predicates and masks; a body
// that does not fit the policy is refused; stored tree values reach SQL only
// as quoted literals; the policy hash and the data fingerprint change exactly
// when they should.
#include "store/snapshot_codec.h"

#include <doctest/doctest.h>

#include "tests/policy/seed_rows.h"

using namespace kanon::policy;
using namespace kanon::store;

namespace {

using Row = std::vector<std::optional<std::string_view>>;

TablePolicy seed_policy() {
  TablePolicy p;
  p.database = "postgres";
  p.schema = "public";
  p.table = "people";
  p.k = 2;
  p.quasi_identifiers = {"occupation", "city", "state"};
  p.quasi_identifier_refs.assign(3, SourceRef{"people.yaml", 4, "quasi_identifiers"});
  p.direct_identifiers = {{"name", std::nullopt, {}}};
  return p;
}

TableInfo seed_info() {
  TableInfo info;
  info.schema = "public";
  info.table = "people";
  for (const char* c : {"name", "occupation", "city", "state", "note"})
    info.columns.push_back({c, "text", "text"});
  return info;
}

EncodedTable seed_table(const std::vector<Row>& rows) {
  EncodedTable t({{"occupation", "text", {}}, {"city", "text", {}}, {"state", "text", {}}},
                 std::nullopt);
  for (const auto& r : rows) t.add_row(r);
  return t;
}

const std::vector<Row> kRows = [] {
  std::vector<Row> rows;
  for (const auto& r : testing::kSeedRows) rows.push_back({r[0], r[1], r[2]});
  return rows;
}();

}  // namespace

TEST_CASE("snapshot codec: decoded snapshot has the built one's tree, forms and masks") {
  const auto policy = seed_policy();
  const auto table = seed_table(kRows);
  const auto built = build_from_table(policy, seed_info(), table);
  REQUIRE(built->tree.size() == 9);
  const auto body = encode_snapshot(*built);
  const auto back = decode_snapshot(body, policy, seed_info());
  CHECK(back->tree.size() == built->tree.size());
  CHECK(back->forms == built->forms);
  CHECK(back->masks.select_list() == built->masks.select_list());
  REQUIRE(back->predicates.size() == 3);
  for (size_t i = 0; i < 3; ++i)
    CHECK(back->predicates[i].rule_text(back->tree.attributes()) ==
          built->predicates[i].rule_text(built->tree.attributes()));
  CHECK(back->stats.rows == 11);
  CHECK(back->stats.fingerprint == data_fingerprint(table));
  CHECK(std::chrono::abs(back->built_at - built->built_at) < std::chrono::milliseconds(1));
  CHECK(back->materialized_name.empty());
  CHECK(back->evaluator_fallback.empty());
  // evaluator: auto's reason for the SQL masks travels with them.
  auto fell_back = std::make_shared<TableSnapshot>(*built);
  fell_back->evaluator_fallback = "schema kanon_mask does not exist";
  CHECK(decode_snapshot(encode_snapshot(*fell_back), policy, seed_info())->evaluator_fallback ==
        "schema kanon_mask does not exist");
}

TEST_CASE("snapshot codec: a row key that tells rows apart by the quasi-identifiers") {
  // The materializer's held-key join and SHOW POLICIES read it from a shared
  // snapshot too.
  const auto policy = seed_policy();
  auto built =
      std::make_shared<TableSnapshot>(*build_from_table(policy, seed_info(), seed_table(kRows)));
  built->release.key = {RowKey::Source::kOtherColumns, {"note"}, policy.quasi_identifiers};
  const auto back = decode_snapshot(encode_snapshot(*built), policy, seed_info());
  CHECK(back->release.key.source == RowKey::Source::kOtherColumns);
  CHECK(back->release.key.columns == std::vector<std::string>{"note"});
  CHECK(back->release.key.told_apart_by == policy.quasi_identifiers);
  CHECK(key_expression(back->release.key) == key_expression(built->release.key));
  CHECK(back->release.key.describe() ==
        "non-quasi-identifier columns (note), shared by several rows");
}

TEST_CASE("snapshot codec: a body that does not fit is refused, naming why") {
  const auto policy = seed_policy();
  const auto body = encode_snapshot(*build_from_table(policy, seed_info(), seed_table(kRows)));
  auto other = policy;
  other.table = "others";
  CHECK_THROWS_WITH(decode_snapshot(body, other, seed_info()),
                    doctest::Contains("it is of table public.people"));
  auto fewer = policy;
  fewer.quasi_identifiers = {"occupation", "city"};
  fewer.quasi_identifier_refs.pop_back();
  CHECK_THROWS_WITH(decode_snapshot(body, fewer, seed_info()),
                    doctest::Contains("splits other attributes"));
  std::string future = body;
  future.replace(future.find("\"format\":1"), 10, "\"format\":9");
  CHECK_THROWS_WITH(decode_snapshot(future, policy, seed_info()), doctest::Contains("format 9"));
  CHECK_THROWS_WITH(decode_snapshot("{not json", policy, seed_info()),
                    doctest::Contains("stored snapshot of public.people cannot be used"));
  // A column the policy names is gone from the table now: the catalog check.
  auto info = seed_info();
  info.columns.erase(info.columns.begin() + 2);  // city
  CHECK_THROWS_WITH(decode_snapshot(body, policy, info), doctest::Contains("'city'"));
}

TEST_CASE("snapshot codec: stored values reach the masks only as quoted literals") {
  const auto policy = seed_policy();
  std::vector<Row> rows = kRows;
  const std::string evil = "x' THEN 1 END; DROP TABLE people; --";
  for (int i = 0; i < 6; ++i) rows.push_back({"Lawyer", std::string_view(evil), "OH"});
  const auto built = build_from_table(policy, seed_info(), seed_table(rows));
  const auto back = decode_snapshot(encode_snapshot(*built), policy, seed_info());
  const std::string sql = back->masks.select_list();
  REQUIRE(sql.find("DROP TABLE") != std::string::npos);  // the value is released...
  CHECK(sql.find("'x'' THEN 1 END; DROP TABLE people; --'") != std::string::npos);  // ...quoted
  CHECK(sql == built->masks.select_list());
}

TEST_CASE("snapshot codec: policy hash and data fingerprint") {
  const auto p = seed_policy();
  const auto h = policy_hash(p);
  CHECK(h.size() == 16);
  auto same = p;
  same.exempt = {"auditor"};
  same.refresh = std::chrono::minutes(1);
  CHECK(policy_hash(same) == h);  // neither shapes the snapshot
  auto k = p;
  k.k = 3;
  CHECK(policy_hash(k) != h);
  auto order = p;
  order.quasi_identifiers = {"city", "occupation", "state"};  // refs alike
  CHECK(policy_hash(order) != h);
  auto mode = p;
  mode.mode = EnforcementMode::kMaterialized;
  CHECK(policy_hash(mode) != h);
  auto constant = p;
  constant.direct_identifiers[0].constant = "null";
  CHECK(policy_hash(constant) != h);
  auto database = p;
  database.database = "shop";
  CHECK(policy_hash(database) != h);
  // A replica whose masks call kanon_mask.released, or whose k counts
  // people, must not serve a snapshot built otherwise.
  auto evaluator = p;
  evaluator.evaluator = MaskEvaluator::kFunction;
  CHECK(policy_hash(evaluator) != h);
  auto automatic = p;
  automatic.evaluator = MaskEvaluator::kAuto;
  CHECK(policy_hash(automatic) != h);
  CHECK(policy_hash(automatic) != policy_hash(evaluator));
  auto person = p;
  person.person = {"occupation"};
  CHECK(policy_hash(person) != h);

  std::vector<Row> reversed(kRows.rbegin(), kRows.rend());
  CHECK(data_fingerprint(seed_table(reversed)) == data_fingerprint(seed_table(kRows)));
  std::vector<Row> more = kRows;
  more.push_back(kRows.front());
  CHECK(data_fingerprint(seed_table(more)) != data_fingerprint(seed_table(kRows)));
  std::vector<Row> moved = kRows;
  moved[0] = {"Lawyer", "Hamlet", "OH"};
  CHECK(data_fingerprint(seed_table(moved)) != data_fingerprint(seed_table(kRows)));
}
