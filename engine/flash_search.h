// Flash (Kohlmayer et al., "Flash: efficient, stable and optimal
// k-anonymity"): the outer loop over lattice levels, FINDPATH (greedy path of
// untagged nodes towards the top), CHECKPATH (binary search on the path,
// non-anonymous checked nodes go to a min-heap whose successors start new
// paths), the three-criteria total order, levels and successors sorted
// lazily. Predictive tags live in two antichain prefix trees (anonymous ->
// generalizations, not anonymous -> specializations), not in a materialized
// lattice.
//
// Tagging anonymity predictively is only used when the privacy model is
// monotone (PrivacyModel::monotone()). When the quality model is not monotone
// under suppression (e.g. loss with s > 0: more generalization can mean less
// suppression and less loss), tagged anonymous nodes may still be optimal, so
// a second phase evaluates them in order of their data-independent lower
// bound and stops once the bound reaches the best value (branch and bound
// with a third trie for "insufficient quality"). With a non-monotone privacy
// model the first phase is skipped and the second covers the whole lattice.
#pragma once

#include "engine/checker.h"
#include "engine/lattice.h"
#include "engine/privacy_model.h"
#include "engine/quality_metric.h"
#include "engine/search.h"

namespace kanon::engine {

SearchResult flash_search(Checker& checker, const Lattice& lattice, const TraversalOrder& order,
                          const QualityMetric& metric, const PrivacyModel& privacy,
                          const SearchOptions& options);

}  // namespace kanon::engine
