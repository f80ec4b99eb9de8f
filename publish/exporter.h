// run_export(): one EXPORT from start to end, in phases — load the live
// table from the backend (live_table.h), run the algorithm (publication.h),
// derive the published rows (published_rows.h) and the report, and publish
// the result in ONE transaction (CREATE TABLE + rows through COPY
// (table_writer.h) + the kanon.exports row), so a failure or a cancel leaves
// nothing behind. The report files (JSON, HTML) are written before the
// commit and removed again when the transaction does not commit.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "policy/table_policy.h"
#include "publish/export_request.h"
#include "publish/report.h"

namespace kanon::publish {

struct ExportHooks {
  // Progress for the user (loading, search, writing); called at most about
  // twice per second.
  std::function<void(const std::string&)> notice;
  // The share of the run done, 0 to 1, for a progress bar: loading ends at
  // 0.1, the search (transformations checked of the lattice, or rows
  // partitioned) at 0.8, writing (rows written) at 1. Called often; keep it
  // cheap.
  std::function<void(double)> progress;
  // Polled between checks and between written batches; true stops the run
  // with ExportError 57014 and nothing is written.
  std::function<bool()> cancelled;
};

struct ExportResult {
  ExportReport report;
  std::string json_path, html_path;
  int64_t export_id = 0;
  bool dry_run = false;  // nothing was written
};

// With dry_run, returns after the report: nothing is written (no table or
// file, no report files, no kanon.exports row; export_id 0).
// Throws ExportError (with a SQLSTATE) for bad settings, hierarchies that do
// not fit the data, no solution, cancel and backend failures.
ExportResult run_export(const std::string& conninfo, const policy::TablePolicy& policy,
                        const ExportRequest& request, const ExportHooks& hooks);

}  // namespace kanon::publish
