// `kanon anonymize`: optimal full-domain generalization with suppression of a
// CSV file (the offline engine), or Mondrian (--algorithm mondrian), single
// process or under mpirun (--distributed). Flags or a YAML job file (--job);
// flags given next to --job override the file's values.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <memory>

#include "app/commands.h"
#include "engine/anonymizer.h"
#include "engine/job_config.h"
#include "engine/mpi/distributed.h"

namespace kanon::app {
namespace {

struct AnonymizeOptions {
  std::string job;
  std::string input;
  std::string delimiter = ";";
  std::vector<std::string> hierarchies;  // ATTR=FILE
  std::vector<std::string> quasi_identifiers;
  std::vector<std::string> identifying;
  std::vector<std::string> insensitive;
  int k = 0;
  double l = 0;
  double c = 3;
  std::string diversity = "distinct";
  std::string sensitive;
  std::string person;
  double suppression = -1;
  std::string metric;
  std::string algorithm;
  double time_limit = -1;
  std::string output;
  std::string report;
  bool no_projection = false;
  bool no_rollup = false;
  bool no_history = false;
  bool no_packed_keys = false;
  bool no_dedup = false;
  bool quiet = false;
  std::string choice;
  double sample = -1;
  std::string split;
  bool distributed = false;
};

// Draws "[#####.....] checked/lattice  best  elapsed" on stderr, at most ~10x/s.
class ProgressBar {
 public:
  void update(const engine::SearchProgress& p) {
    if (p.elapsed_ms - last_ms_ < 100 && p.checked != p.lattice_size) return;
    last_ms_ = p.elapsed_ms;
    const double frac =
        p.lattice_size ? std::min(1.0, static_cast<double>(p.checked) / p.lattice_size) : 0;
    const int width = 30;
    const int filled = static_cast<int>(frac * width);
    fmt::print(stderr, "\r[{}{}] {}/{} checked  best {}  {:.1f} s ", std::string(filled, '#'),
               std::string(width - filled, '.'), p.checked, p.lattice_size,
               p.best ? fmt::format("{:.6g}", *p.best) : std::string("-"), p.elapsed_ms / 1000);
    drawn_ = true;
  }
  void finish() {
    if (drawn_) fmt::print(stderr, "\n");
  }

 private:
  double last_ms_ = -1000;
  bool drawn_ = false;
};

// Mondrian progress: rows in final classes (a bar on a terminal, otherwise a
// plain line at most every 2 s) and, distributed, one line per finished range.
class MondrianProgressPrinter {
 public:
  explicit MondrianProgressPrinter(bool tty) : tty_(tty) {}
  void update(const engine::MondrianProgress& p) {
    const bool last = p.rows_done == p.rows;
    if (tty_) {
      if (p.elapsed_ms - last_ms_ < 100 && !last) return;
      last_ms_ = p.elapsed_ms;
      const double frac = p.rows ? static_cast<double>(p.rows_done) / p.rows : 1;
      const int width = 30;
      const int filled = static_cast<int>(frac * width);
      fmt::print(stderr, "\r[{}{}] {}/{} rows in {} classes  {:.1f} s ", std::string(filled, '#'),
                 std::string(width - filled, '.'), p.rows_done, p.rows, p.classes,
                 p.elapsed_ms / 1000);
      drawn_ = true;
    } else if (p.elapsed_ms - last_ms_ >= 2000) {
      last_ms_ = p.elapsed_ms;
      fmt::print(stderr, "mondrian: {}/{} rows in {} classes, {:.1f} s\n", p.rows_done, p.rows,
                 p.classes, p.elapsed_ms / 1000);
    }
  }
  void partition_done(const engine::mpi::PartitionDone& d) {
    fmt::print(stderr, "{}mondrian: range {}/{} done (rank {}: {} rows, {} classes, {:.1f} ms)\n",
               drawn_ ? "\r" : "", d.done, d.ranks, d.rank, d.rows, d.classes, d.ms);
  }
  void finish() {
    if (drawn_) fmt::print(stderr, "\n");
    drawn_ = false;
  }

