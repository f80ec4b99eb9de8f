// Mondrian on random small tables (numeric, hierarchy and set attributes,
// every attribute choice, random k and l): each row in exactly one class,
// every class k-anonymous and distinct-l-diverse, no class left with an
// allowable cut, generalized values and DP/NCP/GCP equal to a brute-force
// recomputation from the original text; hand-computed small cases; the job
// file keys.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "engine/job_config.h"
#include "engine/mondrian_input.h"
#include "engine/mondrian_split.h"
#include "tests/engine/mondrian_check.h"
#include "tests/engine/random_problem.h"
#include "tests/support/scratch_dir.h"

using namespace kanon::engine;
using namespace kanon::engine::testing;

namespace {

CsvTable table_of(const std::string& text) {
  std::istringstream in(text);
  return parse_csv(in, ';', "test.csv");
}

HierarchyProvider fixed(const HierarchyTable& h) {
  return [h](const std::vector<std::string>&) { return h; };
}

struct Run {
  MondrianInput in;
  MondrianResult result;
};

Run run(const CsvTable& t, const std::vector<AttributeSpec>& specs, uint32_t k, uint32_t l,
        MondrianChoice choice = MondrianChoice::kSpan) {
  Run r;
  r.in = encode_mondrian(t, specs, table_domains(t, specs));
  MondrianOptions o;
  o.k = k;
  o.l = l;
  o.choice = choice;
  r.result = mondrian(r.in, o);
  return r;
}

}  // namespace

TEST_CASE("mondrian: numbers 1..8, k=2 -> four ranges, DP 16, GCP 1/7") {
  const CsvTable t = table_of("x;s\n5;a\n1;a\n8;a\n2;a\n7;a\n3;a\n6;a\n4;a\n");
  const std::vector<AttributeSpec> specs{{"x", AttributeRole::kQuasiIdentifier, nullptr}};
  const Run r = run(t, specs, 2, 0);
  REQUIRE(r.result.classes() == 4);
  std::set<std::string> shown;
  for (size_t c = 0; c < 4; ++c) shown.insert(generalized_value(r.in, r.result, c, 0));
  CHECK(shown == std::set<std::string>{"[1-2]", "[3-4]", "[5-6]", "[7-8]"});
  const MondrianLoss loss = mondrian_loss(r.in, r.result);
  CHECK(loss.dp == 16);
  CHECK(loss.gcp == doctest::Approx(1.0 / 7));
  CHECK(loss.min_class_size == 2);
}

TEST_CASE("mondrian: l-diversity stops a cut k alone would allow") {
  const CsvTable t = table_of("x;s\n1;a\n2;a\n3;b\n4;b\n");
  std::vector<AttributeSpec> specs{{"x", AttributeRole::kQuasiIdentifier, nullptr}};
  CHECK(run(t, specs, 1, 0).result.classes() == 4);
  specs.push_back({"s", AttributeRole::kSensitive, nullptr});
  CHECK(run(t, specs, 1, 0).result.classes() == 4);
  const Run r = run(t, specs, 1, 2);
  CHECK(r.result.classes() == 1);  // every cut leaves one side with a single value
  CHECK(generalized_value(r.in, r.result, 0, 0) == "[1-4]");
  CHECK_THROWS_AS(run(t, specs, 1, 3), MondrianError);
  CHECK_THROWS_AS(run(t, specs, 5, 0), MondrianError);
}

TEST_CASE("mondrian: a repeated median value moves the cut to its other side") {
  // Median 1 with six 1s: left = x <= 1 keeps 6 of 8 (too unbalanced for
  // k = 3 on the right? no: right has 2 < 3); left = x < 1 is empty. With
  // k = 2 the cut x <= 1 | x > 1 is allowable.
  const CsvTable t = table_of("x\n1\n1\n1\n1\n1\n1\n2\n3\n");
  const std::vector<AttributeSpec> specs{{"x", AttributeRole::kQuasiIdentifier, nullptr}};
  CHECK(run(t, specs, 3, 0).result.classes() == 1);
  const Run r = run(t, specs, 2, 0);
  REQUIRE(r.result.classes() == 2);
  CHECK(generalized_value(r.in, r.result, 0, 0) == "1");
  CHECK(generalized_value(r.in, r.result, 1, 0) == "[2-3]");
}

