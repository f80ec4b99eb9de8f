#include "engine/mpi/distributed.h"

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <fstream>
#include <optional>
#include <random>
#include <set>
#include <sstream>

#include "base/stopwatch.h"
#include "engine/mondrian_input.h"
#include "engine/mondrian_split.h"
#include "engine/mpi/wire.h"

namespace kanon::engine::mpi {

bool available() {
  return true;
}

namespace {

constexpr int kDoneTag = 17;
constexpr double kMinSampleRows = 1000;

struct Comm {
  int rank = 0;
  int size = 1;
};

// Collective: every rank learns whether any rank failed; the lowest failing
// rank prints its message once; then all ranks throw.
void agree(const Comm& c, const std::string& error) {
  const int mine = error.empty() ? INT_MAX : c.rank;
  int lowest = INT_MAX;
  MPI_Allreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (lowest == INT_MAX) return;
  if (lowest == c.rank) {
    fmt::print(stderr, "kanon anonymize: {}{}\n",
               c.size > 1 ? fmt::format("rank {}: ", c.rank) : std::string(), error);
  }
  throw DistributedError(error.empty() ? fmt::format("failed on rank {}", lowest) : error);
}

// Runs a local step on every rank, then agrees on failure.
template <typename F>
void step(const Comm& c, F&& f) {
  std::string error;
  try {
    f();
  } catch (const std::exception& e) {
    error = *e.what() ? e.what() : "unknown error";
  }
  agree(c, error);
}

int to_int(size_t n, const char* what) {
  if (n > static_cast<size_t>(INT_MAX)) {
    throw std::runtime_error(fmt::format("{}: more than 2 GiB in one MPI message", what));
  }
  return static_cast<int>(n);
}

// Root gathers every rank's blob.
std::vector<std::string> gather_blobs(const Comm& c, const std::string& mine) {
  const int n = to_int(mine.size(), "gather");
  std::vector<int> sizes(c.size), displs(c.size);
  MPI_Gather(&n, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::string all;
  if (c.rank == 0) {
    size_t total = 0;
    for (int r = 0; r < c.size; ++r) {
      displs[r] = to_int(total, "gather");
      total += sizes[r];
    }
    all.resize(total);
  }
  MPI_Gatherv(mine.data(), n, MPI_CHAR, all.data(), sizes.data(), displs.data(), MPI_CHAR, 0,
              MPI_COMM_WORLD);
  std::vector<std::string> out;
  if (c.rank == 0) {
    for (int r = 0; r < c.size; ++r) out.push_back(all.substr(displs[r], sizes[r]));
  }
  return out;
}

void broadcast_blob(std::string* blob) {
  uint64_t n = blob->size();
  MPI_Bcast(&n, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  blob->resize(n);
  MPI_Bcast(blob->data(), to_int(n, "broadcast"), MPI_CHAR, 0, MPI_COMM_WORLD);
}

// ---- 1. the rank's slice of the input -------------------------------------

// First line start at or after `p` (a line belongs to the rank whose byte
// range holds its first byte).
uint64_t line_start(std::ifstream& in, uint64_t p, uint64_t header_end, uint64_t size) {
  if (p <= header_end) return header_end;
  if (p >= size) return size;
  in.clear();
  in.seekg(static_cast<std::streamoff>(p - 1));
  char buf[65536];
  uint64_t pos = p - 1;
  while (pos < size) {
    in.read(buf, sizeof buf);
    const auto got = static_cast<size_t>(in.gcount());
    if (got == 0) break;
    if (const void* nl = std::memchr(buf, '\n', got)) {
      return pos + (static_cast<const char*>(nl) - buf) + 1;
    }
    pos += got;
  }
  return size;
}

CsvTable read_slice(const Comm& c, const std::string& path, char delimiter) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CsvError(path, 0, "cannot open file");
  in.seekg(0, std::ios::end);
  const auto size = static_cast<uint64_t>(in.tellg());
  in.seekg(0);
  std::string header;
  std::getline(in, header);
  const uint64_t header_end = std::min<uint64_t>(size, header.size() + 1);
  const uint64_t begin = line_start(in, size * c.rank / c.size, header_end, size);
  const uint64_t end =
      c.rank + 1 == c.size ? size : line_start(in, size * (c.rank + 1) / c.size, header_end, size);
  std::string text = header + "\n";
  const size_t head = text.size();
  text.resize(head + (end - begin));
  in.clear();
  in.seekg(static_cast<std::streamoff>(begin));
  in.read(text.data() + head, static_cast<std::streamsize>(end - begin));
  // Line numbers: lines before this slice = header + the lower ranks' lines.
  uint64_t lines = std::count(text.begin() + head, text.end(), '\n');
  if (end == size && end > begin && text.back() != '\n') ++lines;
  uint64_t before = 0;
  MPI_Exscan(&lines, &before, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  if (c.rank == 0) before = 0;
  const uint64_t offset = before;  // local line L (>= 2) is global line L + offset
  std::optional<CsvError> error;
  CsvTable table;
  try {
    std::istringstream is(text);
    table = parse_csv(is, delimiter, path);
  } catch (const CsvError& e) {
    error.emplace(e.source, e.line ? e.line + offset : 0, e.problem);  // the global line
  }
  if (error) throw *error;
  for (auto& l : table.line_numbers) l += offset;
  return table;
}

// ---- 2. agreed domains ----------------------------------------------------

void merge_domains(const Comm& c, const CsvTable& table, std::vector<MondrianDomain>* doms) {
  const size_t d = doms->size();
  std::vector<int> numeric(d), all_numeric(d);
  std::vector<double> low(d), high(d), global_low(d), global_high(d);
  for (size_t a = 0; a < d; ++a) {
    const MondrianDomain& m = (*doms)[a];
    numeric[a] = m.kind == MondrianKind::kNumeric;
    low[a] = numeric[a] ? m.low : HUGE_VAL;
    high[a] = numeric[a] ? m.high : -HUGE_VAL;
  }
  const int n = static_cast<int>(d);
  MPI_Allreduce(numeric.data(), all_numeric.data(), n, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(low.data(), global_low.data(), n, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(high.data(), global_high.data(), n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  Writer mine;
  for (size_t a = 0; a < d; ++a) {
    MondrianDomain& m = (*doms)[a];
    if (all_numeric[a]) {
      m.low = global_low[a] <= global_high[a] ? global_low[a] : 0;
      m.high = global_low[a] <= global_high[a] ? global_high[a] : 0;
      continue;
    }
    if (m.kind == MondrianKind::kNumeric) {  // numbers here, text on another rank
      m.kind = MondrianKind::kSet;
      m.values = distinct_values(table, m.column);
    }
    mine.u64(m.values.size());
    for (const auto& v : m.values) mine.str(v);
  }
  const std::vector<std::string> blobs = gather_blobs(c, mine.data);
  Writer merged;
  if (c.rank == 0) {
    std::vector<Reader> readers;
    for (const auto& b : blobs) readers.emplace_back(b);
    for (size_t a = 0; a < d; ++a) {
      if (all_numeric[a]) continue;
      std::set<std::string> values;
      for (auto& r : readers) {
        const uint64_t count = r.u64();
        for (uint64_t i = 0; i < count; ++i) values.insert(r.str());
      }
      merged.u64(values.size());
      for (const auto& v : values) merged.str(v);
    }
  }
  broadcast_blob(&merged.data);
  Reader r(merged.data);
  for (size_t a = 0; a < d; ++a) {
    if (all_numeric[a]) continue;
    MondrianDomain& m = (*doms)[a];
    m.values.resize(r.u64());
    for (auto& v : m.values) v = r.str();
  }
}

// ---- 3. sample and split tree (rank 0) -------------------------------------

struct Split {
  SplitTree tree;
  uint64_t sample_rows = 0;
};

// Every rank sends its sample to rank 0, which builds the split tree and
// broadcasts it.
Split choose_split(const Comm& c, const MondrianInput& in, const MondrianJobOptions& job,
                   MondrianChoice choice) {
  const size_t d = in.qis.size();
  uint64_t rows = in.rows, total = 0;
  MPI_Allreduce(&rows, &total, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  const double p =
      std::max(job.sample_fraction,
               std::min(1.0, kMinSampleRows / static_cast<double>(std::max<uint64_t>(total, 1))));
  std::mt19937_64 rng(0x6b616e6f6eULL + static_cast<uint64_t>(c.rank));
  std::bernoulli_distribution pick(p);
  Writer mine;
  for (uint32_t r = 0; r < in.rows; ++r) {
    if (!pick(rng)) continue;
    for (size_t a = 0; a < d; ++a) mine.f64(order_key(in.qis[a], in.qis[a].codes[r]));
  }
  const std::vector<std::string> blobs = gather_blobs(c, mine.data);
  Writer decided;
  if (c.rank == 0) {
    std::vector<double> sample;
    for (const auto& b : blobs) {
      Reader r(b);
      while (!r.done()) sample.push_back(r.f64());
    }
    const SplitTree tree = build_split_tree(sample, in, choice, job.split, c.size);
    decided.u64(sample.size() / d);
    decided.u64(tree.nodes.size());
    for (const SplitNode& n : tree.nodes) {
      decided.u64(static_cast<uint64_t>(n.attribute + 1));
      decided.f64(n.threshold);
      decided.u64(static_cast<uint64_t>(n.left + 1));
      decided.u64(static_cast<uint64_t>(n.right + 1));
      decided.u64(static_cast<uint64_t>(n.rank));
    }
  }
  broadcast_blob(&decided.data);
  Reader r(decided.data);
  Split split;
  split.sample_rows = r.u64();
  split.tree.nodes.resize(r.u64());
  for (SplitNode& n : split.tree.nodes) {
    n.attribute = static_cast<int>(r.u64()) - 1;
    n.threshold = r.f64();
    n.left = static_cast<int>(r.u64()) - 1;
    n.right = static_cast<int>(r.u64()) - 1;
    n.rank = static_cast<int>(r.u64());
  }
  return split;
}

// ---- 4. exchange ----------------------------------------------------------

// The worker of each local row.
std::vector<int> ranges_of(const MondrianInput& in, const SplitTree& tree) {
  const size_t d = in.qis.size();
  std::vector<int> out(in.rows, 0);
  std::vector<double> keys(d);
  for (uint32_t r = 0; r < in.rows; ++r) {
    for (size_t a = 0; a < d; ++a) keys[a] = order_key(in.qis[a], in.qis[a].codes[r]);
    out[r] = tree.route(keys.data());
  }
  return out;
}

CsvTable exchange(const Comm& c, const CsvTable& local, const std::vector<int>& range) {
  std::vector<Writer> out(c.size);
  for (size_t r = 0; r < local.rows.size(); ++r) {
    Writer& w = out[range[r]];
    w.u64(local.line_numbers[r]);
    for (const auto& f : local.rows[r]) w.str(f);
  }
  std::vector<int> send(c.size), recv(c.size), sdispl(c.size), rdispl(c.size);
  std::string sendbuf;
  for (int p = 0; p < c.size; ++p) {
    send[p] = to_int(out[p].data.size(), "exchange");
    sdispl[p] = to_int(sendbuf.size(), "exchange");
    sendbuf += out[p].data;
    out[p].data = std::string();
  }
  MPI_Alltoall(send.data(), 1, MPI_INT, recv.data(), 1, MPI_INT, MPI_COMM_WORLD);
  size_t total = 0;
  for (int p = 0; p < c.size; ++p) {
    rdispl[p] = to_int(total, "exchange");
    total += recv[p];
  }
  std::string recvbuf(total, '\0');
  MPI_Alltoallv(sendbuf.data(), send.data(), sdispl.data(), MPI_CHAR, recvbuf.data(), recv.data(),
                rdispl.data(), MPI_CHAR, MPI_COMM_WORLD);
  CsvTable t;
  t.source = local.source;
  t.header = local.header;
  Reader rd(recvbuf);
  while (!rd.done()) {
    t.line_numbers.push_back(rd.u64());
    std::vector<std::string> row(t.header.size());
    for (auto& f : row) f = rd.str();
    t.rows.push_back(std::move(row));
  }
  return t;
}

uint32_t distinct_sensitive(const MondrianInput& in) {
  std::vector<uint8_t> seen(in.sensitive_domain, 0);
  uint32_t n = 0;
  for (int32_t v : in.sensitive) n += seen[v] ? 0 : (seen[v] = 1);
  return n;
}

// ---- 5. progress from the other ranks -------------------------------------

class DoneCollector {
 public:
  DoneCollector(const Comm& c, const DistributedCallbacks& cb) : c_(c), cb_(cb) {}

  void poll() {
    int flag = 1;
    while (flag) {
      MPI_Status st;
      MPI_Iprobe(MPI_ANY_SOURCE, kDoneTag, MPI_COMM_WORLD, &flag, &st);
      if (flag) receive(st.MPI_SOURCE);
    }
  }
  void own(uint64_t rows, uint64_t classes, double ms) { report(0, rows, classes, ms); }
  void wait_all() {
    while (done_ < c_.size) {
      MPI_Status st;
      MPI_Probe(MPI_ANY_SOURCE, kDoneTag, MPI_COMM_WORLD, &st);
      receive(st.MPI_SOURCE);
    }
  }
  static void send(uint64_t rows, uint64_t classes, double ms) {
    double msg[3] = {static_cast<double>(rows), static_cast<double>(classes), ms};
    MPI_Send(msg, 3, MPI_DOUBLE, 0, kDoneTag, MPI_COMM_WORLD);
  }

 private:
  void receive(int source) {
    double msg[3];
    MPI_Recv(msg, 3, MPI_DOUBLE, source, kDoneTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    report(source, static_cast<uint64_t>(msg[0]), static_cast<uint64_t>(msg[1]), msg[2]);
  }
  void report(int rank, uint64_t rows, uint64_t classes, double ms) {
    ++done_;
    if (cb_.partition_done) cb_.partition_done({rank, done_, c_.size, rows, classes, ms});
  }

  const Comm& c_;
  const DistributedCallbacks& cb_;
  int done_ = 0;
};

struct MpiSession {
  MpiSession() {
    int init = 0;
    MPI_Initialized(&init);
    if (!init) MPI_Init(nullptr, nullptr);
  }
  ~MpiSession() {
    int fin = 0;
    MPI_Finalized(&fin);
    if (!fin) MPI_Finalize();
  }
};

DistributedOutcome run(const Comm& c, const AnonymizationJob& job, const DistributedCallbacks& cb) {
  base::Stopwatch clock;
  // Wall time per phase on this rank; the report shows the slowest rank's.
  std::vector<std::pair<std::string, double>> phases;
  const auto mark = [&](const char* name) { phases.emplace_back(name, clock.lap_ms()); };
  DistributedOutcome out;
  out.rank = c.rank;
  out.ranks = c.size;
  MondrianOptions options;
  CsvTable local;
  std::vector<MondrianDomain> domains;
  step(c, [&] {
    options = mondrian_options(job);
    local = read_slice(c, job.input, job.delimiter);
    domains = table_domains(local, job.attributes);
  });
  mark("read");
  merge_domains(c, local, &domains);
  MondrianInput local_in;
  step(c, [&] { local_in = encode_mondrian(local, job.attributes, domains); });
  const size_t d = local_in.qis.size();
  mark("domains");
  Split split = choose_split(c, local_in, job.mondrian, options.choice);
  mark("sample");
  // Exchange; merge infeasible ranges into a neighbour and repeat.
  CsvTable mine;
  MondrianInput in;
  while (true) {
    mine = exchange(c, local, ranges_of(local_in, split.tree));
    step(c, [&] { in = encode_mondrian(mine, job.attributes, domains); });
    const uint64_t stats[2] = {in.rows, in.sensitive.empty() ? 0 : distinct_sensitive(in)};
    std::vector<uint64_t> all(2 * c.size);
    MPI_Allgather(stats, 2, MPI_UINT64_T, all.data(), 2, MPI_UINT64_T, MPI_COMM_WORLD);
    int bad = -1;
    for (int p = 0; p < c.size && bad < 0; ++p) {
      const uint64_t n = all[2 * p], distinct = all[2 * p + 1];
      if (n > 0 && (n < options.k || (options.l > 1 && distinct < options.l))) bad = p;
    }
    if (bad < 0 || !split.tree.merge(bad)) break;
  }
  local = CsvTable();
  local_in = MondrianInput();
  mark("exchange");
  // Partition this rank's range.
  DoneCollector collector(c, cb);
  MondrianResult result;
  // Workers announce their range's end as soon as it is partitioned (rank 0
  // polls while partitioning its own), before the collective agreement.
  step(c, [&] {
    if (in.rows == 0) {
      result.min_class_size = UINT32_MAX;
      if (c.rank != 0) DoneCollector::send(0, 0, 0);
      return;
    }
    MondrianOptions o = options;
    if (c.rank == 0) {
      o.progress = [&](const MondrianProgress& p) {
        if (cb.progress) cb.progress(p);
        collector.poll();
      };
    }
    result = mondrian(in, o);
    if (c.rank != 0) DoneCollector::send(in.rows, result.classes(), result.ms);
  });
  const MondrianLoss loss = mondrian_loss(in, result);
  mark("partition");
  if (c.rank == 0) {
    collector.own(in.rows, result.classes(), result.ms);
    collector.wait_all();
  }
  step(c, [&] {
    if (!job.output.empty()) {
      write_mondrian_csv(part_path(job.output, c.rank), mine, job.attributes, in, result,
                         job.delimiter);
    }
  });
  mark("write");
  std::vector<double> phase_ms, slowest_phase(phases.size());
  for (const auto& p : phases) phase_ms.push_back(p.second);
  MPI_Reduce(phase_ms.data(), slowest_phase.data(), static_cast<int>(phases.size()), MPI_DOUBLE,
             MPI_MAX, 0, MPI_COMM_WORLD);
  // Combine the loss.
  const double sums[3] = {loss.dp, loss.ncp_sum, result.cpu_ms};
  double total[3] = {0, 0, 0};
  MPI_Reduce(sums, total, 3, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  const uint64_t counts[2] = {loss.rows, loss.classes};
  uint64_t count_total[2] = {0, 0};
  MPI_Reduce(counts, count_total, 2, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  uint32_t min_class = 0;
  MPI_Reduce(&result.min_class_size, &min_class, 1, MPI_UINT32_T, MPI_MIN, 0, MPI_COMM_WORLD);
  double slowest = 0;
  MPI_Reduce(&result.ms, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MondrianReport& rep = out.report;
  rep.rows_per_rank.resize(c.size);
  const uint64_t my_rows = in.rows;
  MPI_Gather(&my_rows, 1, MPI_UINT64_T, rep.rows_per_rank.data(), 1, MPI_UINT64_T, 0,
             MPI_COMM_WORLD);
  rep.privacy = job.privacy.describe();
  rep.choice = mondrian_choice_name(options.choice);
  for (const auto& dom : domains) rep.quasi_identifiers.push_back(dom.name);
  rep.loss.dp = total[0];
  rep.loss.ncp_sum = total[1];
  rep.loss.rows = count_total[0];
  rep.loss.classes = count_total[1];
  rep.loss.min_class_size = min_class;
  rep.loss.gcp = rep.loss.rows ? total[1] / (static_cast<double>(d) * rep.loss.rows) : 0;
  rep.ms = slowest;
  rep.cpu_ms = total[2];
  rep.ranks = c.size;
  for (int r = 0; r < c.size && !job.output.empty(); ++r) {
    rep.parts.push_back(part_path(job.output, r));
  }
  rep.split = split_mode_name(job.mondrian.split);
  rep.cuts = split.tree.describe(in);
  rep.sample_fraction = job.mondrian.sample_fraction;
  rep.sample_rows = split.sample_rows;
  for (size_t i = 0; i < phases.size(); ++i) {
    rep.phases_ms.emplace_back(phases[i].first, slowest_phase[i]);
  }
  rep.total_ms = clock.ms();
  step(c, [&] {
    if (c.rank != 0 || job.report.empty()) return;
    std::ofstream f(job.report);
    if (!f) throw DataError(fmt::format("{}: cannot write report", job.report));
    f << mondrian_report_json(rep);
  });
  return out;
}

}  // namespace

DistributedOutcome run_distributed(const AnonymizationJob& job, const DistributedCallbacks& cb) {
  MpiSession session;
  Comm c;
  MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &c.size);
  try {
    return run(c, job, cb);
  } catch (const DistributedError&) {
    throw;
  } catch (const std::exception& e) {
    fmt::print(stderr, "kanon anonymize: rank {}: {}\n", c.rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
    throw;
  }
}

}  // namespace kanon::engine::mpi
