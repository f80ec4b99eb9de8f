#include "store/snapshot_codec.h"

#include <fmt/format.h>

#include <stdexcept>

#include "base/json.h"
#include "store/materializer.h"
#include "store/release_store.h"

namespace kanon::store {

using base::ConfigError;
namespace {

const char* form_name(policy::PredicateForm form) {
  switch (form) {
    case policy::PredicateForm::kNestedCase:
      return "nested";
    case policy::PredicateForm::kFlatCase:
      return "flat";
    case policy::PredicateForm::kFlatValue:
      return "value";
    case policy::PredicateForm::kSwitchCase:
      return "switch";
    case policy::PredicateForm::kFunction:
      return "function";
    case policy::PredicateForm::kCostBased:
      break;
  }
  return "flat";
}

policy::PredicateForm form_of(const std::string& name) {
  if (name == "nested") return policy::PredicateForm::kNestedCase;
  if (name == "flat") return policy::PredicateForm::kFlatCase;
  if (name == "value") return policy::PredicateForm::kFlatValue;
  if (name == "switch") return policy::PredicateForm::kSwitchCase;
  if (name == "function") return policy::PredicateForm::kFunction;
  throw std::runtime_error("unknown predicate form '" + name + "'");
}

base::Json check_json(const policy::HistoryCheck& c) {
  return {{"linked_rows", c.linked_rows},
          {"new_rows", c.new_rows},
          {"min_candidates", c.min_candidates},
          {"rows_below_k", c.rows_below_k},
          {"updated_rows_below_k", c.updated_rows_below_k},
          {"late_rows_below_k", c.late_rows_below_k},
          {"deleted_rows_below_k", c.deleted_rows_below_k},
          {"classes_below_k", c.classes_below_k}};
}

policy::HistoryCheck check_from(const nlohmann::json& j) {
  policy::HistoryCheck c;
  c.linked_rows = j.at("linked_rows").get<uint64_t>();
  c.min_candidates = j.at("min_candidates").get<uint64_t>();
  c.rows_below_k = j.at("rows_below_k").get<uint64_t>();
  c.updated_rows_below_k = j.at("updated_rows_below_k").get<uint64_t>();
  c.classes_below_k = j.at("classes_below_k").get<uint64_t>();
  // Absent from snapshots shared by a kanon before the adversary counted
  // presence (issue 27).
  c.new_rows = j.value("new_rows", uint64_t{0});
  c.late_rows_below_k = j.value("late_rows_below_k", uint64_t{0});
  c.deleted_rows_below_k = j.value("deleted_rows_below_k", uint64_t{0});
  return c;
}

}  // namespace

std::string encode_snapshot(const policy::TableSnapshot& s) {
  base::Json forms = base::Json::array();
  for (const auto f : s.forms) forms.push_back(form_name(f));
  const auto& r = s.release;
  base::Json doc = {{"format", kSnapshotFormat},
                    {"table", s.policy.name()},
                    {"tree", base::Json::parse(policy::tree_json(s.tree))},
                    {"forms", std::move(forms)},
                    {"mask_function", s.mask_function},
                    {"evaluator_fallback", s.evaluator_fallback},
                    {"built_at_us", std::chrono::duration_cast<std::chrono::microseconds>(
                                        s.built_at.time_since_epoch())
                                        .count()},
                    {"stats",
                     {{"rows", s.stats.rows},
                      {"distinct_rows", s.stats.distinct_rows},
                      {"load_ms", s.stats.load_ms},
                      {"tree_ms", s.stats.tree_ms},
                      {"compile_ms", s.stats.compile_ms},
                      {"fingerprint", s.stats.fingerprint}}},
                    {"grant_warnings", s.grant_warnings},
                    {"release",
                     {{"key_source", static_cast<int>(r.key.source)},
                      {"key_columns", r.key.columns},
                      {"key_told_apart_by", r.key.told_apart_by},
                      {"version", r.version},
                      {"baseline", r.baseline},
                      {"catch_up", r.catch_up},
                      {"fixup_rounds", r.fixup_rounds},
                      {"collapsed", r.collapsed},
                      {"held", r.held},
                      {"released_fraction", r.released_fraction},
                      {"check", check_json(r.check)}}}};
  return doc.dump();
}

std::shared_ptr<policy::TableSnapshot> decode_snapshot(const std::string& body,
                                                       const policy::TablePolicy& policy,
                                                       const policy::TableInfo& info) {
  try {
    const auto doc = nlohmann::json::parse(body);
    if (doc.at("format").get<int>() != kSnapshotFormat)
      throw std::runtime_error(
          fmt::format("format {} (this kanon reads {})", doc.at("format").dump(), kSnapshotFormat));
    if (doc.at("table").get<std::string>() != policy.name())
      throw std::runtime_error("it is of table " + doc.at("table").get<std::string>());
    policy::check_against_catalog(policy, info);
    auto snap = std::make_shared<policy::TableSnapshot>();
    snap->policy = policy;
    snap->info = info;
    snap->tree = policy::tree_from_json(doc.at("tree").dump(), policy::tree_options(policy));
    if (snap->tree.attributes() != policy.quasi_identifiers)
      throw std::runtime_error("its tree splits other attributes than the policy's");
    snap->predicates = policy::compile_release_predicates(snap->tree);
    for (const auto& f : doc.at("forms")) snap->forms.push_back(form_of(f.get<std::string>()));
    if (snap->forms.size() != snap->predicates.size())
      throw std::runtime_error("it has a predicate form per attribute missing");
    snap->masks = policy::build_masks(policy, info, snap->predicates, snap->forms);
    snap->mask_function = doc.value("mask_function", uint32_t{0});
    snap->evaluator_fallback = doc.value("evaluator_fallback", std::string());
    snap->built_at = std::chrono::system_clock::time_point(
        std::chrono::duration_cast<std::chrono::system_clock::duration>(
            std::chrono::microseconds(doc.at("built_at_us").get<int64_t>())));
    const auto& st = doc.at("stats");
    snap->stats.rows = st.at("rows").get<uint64_t>();
    snap->stats.distinct_rows = st.at("distinct_rows").get<uint64_t>();
    snap->stats.load_ms = st.at("load_ms").get<double>();
    snap->stats.tree_ms = st.at("tree_ms").get<double>();
    snap->stats.compile_ms = st.at("compile_ms").get<double>();
    snap->stats.fingerprint = st.at("fingerprint").get<std::string>();
    snap->grant_warnings = doc.at("grant_warnings").get<std::vector<std::string>>();
    const auto& r = doc.at("release");
    const int source = r.at("key_source").get<int>();
    if (source < 0 || source > static_cast<int>(policy::RowKey::Source::kNone))
      throw std::runtime_error("unknown key source");
    snap->release.key.source = static_cast<policy::RowKey::Source>(source);
    snap->release.key.columns = r.at("key_columns").get<std::vector<std::string>>();
    // Absent from snapshots of a kanon whose keys had to be unique.
    snap->release.key.told_apart_by = r.value("key_told_apart_by", std::vector<std::string>{});
    snap->release.version = r.at("version").get<uint64_t>();
    snap->release.baseline = r.at("baseline").get<bool>();
    snap->release.catch_up = r.at("catch_up").get<uint32_t>();
    snap->release.fixup_rounds = r.at("fixup_rounds").get<uint32_t>();
    snap->release.collapsed = r.at("collapsed").get<uint32_t>();
    snap->release.held = r.at("held").get<uint64_t>();
    snap->release.released_fraction = r.at("released_fraction").get<double>();
    snap->release.check = check_from(r.at("check"));
    snap->release.note = r.value("note", std::string());
    // The masked copy or view has a name fixed by the policy: never read
    // from the stored body.
    if (policy.mode != policy::EnforcementMode::kInline)
      snap->materialized_name = materialized_name(policy);
    return snap;
  } catch (const ConfigError&) {
    throw;
  } catch (const std::exception& e) {
    throw std::runtime_error(
        fmt::format("stored snapshot of {} cannot be used: {}", policy.name(), e.what()));
  }
}

}  // namespace kanon::store
