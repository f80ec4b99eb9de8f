// history_refresh: the disclosure tree a refresh may publish when analysts
// can link its release with every earlier one since the baseline
// (release_history.h; the requirement is in history_check.h).
//
// 1. Start from the last release's tree evaluated on the current rows: keep
//    each split whose two sides still hold >= k rows (and l distinct
//    sensitive values), collapse the others (DisclosureTree::regrow).
// 2. Refine: split the leaves further by the usual frequent-value rule.
// 3. Check every key present in this release and an earlier one; while some
//    has fewer than k candidates, collapse the parent of each such key's
//    leaf (the deepest refinement on its path) and check again.
// Collapsing only merges leaves, so a key's candidates never shrink; the
// root alone releases nothing new and keeps every key's candidates at what
// the earlier releases and the deletions since left it, so the loop ends
// with the requirement met whenever the history met it before and no key of
// the class was deleted. A key below k under the root alone (deletions, an
// earlier release, too few arrivals) has that count as its goal instead of
// k: no tree fixes it, but none may take more from it. Keys new
// in this release do not drive collapses: their candidates are the keys
// that arrived with them (history_check.h), which step 4 answers with holds
// in mode: materialized and a live mode reports (late_rows_below_k).
//
// Updated keys do not drive the collapses (with `hold`, step 3 looks at
// this release as if every updated key were held): a key whose quasi-identifiers
// changed since the last release (its leaf under the last tree moved) can
// fall below k under any tree but the root, and collapsing for it would
// cost every row its utility. A live mode (inline, view) has shown the
// update already (catch_up), so nothing can undo it: the check reports such
// keys apart (updated_rows_below_k). With `hold` (mode: materialized, where
// kanon writes what is shown) step 4 follows:
// 4. While some key is below k, hold (release_history.h: every
//    quasi-identifier masked) keys that match it in every earlier release
//    (same presence, same leaves) but not in this one, k - candidates of
//    them: a held key matches any target, so each one held adds one
//    candidate and takes none away. New keys are held the same way until
//    k of the keys that arrived with them match each (when fewer than k
//    arrived, none is held: it would not help).
//
// Pure functions over in-memory data; thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "policy/disclosure_tree.h"
#include "policy/encoded_table.h"
#include "policy/history_check.h"
#include "policy/release_history.h"

namespace kanon::policy {

inline constexpr uint32_t kNoRow = UINT32_MAX;

// The leaf of every key under `tree`: `rows[key]` is the key's distinct row
// in `table` now, kNoRow when the key is not in the table (kAbsent then).
std::vector<int32_t> leaves_of(const DisclosureTree& tree, const EncodedTable& table,
                               std::span<const uint32_t> rows);

// Released quasi-identifier cells over all cells of the current rows (NULL
// values count as not released), 0..1.
double released_fraction(const DisclosureTree& tree, const EncodedTable& table);

// For live modes (inline, view), rows inserted or updated since the last
// release have been shown under its tree already: the last tree on the
// current rows, when it places some current key where the history does not
// (a new key, or an updated one). The caller appends it as a release before
// history_refresh. nullopt when nothing changed or the history is empty.
std::optional<std::vector<int32_t>> catch_up(const ReleaseHistory& history,
                                             const EncodedTable& table,
                                             std::span<const uint32_t> rows);

// Counting persons (policy `person:`; empty without a person column): the
// person code of every key (`rows` as for leaves_of) for check_history. A
// NULL person is one code of its own; keys no longer in the table (present
// in a stored release only) share one more: counted as one person at most,
// which can only lower a count (fail closed).
std::vector<uint32_t> persons_of(const EncodedTable& table, std::span<const uint32_t> rows);

struct HistoryRefresh {
  DisclosureTree tree;
  // Per key index: its leaf, kAbsent for keys not in the table, or
  // held_leaf(leaf) for the keys step 4 held.
  std::vector<int32_t> leaves;
  HistoryCheck check;      // of the history with this release appended
  uint32_t rounds = 0;     // fix-up rounds that collapsed nodes
  uint32_t collapsed = 0;  // nodes collapsed by them
  uint64_t held = 0;       // row keys held
  // With holds, per key index: how many of the row keys it stands for are
  // held (release_history.h: weights). `leaves` shows the held entry only
  // when all of them are; a part held has the held entry of the same leaf.
  std::vector<uint64_t> held_keys;
  double released_fraction = 0;  // of the current rows, held keys' cells masked
};

// The tree to release next (a fresh build when the history is empty).
// `rows` as for leaves_of, indexed like the history's keys (each standing for
// history.weight(key) row keys).
HistoryRefresh history_refresh(const ReleaseHistory& history, const EncodedTable& table,
                               std::span<const uint32_t> rows, const TreeOptions& options,
                               bool hold = false);

// released_fraction with the held keys' cells masked too: `held_keys` as in
// HistoryRefresh (empty: a held entry in `leaves` holds one row key).
double released_fraction(const DisclosureTree& tree, const EncodedTable& table,
                         std::span<const uint32_t> rows, std::span<const int32_t> leaves,
                         std::span<const uint64_t> held_keys = {});

}  // namespace kanon::policy