 private:
  bool tty_;
  double last_ms_ = 0;
  bool drawn_ = false;
};

void print_mondrian_summary(const engine::MondrianReport& r) {
  fmt::print(stderr,
             "mondrian {} ({}{}): {} rows in {} classes (smallest {}{}), GCP = {:.6g}, "
             "DP = {:.6g}, {:.1f} ms partitioning, {:.1f} ms total\n",
             r.privacy, r.choice, r.ranks > 1 ? fmt::format(", {} ranks", r.ranks) : "",
             r.loss.rows, r.loss.classes, r.loss.min_class_size, r.person.empty() ? "" : " persons",
             r.loss.gcp, r.loss.dp, r.ms, r.total_ms);
}

engine::AnonymizationJob build_job(const AnonymizeOptions& o) {
  using namespace engine;
  AnonymizationJob job;
  if (!o.job.empty()) job = load_job(o.job);
  if (!o.input.empty()) job.input = o.input;
  if (job.input.empty()) throw std::runtime_error("--input (or a job file) is required");
  if (o.delimiter.size() != 1) throw std::runtime_error("--delimiter must be one character");
  if (o.job.empty() || o.delimiter != ";") job.delimiter = o.delimiter[0];
  const auto set_role = [&](const std::string& name, AttributeRole role, HierarchyProvider h) {
    for (auto& a : job.attributes) {
      if (a.name == name) {
        a.role = role;
        if (h) a.hierarchy = std::move(h);
        return;
      }
    }
    job.attributes.push_back({name, role, std::move(h)});
  };
  for (const auto& spec : o.hierarchies) {
    const auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
      throw std::runtime_error(fmt::format("--hierarchy expects ATTR=FILE, got '{}'", spec));
    }
    set_role(spec.substr(0, eq), AttributeRole::kQuasiIdentifier,
             hierarchy_from_file(spec.substr(eq + 1)));
  }
  for (const auto& a : o.quasi_identifiers) {
    set_role(a, AttributeRole::kQuasiIdentifier, nullptr);
  }
  for (const auto& a : o.identifying) set_role(a, AttributeRole::kIdentifying, nullptr);
  for (const auto& a : o.insensitive) set_role(a, AttributeRole::kInsensitive, nullptr);
  if (!o.sensitive.empty()) set_role(o.sensitive, AttributeRole::kSensitive, nullptr);
  if (!o.person.empty()) job.person = o.person;
  if (o.k > 0) job.privacy.k = static_cast<uint32_t>(o.k);
  if (o.job.empty() && o.k <= 0) throw std::runtime_error("--k is required");
  if (o.l > 0) {
    if (o.sensitive.empty() && o.job.empty()) throw std::runtime_error("--l needs --sensitive");
    job.privacy.l = o.l;
    job.privacy.c = o.c;
    job.privacy.diversity = *parse_diversity(o.diversity);
  }
  if (o.suppression >= 0) job.privacy.suppression = o.suppression;
  if (!o.metric.empty()) job.metric = *parse_metric(o.metric);
  // CLI11 checked every name against the same tables (IsMember below).
  if (!o.algorithm.empty()) job.algorithm = *parse_algorithm(o.algorithm);
  if (!o.choice.empty()) job.mondrian.choice = *parse_mondrian_choice(o.choice);
  if (o.sample > 0) job.mondrian.sample_fraction = o.sample;
  if (!o.split.empty()) job.mondrian.split = *parse_split_mode(o.split);
  if (o.distributed) job.mondrian.distributed = true;
  if (job.mondrian.distributed && job.algorithm != Algorithm::kMondrian) {
    throw std::runtime_error("--distributed needs --algorithm mondrian");
  }
  if (o.time_limit >= 0) job.time_limit_s = o.time_limit;
  if (!o.output.empty()) job.output = o.output;
  if (!o.report.empty()) job.report = o.report;
  if (o.no_projection) job.checker.projection = false;
  if (o.no_rollup) job.checker.rollup = false;
  if (o.no_history) job.checker.history = false;
  if (o.no_packed_keys) job.checker.packed_keys = false;
  if (o.no_dedup) job.checker.deduplicate = false;
  return job;
}

}  // namespace

