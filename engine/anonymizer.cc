#include "engine/anonymizer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <unordered_map>

#include "base/json.h"
#include "base/stopwatch.h"
#include "engine/best_first_search.h"
#include "engine/flash_search.h"
#include "engine/mondrian_input.h"

namespace kanon::engine {

Outcome anonymize(const Dataset& data, const PrivacyModel& privacy, MetricKind metric_kind,
                  Algorithm algorithm, const CheckerOptions& checker_options,
                  const SearchOptions& search) {
  if (privacy.needs_sensitive() && data.sensitive.empty()) {
    throw DataError("l-diversity needs a sensitive attribute");
  }
  std::vector<int> heights, max_levels;
  std::vector<std::vector<uint32_t>> distinct;
  for (const auto& q : data.qis) {
    heights.push_back(q.height);
    max_levels.push_back(q.max_level());
    distinct.push_back(q.distinct_per_level);
  }
  const Lattice lattice(heights);
  if (!lattice.ids_fit()) throw DataError("the lattice is too large (more than 2^64 nodes)");
  if (algorithm == Algorithm::kFlash && lattice.size() > 200'000'000) {
    throw DataError(fmt::format("the lattice has {} nodes; use --algorithm bfs", lattice.size()));
  }
  const TraversalOrder order(max_levels, distinct);
  const QualityMetric metric(metric_kind, data);
  Checker checker(data, privacy, metric, checker_options);
  Outcome out;
  out.search = algorithm == Algorithm::kFlash
                   ? flash_search(checker, lattice, order, metric, privacy, search)
                   : best_first_search(checker, lattice, order, metric, privacy, search);
  if (out.search.found) {
    Checker plain(data, privacy, metric, CheckerOptions{false, false, false, {}, false});
    out.at_optimum = plain.check(out.search.levels);
    for (MetricKind k : all_metrics()) {
      const QualityMetric m(k, data);
      out.losses[metric_name(k)] = plain.evaluate_last(m).value;
    }
  }
  return out;
}

std::vector<uint8_t> suppressed_rows(const Dataset& data, const PrivacyModel& privacy,
                                     const Levels& levels) {
  const size_t w = data.width();
  struct Agg {
    uint32_t count = 0;
    std::map<int32_t, uint32_t> dist;
    std::vector<int32_t> persons;  // person mode; deduplicated below
  };
  std::unordered_map<std::string, Agg> classes;
  std::vector<std::string> keys(data.rows);
  for (size_t r = 0; r < data.rows; ++r) {
    std::string key(w * 4, '\0');
    for (size_t c = 0; c < w; ++c) {
      const int32_t g = data.qis[c].maps[levels[c]][data.data[r * w + c]];
      std::memcpy(key.data() + c * 4, &g, 4);
    }
    Agg& a = classes[key];
    ++a.count;
    if (privacy.needs_sensitive()) ++a.dist[data.sensitive[r]];
    if (data.counts_persons()) a.persons.push_back(data.person[r]);
    keys[r] = std::move(key);
  }
  std::unordered_map<std::string, bool> fails;
  for (auto& [key, a] : classes) {
    std::vector<SensitiveCount> dist;
    for (const auto& [v, n] : a.dist) dist.push_back({v, n});
    if (data.counts_persons()) {
      std::sort(a.persons.begin(), a.persons.end());
      const auto persons = std::unique(a.persons.begin(), a.persons.end()) - a.persons.begin();
      fails[key] = !(static_cast<uint64_t>(persons) >= privacy.k && privacy.diverse(a.count, dist));
    } else {
      fails[key] = !privacy.class_passes(a.count, dist);
    }
  }
  std::vector<uint8_t> out(data.rows);
  for (size_t r = 0; r < data.rows; ++r) out[r] = fails[keys[r]] ? 1 : 0;
  return out;
}

void write_anonymized_csv(const std::string& path, const CsvTable& table, const Dataset& data,
                          const std::vector<AttributeSpec>& specs, const PrivacyModel& privacy,
                          const Levels& levels, char delimiter) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw DataError(fmt::format("{}: cannot write output", path));
  std::vector<int> qi_of_column(table.header.size(), -1);
  std::vector<bool> dropped(table.header.size(), false);
  for (size_t q = 0; q < data.qis.size(); ++q)
    qi_of_column[data.qis[q].column] = static_cast<int>(q);
  for (const auto& s : specs) {
    if (s.role == AttributeRole::kIdentifying) dropped[table.column(s.name)] = true;
  }
  std::vector<std::string_view> fields;
  for (size_t c = 0; c < table.header.size(); ++c) {
    if (!dropped[c]) fields.push_back(table.header[c]);
  }
  write_csv_row(out, fields, delimiter);
  const auto supp = suppressed_rows(data, privacy, levels);
  const size_t w = data.width();
  for (size_t r = 0; r < table.rows.size(); ++r) {
    fields.clear();
    for (size_t c = 0; c < table.header.size(); ++c) {
      if (dropped[c]) continue;
      const int q = qi_of_column[c];
      if (q < 0) {
        fields.push_back(table.rows[r][c]);
      } else if (supp[r]) {
        fields.push_back("*");
      } else {
        const auto& qi = data.qis[q];
        fields.push_back(qi.dictionary.decode(qi.maps[levels[q]][data.data[r * w + q]]));
      }
    }
    write_csv_row(out, fields, delimiter);
  }
  if (!out) throw DataError(fmt::format("{}: write failed", path));
}

