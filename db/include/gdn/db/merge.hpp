// Merging the shard databases of one sharded sweep (`gdnlab sweep --shard I/N`) into one
// database, and reading back where each merged result came from.
//
// The merged database holds one sweep per sharded sweep: its results are the union of the
// shards' (with their samples and PM timelines), each pointing at the shard it came from
// (merged_shards: the file, its sweep and the device that ran it). report, export, gap and the
// dashboard read it as one sweep.
//
// Provenance: every shard must come from the same build, space, shape set, strategy, budget,
// seed, metrics level, protocol and arguments, with the same shard count, on one type of
// device (the same model; each shard's own GPU is recorded); the first field that differs is
// refused with both values. Idempotent: a shard merged again adds only the results it gained
// since (a resumed shard), never a duplicate. Atomic: into an existing database the merge is
// one transaction; a new database is written under a temporary name in the same folder and
// renamed into place, so an interrupted merge leaves the target as it was.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gdn/db/database.hpp"
#include "gdn/db/records.hpp"

namespace gdn::db {

struct MergeOptions {
  std::string into;                  // the merged database (created when missing)
  std::vector<std::string> sources;  // shard databases, each holding one shard sweep
};

struct MergedSource {
  std::string path;
  std::int64_t sweep_id = 0;         // the shard sweep in its database
  SweepShardRecord shard;
  SweepStatus status = SweepStatus::Running;
  std::int64_t results = 0;          // results of the shard sweep
  std::int64_t added = 0;            // of them, new in the merged database
};

struct MergeOutcome {
  std::string into;
  bool created = false;              // the merged database did not exist before
  std::int64_t sweep_id = 0;         // the merged sweep
  std::vector<MergedSource> sources;
  std::int64_t added = 0;            // results added by this merge
  std::int64_t results = 0;          // results of the merged sweep, after it
  int shard_count = 0;
  std::vector<int> missing_shards;   // shard indices not merged yet
  bool complete = false;             // every shard merged, each from a finished sweep
};

// Throws DbError: Invalid for bad arguments (no source, a source that is the target, a file
// without exactly one shard sweep), Constraint for a provenance mismatch (naming the field and
// both values), and the open errors of Database::open.
MergeOutcome merge_shards(const MergeOptions& options);
std::string format_merge(const MergeOutcome& outcome);

// ---- where results came from ------------------------------------------------------------
// The part of a sharded sweep the sweep measured; nullopt when it is not a shard (or the file
// predates schema version 5).
std::optional<SweepShardRecord> sweep_shard(const Database& db, std::int64_t sweep_id);

struct ShardOrigin {
  MergedShardRecord shard;
  DeviceRecord device;
  std::int64_t results = 0;          // results of the merged sweep that came from this shard
};
// The shards merged into a sweep, by index; empty when the sweep is not a merged one.
std::vector<ShardOrigin> shard_origins(const Database& db, std::int64_t sweep_id);
// Result id -> index of the shard it came from, for the results of a merged sweep.
std::map<std::int64_t, int> result_shards(const Database& db, std::int64_t sweep_id);
// Result id -> the GPU that measured it, for the results of a sweep measured on another GPU
// than their sweep's (or shard's) own: after a resume on another GPU of the same kind.
std::map<std::int64_t, DeviceRecord> result_devices(const Database& db, std::int64_t sweep_id);
// One line per shard, "shard 2/4: 18 results from shards/2.sqlite (sweep 1, finished) on
// NVIDIA H200 GPU-…"; "" when the sweep is not a merged one.
std::string describe_origins(const std::vector<ShardOrigin>& origins);

}  // namespace gdn::db
