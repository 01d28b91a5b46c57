// Merging shard databases into one (see gdn/db/merge.hpp).
#include "gdn/db/merge.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>

#include "gdn/db/model.hpp"
#include "gdn/db/writer.hpp"
#include "row_codec.hpp"
#include "statement.hpp"

namespace gdn::db {

namespace {

namespace fs = std::filesystem;

[[noreturn]] void invalid(const std::string& what) { throw DbError(DbError::Kind::Invalid, "merge: " + what); }

bool has_table(const Database& db, const char* name) {
  Statement s(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1");
  s.bind(1, name);
  return s.step();
}

// Removes " <option> <value>" from a canonical argument string (the value runs up to the next
// " --"). The shards of one sweep differ only in --db and --shard.
std::string strip_option(std::string args, std::string_view option) {
  const std::string key = " " + std::string(option) + " ";
  const auto at = args.find(key);
  if (at == std::string::npos) return args;
  const auto next = args.find(" --", at + key.size());
  args.erase(at, (next == std::string::npos ? args.size() : next) - at);
  return args;
}

std::string common_args(const std::string& args) { return strip_option(strip_option(args, "--shard"), "--db"); }

// The merged sweep's command line: the shards' without --shard, writing into the merged file.
std::string merged_args(const std::string& shard_args, const std::string& into) {
  std::string args = strip_option(shard_args, "--shard");
  const std::string key = " --db ";
  const auto at = args.find(key);
  if (at == std::string::npos) return args + " --db " + into;
  const auto next = args.find(" --", at + key.size());
  args.replace(at + key.size(), (next == std::string::npos ? args.size() : next) - at - key.size(), into);
  return args;
}

// What must agree between the shards of one sweep, as text per field.
struct Provenance {
  std::string name;  // the file, for messages
  std::vector<std::pair<std::string, std::string>> fields;
};

std::string shape_set_hashes(const Database& db, std::int64_t sweep_id) {
  Statement s(db, "SELECT DISTINCT p.shape_set_hash FROM results r JOIN problems p ON p.id = r.problem_id "
                  "WHERE r.sweep_id = ?1 ORDER BY 1");
  s.bind(1, sweep_id);
  std::string out;
  while (s.step()) out += (out.empty() ? "" : ",") + s.text(0);
  return out;
}

std::string protocol_text(const ProtocolRecord& p) {
  char buf[200];
  std::snprintf(buf, sizeof buf, "warm-up %d, samples %d..%d, target spread %.17g, time cap %.17g ms, "
                "L2 flush %lld bytes, graphs %s", p.warmup_iters, p.min_samples, p.max_samples,
                p.target_rel_spread, p.time_cap_ms, static_cast<long long>(p.l2_flush_bytes),
                p.use_graphs ? "on" : "off");
  return buf;
}

std::string device_type(const DeviceRecord& d) {
  return d.name + " (" + std::to_string(d.sm_count) + " SMs, compute capability " +
         std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor) + ")";
}

Provenance provenance_of(const Database& db, const SweepSummary& s, int shard_count, const std::string& name) {
  Provenance p;
  p.name = name;
  p.fields = {
      {"build", s.build.git_sha + " [" + s.build.flags + "] variant set " + s.build.variant_set},
      {"space", s.sweep.space},
      {"shapes", s.sweep.shapes},
      {"shape set hash", shape_set_hashes(db, s.sweep.id)},
      {"strategy", s.sweep.strategy},
      {"budget", std::to_string(s.sweep.budget)},
      {"seed", std::to_string(s.sweep.seed)},
      {"metrics", s.sweep.metrics_level},
      {"protocol", protocol_text(s.sweep.protocol)},
      {"shard count", std::to_string(shard_count)},
      {"arguments (without --db and --shard)", common_args(s.sweep.args)},
      {"device type", device_type(s.device)},
  };
  return p;
}

// The first field that differs is refused with both values. A shard without results yet has
// no shape set hash to compare.
void require_same(const Provenance& a, const Provenance& b) {
  for (std::size_t i = 0; i < a.fields.size(); ++i) {
    const auto& [field, va] = a.fields[i];
    const auto& vb = b.fields[i].second;
    if (va == vb || (field == "shape set hash" && (va.empty() || vb.empty()))) continue;
    throw DbError(DbError::Kind::Constraint,
                  "merge: '" + b.name + "' is not a shard of the same sweep as '" + a.name + "': field " +
                      field + " differs ('" + a.name + "': " + va + "; '" + b.name + "': " + vb + ")");
  }
}

struct Source {
  std::string path;
  Database db;
  SweepShardRecord shard;
  SweepSummary summary;
  Provenance provenance;
};

Source open_source(const std::string& path) {
  Database db = Database::open(path, kReadExisting);
  std::vector<SweepShardRecord> shards;
  if (has_table(db, "sweep_shard")) {
    Statement s(db, "SELECT sweep_id, shard_index, shard_count FROM sweep_shard ORDER BY sweep_id");
    while (s.step()) shards.push_back({s.int64(0), s.integer(1), s.integer(2)});
  }
  if (shards.empty())
    invalid("'" + path + "' holds no shard sweep (expected a database written by gdnlab sweep --shard I/N)");
  if (shards.size() > 1) {
    std::string ids;
    for (const auto& s : shards) ids += (ids.empty() ? "" : ", ") + std::to_string(s.sweep_id);
    invalid("'" + path + "' holds " + std::to_string(shards.size()) + " shard sweeps (ids " + ids +
            "); expected one per file, as the Slurm scripts and --resume leave it");
  }
  auto summary = sweep_summary(db, shards.front().sweep_id);
  auto provenance = provenance_of(db, summary, shards.front().count, path);
  return Source{path, std::move(db), shards.front(), std::move(summary), std::move(provenance)};
}

std::optional<MergedShardRecord> find_merged_shard(const Database& db, std::int64_t sweep_id, int index) {
  Statement s(db, "SELECT id, shard_count, device_id, source_path, source_sweep_id, source_started_at, "
                  "source_status, merged_at FROM merged_shards WHERE sweep_id = ?1 AND shard_index = ?2");
  s.bind(1, sweep_id).bind(2, index);
  if (!s.step()) return std::nullopt;
  MergedShardRecord m;
  m.id = s.int64(0);
  m.sweep_id = sweep_id;
  m.index = index;
  m.count = s.integer(1);
  m.device_id = s.int64(2);
  m.source_path = s.text(3);
  m.source_sweep_id = s.int64(4);
  m.source_started_at = s.text(5);
  m.source_status = parse_sweep_status(s.text(6)).value_or(SweepStatus::Interrupted);
  m.merged_at = s.text(7);
  return m;
}

// The merged sweep of these shards in the target: the one whose shards ran with the same
// arguments. A target may hold merges of other sweeps too.
std::optional<std::int64_t> find_merged_sweep(const Database& out, const Source& first) {
  Statement s(out, "SELECT DISTINCT m.sweep_id, s.args FROM merged_shards m JOIN sweeps s ON s.id = m.sweep_id "
                   "ORDER BY m.sweep_id");
  const std::string want = common_args(first.summary.sweep.args);
  while (s.step())
    if (common_args(s.text(1)) == want) return s.int64(0);
  return std::nullopt;
}

int merged_shard_count(const Database& db, std::int64_t sweep_id) {
  Statement s(db, "SELECT shard_count FROM merged_shards WHERE sweep_id = ?1 LIMIT 1");
  s.bind(1, sweep_id);
  return s.step() ? s.integer(0) : 0;
}

std::int64_t create_merged_sweep(ResultsWriter& w, const std::vector<Source>& sources, const std::string& into) {
  const SweepSummary& first = sources.front().summary;
  SweepRecord s = first.sweep;
  s.id = 0;
  s.device_id = w.register_device(first.device);
  s.build_id = w.register_build(first.build);
  s.args = merged_args(first.sweep.args, into);
  for (const auto& src : sources) s.started_at = std::min(s.started_at, src.summary.sweep.started_at);
  return w.begin_sweep(s);
}

// Adds one shard's results (with samples and PM timelines) to the merged sweep; returns how
// many were new.
std::int64_t copy_results(Database& out, ResultsWriter& w, const Source& src, std::int64_t merged_sweep,
                          std::int64_t merged_shard_id) {
  ResultQuery q;
  q.sweep_id = src.summary.sweep.id;
  std::map<std::int64_t, std::int64_t> variant_ids, problem_ids;  // source id -> target id
  const auto own_devices = result_devices(src.db, src.summary.sweep.id);
  Statement tag(out, "UPDATE results SET merged_shard_id = ?1 WHERE id = ?2");
  std::int64_t added = 0;
  for (const ResultRow& row : query_results(src.db, q)) {
    auto& vid = variant_ids[row.variant.id];
    if (vid == 0) {
      VariantRecord v = row.variant;
      v.id = 0;
      vid = w.register_variant(v);
    }
    auto& pid = problem_ids[row.problem.id];
    if (pid == 0) {
      ProblemRecord p = row.problem;
      p.id = 0;
      pid = w.register_problem(p);
    }
    ResultRecord r = row.result;
    r.id = 0;
    r.sweep_id = merged_sweep;
    r.variant_id = vid;
    r.problem_id = pid;
    // A result measured on another GPU than its shard's keeps naming it.
    r.device_id.reset();
    if (const auto d = own_devices.find(row.result.id); d != own_devices.end()) {
      DeviceRecord dev = d->second;
      dev.id = 0;
      r.device_id = w.register_device(dev);
    }
    const auto samples = samples_of(src.db, row.result.id);
    const auto pm = pm_timeline_of(src.db, row.result.id);
    const auto ins = w.insert_result(r, samples, pm);
    if (ins.already_present) continue;
    tag.reset();
    tag.bind(1, merged_shard_id).bind(2, ins.result_id).run();
    ++added;
  }
  return added;
}

void merge_into(Database& out, std::vector<Source>& sources, MergeOutcome& outcome) {
  Transaction tx(out);
  ResultsWriter w(out);
  const auto existing = find_merged_sweep(out, sources.front());
  if (existing) {
    const auto summary = sweep_summary(out, *existing);
    require_same(provenance_of(out, summary, merged_shard_count(out, *existing), outcome.into),
                 sources.front().provenance);
    outcome.sweep_id = *existing;
  } else {
    outcome.sweep_id = create_merged_sweep(w, sources, outcome.into);
  }
  const std::string merged_at = [&] {
    Statement now(out, "SELECT strftime('%Y-%m-%dT%H:%M:%SZ', 'now')");
    now.step();
    return now.text(0);
  }();
  for (const Source& src : sources) {
    const SweepRecord& sw = src.summary.sweep;
    const std::int64_t device_id = w.register_device(src.summary.device);
    std::int64_t shard_id = 0;
    if (auto m = find_merged_shard(out, outcome.sweep_id, src.shard.index)) {
      // The same run of the shard (a resumed one included) merges again; another run of it
      // would mix two measurements of one pair set.
      if (m->source_sweep_id != sw.id || m->source_started_at != sw.started_at || m->device_id != device_id)
        throw DbError(DbError::Kind::Constraint,
                      "merge: shard " + std::to_string(src.shard.index) + "/" + std::to_string(src.shard.count) +
                          " is already merged into '" + outcome.into + "' from '" + m->source_path + "' (sweep " +
                          std::to_string(m->source_sweep_id) + " started " + m->source_started_at +
                          "); '" + src.path + "' holds another run of it (sweep " + std::to_string(sw.id) +
                          " started " + sw.started_at + " on " + src.summary.device.uuid + ")");
      Statement up(out, "UPDATE merged_shards SET source_path = ?1, source_status = ?2, merged_at = ?3 WHERE id = ?4");
      up.bind(1, src.path).bind(2, to_string(sw.status)).bind(3, merged_at).bind(4, m->id).run();
      shard_id = m->id;
    } else {
      Statement ins(out, "INSERT INTO merged_shards (sweep_id, shard_index, shard_count, device_id, source_path, "
                         "source_sweep_id, source_started_at, source_status, merged_at) VALUES (?1, ?2, ?3, ?4, "
                         "?5, ?6, ?7, ?8, ?9) RETURNING id");
      ins.bind(1, outcome.sweep_id).bind(2, src.shard.index).bind(3, src.shard.count).bind(4, device_id);
      ins.bind(5, src.path).bind(6, sw.id).bind(7, sw.started_at).bind(8, to_string(sw.status));
      ins.bind(9, merged_at);
      ins.step();
      shard_id = ins.int64(0);
      ins.run();
    }
    MergedSource ms{src.path, sw.id, src.shard, sw.status, src.summary.result_count, 0};
    ms.added = copy_results(out, w, src, outcome.sweep_id, shard_id);
    outcome.added += ms.added;
    outcome.sources.push_back(ms);
  }
  // Finished once every shard is merged from a finished sweep; until then it says what is missing.
  outcome.shard_count = sources.front().shard.count;
  std::set<int> merged;
  bool all_finished = true;
  Statement s(out, "SELECT shard_index, source_status FROM merged_shards WHERE sweep_id = ?1");
  s.bind(1, outcome.sweep_id);
  while (s.step()) {
    merged.insert(s.integer(0));
    all_finished = all_finished && s.text(1) == "finished";
  }
  for (int i = 1; i <= outcome.shard_count; ++i)
    if (!merged.count(i)) outcome.missing_shards.push_back(i);
  outcome.complete = outcome.missing_shards.empty() && all_finished;
  w.set_sweep_status(outcome.sweep_id, outcome.complete ? SweepStatus::Finished : SweepStatus::Interrupted);
  outcome.results = query_int64(out, "SELECT count(*) FROM results WHERE sweep_id = " + std::to_string(outcome.sweep_id));
  tx.commit();
}

void remove_database_files(const std::string& path) {
  std::error_code ec;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) fs::remove(path + suffix, ec);
}

}  // namespace

