// The sweep runner's side of the database. Registration calls are idempotent (an identical
// row returns the existing id), so a resumed sweep re-registers freely. Each result with its
// samples and PM timeline is written in ONE transaction: a kill at any moment leaves either
// the whole result or nothing.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "gdn/db/database.hpp"
#include "gdn/db/records.hpp"

namespace gdn::db {

struct InsertedResult {
  std::int64_t result_id = 0;
  bool already_present = false;  // (sweep, variant, problem) was stored before: nothing written
};

class ResultsWriter {
 public:
  explicit ResultsWriter(Database& db);  // throws DbError::Invalid on a read-only database

  // Same fields -> same id. A device differing in any field (driver, clocks) is a new row.
  std::int64_t register_device(const DeviceRecord& device);
  std::int64_t register_build(const BuildRecord& build);
  // Keyed by (name, pass); the same name with a different config is DbError::Constraint.
  std::int64_t register_variant(const VariantRecord& variant);
  // Keyed by (shape_set_hash, row_index); differing fields under the same key are
  // DbError::Constraint (the hash promised identical content).
  std::int64_t register_problem(const ProblemRecord& problem);

  // New sweep with status Running; device_id and build_id must exist.
  std::int64_t begin_sweep(const SweepRecord& sweep);
  // Marks the sweep as part I of N of a sharded sweep (schema v5). Idempotent; a sweep marked
  // with another part is DbError::Constraint.
  void mark_shard(const SweepShardRecord& shard);
  // Finished / Interrupted stamp finished_at; Running (on resume) clears it.
  void set_sweep_status(std::int64_t sweep_id, SweepStatus status);

  // result.sweep_id / variant_id / problem_id must exist. samples_ms[i] is stored with idx i.
  // UNIQUE(sweep, variant, problem): a second insert for the same triple writes nothing and
  // reports already_present (resume never duplicates).
  InsertedResult insert_result(const ResultRecord& result, std::span<const double> samples_ms,
                               std::span<const PmSample> pm_timeline = {});

  // Resume support: the (variant_id, problem_id) pairs this sweep already has a result for.
  std::vector<std::pair<std::int64_t, std::int64_t>> completed_pairs(std::int64_t sweep_id) const;
  bool has_result(std::int64_t sweep_id, std::int64_t variant_id, std::int64_t problem_id) const;

 private:
  Database& db_;
};

}  // namespace gdn::db
