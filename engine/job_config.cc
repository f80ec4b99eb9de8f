#include "engine/job_config.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <set>

#include "engine/hierarchy_spec.h"

namespace kanon::engine {

namespace {

[[noreturn]] void fail(const std::string& file, const YAML::Node& node, const std::string& what) {
  throw JobError(fmt::format("{}:{}: {}", file, node.Mark().line + 1, what));
}

template <typename T>
T get(const std::string& file, const YAML::Node& node, const char* key) {
  try {
    return node[key].as<T>();
  } catch (const YAML::Exception&) {
    fail(file, node[key], fmt::format("'{}': invalid value '{}'", key, node[key].Scalar()));
  }
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::optional<Diversity> parse_diversity(const std::string& name) {
  if (name == "distinct") return Diversity::kDistinct;
  if (name == "entropy") return Diversity::kEntropy;
  if (name == "recursive") return Diversity::kRecursive;
  return std::nullopt;
}

HierarchyProvider hierarchy_from_file(const std::string& path) {
  if (ends_with(path, ".yaml") || ends_with(path, ".yml")) {
    return [path](const std::vector<std::string>& values) {
      return expand_hierarchy_spec(read_hierarchy_spec_file(path), values, path);
    };
  }
  return [path](const std::vector<std::string>&) { return read_hierarchy_csv(path); };
}

AnonymizationJob load_job(const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    throw JobError(fmt::format("{}: cannot open job file", path));
  } catch (const YAML::Exception& e) {
    throw JobError(fmt::format("{}:{}: {}", path, e.mark.line + 1, e.msg));
  }
  if (!root.IsMap()) throw JobError(fmt::format("{}: a job file is a YAML mapping", path));
  const std::filesystem::path base = std::filesystem::path(path).parent_path();
  const auto resolve = [&](const std::string& p) {
    const std::filesystem::path fp(p);
    return fp.is_absolute() || base.empty() ? p : (base / fp).string();
  };
  static const std::set<std::string> kKeys{"input",  "delimiter", "attributes", "k",
                                           "l",      "c",         "diversity",  "suppression",
                                           "metric", "algorithm", "time_limit", "optimizations",
                                           "output", "report",    "mondrian"};
  for (const auto& kv : root) {
    const auto key = kv.first.as<std::string>();
    if (!kKeys.count(key)) fail(path, kv.first, fmt::format("unknown key '{}'", key));
  }
  AnonymizationJob job;
  if (!root["input"]) fail(path, root, "'input' is required");
  job.input = resolve(get<std::string>(path, root, "input"));
  if (root["delimiter"]) {
    const auto d = get<std::string>(path, root, "delimiter");
    if (d.size() != 1) fail(path, root["delimiter"], "'delimiter' must be one character");
    job.delimiter = d[0];
  }
  const YAML::Node attrs = root["attributes"];
  if (!attrs || !attrs.IsMap()) fail(path, root, "'attributes' mapping is required");
  for (const auto& kv : attrs) {
    AttributeSpec spec;
    spec.name = kv.first.as<std::string>();
    const YAML::Node v = kv.second;
    std::string role = v.IsScalar() ? v.as<std::string>() : "";
    if (v.IsMap()) role = v["role"] ? v["role"].as<std::string>() : "quasi";
    if (role == "quasi" || role == "quasi-identifier" || role == "qi") {
      spec.role = AttributeRole::kQuasiIdentifier;
      // Without a hierarchy: Mondrian only (checked when the data is encoded).
      const bool has_hierarchy = v.IsMap() && v["hierarchy"];
      const YAML::Node h = has_hierarchy ? v["hierarchy"] : YAML::Node();
      if (has_hierarchy && h.IsScalar()) {
        spec.hierarchy = hierarchy_from_file(resolve(h.as<std::string>()));
      } else if (has_hierarchy) {
        const std::string source =
            fmt::format("{}:{} (hierarchy of '{}')", path, h.Mark().line + 1, spec.name);
        YAML::Node copy = YAML::Clone(h);
        spec.hierarchy = [copy, source](const std::vector<std::string>& values) {
          return expand_hierarchy_spec(copy, values, source);
        };
      }
    } else if (role == "sensitive") {
      spec.role = AttributeRole::kSensitive;
    } else if (role == "insensitive") {
      spec.role = AttributeRole::kInsensitive;
    } else if (role == "identifying") {
      spec.role = AttributeRole::kIdentifying;
    } else {
      fail(path, v,
           fmt::format("attribute '{}': unknown role '{}' (quasi, sensitive, "
                       "insensitive, identifying)",
                       spec.name, role));
    }
    job.attributes.push_back(std::move(spec));
  }
  if (!root["k"]) fail(path, root, "'k' is required");
  const int k = get<int>(path, root, "k");
  if (k < 1) fail(path, root["k"], "'k' must be at least 1");
  job.privacy.k = static_cast<uint32_t>(k);
  if (root["l"]) {
    job.privacy.l = get<double>(path, root, "l");
    job.privacy.diversity = Diversity::kDistinct;
    if (root["diversity"]) {
      auto d = parse_diversity(get<std::string>(path, root, "diversity"));
      if (!d) fail(path, root["diversity"], "'diversity' must be distinct, entropy or recursive");
      job.privacy.diversity = *d;
    }
    if (root["c"]) job.privacy.c = get<double>(path, root, "c");
  }
  if (root["suppression"]) {
    job.privacy.suppression = get<double>(path, root, "suppression");
    if (job.privacy.suppression < 0 || job.privacy.suppression > 1) {
      fail(path, root["suppression"], "'suppression' must be a fraction in [0, 1]");
    }
  }
  if (root["metric"]) {
    auto m = parse_metric(get<std::string>(path, root, "metric"));
    if (!m)
      fail(path, root["metric"], "unknown 'metric' (loss, dm, entropy, precision, height, aecs)");
    job.metric = *m;
  }
  if (root["algorithm"]) {
    const auto a = get<std::string>(path, root, "algorithm");
    if (a != "flash" && a != "bfs" && a != "mondrian")
      fail(path, root["algorithm"], "'algorithm' must be flash, bfs or mondrian");
    job.algorithm = a == "flash" ? Algorithm::kFlash
                    : a == "bfs" ? Algorithm::kBestFirst
                                 : Algorithm::kMondrian;
  }
  if (const YAML::Node m = root["mondrian"]) {
    if (!m.IsMap())
      fail(path, m, "'mondrian' must be a mapping (choice, sample, split, distributed)");
    for (const auto& kv : m) {
      const auto key = kv.first.as<std::string>();
      if (key != "choice" && key != "sample" && key != "distributed" && key != "split") {
        fail(path, kv.first, fmt::format("mondrian: unknown key '{}'", key));
      }
    }
    if (m["choice"] &&
        !parse_mondrian_choice(get<std::string>(path, m, "choice"), &job.mondrian.choice)) {
      fail(path, m["choice"], "mondrian.choice must be span, max-entropy or min-entropy");
    }
    if (m["sample"]) {
      job.mondrian.sample_fraction = get<double>(path, m, "sample");
      if (!(job.mondrian.sample_fraction > 0 && job.mondrian.sample_fraction <= 1)) {
        fail(path, m["sample"], "mondrian.sample must be a fraction in (0, 1]");
      }
    }
    if (m["split"] && !parse_split_mode(get<std::string>(path, m, "split"), &job.mondrian.split)) {
      fail(path, m["split"], "mondrian.split must be tree or quantiles");
    }
    if (m["distributed"]) job.mondrian.distributed = get<bool>(path, m, "distributed");
  }
  if (root["time_limit"]) job.time_limit_s = get<double>(path, root, "time_limit");
  if (const YAML::Node o = root["optimizations"]) {
    if (o["projection"]) job.checker.projection = get<bool>(path, o, "projection");
    if (o["rollup"]) job.checker.rollup = get<bool>(path, o, "rollup");
    if (o["history"]) job.checker.history = get<bool>(path, o, "history");
    if (o["packed_keys"]) job.checker.packed_keys = get<bool>(path, o, "packed_keys");
    if (o["deduplicate"]) job.checker.deduplicate = get<bool>(path, o, "deduplicate");
    auto& h = job.checker.history_options;
    if (o["history_max_relative_size"]) {
      h.max_relative_size = get<double>(path, o, "history_max_relative_size");
    }
    if (o["history_max_relative_to_source"]) {
      h.max_relative_to_source = get<double>(path, o, "history_max_relative_to_source");
    }
    if (o["history_max_snapshots"]) {
      h.max_snapshots = get<size_t>(path, o, "history_max_snapshots");
    }
  }
  if (root["output"]) job.output = resolve(get<std::string>(path, root, "output"));
  if (root["report"]) job.report = resolve(get<std::string>(path, root, "report"));
  if (job.privacy.needs_sensitive()) {
    bool has = false;
    for (const auto& a : job.attributes) has |= a.role == AttributeRole::kSensitive;
    if (!has) fail(path, root["l"], "'l' needs an attribute with role sensitive");
  }
  return job;
}

}  // namespace kanon::engine