TEST_CASE("mondrian: hierarchy classes publish the lowest common node, sets list values") {
  HierarchyTable h;
  h.source = "h";
  h.rows = {{"a", "ab", "*"}, {"b", "ab", "*"}, {"c", "cd", "*"}, {"d", "cd", "*"}};
  h.line_numbers = {1, 2, 3, 4};
  const CsvTable t = table_of("x;y\na;p\nb;q\nc;p\nd;q\na;q\nb;p\nc;q\nd;p\n");
  const Run r = run(t,
                    {{"x", AttributeRole::kQuasiIdentifier, fixed(h)},
                     {"y", AttributeRole::kQuasiIdentifier, nullptr}},
                    4, 0);
  REQUIRE(r.result.classes() == 2);
  std::set<std::string> shown;
  for (size_t c = 0; c < 2; ++c) {
    shown.insert(generalized_value(r.in, r.result, c, 0) + "/" +
                 generalized_value(r.in, r.result, c, 1));
  }
  CHECK(shown == std::set<std::string>{"ab/{p,q}", "cd/{p,q}"});
  // NCP per class: hierarchy 2/4 + set 2/2 = 1.5; GCP = 1.5 / 2.
  CHECK(mondrian_loss(r.in, r.result).gcp == doctest::Approx(0.75));
}

TEST_CASE("mondrian: a value missing from the hierarchy is refused with line and value") {
  HierarchyTable h;
  h.source = "h.csv";
  h.rows = {{"a", "*"}, {"b", "*"}};
  h.line_numbers = {1, 2};
  const CsvTable t = table_of("x\na\nz\n");
  const std::vector<AttributeSpec> specs{{"x", AttributeRole::kQuasiIdentifier, fixed(h)}};
  try {
    run(t, specs, 1, 0);
    FAIL("expected an error");
  } catch (const DataError& e) {
    const std::string msg = e.what();
    CHECK(msg.find("test.csv:3") != std::string::npos);
    CHECK(msg.find("'z'") != std::string::npos);
  }
  const std::vector<AttributeSpec> missing{{"nope", AttributeRole::kQuasiIdentifier, nullptr}};
  CHECK_THROWS_AS(run(t, missing, 1, 0), DataError);
}