MergeOutcome merge_shards(const MergeOptions& o) {
  if (o.into.empty()) invalid("--into: expected the path of the merged database, got nothing");
  if (o.sources.empty()) invalid("expected at least one shard database after --into " + o.into + ", got none");
  if (fs::is_directory(o.into)) invalid("--into: expected a file path, got the directory '" + o.into + "'");
  const fs::path folder = fs::path(o.into).parent_path();
  if (!folder.empty() && !fs::is_directory(folder))
    invalid("--into: expected a file in an existing folder, got '" + o.into + "' (no folder '" + folder.string() + "')");
  std::vector<Source> sources;
  for (const auto& path : o.sources) {
    std::error_code ec;
    if (fs::exists(o.into) && fs::equivalent(path, o.into, ec))
      invalid("'" + path + "' is the merge target itself (--into); expected shard databases other than it");
    sources.push_back(open_source(path));
    require_same(sources.front().provenance, sources.back().provenance);
  }

  MergeOutcome outcome;
  outcome.into = o.into;
  if (fs::exists(o.into)) {
    Database out = Database::open(o.into, {.create_if_missing = false});
    merge_into(out, sources, outcome);
    return outcome;
  }
  // A new target is written under a temporary name and renamed: an interrupted merge leaves
  // no file behind. The rollback journal (not WAL) leaves nothing beside it to rename.
  outcome.created = true;
  const std::string tmp = o.into + ".merging." + std::to_string(::getpid());
  remove_database_files(tmp);
  try {
    {
      Database out = Database::open(tmp);
      merge_into(out, sources, outcome);
      out.exec("PRAGMA journal_mode = DELETE");
    }
    fs::rename(tmp, o.into);
  } catch (const fs::filesystem_error& e) {
    remove_database_files(tmp);
    throw DbError(DbError::Kind::Io, "merge: renaming '" + tmp + "' to '" + o.into + "': " + e.what());
  } catch (...) {
    remove_database_files(tmp);
    throw;
  }
  return outcome;
}

