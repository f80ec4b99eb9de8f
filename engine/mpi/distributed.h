// Distributed Mondrian over MPI (the method of
// ../shared/seeds/distributed-mondrian-spark.txt, with Open MPI instead of
// Spark). Run as `mpirun -np N kanon anonymize --algorithm mondrian
// --distributed ...`; every rank executes run_distributed():
//
//  1. each rank reads its byte slice of the input (the lines that start in
//     [size*r/N, size*(r+1)/N)), so no rank holds the whole file;
//  2. the ranks agree on the domains (numeric ranges, distinct values of
//     hierarchy and set attributes) so every rank encodes alike;
//  3. every rank sends a random sample (fraction `sample_fraction`, at least
//     ~1000 rows overall) to rank 0, which picks the cut attribute with the
//     job's choice (span / max / min entropy) and its N-quantiles;
//  4. rows are exchanged (MPI_Alltoallv) so rank p holds quantile range p;
//     a range with fewer than k rows or l distinct sensitive values is merged
//     into its neighbour and the exchange repeated;
//  5. each rank runs Mondrian on its range and writes its part
//     (`out.csv` -> `out.<rank>.csv`); rank 0 reports ranges as they finish,
//     combines the loss (DP and NCP sums add up; GCP = NCP sum / (d x rows))
//     and writes the report.
//
// Errors: input errors are agreed on collectively and reported once (the
// lowest failing rank prints); every rank then throws DistributedError. An
// unexpected failure inside a collective step calls MPI_Abort.
// Limits: no quoted line breaks inside fields of the input; at most 2 GiB
// exchanged between any two ranks.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>

#include "engine/anonymizer.h"

namespace kanon::engine::mpi {

// Already reported on stderr by the failing rank.
class DistributedError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct PartitionDone {
  int rank = 0;
  int done = 0;  // ranges finished so far, this one included
  int ranks = 0;
  uint64_t rows = 0;
  uint64_t classes = 0;
  double ms = 0;
};

struct DistributedCallbacks {
  std::function<void(const MondrianProgress&)> progress;     // rank 0's own range
  std::function<void(const PartitionDone&)> partition_done;  // rank 0, every range
};

struct DistributedOutcome {
  int rank = 0;
  int ranks = 1;
  MondrianReport report;  // complete on rank 0
};

// False when kanon was built without MPI (run_distributed then throws).
bool available();

// Initializes MPI (once), runs, finalizes. Throws DistributedError.
DistributedOutcome run_distributed(const AnonymizationJob& job, const DistributedCallbacks& cb);

}  // namespace kanon::engine::mpi
