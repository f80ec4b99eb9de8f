// The report: histogram buckets, JSON fields and a self-contained HTML page.
#include "publish/report.h"

#include <doctest/doctest.h>

using namespace kanon::publish;

namespace {

ExportReport sample() {
  ExportReport r;
  r.created_at = "2026-01-01T00:00:00Z";
  r.source = "public.people";
  r.target = "public.people_<pub>";
  r.command = "EXPORT people WITH (k = 2)";
  r.privacy = "2-anonymity";
  r.metric = "loss";
  r.algorithm = "flash";
  r.suppressed_rows = "drop";
  r.k = 2;
  r.rows_in = 11;
  r.rows_out = 11;
  r.classes = 3;
  r.min_class = 2;
  r.max_class = 5;
  r.attributes.push_back({"occupation", 0, 2, "value -> *", 3, 3, {{"Lawyer", "Lawyer"}}});
  r.attributes.push_back({"city", 1, 2, "value -> *", 7, 1, {{"Hamlet", "*"}}});
  r.losses = {{"loss", 0.25}, {"dm", 45}};
  r.histogram = class_size_histogram({{2, 1}, {4, 1}, {5, 1}});
  r.lattice_size = 8;
  r.checked = 5;
  return r;
}

}  // namespace

TEST_CASE("class-size histogram: exact sizes, then powers of two") {
  const auto exact = class_size_histogram({{2, 3}, {7, 1}});
  REQUIRE(exact.size() == 2);
  CHECK(exact[0] == std::pair<std::string, uint64_t>{"2", 3});
  CHECK(exact[1] == std::pair<std::string, uint64_t>{"7", 1});
  std::map<uint64_t, uint64_t> many;
  for (uint64_t s = 5; s < 25; ++s) many[s] = 1;  // 5..24
  const auto b = class_size_histogram(many);
  REQUIRE(b.size() == 3);
  CHECK(b[0] == std::pair<std::string, uint64_t>{"4-7", 3});    // 5, 6, 7
  CHECK(b[1] == std::pair<std::string, uint64_t>{"8-15", 8});   // 8..15
  CHECK(b[2] == std::pair<std::string, uint64_t>{"16-31", 9});  // 16..24
}

TEST_CASE("JSON report holds the numbers") {
  const auto r = sample();
  CHECK(r.levels_text() == "occupation=0, city=1");
  const std::string j = report_to_json(r);
  CHECK(j.find("\"min_class_size\": 2,") != std::string::npos);
  CHECK(j.find("\"classes\": 3,") != std::string::npos);
  CHECK(j.find("\"rows_out\": 11,") != std::string::npos);
  CHECK(j.find("{\"name\": \"city\", \"level\": 1, \"height\": 2, \"hierarchy\": \"value -> *\"") !=
        std::string::npos);
  CHECK(j.find("\"loss\": {\"dm\": 45, \"loss\": 0.25}") != std::string::npos);
  CHECK(j.find("\"class_size_histogram\": [{\"rows\": \"2\", \"classes\": 1}") !=
        std::string::npos);
  CHECK(j.find("\"command\": \"EXPORT people WITH (k = 2)\"") != std::string::npos);
}

TEST_CASE("HTML report is self-contained and escapes text") {
  const std::string h = report_to_html(sample());
  CHECK(h.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(h.find("<svg") != std::string::npos);
  CHECK(h.find("<rect") != std::string::npos);
  CHECK(h.find("public.people_&lt;pub&gt;") != std::string::npos);
  CHECK(h.find("<pub>") == std::string::npos);
  CHECK(h.find("http://") == h.find("http://www.w3.org/2000/svg"));  // only the SVG namespace
  CHECK(h.find("src=") == std::string::npos);
  CHECK(h.find("<td>city</td><td>1 of 1</td>") != std::string::npos);
}

TEST_CASE("a Mondrian report: generalized per class, partitioning instead of a lattice") {
  auto r = sample();
  r.algorithm = "mondrian (span)";
  r.metric = "gcp";
  r.lattice_size = r.checked = 0;
  for (auto& a : r.attributes) {
    a.level = -1;
    a.height = 0;
  }
  r.attributes[1].hierarchy = "sets of values";
  CHECK(r.multidimensional());
  CHECK(r.levels_text() == "per class (mondrian)");
  const std::string j = report_to_json(r);
  CHECK(j.find("{\"name\": \"city\", \"level\": null, \"height\": 0, \"hierarchy\": \"sets of "
               "values\"") != std::string::npos);
  const std::string h = report_to_html(r);
  CHECK(h.find("<td>city</td><td>per class</td><td>sets of values</td>") != std::string::npos);
  CHECK(h.find("<h2>Partitioning</h2>") != std::string::npos);
  CHECK(h.find("lattice size") == std::string::npos);
  CHECK_FALSE(sample().multidimensional());
}

TEST_CASE("a report that counts persons says so in JSON and HTML; one that counts rows does not") {
  auto r = sample();
  CHECK(report_to_json(r).find("\"counts\"") == std::string::npos);
  CHECK(report_to_html(r).find("in persons") == std::string::npos);
  r.person = "customer_id";
  const std::string j = report_to_json(r);
  CHECK(j.find("\"counts\": \"persons\",") != std::string::npos);
  CHECK(j.find("\"person\": \"customer_id\",") != std::string::npos);
  CHECK(j.find("\"class_size_histogram\": [{\"persons\": \"2\", \"classes\": 1}") !=
        std::string::npos);
  const std::string h = report_to_html(r);
  CHECK(h.find("<th>smallest class in persons (k achieved)</th><td>2</td>") != std::string::npos);
  CHECK(h.find("distinct persons of customer_id") != std::string::npos);
}
