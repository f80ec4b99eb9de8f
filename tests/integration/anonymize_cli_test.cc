// `kanon anonymize` end to end on ADULT: the flags give ARX's reference
// optimum (all nine attributes quasi-identifying), a job file runs
// best-first search, every published CSV really is k-anonymous within the
// suppression limit, and a broken hierarchy is refused naming the value.
#include <doctest/doctest.h>

#include <cstdlib>  // mkdtemp
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "tests/support/demo_data.h"
#include "tests/support/kanon_proxy.h"
#include "tests/support/pg_sandbox.h"

using namespace kanon::testing;

namespace {

const char* const kAttributes[] = {"age",        "education", "marital-status", "native-country",
                                   "occupation", "race",      "salary-class",   "sex",
                                   "workclass"};
const char* const kQuasi[] = {
    "sex",       "age",       "race", "marital-status", "education", "native-country",
    "workclass", "occupation"};

using kanon::testing::adult_dir;

// A directory of this process's own (another run of the suite on the same
// machine has its own), removed when the test ends.
struct TempDir {
  std::string path;
  TempDir() {
    std::string name =
        (std::filesystem::temp_directory_path() / "kanon-anonymize-test.XXXXXX").string();
    if (mkdtemp(name.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + name);
    path = name;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};

std::string temp_dir() {
  static const TempDir dir;
  return dir.path;
}

std::vector<std::string> split(const std::string& line, char delimiter) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string cell;
  while (std::getline(ss, cell, delimiter)) out.push_back(cell);
  return out;
}

// Checks the published table: every class of non-suppressed rows (over the
// quasi-identifiers of this test) has at least k rows; returns the number of
// suppressed rows (all quasi-identifiers '*').
size_t check_k_anonymous(const std::string& csv_path, size_t k, size_t expected_rows,
                         const std::string& insensitive) {
  std::ifstream in(csv_path);
  std::string line;
  REQUIRE(std::getline(in, line));
  const auto header = split(line, ';');
  std::vector<size_t> qi_columns;
  for (size_t i = 0; i < header.size(); ++i)
    if (header[i] != insensitive) qi_columns.push_back(i);
  std::map<std::string, size_t> classes;
  size_t rows = 0, suppressed = 0;
  while (std::getline(in, line)) {
    ++rows;
    const auto cells = split(line, ';');
    REQUIRE(cells.size() == header.size());
    std::string key;
    bool all_star = true;
    for (size_t c : qi_columns) {
      key += cells[c] + '\x1f';
      all_star = all_star && cells[c] == "*";
    }
    if (all_star) {
      ++suppressed;
    } else {
      ++classes[key];
    }
  }
  CHECK(rows == expected_rows);
  size_t smallest = SIZE_MAX;
  for (const auto& [key, n] : classes) smallest = std::min(smallest, n);
  CHECK(smallest >= k);
  return suppressed;
}

std::vector<std::string> hierarchy_flags() {
  std::vector<std::string> flags;
  for (const char* a : kAttributes)
    flags.push_back(std::string("--hierarchy=") + a + "=" + adult_dir() + "/adult_hierarchy_" + a +
                    ".csv");
  return flags;
}

}  // namespace

TEST_CASE("anonymize with flags: Loss, k=5, 5% suppression gives ARX's optimum") {
  const std::string out = temp_dir() + "/flags.csv", report = temp_dir() + "/flags.json";
  std::vector<std::string> argv = {kanon_executable(),         "anonymize",   "--input",
                                   adult_dir() + "/adult.csv", "--delimiter", ";"};
  for (const auto& f : hierarchy_flags()) argv.push_back(f);
  for (const std::string& f :
       std::vector<std::string>{"--k", "5", "--suppression", "0.05", "--metric", "loss", "--output",
                                out, "--report", report})
    argv.push_back(f);
  const auto r = run_command(argv);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const std::string json = read_file(report);
  CHECK(json.find("\"suppressed\": 1346") != std::string::npos);
  CHECK(json.find("\"loss\": 0.24193") != std::string::npos);
  CHECK(json.find("\"lattice_size\": 12960") != std::string::npos);
  CHECK(json.find("\"algorithm\": \"flash\"") != std::string::npos);
  CHECK(json.find("\"age\": 3") != std::string::npos);
  CHECK(json.find("\"education\": 2") != std::string::npos);
  CHECK(check_k_anonymous(out, 5, 30162, "") == 1346);
}

TEST_CASE("anonymize with a job file: DM*, k=5, no suppression, best-first search") {
  const std::string dir = temp_dir();
  std::ofstream job(dir + "/job.yaml");
  job << "input: " << adult_dir() << "/adult.csv\ndelimiter: \";\"\nattributes:\n";
  for (const char* a : kQuasi)
    job << "  " << a << ": {role: quasi, hierarchy: " << adult_dir() << "/adult_hierarchy_" << a
        << ".csv}\n";
  job << "k: 5\nsuppression: 0\nmetric: dm\nalgorithm: bfs\noutput: job.csv\nreport: job.json\n";
  job.close();
  const auto r = run_command({kanon_executable(), "anonymize", "-q", "--job", dir + "/job.yaml"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const std::string json = read_file(dir + "/job.json");
  CHECK(json.find("\"suppressed\": 0") != std::string::npos);
  CHECK(json.find("\"algorithm\": \"bfs\"") != std::string::npos);
  CHECK(check_k_anonymous(dir + "/job.csv", 5, 30162, "salary-class") == 0);
}

TEST_CASE("a hierarchy that misses a data value is refused with file and value") {
  const std::string dir = temp_dir();
  const std::string broken = dir + "/sex.csv";
  std::ofstream(broken) << "Male;*\n";  // no line for Female
  const auto r =
      run_command({kanon_executable(), "anonymize", "-q", "--input", adult_dir() + "/adult.csv",
                   "--delimiter", ";", "--hierarchy", "sex=" + broken, "--k", "2", "--suppression",
                   "0", "--metric", "dm", "--output", dir + "/x.csv", "--report", dir + "/x.json"});
  CHECK(r.exit_code == 1);
  CHECK_MESSAGE(r.err.find("Female") != std::string::npos, r.err);
  CHECK_MESSAGE(r.err.find("sex") != std::string::npos, r.err);
  CHECK_FALSE(std::filesystem::exists(dir + "/x.csv"));
}

namespace {

// purchases.csv: 30 customers with 1-3 purchases each, (age, zip) from a
// small domain so that each combination has 5 customers; and customer 99
// with 20 purchases at (90, 1000), a combination no one else has.
std::string write_purchases(const std::string& dir) {
  std::ofstream csv(dir + "/purchases.csv");
  csv << "customer;age;zip;amount\n";
  for (int c = 0; c < 30; ++c)
    for (int n = 0; n <= c % 3; ++n) csv << c << ';' << 20 + c % 3 << ';' << 1000 + c % 2 << ";1\n";
  for (int n = 0; n < 20; ++n) csv << "99;90;1000;" << n << '\n';
  std::ofstream(dir + "/age.csv") << "20;*\n21;*\n22;*\n90;*\n";
  std::ofstream(dir + "/zip.csv") << "1000;*\n1001;*\n";
  return dir + "/purchases.csv";
}

// The fewest distinct customers in a class of the published rows (classes
// over age and zip; the runs here suppress nothing).
size_t min_customers(const std::string& csv_path) {
  std::ifstream in(csv_path);
  std::string line;
  REQUIRE(std::getline(in, line));
  REQUIRE(line == "customer;age;zip;amount");
  std::map<std::string, std::set<std::string>> classes;
  while (std::getline(in, line)) {
    const auto cells = split(line, ';');
    REQUIRE(cells.size() == 4);
    classes[cells[1] + ';' + cells[2]].insert(cells[0]);
  }
  size_t smallest = SIZE_MAX;
  for (const auto& [key, customers] : classes) smallest = std::min(smallest, customers.size());
  return smallest;
}

// Whether zip stays ungeneralized: generalizing age alone suffices.
bool json_levels_zip_kept(const std::string& path) {
  return read_file(path).find("\"levels\": {\"age\": 1, \"zip\": 0}") != std::string::npos;
}

}  // namespace

TEST_CASE("anonymize --person: every published class holds k customers, not k rows") {
  const std::string dir = temp_dir();
  const std::string input = write_purchases(dir);
  const auto run = [&](const std::vector<std::string>& extra, const std::string& name) {
    std::vector<std::string> argv = {kanon_executable(),
                                     "anonymize",
                                     "-q",
                                     "--input",
                                     input,
                                     "--hierarchy",
                                     "age=" + dir + "/age.csv",
                                     "--hierarchy",
                                     "zip=" + dir + "/zip.csv",
                                     "--k",
                                     "3",
                                     "--suppression",
                                     "0",
                                     "--metric",
                                     "loss",
                                     "--output",
                                     dir + "/" + name + ".csv",
                                     "--report",
                                     dir + "/" + name + ".json"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return run_command(argv);
  };
  // Counting rows, customer 99's 20 purchases are released as a class of one.
  const auto rows = run({}, "rows");
  REQUIRE_MESSAGE(rows.exit_code == 0, rows.err);
  CHECK(min_customers(dir + "/rows.csv") == 1);

  for (const std::string algorithm : {"flash", "bfs"}) {
    CAPTURE(algorithm);
    const auto r = run({"--person", "customer", "--algorithm", algorithm}, "persons");
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    const size_t smallest = min_customers(dir + "/persons.csv");
    CHECK(smallest >= 3);
    CHECK(json_levels_zip_kept(dir + "/persons.json"));
    const std::string json = read_file(dir + "/persons.json");
    CHECK(json.find("\"counts\": \"persons\"") != std::string::npos);
    CHECK(json.find("\"person\": \"customer\"") != std::string::npos);
    CHECK(json.find("\"min_class_size\": " + std::to_string(smallest) + ",") != std::string::npos);
  }
  // Mondrian (age and zip as numbers) in person mode.
  const auto m =
      run_command({kanon_executable(), "anonymize", "-q", "--algorithm", "mondrian", "--input",
                   input, "--quasi-identifiers", "age,zip", "--person", "customer", "--k", "3",
                   "--output", dir + "/mondrian.csv", "--report", dir + "/mondrian.json"});
  REQUIRE_MESSAGE(m.exit_code == 0, m.err);
  CHECK(min_customers(dir + "/mondrian.csv") >= 3);
  CHECK(read_file(dir + "/mondrian.json").find("\"counts\": \"persons\"") != std::string::npos);

  // The person column must exist and must not be a quasi-identifier.
  const auto unknown = run({"--person", "client"}, "bad");
  CHECK(unknown.exit_code == 1);
  CHECK_MESSAGE(
      unknown.err.find("person column 'client' is not in the header") != std::string::npos,
      unknown.err);
  const auto qi = run({"--person", "zip"}, "bad");
  CHECK(qi.exit_code == 1);
  CHECK_MESSAGE(qi.err.find("'zip' is also a quasi-identifier") != std::string::npos, qi.err);
}
