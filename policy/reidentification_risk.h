// Re-identification risk of a released table, from its equivalence classes
// alone (pure; no database), with the figures ARX reports in its risk
// analysis (ARX's RiskModelSampleSummary), which follow K. El Emam, "Guide
// to the De-Identification of Personal Health Information" (CRC Press,
// 2013), "Measuring the probability of re-identification":
//
//   f_j  records of released class j (distinct persons with `person:`),
//   F_j  records of the population table that fall into class j,
//   n    = sum f_j, J the number of released classes, tau the threshold.
//
//   prosecutor (the attacker knows the target is in the release):
//     highest risk rB = 1 / min f_j; records at it: sum of f_j = min f_j;
//     average risk ("success rate") rC = J / n;
//     records above the threshold rA = sum of f_j with 1/f_j > tau (share: / n).
//   journalist (the target is anyone of the population):
//     rB = 1 / min F_j; rA = sum of f_j with 1/F_j > tau (share: / n);
//     rC = max(J / sum F_j, (1/n) sum f_j / F_j).
//   marketer (re-identify as many records as possible):
//     (1/n) sum f_j / F_j (F. K. Dankar, K. El Emam, "A method for evaluating
//     marketer re-identification risk", EDBT/ICDT workshops 2010);
//     without a population F_j = f_j, so it is J / n.
//
// "Above the threshold" is strict, as in ARX: with tau = 0.2 a class of 5 is
// not above it, a class of 4 is. docs/risk.md defines every figure.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>

namespace kanon::policy {

// Released classes of one size (and one population size).
struct ClassSizes {
  uint64_t size = 0;        // f_j
  uint64_t population = 0;  // F_j; 0 when no population table is given or the class has none
  uint64_t classes = 0;     // classes with these sizes
};

struct ProsecutorRisk {
  double highest = 0;               // 1 / min f_j
  uint64_t records_at_highest = 0;  // records of the classes of size min f_j
  double average = 0;               // J / n
  uint64_t records_above = 0;       // records with 1/f_j > tau
  double share_above = 0;           // records_above / n
};

struct JournalistRisk {
  double highest = 0;          // 1 / min F_j
  double average = 0;          // max(J / sum F_j, (1/n) sum f_j / F_j)
  uint64_t records_above = 0;  // records with 1/F_j > tau
  double share_above = 0;      // records_above / n
};

struct RiskFigures {
  double threshold = 0;  // tau
  uint64_t records = 0;  // n
  uint64_t classes = 0;  // J
  ProsecutorRisk prosecutor;
  std::optional<JournalistRisk> journalist;  // with a population only
  double marketer = 0;                       // (1/n) sum f_j / F_j; J / n without a population
  bool with_population = false;
};

// A threshold outside (0, 1] or a class of size 0: programmer errors of the
// caller (policy_file.cc validates the threshold users give).
class RiskError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Why the population sizes cannot be used, or "" when they can: a released
// class with no population record (F_j = 0: the population table is not the
// released table's population, or its values differ), or one with fewer
// population records than released ones (F_j < f_j).
std::string population_mismatch(std::span<const ClassSizes> classes);

// The figures of the released classes. `with_population`: use F_j for the
// journalist and marketer figures. An empty release (n = 0) has every risk 0.
// Throws RiskError for a threshold outside (0, 1], a class of size 0 with a
// non-zero count, or, with_population, when population_mismatch() is not "".
RiskFigures assess_risk(std::span<const ClassSizes> classes, double threshold,
                        bool with_population);

}  // namespace kanon::policy