std::string format_merge(const MergeOutcome& m) {
  std::string s;
  for (const auto& src : m.sources)
    s += "shard " + std::to_string(src.shard.index) + "/" + std::to_string(src.shard.count) + " from '" + src.path +
         "' (sweep " + std::to_string(src.sweep_id) + ", " + std::string(to_string(src.status)) + "): " +
         std::to_string(src.results) + " results, " + std::to_string(src.added) + " new\n";
  s += "merged into '" + m.into + "'" + (m.created ? " (created)" : "") + " as sweep " + std::to_string(m.sweep_id) +
       ": " + std::to_string(m.results) + " results (" + std::to_string(m.added) + " added now); ";
  if (m.complete) return s + "all " + std::to_string(m.shard_count) + " shards merged, finished\n";
  if (!m.missing_shards.empty()) {
    s += "shards not merged yet:";
    for (int i : m.missing_shards) s += " " + std::to_string(i);
    return s + " of " + std::to_string(m.shard_count) + "\n";
  }
  return s + "every shard merged, but not every shard sweep finished: resume them and merge again\n";
}

std::optional<SweepShardRecord> sweep_shard(const Database& db, std::int64_t sweep_id) {
  if (!has_table(db, "sweep_shard")) return std::nullopt;
  Statement s(db, "SELECT shard_index, shard_count FROM sweep_shard WHERE sweep_id = ?1");
  s.bind(1, sweep_id);
  if (!s.step()) return std::nullopt;
  return SweepShardRecord{sweep_id, s.integer(0), s.integer(1)};
}

