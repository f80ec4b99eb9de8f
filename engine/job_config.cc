#include "engine/job_config.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <filesystem>
#include <limits>

#include "base/yaml_reader.h"
#include "engine/hierarchy_spec.h"

namespace kanon::engine {

namespace {

const base::NameTable<AttributeRole>& role_names() {
  static const base::NameTable<AttributeRole> kNames{
      {AttributeRole::kQuasiIdentifier, "quasi"},
      {AttributeRole::kQuasiIdentifier, "quasi-identifier", true},
      {AttributeRole::kQuasiIdentifier, "qi", true},
      {AttributeRole::kSensitive, "sensitive"},
      {AttributeRole::kInsensitive, "insensitive"},
      {AttributeRole::kIdentifying, "identifying"}};
  return kNames;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Reads one job file; relative paths resolve against its directory.
class JobReader : public base::YamlReader {
 public:
  explicit JobReader(const std::string& path)
      : YamlReader(path), dir_(std::filesystem::path(path).parent_path()) {}

  std::string file(const YAML::Node& node, const std::string& key) const {
    const std::filesystem::path p(string(node, key));
    return p.is_absolute() || dir_.empty() ? p.string() : (dir_ / p).string();
  }

  // A name of `table`, failing with "'x' is not one of ...".
  template <typename Enum>
  Enum name(const YAML::Node& node, const std::string& key,
            const base::NameTable<Enum>& table) const {
    const std::string text = string(node, key);
    if (const auto v = table.parse(text)) return *v;
    fail(node, key, table.unknown(text));
  }

  AttributeSpec attribute(const YAML::Node& column, const YAML::Node& value) const {
    AttributeSpec spec;
    spec.name = string(column, "attributes");
    const std::string key = "attributes." + spec.name;
    const YAML::Node role = value.IsMap() ? value["role"] : value;
    spec.role = role ? name(role, key, role_names()) : AttributeRole::kQuasiIdentifier;
    if (spec.role != AttributeRole::kQuasiIdentifier || !value.IsMap()) return spec;
    // Without a hierarchy: Mondrian only (checked when the data is encoded).
    const YAML::Node h = value["hierarchy"];
    if (!h) return spec;
    if (h.IsScalar()) {
      spec.hierarchy = hierarchy_from_file(file(h, key + ".hierarchy"));
    } else {
      const std::string source =
          fmt::format("{}:{} (hierarchy of '{}')", this->source(), line_of(h), spec.name);
      YAML::Node copy = YAML::Clone(h);
      spec.hierarchy = [copy, source](const std::vector<std::string>& values) {
        return expand_hierarchy_spec(copy, values, source);
      };
    }
    return spec;
  }

  void privacy(const YAML::Node& root, PrivacyModel& p) const {
    if (!root["k"]) fail(root, "k", "required key is missing");
    p.k = static_cast<uint32_t>(
        integer(root["k"], "k", 1, std::numeric_limits<int32_t>::max(), "must be at least 1"));
    if (root["l"]) {
      p.l = number(root["l"], "l");
      p.diversity = Diversity::kDistinct;
      if (root["diversity"]) p.diversity = name(root["diversity"], "diversity", diversity_names());
      if (root["c"]) p.c = number(root["c"], "c");
    }
    if (root["suppression"]) p.suppression = fraction(root["suppression"], "suppression");
  }

  void mondrian(const YAML::Node& m, MondrianJobOptions& o) const {
    expect_map(m, "mondrian", {"choice", "sample", "split", "distributed"});
    if (m["choice"]) o.choice = name(m["choice"], "mondrian.choice", mondrian_choices());
    if (m["sample"]) {
      o.sample_fraction = number(m["sample"], "mondrian.sample");
      if (!(o.sample_fraction > 0 && o.sample_fraction <= 1))
        fail(m["sample"], "mondrian.sample", "must be a fraction in (0, 1]");
    }
    if (m["split"]) o.split = name(m["split"], "mondrian.split", split_modes());
    if (m["distributed"]) o.distributed = boolean(m["distributed"], "mondrian.distributed");
  }

  void optimizations(const YAML::Node& o, CheckerOptions& c) const {
    const auto flag = [&](const char* key, bool& out) {
      if (o[key]) out = boolean(o[key], std::string("optimizations.") + key);
    };
    flag("projection", c.projection);
    flag("rollup", c.rollup);
    flag("history", c.history);
    flag("packed_keys", c.packed_keys);
    flag("deduplicate", c.deduplicate);
    auto& h = c.history_options;
    if (const auto n = o["history_max_relative_size"])
      h.max_relative_size = number(n, "optimizations.history_max_relative_size");
    if (const auto n = o["history_max_relative_to_source"])
      h.max_relative_to_source = number(n, "optimizations.history_max_relative_to_source");
    if (const auto n = o["history_max_snapshots"])
      h.max_stored = integer(n, "optimizations.history_max_snapshots", 0,
                             std::numeric_limits<uint32_t>::max());
  }

 private:
  std::filesystem::path dir_;
};

}  // namespace

HierarchyProvider hierarchy_from_file(const std::string& path) {
  if (ends_with(path, ".yaml") || ends_with(path, ".yml")) {
    return [path](const std::vector<std::string>& values) {
      return expand_hierarchy_spec(read_hierarchy_spec_file(path), values, path);
    };
  }
  return [path](const std::vector<std::string>&) { return read_hierarchy_csv(path); };
}

AnonymizationJob load_job(const std::string& path) {
  const JobReader r(path);
  const YAML::Node root = r.load_file("job file");
  if (!root.IsMap()) r.fail(root, "", "a job file is a YAML mapping");
  r.expect_map(
      root, "",
      {"input", "delimiter", "attributes", "k", "l", "c", "diversity", "suppression", "metric",
       "algorithm", "time_limit", "optimizations", "output", "report", "mondrian", "person"});
  AnonymizationJob job;
  if (!root["input"]) r.fail(root, "input", "required key is missing");
  job.input = r.file(root["input"], "input");
  if (root["delimiter"]) {
    const auto d = r.string(root["delimiter"], "delimiter");
    if (d.size() != 1) r.fail(root["delimiter"], "delimiter", "must be one character");
    job.delimiter = d[0];
  }
  const YAML::Node attrs = root["attributes"];
  if (!attrs) r.fail(root, "attributes", "required key is missing");
  if (!attrs.IsMap()) r.fail(attrs, "attributes", "expected a mapping of column to role");
  for (const auto& kv : attrs) job.attributes.push_back(r.attribute(kv.first, kv.second));
  r.privacy(root, job.privacy);
  if (root["metric"]) job.metric = r.name(root["metric"], "metric", metric_names());
  if (root["algorithm"]) job.algorithm = r.name(root["algorithm"], "algorithm", algorithm_names());
  if (root["mondrian"]) r.mondrian(root["mondrian"], job.mondrian);
  if (root["time_limit"]) job.time_limit_s = r.number(root["time_limit"], "time_limit");
  if (root["optimizations"]) r.optimizations(root["optimizations"], job.checker);
  if (root["output"]) job.output = r.file(root["output"], "output");
  if (root["report"]) job.report = r.file(root["report"], "report");
  if (root["person"]) {
    job.person = r.string(root["person"], "person");
    if (job.person.empty()) r.fail(root["person"], "person", "must name a column");
    for (const auto& a : job.attributes) {
      if (a.name == job.person && a.role == AttributeRole::kQuasiIdentifier) {
        r.fail(root["person"], "person",
               fmt::format("'{}' is a quasi-identifier; the person column must not be one",
                           job.person));
      }
    }
  }
  if (job.privacy.needs_sensitive()) {
    bool has = false;
    for (const auto& a : job.attributes) has |= a.role == AttributeRole::kSensitive;
    if (!has) r.fail(root["l"], "l", "needs an attribute with role sensitive");
  }
  return job;
}

}  // namespace kanon::engine