TEST_CASE("mondrian: random tables satisfy k, l and strictness; loss equals brute force") {
  std::mt19937 rng(20261122);
  const MondrianChoice choices[] = {MondrianChoice::kSpan, MondrianChoice::kMaxEntropy,
                                    MondrianChoice::kMinEntropy};
  int checked = 0, refused = 0;
  for (int iter = 0; iter < 300; ++iter) {
    const int dims = 1 + static_cast<int>(rng() % 4);
    const int rows = 1 + static_cast<int>(rng() % 200);
    const uint32_t k = 1 + static_cast<uint32_t>(rng() % 8);
    const uint32_t l = static_cast<uint32_t>(rng() % 4);  // 0, 1: off
    const int sensitive_values = 1 + static_cast<int>(rng() % 5);
    std::vector<HierarchyTable> hierarchies(dims);
    std::vector<int> kind(dims), domain(dims);
    std::string text;
    for (int a = 0; a < dims; ++a) {
      kind[a] = static_cast<int>(rng() % 3);  // 0 numeric, 1 hierarchy, 2 set
      domain[a] = 1 + static_cast<int>(rng() % (kind[a] == 0 ? 40 : 8));
      if (kind[a] == 1) {
        hierarchies[a] = random_hierarchy(rng, fmt::format("h{}_", a), domain[a],
                                          2 + static_cast<int>(rng() % 3));
      }
      text += fmt::format("q{};", a);
    }
    text += "s\n";
    for (int r = 0; r < rows; ++r) {
      for (int a = 0; a < dims; ++a) {
        const int v = static_cast<int>(rng() % domain[a]);
        if (kind[a] == 0) {
          text += rng() % 2 ? fmt::format("{}", v * 3 - 20) : fmt::format("{}.5", v);
        } else if (kind[a] == 1) {
          text += hierarchies[a].rows[v][0];
        } else {
          text += fmt::format("v{}", v);
        }
        text += ';';
      }
      text += fmt::format("s{}\n", rng() % sensitive_values);
    }
    const CsvTable t = table_of(text);
    std::vector<AttributeSpec> specs;
    std::vector<OracleAttribute> oracle;
    for (int a = 0; a < dims; ++a) {
      specs.push_back({fmt::format("q{}", a), AttributeRole::kQuasiIdentifier,
                       kind[a] == 1 ? fixed(hierarchies[a]) : nullptr});
      oracle.push_back({a, kind[a] == 0, kind[a] == 1 ? &hierarchies[a] : nullptr});
    }
    specs.push_back({"s", AttributeRole::kSensitive, nullptr});
    const MondrianChoice choice = choices[iter % 3];
    CAPTURE(iter);
    CAPTURE(k);
    CAPTURE(l);
    std::set<std::string> sensitive;
    for (const auto& row : t.rows) sensitive.insert(row[dims]);
    if (static_cast<uint32_t>(rows) < k || (l > 1 && sensitive.size() < l)) {
      CHECK_THROWS_AS(run(t, specs, k, l, choice), MondrianError);
      ++refused;
      continue;
    }
    const Run r = run(t, specs, k, l, choice);
    for (int a = 0; a < dims; ++a) {
      CHECK(r.in.qis[a].kind == (kind[a] == 0   ? MondrianKind::kNumeric
                                 : kind[a] == 1 ? MondrianKind::kHierarchy
                                                : MondrianKind::kSet));
    }
    check_partitioning(t, oracle, dims, k, l > 1 ? l : 1, r.in, r.result);
    check_no_allowable_cut(r.in, r.result, k, l);
    ++checked;
  }
  CHECK(checked > 200);
  CHECK(refused > 0);
}

TEST_CASE("mondrian: job file keys and errors") {
  const auto dir = kanon::testing::scratch_dir() / "mondrian-job";
  std::filesystem::create_directories(dir);
  const auto write = [&](const std::string& text) {
    std::ofstream((dir / "job.yaml").string()) << text;
    return (dir / "job.yaml").string();
  };
  const AnonymizationJob job = load_job(
      write("input: in.csv\nattributes:\n  age: quasi\n  zip: {role: quasi}\n  d: sensitive\n"
            "k: 5\nl: 2\nalgorithm: mondrian\n"
            "mondrian: {choice: max-entropy, sample: 0.2, distributed: true}\n"));
  CHECK(job.algorithm == Algorithm::kMondrian);
  CHECK(job.mondrian.choice == MondrianChoice::kMaxEntropy);
  CHECK(job.mondrian.sample_fraction == 0.2);
  CHECK(job.mondrian.distributed);
  REQUIRE(job.attributes.size() == 3);
  CHECK(!job.attributes[0].hierarchy);
  CHECK(mondrian_options(job).l == 2);
  try {
    load_job(
        write("input: in.csv\nattributes: {age: quasi}\nk: 5\n"
              "mondrian:\n  choice: widest\n"));
    FAIL("expected an error");
  } catch (const JobError& e) {
    CHECK(std::string(e.what()).find("job.yaml:5") != std::string::npos);
    CHECK(std::string(e.what()).find("choice") != std::string::npos);
  }
  CHECK_THROWS_AS(load_job(write("input: in.csv\nattributes: {age: quasi}\nk: 5\n"
                                 "mondrian: {speed: 3}\n")),
                  JobError);
  AnonymizationJob bad = job;
  bad.privacy.suppression = 0.1;
  CHECK_THROWS_AS(mondrian_options(bad), DataError);
}