std::vector<ShardOrigin> shard_origins(const Database& db, std::int64_t sweep_id) {
  std::vector<ShardOrigin> out;
  if (!has_table(db, "merged_shards")) return out;
  Statement s(db, "SELECT m.shard_index, " + prefixed("d", kDeviceColumns) +
                      ", (SELECT count(*) FROM results r WHERE r.merged_shard_id = m.id) FROM merged_shards m "
                      "JOIN devices d ON d.id = m.device_id WHERE m.sweep_id = ?1 ORDER BY m.shard_index");
  s.bind(1, sweep_id);
  while (s.step()) {
    ShardOrigin o;
    o.shard = *find_merged_shard(db, sweep_id, s.integer(0));
    o.device = read_device(s, 1);
    o.results = s.int64(1 + column_count(kDeviceColumns));
    out.push_back(std::move(o));
  }
  return out;
}

std::map<std::int64_t, int> result_shards(const Database& db, std::int64_t sweep_id) {
  std::map<std::int64_t, int> out;
  if (!has_table(db, "merged_shards")) return out;
  Statement s(db, "SELECT r.id, m.shard_index FROM results r JOIN merged_shards m ON m.id = r.merged_shard_id "
                  "WHERE r.sweep_id = ?1");
  s.bind(1, sweep_id);
  while (s.step()) out[s.int64(0)] = s.integer(1);
  return out;
}

std::map<std::int64_t, DeviceRecord> result_devices(const Database& db, std::int64_t sweep_id) {
  std::map<std::int64_t, DeviceRecord> out;
  if (!has_table(db, "merged_shards")) return out;  // before schema 5: no results.device_id
  Statement s(db, "SELECT r.id, " + prefixed("d", kDeviceColumns) +
                      " FROM results r JOIN devices d ON d.id = r.device_id WHERE r.sweep_id = ?1");
  s.bind(1, sweep_id);
  while (s.step()) out[s.int64(0)] = read_device(s, 1);
  return out;
}

std::string describe_origins(const std::vector<ShardOrigin>& origins) {
  std::string s;
  for (const auto& o : origins)
    s += "shard " + std::to_string(o.shard.index) + "/" + std::to_string(o.shard.count) + ": " +
         std::to_string(o.results) + " results from " + o.shard.source_path + " (sweep " +
         std::to_string(o.shard.source_sweep_id) + ", " + std::string(to_string(o.shard.source_status)) +
         ") on " + o.device.name + " " + o.device.uuid + "\n";
  return s;
}

}  // namespace gdn::db
