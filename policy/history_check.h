// check_history: how many candidates an analyst holding every release since
// a baseline has for each row that was in more than one of them.
//
// The model (docs/security.md, "Privacy over time"): the analyst links rows
// across releases by key, and knows the target's quasi-identifiers at every
// release the target was in. A release places each of its keys in one leaf of
// its tree; so the candidates for key r are the keys K (deleted ones
// included) that share r's leaf in every release where both appear:
//
//   candidates(r) = |{ K : for every release i with K and r present,
//                          leaf_i(K) = leaf_i(r) }|
//
// The requirement is candidates(r) >= k for every key present in the last
// release and in an earlier one; a key new in the last release only needs
// its leaf to hold >= k rows, which every tree ensures.
//
// A held key (release_history.h) shows no leaf in that release: as a
// candidate it matches any target there; as a target it is still placed by
// its true leaf (the analyst knows its values), so holding a key helps the
// others, never itself.
//
// Counting: keys with the same leaf in every release form one group (few);
// a group present in the last release is compared only with the groups of
// the same last leaf and the groups absent from it (deleted keys).
// Pure; thread-compatible.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "policy/release_history.h"

namespace kanon::policy {

struct HistoryCheck {
  uint64_t linked_rows = 0;     // keys in the last release and an earlier one
  uint64_t min_candidates = 0;  // over those keys; 0 when there are none
  // Of those keys, candidates < k; those flagged in `updated` apart (rows
  // below k through updates of quasi-identifiers a live mode showed).
  uint64_t rows_below_k = 0;
  uint64_t updated_rows_below_k = 0;
  uint64_t classes_below_k = 0;            // distinct release histories among rows_below_k
  std::vector<uint32_t> below;             // key indexes of both kinds (when asked for)
  std::vector<uint64_t> below_candidates;  // their candidate counts
};

// `columns`: per release, oldest first, the entry of every key index (a
// leaf, kAbsent, or held); all of one length. The last column is the
// release checked. `updated` (empty, or one flag per key): keys counted in
// updated_rows_below_k instead of rows_below_k. `weights` (empty, or one per
// key): how many row keys each key index stands for (release_history.h);
// candidates and row counts are sums of weights. REQUIRES: columns non-empty.
HistoryCheck check_history(std::span<const std::vector<int32_t>> columns, uint64_t k,
                           bool list_below = false, std::span<const uint8_t> updated = {},
                           std::span<const uint64_t> weights = {});

}  // namespace kanon::policy
