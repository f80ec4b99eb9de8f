// Best-first branch-and-bound search (Prasser et al., antichain paper): from
// the bottom, every popped node's unvisited direct generalizations are
// checked and queued, ordered by their quality lower bound (best first).
// Nodes whose lower bound cannot beat the best solution are pruned together
// with all their generalizations via an antichain prefix tree ("insufficient
// quality"). It never enumerates the lattice, so it suits large lattices;
// with a time limit it returns the best transformation found so far.
// Without a time limit it is exact: every node on a path to a node with a
// bound below the optimum has a smaller bound, so it is expanded.
#pragma once

#include "engine/checker.h"
#include "engine/lattice.h"
#include "engine/privacy_model.h"
#include "engine/quality_metric.h"
#include "engine/search.h"

namespace kanon::engine {

SearchResult best_first_search(Checker& checker, const Lattice& lattice,
                               const TraversalOrder& order, const QualityMetric& metric,
                               const PrivacyModel& privacy, const SearchOptions& options);

}  // namespace kanon::engine
