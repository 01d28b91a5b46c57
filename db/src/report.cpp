// `gdnlab report` text: one column definition list rendered as a table, CSV or JSON.
#include "gdn/db/report.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <sstream>

#include "gdn/db/merge.hpp"
#include "gdn/db/model.hpp"
#include "json_text.hpp"

namespace gdn::db {

std::optional<ReportFormat> parse_report_format(std::string_view text) {
  if (text == "table") return ReportFormat::Table;
  if (text == "csv") return ReportFormat::Csv;
  if (text == "json") return ReportFormat::Json;
  return std::nullopt;
}

namespace {

struct Column {
  std::string_view name;  // CSV/JSON key
  std::string_view label; // table header
  bool numeric;           // JSON: a number (or null) instead of a string
  std::function<FieldValue(const ProblemBest&)> value;
};

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

std::vector<Column> report_columns(const Origins& origins) {
  std::vector<Column> cols;
  auto problem = [&](Field f) {
    const FieldInfo& i = field_info(f);
    cols.push_back({i.name, i.label, i.kind != FieldKind::Text,
                    [f](const ProblemBest& pb) { return problem_field(pb, f); }});
  };
  auto best = [&](Field f, std::string_view label = {}) {
    const FieldInfo& i = field_info(f);
    cols.push_back({i.name, label.empty() ? i.label : label, i.kind != FieldKind::Text,
                    [f](const ProblemBest& pb) { return from_best(pb, f); }});
  };
  problem(Field::ShapeSet);
  problem(Field::RowIndex);
  cols.push_back({"pass", "pass", false,
                  [](const ProblemBest& pb) { return FieldValue(std::string(to_string(pb.pass))); }});
  for (Field f : {Field::HQk, Field::HV, Field::K, Field::V, Field::DType, Field::NumSeqs,
                  Field::TotalTokens, Field::MaxSeqlen})
    problem(f);
  best(Field::VariantName, "best");
  if (!origins.merged.empty())
    cols.push_back({"shard", "shard", true, [&origins](const ProblemBest& pb) {
                      if (!pb.best) return FieldValue{};
                      const auto it = origins.result_shard.find(pb.best->result.id);
                      return it == origins.result_shard.end() ? FieldValue{} : FieldValue(std::int64_t{it->second});
                    }});
  for (Field f : {Field::LatencyP20, Field::LatencyP50, Field::LatencyP80, Field::RelSpread}) best(f);
  cols.push_back({"runner_up", "runner-up", false, [](const ProblemBest& pb) {
                    return pb.runner_up ? FieldValue(pb.runner_up->variant.name) : FieldValue{};
                  }});
  cols.push_back({"margin", "margin", true, [](const ProblemBest& pb) {
                    return pb.margin ? FieldValue(*pb.margin) : FieldValue{};
                  }});
  cols.push_back({"passed", "passed", true, [](const ProblemBest& pb) {
                    return FieldValue(pb.outcome_counts[static_cast<std::size_t>(Outcome::Passed)]);
                  }});
  cols.push_back({"failed", "failed", true, [](const ProblemBest& pb) {
                    std::int64_t n = 0;
                    for (std::size_t i = 1; i < kOutcomeCount; ++i) n += pb.outcome_counts[i];
                    return FieldValue(n);
                  }});
  for (Field f : {Field::ClockMhz, Field::SmBusyPct, Field::AchievedOccupancyPct,
                  Field::IssueActivePct, Field::DramPct, Field::TensorPipePct,
                  Field::SmThroughputPct, Field::MemorySolPct, Field::Registers,
                  Field::SharedBytes, Field::LocalBytes, Field::PlanPrepareOverlap,
                  Field::PlanFirstSegment, Field::PlanPrepareSplitChunk, Field::PlanPrepareHeads,
                  Field::PlanFixupCols, Field::PlanBlockV})
    best(f);
  return cols;
}

std::string json_value(const Column& c, const FieldValue& v) {
  if (std::holds_alternative<std::monostate>(v)) return "null";
  if (const auto* d = std::get_if<double>(&v)) return json_number(*d);
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  return c.numeric ? format_value(v) : json_string(std::get<std::string>(v));
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
                         const std::vector<Column>& cols) {
  std::vector<std::vector<std::string>> cells;
  std::vector<std::size_t> width;
  for (const Column& c : cols) width.push_back(c.label.size());
  for (const ProblemBest& pb : rows) {
    std::vector<std::string>& line = cells.emplace_back();
    for (std::size_t i = 0; i < cols.size(); ++i) {
      line.push_back(format_value(cols[i].value(pb)));
      width[i] = std::max(width[i], line.back().size());
    }
  }
  std::ostringstream o;
  o << header_text(s, origins) << "\n";
  auto emit = [&](auto cell_of) {
    for (std::size_t i = 0; i < cols.size(); ++i) {
      const std::string cell = cell_of(i);
      o << (i ? "  " : "") << cell
        << std::string(i + 1 < cols.size() ? width[i] - cell.size() : 0, ' ');
    }
    o << "\n";
  };
  emit([&](std::size_t i) { return std::string(cols[i].label); });
  for (const auto& line : cells) emit([&](std::size_t i) { return line[i]; });
  return o.str();
}

std::string render_csv(const std::vector<ProblemBest>& rows, const std::vector<Column>& cols) {
  std::ostringstream o;
  for (std::size_t i = 0; i < cols.size(); ++i) o << (i ? "," : "") << cols[i].name;
  o << "\n";
  for (const ProblemBest& pb : rows) {
    for (std::size_t i = 0; i < cols.size(); ++i)
      o << (i ? "," : "") << csv_field(format_value(cols[i].value(pb)));
    o << "\n";
  }
  return o.str();
}

std::string render_json(const SweepSummary& s, const Origins& origins, const std::vector<ProblemBest>& rows,
                        const std::vector<Column>& cols) {
  std::ostringstream o;
  o << "{\n  \"sweep\": {\"id\": " << s.sweep.id << ", \"status\": "
    << json_string(to_string(s.sweep.status)) << ", \"started_at\": " << json_string(s.sweep.started_at)
    << ", \"finished_at\": " << json_string(s.sweep.finished_at)
    << ", \"shapes\": " << json_string(s.sweep.shapes) << ", \"space\": " << json_string(s.sweep.space)
    << ", \"strategy\": " << json_string(s.sweep.strategy) << ", \"metrics\": "
    << json_string(s.sweep.metrics_level) << "},\n";
  o << "  \"device\": {\"name\": " << json_string(s.device.name) << ", \"uuid\": "
    << json_string(s.device.uuid) << ", \"sm_count\": " << s.device.sm_count
    << ", \"driver\": " << json_string(s.device.driver_version) << ", \"cuda\": "
    << json_string(s.device.cuda_version) << "},\n";
  o << "  \"build\": {\"git_sha\": " << json_string(s.build.git_sha) << ", \"variant_set\": "
    << json_string(s.build.variant_set) << "},\n";
  if (origins.shard)
    o << "  \"shard\": {\"index\": " << origins.shard->index << ", \"count\": " << origins.shard->count << "},\n";
  if (!origins.merged.empty()) {
    o << "  \"shards\": [";
    for (std::size_t i = 0; i < origins.merged.size(); ++i) {
      const ShardOrigin& m = origins.merged[i];
      o << (i ? ", " : "") << "{\"index\": " << m.shard.index << ", \"count\": " << m.shard.count
        << ", \"results\": " << m.results << ", \"source\": " << json_string(m.shard.source_path)
        << ", \"source_sweep\": " << m.shard.source_sweep_id << ", \"status\": "
        << json_string(to_string(m.shard.source_status)) << ", \"device\": " << json_string(m.device.name)
        << ", \"uuid\": " << json_string(m.device.uuid) << "}";
    }
    o << "],\n";
  }
  o << "  \"outcomes\": {";
  for (std::size_t i = 0; i < kOutcomeCount; ++i)
    o << (i ? ", " : "") << json_string(to_string(kAllOutcomes[i])) << ": " << s.outcome_counts[i];
  o << "},\n  \"problems\": [";
  for (std::size_t r = 0; r < rows.size(); ++r) {
    o << (r ? ",\n" : "\n") << "    {";
    for (std::size_t i = 0; i < cols.size(); ++i)
      o << (i ? ", " : "") << json_string(cols[i].name) << ": " << json_value(cols[i], cols[i].value(rows[r]));
    const std::string reason = rows[r].best ? rows[r].best->result.metrics.unavailable_reason : "";
    o << ", \"metrics_unavailable_reason\": " << (reason.empty() ? "null" : json_string(reason)) << "}";
  }
  o << "\n  ]\n}\n";
  return o.str();
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
  const std::vector<ProblemBest> rows = best_per_problem(db, *sweep_id);
  const Origins origins = origins_of(db, *sweep_id);
  const std::vector<Column> cols = report_columns(origins);
  switch (format) {
    case ReportFormat::Table: return render_table(summary, origins, rows, cols);
    case ReportFormat::Csv: return render_csv(rows, cols);
    case ReportFormat::Json: return render_json(summary, origins, rows, cols);
  }
  return {};
}

}  // namespace gdn::db
