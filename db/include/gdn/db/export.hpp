// Dispatch-table export: one implementation for `gdnlab export` and the dashboard.
// Writes <out>/dispatch.json and <out>/gdn_dispatch_table.hpp atomically: both are written to
// temporary names first and renamed only when both are complete; on any error no output file
// remains. The header includes gdn/dispatch_table.hpp and defines, in namespace
// gdn::dispatch::generated: kTableInfo, kEntries (std::array<Entry, N>, sorted by key) and
// kVariantNames (the variants a pruned libgdn build must compile).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "gdn/db/database.hpp"
#include "gdn/db/selection.hpp"

namespace gdn::db {

inline constexpr const char* kDispatchJsonName = "dispatch.json";
inline constexpr const char* kDispatchHeaderName = "gdn_dispatch_table.hpp";

struct ExportOptions {
  std::optional<std::int64_t> sweep_id;  // default: latest_finished_sweep_with_passes()
  // Accept a sweep that is not finished (interrupted or running): it is exported marked
  // partial in dispatch.json ("partial": true) and in the header. Without it such a sweep is
  // refused, and the default is the newest finished sweep.
  std::filesystem::path out_dir;         // created when missing
  // Sweeps whose buckets join the first sweep's (e.g. the backward sweep of the backward
  // anchors beside the forward one): same device; a bucket chosen twice is an error.
  std::vector<std::int64_t> merged_sweeps;
  // The database the merged sweeps are read from (empty: the exported sweep's own), e.g. a
  // backward sweep measured on another H200 beside the forward table's sweep.
  std::filesystem::path merge_db;
  bool allow_partial = false;
};
struct ExportResult {
  Selection selection;
  std::filesystem::path json_path;
  std::filesystem::path header_path;
};

// Throws DbError: Invalid (no sweep / unknown sweep / no Passed result / no bucket with an
// eligible winner / a merged sweep of another device or choosing a bucket again), Io (cannot
// write), and whatever opening the database threw before.
ExportResult export_dispatch(const Database& db, const ExportOptions& options);

// The table as lookup entries (variant names point into `selection`, which must outlive them):
// the dashboard's "which variant would this shape use" preview runs gdn::dispatch::lookup on it.
std::vector<gdn::dispatch::Entry> dispatch_entries(const Selection& selection);

// The file contents, for previews (the dashboard shows them before writing).
std::string render_dispatch_json(const Selection& selection);
std::string render_dispatch_header(const Selection& selection);

}  // namespace gdn::db
