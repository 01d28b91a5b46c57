// `gdnlab report` text: one column definition list rendered as a table, CSV or JSON.
#include "gdn/db/report.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <sstream>

#include "gdn/db/merge.hpp"
#include "gdn/db/model.hpp"
#include "column_text.hpp"
#include "gdn/db/integrity.hpp"

namespace gdn::db {

std::optional<ReportFormat> parse_report_format(std::string_view text) {
  if (text == "table") return ReportFormat::Table;
  if (text == "csv") return ReportFormat::Csv;
  if (text == "json") return ReportFormat::Json;
  return std::nullopt;
}

namespace {

using ReportColumn = Column<ProblemBest>;

FieldValue from_best(const ProblemBest& pb, Field f) {
  return pb.best ? field_value(*pb.best, f) : FieldValue(std::monostate{});
}
FieldValue problem_field(const ProblemBest& pb, Field f) {
  return field_value(ResultRow{{}, VariantRecord{}, pb.problem}, f);
}

// Where the results of a sweep came from: the shards of a merged sweep, or the part a shard
// sweep measured. Empty for an ordinary sweep, which reports as before.
struct Origins {
  std::optional<SweepShardRecord> shard;   // the sweep is shard I/N
  std::vector<ShardOrigin> merged;         // the sweep is a merge of these shards
  std::map<std::int64_t, int> result_shard;
  std::map<std::int64_t, DeviceRecord> result_device;  // results measured on another GPU of the kind
};

Origins origins_of(const Database& db, std::int64_t sweep_id) {
  return {sweep_shard(db, sweep_id), shard_origins(db, sweep_id), result_shards(db, sweep_id),
          result_devices(db, sweep_id)};
}

std::vector<ReportColumn> report_columns(const Origins& origins) {
  std::vector<ReportColumn> cols;
  auto problem = [&](Field f) {
    const FieldInfo& i = field_info(f);
    cols.push_back({i.name, i.label,
                    [f](const ProblemBest& pb) { return problem_field(pb, f); }});
  };
  auto best = [&](Field f, std::string_view label = {}) {
    const FieldInfo& i = field_info(f);
    cols.push_back({i.name, label.empty() ? i.label : label,
                    [f](const ProblemBest& pb) { return from_best(pb, f); }});
  };
  problem(Field::ShapeSet);
  problem(Field::RowIndex);
  cols.push_back({"pass", "pass",
                  [](const ProblemBest& pb) { return FieldValue(std::string(to_string(pb.pass))); }});
  for (Field f : {Field::HQk, Field::HV, Field::K, Field::V, Field::DType, Field::NumSeqs,
                  Field::TotalTokens, Field::MaxSeqlen})
    problem(f);
  best(Field::VariantName, "best");
  if (!origins.merged.empty())
    cols.push_back({"shard", "shard", [&origins](const ProblemBest& pb) {
                      if (!pb.best) return FieldValue{};
                      const auto it = origins.result_shard.find(pb.best->result.id);
                      return it == origins.result_shard.end() ? FieldValue{} : FieldValue(std::int64_t{it->second});
                    }});
  for (Field f : {Field::LatencyP20, Field::LatencyP50, Field::LatencyP80, Field::RelSpread}) best(f);
  cols.push_back({"runner_up", "runner-up", [](const ProblemBest& pb) {
                    return pb.runner_up ? FieldValue(pb.runner_up->variant.name) : FieldValue{};
                  }});
  cols.push_back({"margin", "margin", [](const ProblemBest& pb) {
                    return pb.margin ? FieldValue(*pb.margin) : FieldValue{};
                  }});
  cols.push_back({"passed", "passed", [](const ProblemBest& pb) {
                    return FieldValue(pb.outcome_counts[static_cast<std::size_t>(Outcome::Passed)]);
                  }});
  cols.push_back({"failed", "failed", [](const ProblemBest& pb) {
                    std::int64_t n = 0;
                    for (std::size_t i = 1; i < kOutcomeCount; ++i) n += pb.outcome_counts[i];
                    return FieldValue(n);
                  }});
  for (Field f : {Field::ClockMhz, Field::SmBusyPct, Field::AchievedOccupancyPct,
                  Field::IssueActivePct, Field::DramPct, Field::TensorPipePct,
                  Field::SmThroughputPct, Field::MemorySolPct, Field::Registers,
                  Field::SharedBytes, Field::LocalBytes, Field::PlanPrepareOverlap,
                  Field::PlanFirstSegment, Field::PlanPrepareSplitChunk, Field::PlanPrepareHeads,
                  Field::PlanFixupCols, Field::PlanBlockV, Field::PlanLocalHeads,
                  Field::PlanRecomputeCpChunks, Field::PlanPass1BesideRecompute,
                  Field::PlanGroupSumBeside})
    best(f);
  return cols;
}

std::string header_text(const SweepSummary& s, const Origins& origins) {
  std::ostringstream o;
  const ProtocolRecord& p = s.sweep.protocol;
  o << "sweep " << s.sweep.id << "  status " << to_string(s.sweep.status) << "  started "
    << s.sweep.started_at << (s.sweep.finished_at.empty() ? "" : "  finished " + s.sweep.finished_at) << "\n"
    << "device " << s.device.name << " (" << s.device.uuid << "), " << s.device.sm_count
    << " SMs, cc " << s.device.cc_major << "." << s.device.cc_minor << ", SM clock "
    << s.device.sm_clock_mhz << " MHz, driver " << s.device.driver_version << ", CUDA "
    << s.device.cuda_version << "\n"
    << "build git " << s.build.git_sha << ", variant set '" << s.build.variant_set << "', flags '"
    << s.build.flags << "'\n"
    << "space '" << s.sweep.space << "', shapes '" << s.sweep.shapes << "', strategy "
    << s.sweep.strategy << ", budget " << s.sweep.budget << ", seed " << s.sweep.seed
    << ", metrics " << s.sweep.metrics_level << "\n"
    << "protocol: warm-up " << p.warmup_iters << ", samples " << p.min_samples << ".."
    << p.max_samples << ", target spread " << p.target_rel_spread << ", time cap "
    << p.time_cap_ms << " ms, L2 flush " << p.l2_flush_bytes << " B, graphs "
    << (p.use_graphs ? "on" : "off") << "\n"
    << "outcomes:";
  for (Outcome oc : kAllOutcomes) o << " " << to_string(oc) << " " << s.count(oc);
  o << " (total " << s.result_count << ")\n";
  if (origins.shard)
    o << "shard " << origins.shard->index << "/" << origins.shard->count
      << " of a sharded sweep (gdnlab merge combines the shards)\n";
  if (!origins.merged.empty())
    o << "merged from " << origins.merged.size() << " of " << origins.merged.front().shard.count
      << " shards (device above: the first shard's; each shard's below):\n" << describe_origins(origins.merged);
  std::map<std::string, std::pair<std::string, int>> other_gpus;  // uuid -> (name, results)
  for (const auto& [id, d] : origins.result_device) {
    auto& [name, n] = other_gpus[d.uuid];
    name = d.name;
    ++n;
  }
  for (const auto& [uuid, named] : other_gpus)
    o << named.second << " results measured on " << named.first << " " << uuid
      << " (another GPU of the kind, after a resume)\n";
  return o.str();
}

std::string render_table(const SweepSummary& s, const Origins& origins, const std::vector<ProblemBest>& rows,
                         const std::vector<ReportColumn>& cols) {
  return header_text(s, origins) + "\n" + column_table(rows, cols);
}

std::string render_json(const SweepSummary& s, const Origins& origins, const std::vector<ProblemBest>& rows,
                        const std::vector<ReportColumn>& cols) {
  text::Json outcomes = text::Json::object();
  for (std::size_t i = 0; i < kOutcomeCount; ++i) outcomes[std::string(to_string(kAllOutcomes[i]))] = s.outcome_counts[i];
  text::Json problems = text::Json::array();
  for (const ProblemBest& pb : rows) {
    text::Json row = column_json(pb, cols);
    const std::string reason = pb.best ? pb.best->result.metrics.unavailable_reason : "";
    row["metrics_unavailable_reason"] = reason.empty() ? text::Json(nullptr) : text::Json(reason);
    problems.push_back(std::move(row));
  }
  text::Json doc = {
      {"sweep",
       {{"id", s.sweep.id},
        {"status", to_string(s.sweep.status)},
        {"started_at", s.sweep.started_at},
        {"finished_at", s.sweep.finished_at},
        {"shapes", s.sweep.shapes},
        {"space", s.sweep.space},
        {"strategy", s.sweep.strategy},
        {"metrics", s.sweep.metrics_level}}},
      {"device",
       {{"name", s.device.name},
        {"uuid", s.device.uuid},
        {"sm_count", s.device.sm_count},
        {"driver", s.device.driver_version},
        {"cuda", s.device.cuda_version}}},
      {"build", {{"git_sha", s.build.git_sha}, {"variant_set", s.build.variant_set}}},
      {"outcomes", std::move(outcomes)},
      {"problems", std::move(problems)}};
  if (origins.shard) doc["shard"] = {{"index", origins.shard->index}, {"count", origins.shard->count}};
  if (!origins.merged.empty()) {
    text::Json shards = text::Json::array();
    for (const ShardOrigin& m : origins.merged)
      shards.push_back({{"index", m.shard.index},
                        {"count", m.shard.count},
                        {"results", m.results},
                        {"source", m.shard.source_path},
                        {"source_sweep", m.shard.source_sweep_id},
                        {"status", to_string(m.shard.source_status)},
                        {"device", m.device.name},
                        {"uuid", m.device.uuid}});
    doc["shards"] = std::move(shards);
  }
  return text::dump_json(doc) + "\n";
}

}  // namespace

std::string render_report(const Database& db, std::optional<std::int64_t> sweep_id,
                          ReportFormat format) {
  if (!sweep_id) {
    const std::vector<SweepSummary> sweeps = list_sweeps(db);
    if (sweeps.empty())
      throw DbError(DbError::Kind::Invalid, "report: '" + db.path() + "' holds no sweep yet");
    sweep_id = sweeps.front().sweep.id;
  }
  const SweepSummary summary = sweep_summary(db, *sweep_id);
  check_sweep_results(db, *sweep_id);
  const std::vector<ProblemBest> rows = best_per_problem(db, *sweep_id);
  const Origins origins = origins_of(db, *sweep_id);
  const std::vector<ReportColumn> cols = report_columns(origins);
  switch (format) {
    case ReportFormat::Table: return render_table(summary, origins, rows, cols);
    case ReportFormat::Csv: return column_csv(rows, cols, false);
    case ReportFormat::Json: return render_json(summary, origins, rows, cols);
  }
  return {};
}

}  // namespace gdn::db
