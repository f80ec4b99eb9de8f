// Built when CMake finds no MPI: `--distributed` is refused with a clear
// message; everything else in kanon works.
#include "engine/mpi/distributed.h"

namespace kanon::engine::mpi {

bool available() {
  return false;
}

DistributedOutcome run_distributed(const AnonymizationJob&, const DistributedCallbacks&) {
  throw std::runtime_error(
      "--distributed needs MPI; this kanon was built without it (install libopenmpi-dev and "
      "rebuild)");
}

}  // namespace kanon::engine::mpi
