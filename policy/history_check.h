// check_history: how many candidates an analyst holding every release since
// a baseline has for each row of the last one.
//
// The adversary (docs/security.md, "Privacy over time") knows the trees,
// every release, its target's quasi-identifiers at each release, and whether
// its target was present at each release: it links rows across releases by
// key and sees keys appear and disappear. A release places each of its keys
// in one leaf of its tree; so the candidates for key r are the keys K with
// the same presence as r in every release and r's leaf wherever present:
//
//   candidates(r) = |{ K : for every release i, K present in i <=> r present
//                          in i, and if so leaf_i(K) = leaf_i(r) }|
//
// The requirement is candidates(r) >= k for every key present in the last
// release, once there is an earlier one (a first release alone needs its
// leaves to hold >= k rows, which every tree ensures). A key deleted since
// an earlier release is nobody's candidate any more: the adversary sees it
// gone.
//
// A held key (release_history.h) shows no leaf in that release but is
// present: as a candidate it matches any target there; as a target it is
// still placed by its true leaf (the analyst knows its values), so holding a
// key helps the others, never itself.
//
// Rows below k are told apart by why (the first that applies):
// - deleted: keys that reach k when no key had been deleted (every key
//   present from its first release on): the adversary saw keys of its
//   class disappear, which no later release can undo;
// - late: keys that arrived after the first release checked (a live mode
//   shows a new row at once, in whatever leaf it falls; mode: materialized
//   holds new rows until enough similar ones exist, history_refresh.h);
// - updated: keys flagged in `updated`, or that reach k when besides the
//   updated keys are held in every release (a live mode showed the update
//   at once);
// - the rest (rows_below_k): what a release should never have allowed.
//
// Counting: keys with the same entry in every release form one group (few);
// a target group is compared only with the groups of the same last leaf and
// the groups held in the last release.
// Pure; thread-compatible.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "policy/release_history.h"

namespace kanon::policy {

struct HistoryCheck {
  uint64_t linked_rows = 0;     // keys in the last release and an earlier one
  uint64_t new_rows = 0;        // keys in the last release only (an earlier one exists)
  uint64_t min_candidates = 0;  // over both kinds (persons with `persons`); 0 when none
  // Of those keys, candidates < k, by why (above).
  uint64_t rows_below_k = 0;
  uint64_t updated_rows_below_k = 0;
  uint64_t late_rows_below_k = 0;
  uint64_t deleted_rows_below_k = 0;
  uint64_t classes_below_k = 0;            // distinct release histories among rows_below_k
  std::vector<uint32_t> below;             // key indexes of every kind (when asked for)
  std::vector<uint64_t> below_candidates;  // their candidate counts
};

// `columns`: per release, oldest first, the entry of every key index (a
// leaf, kAbsent, or held); all of one length. The last column is the
// release checked. `updated` (empty, or one flag per key): keys counted in
// updated_rows_below_k. `weights` (empty, or one per key): how many row
// keys each key index stands for (release_history.h); candidates and row
// counts are sums of weights. `persons` (empty, or one code per key, for
// policy `person:`; a key index stands for rows of one person): candidates are
// then the distinct persons of the matching keys, a person with keys in several
// histories counting for each target it matches; row counts stay sums of
// weights. REQUIRES: columns non-empty.
HistoryCheck check_history(std::span<const std::vector<int32_t>> columns, uint64_t k,
                           bool list_below = false, std::span<const uint8_t> updated = {},
                           std::span<const uint64_t> weights = {},
                           std::span<const uint32_t> persons = {});

}  // namespace kanon::policy