TEST_CASE("mondrian: part file names carry the rank before the extension") {
  CHECK(part_path("out.csv", 0) == "out.0.csv");
  CHECK(part_path("/tmp/x/out.csv", 12) == "/tmp/x/out.12.csv");
  CHECK(part_path("dir.d/out", 1) == "dir.d/out.1");
}

TEST_CASE("mondrian split tree: quantiles, Mondrian-like tree, repeated values, merge") {
  std::string text = "x;y\n";
  for (int i = 1; i <= 100; ++i) text += fmt::format("{};{}\n", i, i % 2 ? "a" : "b");
  const CsvTable t = table_of(text);
  const std::vector<AttributeSpec> specs{{"y", AttributeRole::kQuasiIdentifier, nullptr},
                                         {"x", AttributeRole::kQuasiIdentifier, nullptr}};
  const MondrianInput in = encode_mondrian(t, specs, table_domains(t, specs));
  std::vector<double> sample;
  for (uint32_t r = 0; r < in.rows; ++r) {
    for (const auto& a : in.qis) sample.push_back(order_key(a, a.codes[r]));
  }
  const auto counts = [&](const SplitTree& tree, int ranks) {
    std::vector<int> n(ranks, 0);
    for (uint32_t r = 0; r < in.rows; ++r) ++n[tree.route(&sample[r * 2])];
    return n;
  };
  // Quantiles: one attribute (span ties: the first, y), y has two values.
  SplitTree q = build_split_tree(sample, in, MondrianChoice::kSpan, SplitMode::kQuantiles, 4);
  CHECK(q.describe(in).front() == "y <= a");
  CHECK(counts(q, 4) == std::vector<int>{50, 0, 50, 0});
  // Tree: y at the root, then x within each half (medians of the odd / even).
  SplitTree tree = build_split_tree(sample, in, MondrianChoice::kSpan, SplitMode::kTree, 4);
  CHECK(tree.describe(in) == std::vector<std::string>{"y <= a", "x <= 49", "x <= 50"});
  CHECK(counts(tree, 4) == std::vector<int>{25, 25, 25, 25});
  // Three ranks: a third, then halves.
  const SplitTree three = build_split_tree(sample, in, MondrianChoice::kSpan, SplitMode::kTree, 3);
  const auto c3 = counts(three, 3);
  CHECK(c3[0] + c3[1] + c3[2] == 100);
  CHECK(c3[0] >= 30);
  CHECK(c3[0] <= 50);
  // Merging rank 3 gives its rows to rank 2; rank 0 (root's left subtree) to rank 0.
  CHECK(tree.merge(3));
  CHECK(counts(tree, 4) == std::vector<int>{25, 25, 50, 0});
  CHECK(tree.merge(1));
  CHECK(counts(tree, 4) == std::vector<int>{50, 0, 50, 0});
  CHECK(tree.merge(2));
  CHECK(counts(tree, 4) == std::vector<int>{100, 0, 0, 0});
  CHECK(!tree.merge(0));
  // A repeated value at the quantile: the cut moves below it when that balances better.
  std::string rep = "x\n";
  for (int i = 0; i < 10; ++i) rep += i < 3 ? "1\n" : (i < 9 ? "2\n" : "3\n");
  const CsvTable t2 = table_of(rep);
  const std::vector<AttributeSpec> s2{{"x", AttributeRole::kQuasiIdentifier, nullptr}};
  const MondrianInput in2 = encode_mondrian(t2, s2, table_domains(t2, s2));
  std::vector<double> sample2;
  for (uint32_t r = 0; r < in2.rows; ++r)
    sample2.push_back(order_key(in2.qis[0], in2.qis[0].codes[r]));
  const SplitTree t2tree =
      build_split_tree(sample2, in2, MondrianChoice::kSpan, SplitMode::kQuantiles, 2);
  CHECK(t2tree.describe(in2) == std::vector<std::string>{"x <= 1"});  // 3|7 beats 9|1
}