void add_anonymize_command(CLI::App& app) {
  auto o = std::make_shared<AnonymizeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "anonymize", "Publish a CSV table with optimal k-anonymity (and l-diversity)");
  cmd->add_option("--job", o->job, "YAML job file (flags override its values)");
  cmd->add_option("--input", o->input, "Input CSV with a header row");
  cmd->add_option("--delimiter", o->delimiter, "CSV delimiter")->capture_default_str();
  cmd->add_option("--hierarchy", o->hierarchies,
                  "ATTR=FILE: quasi-identifier and its hierarchy (.csv table or .yaml spec)");
  cmd->add_option("--quasi-identifiers", o->quasi_identifiers,
                  "A,B,C: quasi-identifiers without hierarchy (mondrian: numbers become "
                  "ranges, other values sets)")
      ->delimiter(',');
  cmd->add_option("--identifying", o->identifying, "Attribute removed from the output");
  cmd->add_option("--insensitive", o->insensitive, "Attribute kept unchanged (the default)");
  cmd->add_option("--k", o->k, "k of k-anonymity")->check(CLI::PositiveNumber);
  cmd->add_option("--l", o->l, "l of l-diversity (needs --sensitive)");
  cmd->add_option("--diversity", o->diversity, "distinct, entropy or recursive")
      ->check(CLI::IsMember(engine::diversity_names().names()))
      ->capture_default_str();
  cmd->add_option("--c", o->c, "c of recursive-(c,l) diversity")->capture_default_str();
  cmd->add_option("--sensitive", o->sensitive, "Sensitive attribute for l-diversity");
  cmd->add_option("--person", o->person,
                  "Column identifying persons: k counts distinct persons per class, not rows");
  cmd->add_option("--suppression", o->suppression, "Fraction of rows that may be suppressed")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--metric", o->metric, "Quality model")
      ->check(CLI::IsMember(engine::metric_names().names()));
  cmd->add_option("--algorithm", o->algorithm, "Search algorithm")
      ->check(CLI::IsMember(engine::algorithm_names().names()));
  cmd->add_option("--choice", o->choice, "mondrian: attribute choice")
      ->check(CLI::IsMember(engine::mondrian_choices().names()));
  cmd->add_flag("--distributed", o->distributed,
                "mondrian under mpirun: each rank anonymizes one quantile range and writes "
                "OUTPUT with its rank before the extension");
  cmd->add_option("--sample", o->sample,
                  "distributed: fraction of rows sampled to choose the first cuts (default 0.01)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--split", o->split,
                  "distributed: tree (Mondrian's first cuts on the sample, default) or "
                  "quantiles (one attribute's N-quantiles, as the Spark paper)")
      ->check(CLI::IsMember(engine::split_modes().names()));
  cmd->add_option("--time-limit", o->time_limit,
                  "Seconds; when reached, the best transformation so far is returned");
  cmd->add_option("--output", o->output, "Anonymized CSV to write");
  cmd->add_option("--report", o->report, "JSON report to write");
  cmd->add_flag("--no-projection", o->no_projection, "Disable the projection optimization");
  cmd->add_flag("--no-rollup", o->no_rollup, "Disable the roll-up optimization");
  cmd->add_flag("--no-history", o->no_history,
                "Disable the history of stored classes (the Flash paper's snapshots)");
  cmd->add_flag("--no-packed-keys", o->no_packed_keys,
                "Keep transformed rows as int32 cells instead of packed 64-bit keys");
  cmd->add_flag("--no-dedup", o->no_dedup, "Scan every input row instead of the distinct rows");
  cmd->add_flag("-q,--quiet", o->quiet, "No progress bar");
  cmd->callback([o] {
    try {
      const engine::AnonymizationJob job = build_job(*o);
      if (job.algorithm == engine::Algorithm::kMondrian) {
        MondrianProgressPrinter printer(isatty(STDERR_FILENO));
        std::function<void(const engine::MondrianProgress&)> progress;
        if (!o->quiet) progress = [&](const engine::MondrianProgress& p) { printer.update(p); };
        if (job.mondrian.distributed) {
          engine::mpi::DistributedCallbacks cb;
          cb.progress = progress;
          if (!o->quiet) {
            cb.partition_done = [&](const engine::mpi::PartitionDone& d) {
              printer.partition_done(d);
            };
          }
          const auto out = engine::mpi::run_distributed(job, cb);
          printer.finish();
          if (out.rank == 0) print_mondrian_summary(out.report);
          return;
        }
        const engine::Outcome out = engine::run_job(job, nullptr, progress);
        printer.finish();
        print_mondrian_summary(*out.mondrian);
        return;
      }
      ProgressBar bar;
      const bool show = !o->quiet && isatty(STDERR_FILENO);
      std::function<void(const engine::SearchProgress&)> progress;
      if (show) progress = [&bar](const engine::SearchProgress& p) { bar.update(p); };
      const engine::Outcome out = engine::run_job(job, progress);
      bar.finish();
      if (!out.search.found) {
        fmt::print(stderr, "kanon anonymize: {} {}\n",
                   out.search.timed_out ? "time limit reached before finding a transformation for"
                                        : "no transformation satisfies",
                   job.privacy.describe());
        throw CLI::RuntimeError(2);
      }
      fmt::print(stderr,
                 "{} {}{}: {} checked of {} in {:.1f} ms, {} = {:.6g}, {} rows suppressed{}\n",
                 out.search.algorithm, job.privacy.describe(),
                 job.person.empty() ? "" : fmt::format(", counting persons of '{}'", job.person),
                 out.search.checked, out.search.lattice_size, out.search.search_ms,
                 engine::metric_name(job.metric), out.search.value, out.at_optimum.suppressed,
                 out.search.timed_out ? " (time limit reached: best so far)" : "");
    } catch (const CLI::RuntimeError&) {
      throw;
    } catch (const engine::mpi::DistributedError&) {
      throw CLI::RuntimeError(1);  // already reported by the failing rank
    } catch (const std::exception& e) {
      fmt::print(stderr, "kanon anonymize: {}\n", e.what());
      throw CLI::RuntimeError(1);
    }
  });
}

}  // namespace kanon::app
