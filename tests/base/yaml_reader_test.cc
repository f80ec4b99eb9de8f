// YamlReader: typed values and errors that name the source, the line and the key.
#include "base/yaml_reader.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "tests/support/scratch_dir.h"

namespace kanon::base {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

// A subclass that throws its own error type.
struct SpecError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
class SpecReader : public YamlReader {
 public:
  using YamlReader::YamlReader;

 protected:
  void raise(const std::string& message) const override { throw SpecError(message); }
};

}  // namespace

TEST_CASE("typed values") {
  const YamlReader r("f.yaml");
  const auto doc = YAML::Load("a: 7\nb: 0.25\nc: yes\nd: text\ne: [x, y]\nf: -2.5\n");
  CHECK(r.integer(doc["a"], "a", 1, 10) == 7);
  CHECK(r.fraction(doc["b"], "b") == 0.25);
  CHECK(r.boolean(doc["c"], "c"));
  CHECK(r.string(doc["d"], "d") == "text");
  CHECK(r.string_list(doc["e"], "e") == std::vector<std::string>{"x", "y"});
  CHECK(r.number(doc["f"], "f") == -2.5);
}

TEST_CASE("errors name the source, the line and the key") {
  const YamlReader r("f.yaml");
  const auto doc = YAML::Load("a: many\nb: 1.5\nc: maybe\nlimits:\n  max: 3\n  typo: 4\nn: nan\n");
  CHECK(error_of([&] { r.integer(doc["a"], "a", 1, 10); }) ==
        "f.yaml:1: a: expected an integer, got 'many'");
  CHECK(error_of([&] { r.fraction(doc["b"], "b"); }) == "f.yaml:2: b: must be between 0 and 1");
  CHECK(error_of([&] { r.boolean(doc["c"], "c"); }) ==
        "f.yaml:3: c: expected true or false, got 'maybe'");
  CHECK(error_of([&] { r.expect_map(doc["limits"], "limits", {"max"}); }) ==
        "f.yaml:6: limits.typo: unknown key (expected one of: max)");
  CHECK(error_of([&] { r.number(doc["n"], "n"); }) == "f.yaml:7: n: expected a number, got 'nan'");
  CHECK(error_of([&] { r.integer(doc["a"], "a", 1, 10, "must be small"); }).find("got 'many'") !=
        std::string::npos);
  CHECK(error_of([&] { r.integer(YAML::Load("12"), "k", 1, 10, "must be small"); }) ==
        "f.yaml:1: k: must be small");
  // A missing key has no line; an empty key leaves the key part out.
  CHECK(error_of([&] { r.fail(doc["missing"], "missing", "required"); }) ==
        "f.yaml: missing: required");
  CHECK(error_of([&] { r.fail(doc["a"], "", "bad"); }) == "f.yaml:1: bad");
}

TEST_CASE("load_file: missing files and syntax errors") {
  CHECK(error_of([] { YamlReader("/nonexistent/x.yaml").load_file("the file"); }) ==
        "/nonexistent/x.yaml: cannot open the file");
  const auto path = kanon::testing::scratch_dir() / "yaml-test.yaml";
  std::ofstream(path) << "a: 1\nb: [unclosed\n";
  CHECK(error_of([&] {
          YamlReader(path.string()).load_file("the file");
        }).starts_with(path.string() + ":"));
  std::ofstream(path) << "a: 1\n";
  CHECK(YamlReader(path.string()).load_file("the file")["a"].Scalar() == "1");
  std::filesystem::remove(path);
}

TEST_CASE("a subclass chooses the error type") {
  const SpecReader r("spec");
  CHECK_THROWS_WITH_AS(r.string(YAML::Load("[1]"), "type"), "spec:1: type: expected a string",
                       SpecError);
}

}  // namespace kanon::base
