// Person mode (k counts distinct persons per class): on small random tables
// where persons have 1-10 rows each, Flash (every optimization combination),
// best-first search and Mondrian publish only classes with at least k
// distinct persons (and, with l-diversity, diverse classes), checked by a
// counter in this file that uses no engine code (generalized values come
// from the hierarchy tables' text; the height optimum by brute force); a person
// whose many rows form a unique combination is never released alone; with
// one row per person, person mode and row mode agree.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>

#include "engine/anonymizer.h"
#include "engine/job_config.h"
#include "engine/mondrian.h"
#include "engine/mondrian_input.h"
#include "tests/engine/random_problem.h"
#include "tests/support/scratch_dir.h"

namespace kanon::engine {
namespace {

constexpr int kProblems = 20;

struct PersonProblem {
  CsvTable table;  // columns a0..a{d-1}, s, pid
  std::vector<HierarchyTable> hierarchies;
  std::vector<AttributeSpec> specs;  // quasi-identifiers with hierarchies, s sensitive
  size_t pid_column = 0;
};

// Persons with 1-10 rows each (most have few, some many); a person's rows
// mostly repeat the person's own combination, so a heavy person with a rare
// combination forms a class of many rows and one person.
PersonProblem person_problem(std::mt19937& rng, int dims, int persons, bool one_row_each) {
  PersonProblem p;
  p.table.source = "random";
  std::vector<int> domains;
  for (int a = 0; a < dims; ++a) {
    const std::string name = fmt::format("a{}", a);
    p.table.header.push_back(name);
    const int domain = 2 + static_cast<int>(rng() % 5);
    domains.push_back(domain);
    p.hierarchies.push_back(
        testing::random_hierarchy(rng, name, domain, 2 + static_cast<int>(rng() % 3)));
  }
  p.table.header.push_back("s");
  p.table.header.push_back("pid");
  p.pid_column = p.table.header.size() - 1;
  for (int person = 0; person < persons; ++person) {
    const int rows = one_row_each ? 1
                                  : (rng() % 4 == 0 ? 1 + static_cast<int>(rng() % 10)
                                                    : 1 + static_cast<int>(rng() % 2));
    std::vector<int> home;
    for (int a = 0; a < dims; ++a) home.push_back(static_cast<int>(rng() % domains[a]));
    for (int r = 0; r < rows; ++r) {
      std::vector<std::string> row;
      for (int a = 0; a < dims; ++a) {
        const int v = rng() % 4 == 0 ? static_cast<int>(rng() % domains[a]) : home[a];
        row.push_back(fmt::format("a{}{}", a, v));
      }
      row.push_back(fmt::format("s{}", rng() % 3));
      row.push_back(fmt::format("p{}", person));
      p.table.rows.push_back(row);
      p.table.line_numbers.push_back(p.table.rows.size() + 1);
    }
  }
  // Rows of one person need not be adjacent.
  std::vector<size_t> perm(p.table.rows.size());
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = i;
  std::shuffle(perm.begin(), perm.end(), rng);
  std::vector<std::vector<std::string>> shuffled;
  for (size_t i : perm) shuffled.push_back(p.table.rows[i]);
  p.table.rows = shuffled;
  for (int a = 0; a < dims; ++a) {
    HierarchyTable h = p.hierarchies[a];
    p.specs.push_back({p.table.header[a], AttributeRole::kQuasiIdentifier,
                       [h](const std::vector<std::string>&) { return h; }});
  }
  p.specs.push_back({"s", AttributeRole::kSensitive, nullptr});
  return p;
}

// The generalized text of `value` at `level`, read from the hierarchy table.
std::string generalize(const HierarchyTable& h, const std::string& value, int level) {
  for (const auto& row : h.rows) {
    if (row[0] == value) return row[level];
  }
  FAIL("value not in hierarchy: " << value);
  return {};
}

struct Published {
  uint64_t suppressed = 0;
  uint64_t min_persons = 0;  // over published classes
  bool all_published_pass = true;
  bool all_suppressed_fail = true;
};

// One class as text: its distinct persons, its rows' sensitive values with
// counts.
struct TextClass {
  std::set<std::string> persons;
  std::map<std::string, uint64_t> sensitive;
  uint64_t rows = 0;
  bool suppressed = false;
};

// The privacy model written out again: k on distinct persons, diversity on
// the class's rows.
bool passes(const TextClass& c, const PrivacyModel& m) {
  if (c.persons.size() < m.k) return false;
  std::vector<double> counts;
  for (const auto& [value, n] : c.sensitive) counts.push_back(static_cast<double>(n));
  switch (m.diversity) {
    case Diversity::kNone:
      return true;
    case Diversity::kDistinct:
      return static_cast<double>(counts.size()) >= m.l;
    case Diversity::kEntropy: {
      double h = 0;
      for (double n : counts) h -= n / c.rows * std::log(n / c.rows);
      return h >= std::log(m.l) - 1e-12;
    }
    case Diversity::kRecursive: {
      const auto l = static_cast<size_t>(m.l);
      if (counts.size() < l) return false;
      std::sort(counts.rbegin(), counts.rend());
      double tail = 0;
      for (size_t i = l - 1; i < counts.size(); ++i) tail += counts[i];
      return counts[0] < m.c * tail;
    }
  }
  return false;
}

// Groups the rows by their generalized quasi-identifiers (as text) and counts
// each class's distinct persons and sensitive values. `suppressed` flags
// rows the engine suppressed.
Published count_published(const PersonProblem& p, const Levels& levels,
                          const std::vector<uint8_t>& suppressed, const PrivacyModel& m) {
  std::map<std::string, TextClass> classes;
  Published out;
  const size_t dims = p.hierarchies.size();
  for (size_t r = 0; r < p.table.rows.size(); ++r) {
    const auto& row = p.table.rows[r];
    std::string key;
    for (size_t a = 0; a < dims; ++a) key += generalize(p.hierarchies[a], row[a], levels[a]) + '|';
    TextClass& c = classes[key];
    c.persons.insert(row[p.pid_column]);
    ++c.sensitive[row[dims]];
    ++c.rows;
    c.suppressed = suppressed[r];  // the same for every row of a class (checked below)
    out.suppressed += suppressed[r];
  }
  out.min_persons = UINT64_MAX;
  for (size_t r = 0; r < p.table.rows.size(); ++r) {
    const auto& row = p.table.rows[r];
    std::string key;
    for (size_t a = 0; a < dims; ++a) key += generalize(p.hierarchies[a], row[a], levels[a]) + '|';
    CHECK(classes[key].suppressed == static_cast<bool>(suppressed[r]));
  }
  for (const auto& [key, c] : classes) {
    const bool pass = passes(c, m);
    if (c.suppressed) {
      out.all_suppressed_fail &= !pass;
    } else {
      out.all_published_pass &= pass;
      out.min_persons = std::min<uint64_t>(out.min_persons, c.persons.size());
    }
  }
  if (out.min_persons == UINT64_MAX) out.min_persons = 0;
  return out;
}

uint64_t suppression_limit(double s, size_t rows) {
  return static_cast<uint64_t>(std::floor(s * static_cast<double>(rows) + 1e-9));
}

// The smallest height (sum of levels) of a transformation that is person-k-
// anonymous within the suppression limit, by brute force over every level
// combination with the text counter; -1 when none is.
int min_height_brute_force(const PersonProblem& p, const PrivacyModel& m) {
  std::vector<int> heights;
  for (const auto& h : p.hierarchies) heights.push_back(static_cast<int>(h.rows[0].size()));
  Levels levels(heights.size(), 0);
  int best = -1;
  for (;;) {
    std::map<std::string, TextClass> classes;
    for (const auto& row : p.table.rows) {
      std::string key;
      for (size_t a = 0; a < heights.size(); ++a)
        key += generalize(p.hierarchies[a], row[a], levels[a]) + '|';
      TextClass& c = classes[key];
      c.persons.insert(row[p.pid_column]);
      ++c.sensitive[row[heights.size()]];
      ++c.rows;
    }
    uint64_t suppressed = 0;
    for (const auto& [key, c] : classes) {
      if (!passes(c, m)) suppressed += c.rows;
    }
    int height = 0;
    for (auto v : levels) height += v;
    if (suppressed <= suppression_limit(m.suppression, p.table.rows.size()) &&
        (best < 0 || height < best))
      best = height;
    size_t a = 0;
    while (a < levels.size() && ++levels[a] == heights[a]) levels[a++] = 0;
    if (a == levels.size()) break;
  }
  return best;
}

PrivacyModel random_model(std::mt19937& rng) {
  PrivacyModel m;
  m.k = 2 + static_cast<uint32_t>(rng() % 3);
  const double supps[] = {0, 0.05, 0.2};
  m.suppression = supps[rng() % 3];
  testing::random_diversity(rng, m);
  return m;
}

TEST_CASE("person mode: Flash, BFS and Mondrian publish only classes of k distinct persons") {
  std::mt19937 rng(2027);
  int found = 0;
  for (int i = 0; i < kProblems; ++i) {
    const int dims = 1 + static_cast<int>(rng() % 3);
    PersonProblem p = person_problem(rng, dims, 2 + static_cast<int>(rng() % 30), false);
    const Dataset data = encode_dataset(p.table, p.specs, "pid");
    const PrivacyModel m = random_model(rng);
    // Mondrian supports distinct l only.
    const uint32_t l = m.diversity == Diversity::kDistinct ? 2 : 0;
    CAPTURE(i);
    CAPTURE(m.describe());
    const int truth = min_height_brute_force(p, m);
    for (const MetricKind metric : {MetricKind::kHeight, MetricKind::kLoss}) {
      CAPTURE(metric_name(metric));
      std::vector<Outcome> outcomes;
      for (int mask = 0; mask < 32; ++mask) {
        CheckerOptions o;
        o.projection = mask & 1;
        o.rollup = mask & 2;
        o.history = mask & 4;
        o.packed_keys = mask & 8;
        o.deduplicate = mask & 16;
        o.history_options.max_stored = 3;
        o.history_options.max_relative_size = 1.0;
        outcomes.push_back(anonymize(data, m, metric, Algorithm::kFlash, o, {}));
      }
      outcomes.push_back(anonymize(data, m, metric, Algorithm::kBestFirst, {}, {}));
      for (size_t j = 0; j < outcomes.size(); ++j) {
        CAPTURE(j);
        const Outcome& out = outcomes[j];
        REQUIRE(out.search.found == (truth >= 0));
        if (!out.search.found) continue;
        // Every combination of optimizations finds an optimum of the same value.
        CHECK(std::abs(out.search.value - outcomes[0].search.value) <= 1e-9);
        if (metric == MetricKind::kHeight) CHECK(out.search.value == truth);
        const auto supp = suppressed_rows(data, m, out.search.levels);
        const Published pub = count_published(p, out.search.levels, supp, m);
        CHECK(pub.all_published_pass);
        CHECK(pub.all_suppressed_fail);
        CHECK(pub.suppressed <= suppression_limit(m.suppression, p.table.rows.size()));
        CHECK(pub.suppressed == out.at_optimum.suppressed);
        CHECK(pub.min_persons == out.at_optimum.min_class_size);
      }
    }
    found += truth >= 0;

    // Mondrian: no suppression; distinct-l as the job's.
    MondrianOptions mo;
    mo.k = m.k;
    mo.l = l;
    const MondrianInput in =
        encode_mondrian(p.table, p.specs, table_domains(p.table, p.specs), "pid");
    std::set<std::string> all_persons, all_sensitive;
    for (const auto& row : p.table.rows) {
      all_persons.insert(row[p.pid_column]);
      all_sensitive.insert(row[dims]);
    }
    if (all_persons.size() < m.k || all_sensitive.size() < l) {
      CHECK_THROWS_AS(mondrian(in, mo), MondrianError);
      continue;
    }
    const MondrianResult r = mondrian(in, mo);
    std::vector<int> seen(p.table.rows.size(), 0);
    uint64_t min_persons = UINT64_MAX;
    for (size_t c = 0; c < r.classes(); ++c) {
      std::set<std::string> persons;
      for (uint32_t j = r.class_begin(c); j < r.class_end[c]; ++j) {
        ++seen[r.order[j]];
        persons.insert(p.table.rows[r.order[j]][p.pid_column]);
      }
      CHECK(persons.size() >= m.k);
      min_persons = std::min<uint64_t>(min_persons, persons.size());
    }
    CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
    CHECK(r.min_class_size == min_persons);
  }
  MESSAGE(kProblems << " problems, " << found << " with a lattice solution");
}

TEST_CASE("person mode with one row per person gives the row mode's result") {
  std::mt19937 rng(99);
  for (int i = 0; i < kProblems; ++i) {
    const int dims = 1 + static_cast<int>(rng() % 3);
    PersonProblem p = person_problem(rng, dims, 5 + static_cast<int>(rng() % 40), true);
    const Dataset rows = encode_dataset(p.table, p.specs);
    const Dataset persons = encode_dataset(p.table, p.specs, "pid");
    const PrivacyModel m = random_model(rng);
    CAPTURE(i);
    CAPTURE(m.describe());
    for (const Algorithm a : {Algorithm::kFlash, Algorithm::kBestFirst}) {
      const Outcome x = anonymize(rows, m, MetricKind::kLoss, a, {}, {});
      const Outcome y = anonymize(persons, m, MetricKind::kLoss, a, {}, {});
      REQUIRE(x.search.found == y.search.found);
      if (!x.search.found) continue;
      CHECK(x.search.levels == y.search.levels);
      CHECK(x.search.value == y.search.value);
      CHECK(x.search.checked == y.search.checked);
      CHECK(x.at_optimum.suppressed == y.at_optimum.suppressed);
      CHECK(x.at_optimum.kept_classes == y.at_optimum.kept_classes);
      CHECK(x.at_optimum.min_class_size == y.at_optimum.min_class_size);
    }
    MondrianOptions mo;
    mo.k = m.k;
    const auto domains = table_domains(p.table, p.specs);
    if (p.table.rows.size() < m.k) continue;
    const MondrianResult x = mondrian(encode_mondrian(p.table, p.specs, domains), mo);
    const MondrianResult y = mondrian(encode_mondrian(p.table, p.specs, domains, "pid"), mo);
    CHECK(x.order == y.order);
    CHECK(x.class_end == y.class_end);
    CHECK(x.min_class_size == y.min_class_size);
  }
}

// Five persons with one row each at zip A, and one person with six rows at
// zip B. Counting rows, {B} is a class of 6 >= k = 2 and is released at level
// 0; counting persons it is one person and must not be.
CsvTable heavy_person_table() {
  CsvTable t;
  t.source = "heavy";
  t.header = {"zip", "age", "pid"};
  for (int i = 0; i < 5; ++i)
    t.rows.push_back({"A", std::to_string(20 + i), fmt::format("p{}", i)});
  for (int i = 0; i < 6; ++i) t.rows.push_back({"B", "90", "heavy"});
  for (size_t i = 0; i < t.rows.size(); ++i) t.line_numbers.push_back(i + 2);
  return t;
}

std::vector<AttributeSpec> zip_spec() {
  HierarchyTable h;
  h.source = "zip";
  h.rows = {{"A", "*"}, {"B", "*"}};
  h.line_numbers = {1, 2};
  return {
      {"zip", AttributeRole::kQuasiIdentifier, [h](const std::vector<std::string>&) { return h; }}};
}

TEST_CASE("a person with many rows and a unique combination is not released alone") {
  const CsvTable t = heavy_person_table();
  const auto specs = zip_spec();
  PrivacyModel m;
  m.k = 2;
  for (const Algorithm a : {Algorithm::kFlash, Algorithm::kBestFirst}) {
    const Outcome rows = anonymize(encode_dataset(t, specs), m, MetricKind::kLoss, a, {}, {});
    REQUIRE(rows.search.found);
    CHECK(rows.search.levels == Levels{0});  // what row counting would publish
    const Outcome persons =
        anonymize(encode_dataset(t, specs, "pid"), m, MetricKind::kLoss, a, {}, {});
    REQUIRE(persons.search.found);
    CHECK(persons.search.levels == Levels{1});
    CHECK(persons.at_optimum.min_class_size == 6);  // all six persons in one class
  }
  // With suppression allowed, the heavy person's six rows are suppressed.
  m.suppression = 0.6;
  const Dataset d = encode_dataset(t, specs, "pid");
  const auto supp = suppressed_rows(d, m, Levels{0});
  for (size_t r = 0; r < t.rows.size(); ++r) CHECK(supp[r] == (t.rows[r][2] == "heavy"));

  // Mondrian on age (numeric): counting rows it cuts {20..24} from {90 x 6};
  // counting persons the heavy person's side has one person, so no cut.
  std::vector<AttributeSpec> mspecs = {{"age", AttributeRole::kQuasiIdentifier, nullptr}};
  MondrianOptions mo;
  mo.k = 2;
  const auto domains = table_domains(t, mspecs);
  const MondrianResult by_rows = mondrian(encode_mondrian(t, mspecs, domains), mo);
  CHECK(by_rows.classes() > 1);
  const MondrianResult by_persons = mondrian(encode_mondrian(t, mspecs, domains, "pid"), mo);
  for (size_t c = 0; c < by_persons.classes(); ++c) {
    std::set<std::string> persons;
    for (uint32_t j = by_persons.class_begin(c); j < by_persons.class_end[c]; ++j)
      persons.insert(t.rows[by_persons.order[j]][2]);
    CHECK(persons.size() >= 2);
  }
}

TEST_CASE("the person column must exist and must not be a quasi-identifier") {
  const CsvTable t = heavy_person_table();
  const auto specs = zip_spec();
  CHECK_THROWS_WITH_AS(encode_dataset(t, specs, "patient"),
                       doctest::Contains("person column 'patient' is not in the header"),
                       DataError);
  CHECK_THROWS_WITH_AS(encode_dataset(t, specs, "zip"),
                       doctest::Contains("'zip' is also a quasi-identifier"), DataError);
  CHECK_THROWS_AS(encode_mondrian(t, specs, table_domains(t, specs), "zip"), DataError);
  // The person column keeps its own role: here insensitive, so it is copied.
  const Dataset d = encode_dataset(t, specs, "pid");
  CHECK(d.counts_persons());
  CHECK(d.persons == 6);
}

TEST_CASE("job file: person key, and a person column that is a quasi-identifier") {
  const auto dir = kanon::testing::scratch_dir() / "person-job-test";
  std::filesystem::create_directories(dir);
  const auto write = [&](const std::string& person) {
    std::ofstream(dir / "job.yaml") << "input: in.csv\nattributes:\n  zip: {role: quasi, "
                                       "hierarchy: {type: mask, levels: [1]}}\n"
                                    << "person: " << person << "\nk: 2\n";
    return (dir / "job.yaml").string();
  };
  CHECK(load_job(write("pid")).person == "pid");
  CHECK_THROWS_WITH_AS(load_job(write("zip")),
                       doctest::Contains("job.yaml:4: person: 'zip' is a quasi-identifier"),
                       JobError);
  std::filesystem::remove_all(dir);
}

TEST_CASE("an identifying person column is counted but not written") {
  const CsvTable t = heavy_person_table();
  auto specs = zip_spec();
  specs.push_back({"pid", AttributeRole::kIdentifying, nullptr});
  PrivacyModel m;
  m.k = 2;
  const Dataset d = encode_dataset(t, specs, "pid");
  const Outcome o = anonymize(d, m, MetricKind::kLoss, Algorithm::kFlash, {}, {});
  REQUIRE(o.search.found);
  CHECK(o.search.levels == Levels{1});
  const auto path = kanon::testing::scratch_dir() / "person-output.csv";
  write_anonymized_csv(path.string(), t, d, specs, m, o.search.levels, ';');
  std::ifstream in(path);
  std::string header, first;
  std::getline(in, header);
  std::getline(in, first);
  CHECK(header == "zip;age");
  CHECK(first == "*;20");
  in.close();
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace kanon::engine