std::string report_json(const Dataset& data, const Outcome& o, const PrivacyModel& privacy,
                        MetricKind metric) {
  base::Json doc;
  doc["found"] = o.search.found;
  auto& levels = doc["levels"] = base::Json::object();
  for (size_t i = 0; i < data.qis.size() && o.search.found; ++i)
    levels[data.qis[i].name] = static_cast<int>(o.search.levels[i]);
  doc["min_class_size"] = o.at_optimum.min_class_size;
  doc["classes"] = o.at_optimum.kept_classes;
  doc["suppressed"] = o.at_optimum.suppressed;
  auto& loss = doc["loss"] = base::Json::object();
  for (const auto& [name, v] : o.losses) loss[name] = base::json_number(v);
  doc["metric"] = metric_name(metric);
  doc["privacy"] = privacy.describe();
  if (data.counts_persons()) {
    // min_class_size is then in persons, as k is.
    doc["counts"] = "persons";
    doc["person"] = data.person_name;
    doc["persons"] = data.persons;
  }
  doc["rows"] = data.rows;
  doc["checked"] = o.search.checked;
  doc["lattice_size"] = o.search.lattice_size;
  doc["search_ms"] = base::json_number(o.search.search_ms, 3);
  doc["timed_out"] = o.search.timed_out;
  doc["algorithm"] = o.search.algorithm;
  return base::json_text(doc);
}

MondrianOptions mondrian_options(const AnonymizationJob& job) {
  if (job.privacy.suppression > 0) {
    throw DataError("mondrian does not suppress records; use suppression 0");
  }
  if (job.privacy.diversity != Diversity::kNone && job.privacy.diversity != Diversity::kDistinct) {
    throw DataError("mondrian supports distinct l-diversity only");
  }
  if (!job.person.empty() && job.mondrian.distributed) {
    throw DataError(fmt::format(
        "distributed mondrian does not support person mode (person '{}'); run it in a single "
        "process",
        job.person));
  }
  MondrianOptions o;
  o.k = job.privacy.k;
  o.l = job.privacy.diversity == Diversity::kDistinct
            ? static_cast<uint32_t>(std::ceil(job.privacy.l))
            : 0;
  o.choice = job.mondrian.choice;
  return o;
}

MondrianReport run_mondrian_job(const AnonymizationJob& job,
                                const std::function<void(const MondrianProgress&)>& progress) {
  base::Stopwatch clock;
  MondrianOptions options = mondrian_options(job);
  options.progress = progress;
  std::vector<std::pair<std::string, double>> phases;
  const auto mark = [&](const char* name) { phases.emplace_back(name, clock.lap_ms()); };
  const CsvTable table = read_csv(job.input, job.delimiter);
  mark("read");
  const MondrianInput in =
      encode_mondrian(table, job.attributes, table_domains(table, job.attributes), job.person);
  mark("encode");
  const MondrianResult r = mondrian(in, options);
  mark("partition");
  MondrianReport rep;
  rep.privacy = job.privacy.describe();
  rep.person = job.person;
  rep.choice = mondrian_choice_name(options.choice);
  for (const auto& q : in.qis) rep.quasi_identifiers.push_back(q.name);
  rep.loss = mondrian_loss(in, r);
  rep.ms = r.ms;
  rep.cpu_ms = r.cpu_ms;
  if (!job.output.empty())
    write_mondrian_csv(job.output, table, job.attributes, in, r, job.delimiter);
  mark("write");
  rep.phases_ms = phases;
  rep.total_ms = clock.ms();
  if (!job.report.empty()) {
    std::ofstream out(job.report);
    if (!out) throw DataError(fmt::format("{}: cannot write report", job.report));
    out << mondrian_report_json(rep);
  }
  return rep;
}

Outcome run_job(const AnonymizationJob& job,
                const std::function<void(const SearchProgress&)>& progress,
                const std::function<void(const MondrianProgress&)>& mondrian_progress) {
  if (job.algorithm == Algorithm::kMondrian) {
    Outcome o;
    o.mondrian = run_mondrian_job(job, mondrian_progress);
    o.search.found = true;
    o.search.algorithm = algorithm_name(Algorithm::kMondrian);
    o.search.value = o.mondrian->loss.gcp;
    o.search.search_ms = o.mondrian->ms;
    o.search.search_cpu_ms = o.mondrian->cpu_ms;
    o.at_optimum.min_class_size = o.mondrian->loss.min_class_size;
    o.at_optimum.kept_classes = o.mondrian->loss.classes;
    o.losses["dp"] = o.mondrian->loss.dp;
    o.losses["gcp"] = o.mondrian->loss.gcp;
    return o;
  }
  const CsvTable table = read_csv(job.input, job.delimiter);
  const Dataset data = encode_dataset(table, job.attributes, job.person);
  SearchOptions search;
  search.time_limit_s = job.time_limit_s;
  search.progress = progress;
  Outcome o = anonymize(data, job.privacy, job.metric, job.algorithm, job.checker, search);
  if (!job.output.empty() && o.search.found) {
    write_anonymized_csv(job.output, table, data, job.attributes, job.privacy, o.search.levels,
                         job.delimiter);
  }
  if (!job.report.empty()) {
    std::ofstream out(job.report);
    if (!out) throw DataError(fmt::format("{}: cannot write report", job.report));
    out << report_json(data, o, job.privacy, job.metric);
  }
  return o;
}

}  // namespace kanon::engine
