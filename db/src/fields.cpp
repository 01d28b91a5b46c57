#include <cmath>
#include <cstdio>

#include "fields_sql.hpp"
#include "gdn/db/model.hpp"
#include "gdn/text/number.hpp"
#include "row_codec.hpp"

namespace gdn::db {

namespace {

struct FieldRow {
  FieldInfo info;
  std::string_view sql;
};

using enum FieldKind;
constexpr FieldRow kFields[] = {
    {{Field::VariantName, "variant", "variant", Text, false}, "vr.name"},
    {{Field::Pass, "pass", "pass", Text, false}, "vr.pass"},
    {{Field::Family, "family", "family", Text, true}, "vr.family"},
    {{Field::BlockV, "block_v", "block_v", Integer, true}, "vr.block_v"},
    {{Field::Stages, "stages", "stages", Integer, true}, "vr.stages"},
    {{Field::Roles, "roles", "roles", Text, true}, "vr.roles"},
    {{Field::CpSegmentChunks, "cp_segment_chunks", "cp chunks", Integer, true}, "vr.cp_segment_chunks"},
    {{Field::PinPrepareOverlap, "pin_prepare_overlap", "pin overlap", Integer, true}, "vr.pin_prepare_overlap"},
    {{Field::PinCpFirstSegment, "pin_cp_first_segment", "pin 1st seg", Integer, true}, "vr.pin_cp_first_segment"},
    {{Field::PinPrepareSplit, "pin_prepare_split", "pin split", Integer, true}, "vr.pin_prepare_split"},
    {{Field::PinPrepareHeads, "pin_prepare_heads", "pin heads", Integer, true}, "vr.pin_prepare_heads"},
    {{Field::PinFixupCols, "pin_fixup_cols", "pin fix-up", Integer, true}, "vr.pin_fixup_cols"},
    {{Field::PinLocalHeads, "pin_local_heads", "pin local heads", Integer, true}, "vr.pin_local_heads"},
    {{Field::PinRecomputeCpChunks, "pin_recompute_cp_chunks", "pin recompute cp", Integer, true}, "vr.pin_recompute_cp_chunks"},
    {{Field::PinPass1BesideRecompute, "pin_pass1_beside_recompute", "pin pass 1 beside", Integer, true}, "vr.pin_pass1_beside_recompute"},
    {{Field::PinGroupSumBeside, "pin_group_sum_beside", "pin group sum beside", Integer, true}, "vr.pin_group_sum_beside"},
    {{Field::ShapeSet, "shape_set", "shape set", Text, false}, "p.shape_set_name"},
    {{Field::RowIndex, "row", "row", Integer, false}, "p.row_index"},
    {{Field::HQk, "h_qk", "Hqk", Integer, false}, "p.h_qk"},
    {{Field::HV, "h_v", "Hv", Integer, false}, "p.h_v"},
    {{Field::K, "k", "K", Integer, false}, "p.k"},
    {{Field::V, "v", "V", Integer, false}, "p.v"},
    {{Field::DType, "dtype", "dtype", Text, false}, "p.dtype"},
    {{Field::Batch, "batch", "B", Integer, false}, "p.batch"},
    {{Field::NumSeqs, "num_seqs", "seqs", Integer, false}, "p.num_seqs"},
    {{Field::TotalTokens, "total_tokens", "tokens", Integer, false}, "p.total_tokens"},
    {{Field::MaxSeqlen, "max_seqlen", "max len", Integer, false}, "p.max_seqlen"},
    {{Field::Outcome, "outcome", "outcome", Text, false}, "r.outcome"},
    {{Field::Message, "message", "message", Text, false}, "r.message"},
    {{Field::MaxRelRms, "max_rel_rms", "rel rms", Real, false}, "r.max_rel_rms"},
    {{Field::LatencyP20, "latency_p20_ms", "p20 ms", Real, false}, "r.latency_p20_ms"},
    {{Field::LatencyP50, "latency_p50_ms", "p50 ms", Real, false}, "r.latency_p50_ms"},
    {{Field::LatencyP80, "latency_p80_ms", "p80 ms", Real, false}, "r.latency_p80_ms"},
    {{Field::SampleCount, "sample_count", "samples", Integer, false}, "r.sample_count"},
    {{Field::RelSpread, "rel_spread", "spread", Real, false}, "r.rel_spread"},
    {{Field::ClockMhz, "clock_mhz", "clock MHz", Real, false}, "r.clock_mhz"},
    {{Field::SmBusyPct, "sm_busy_pct", "SM busy %", Real, false}, "r.sm_busy_pct"},
    {{Field::AchievedOccupancyPct, "achieved_occupancy_pct", "occupancy %", Real, false}, "r.achieved_occupancy_pct"},
    {{Field::IssueActivePct, "issue_active_pct", "issue %", Real, false}, "r.issue_active_pct"},
    {{Field::DramPct, "dram_pct", "DRAM %", Real, false}, "r.dram_pct"},
    {{Field::TensorPipePct, "tensor_pipe_pct", "tensor %", Real, false}, "r.tensor_pipe_pct"},
    {{Field::SmThroughputPct, "sm_throughput_pct", "SM SOL %", Real, false}, "r.sm_throughput_pct"},
    {{Field::MemorySolPct, "memory_sol_pct", "mem SOL %", Real, false}, "r.memory_sol_pct"},
    {{Field::GpcClockHz, "gpc_clock_hz", "GPC Hz", Real, false}, "r.gpc_clock_hz"},
    {{Field::Registers, "registers", "regs", Integer, false}, "r.registers"},
    {{Field::SharedBytes, "shared_bytes", "smem B", Integer, false}, "r.shared_bytes"},
    {{Field::LocalBytes, "local_bytes", "spill B", Integer, false}, "r.local_bytes"},
    {{Field::PlanCpSegmentChunks, "plan_cp_segment_chunks", "plan cp", Integer, false}, "r.plan_cp_segment_chunks"},
    {{Field::PlanPrepareOverlap, "plan_prepare_overlap", "plan overlap", Integer, false}, "r.plan_prepare_overlap"},
    {{Field::PlanFirstSegment, "plan_first_segment", "plan 1st seg", Integer, false}, "r.plan_first_segment"},
    {{Field::PlanPrepareSplitChunk, "plan_prepare_split_chunk", "plan split", Integer, false}, "r.plan_prepare_split_chunk"},
    {{Field::PlanPrepareHeads, "plan_prepare_heads", "plan heads", Integer, false}, "r.plan_prepare_heads"},
    {{Field::PlanTailPrepareHeads, "plan_tail_prepare_heads", "plan tail heads", Integer, false}, "r.plan_tail_prepare_heads"},
    {{Field::PlanFixupCols, "plan_fixup_cols", "plan fix-up", Integer, false}, "r.plan_fixup_cols"},
    {{Field::PlanBlockV, "plan_block_v", "plan block_v", Integer, false}, "r.plan_block_v"},
    {{Field::PlanLocalHeads, "plan_local_heads", "plan local heads", Integer, false}, "r.plan_local_heads"},
    {{Field::PlanRecomputeCpChunks, "plan_recompute_cp_chunks", "plan recompute cp", Integer, false}, "r.plan_recompute_cp_chunks"},
    {{Field::PlanPass1BesideRecompute, "plan_pass1_beside_recompute", "plan pass 1 beside", Integer, false}, "r.plan_pass1_beside_recompute"},
    {{Field::PlanGroupSumBeside, "plan_group_sum_beside", "plan group sum beside", Integer, false}, "r.plan_group_sum_beside"},
};

constexpr bool fields_in_enum_order() {
  for (std::size_t i = 0; i < std::size(kFields); ++i)
    if (static_cast<std::size_t>(kFields[i].info.field) != i) return false;
  return true;
}
static_assert(fields_in_enum_order(), "kFields must list every Field in enum order");
static_assert(static_cast<std::size_t>(Field::PlanGroupSumBeside) + 1 == std::size(kFields));

const std::array<FieldInfo, std::size(kFields)> kInfos = [] {
  std::array<FieldInfo, std::size(kFields)> out{};
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = kFields[i].info;
  return out;
}();

FieldValue opt(const std::optional<double>& v) {
  return v ? FieldValue(*v) : FieldValue(std::monostate{});
}
FieldValue opt(const std::optional<int>& v) {
  return v ? FieldValue(static_cast<std::int64_t>(*v)) : FieldValue(std::monostate{});
}
FieldValue text(std::string_view s) { return FieldValue(std::string(s)); }
FieldValue integer(std::int64_t v) { return FieldValue(v); }

}  // namespace

std::span<const FieldInfo> all_fields() { return kInfos; }
const FieldInfo& field_info(Field f) { return kInfos[static_cast<std::size_t>(f)]; }
std::string_view field_sql(Field f) { return kFields[static_cast<std::size_t>(f)].sql; }

std::optional<Field> parse_field(std::string_view name) {
  for (const FieldInfo& f : kInfos)
    if (f.name == name) return f.field;
  return std::nullopt;
}

FieldValue field_value(const ResultRow& row, Field f) {
  const VariantRecord& vr = row.variant;
  const ProblemRecord& p = row.problem;
  const ResultRecord& r = row.result;
  const MetricsRecord& m = r.metrics;
  switch (f) {
    case Field::VariantName: return text(vr.name);
    case Field::Pass: return text(to_string(vr.pass));
    case Field::Family: return text(family_text(vr.config.family));
    case Field::BlockV: return integer(vr.config.block_v);
    case Field::Stages: return integer(vr.config.stages);
    case Field::Roles: return text(roles_text(vr.config.roles));
    case Field::CpSegmentChunks: return integer(vr.config.cp_segment_chunks);
    case Field::PinPrepareOverlap: return integer(vr.pins.prepare_overlap);
    case Field::PinCpFirstSegment: return integer(vr.pins.cp_first_segment);
    case Field::PinPrepareSplit: return integer(vr.pins.prepare_split);
    case Field::PinPrepareHeads: return integer(vr.pins.prepare_heads);
    case Field::PinFixupCols: return integer(vr.pins.fixup_cols);
    case Field::PinLocalHeads: return integer(vr.pins.local_heads);
    case Field::PinRecomputeCpChunks: return integer(vr.pins.recompute_cp_chunks);
    case Field::PinPass1BesideRecompute: return integer(vr.pins.pass1_beside_recompute);
    case Field::PinGroupSumBeside: return integer(vr.pins.group_sum_beside);
    case Field::ShapeSet: return text(p.shape_set_name);
    case Field::RowIndex: return integer(p.row_index);
    case Field::HQk: return integer(p.h_qk);
    case Field::HV: return integer(p.h_v);
    case Field::K: return integer(p.k);
    case Field::V: return integer(p.v);
    case Field::DType: return text(p.dtype);
    case Field::Batch: return integer(p.batch);
    case Field::NumSeqs: return integer(p.num_seqs);
    case Field::TotalTokens: return integer(p.total_tokens);
    case Field::MaxSeqlen: return integer(p.max_seqlen);
    case Field::Outcome: return text(to_string(r.outcome));
    case Field::Message: return text(r.message);
    case Field::MaxRelRms: return opt(r.max_rel_rms);
    case Field::LatencyP20: return opt(r.latency_p20_ms);
    case Field::LatencyP50: return opt(r.latency_p50_ms);
    case Field::LatencyP80: return opt(r.latency_p80_ms);
    case Field::SampleCount: return integer(r.sample_count);
    case Field::RelSpread: return opt(r.rel_spread);
    case Field::ClockMhz: return opt(r.clock_mhz);
    case Field::SmBusyPct: return opt(m.sm_busy_pct);
    case Field::AchievedOccupancyPct: return opt(m.achieved_occupancy_pct);
    case Field::IssueActivePct: return opt(m.issue_active_pct);
    case Field::DramPct: return opt(m.dram_pct);
    case Field::TensorPipePct: return opt(m.tensor_pipe_pct);
    case Field::SmThroughputPct: return opt(m.sm_throughput_pct);
    case Field::MemorySolPct: return opt(m.memory_sol_pct);
    case Field::GpcClockHz: return opt(m.gpc_clock_hz);
    case Field::Registers: return opt(r.registers);
    case Field::SharedBytes: return opt(r.shared_bytes);
    case Field::LocalBytes: return opt(r.local_bytes);
    case Field::PlanCpSegmentChunks: return opt(r.plan.cp_segment_chunks);
    case Field::PlanPrepareOverlap: return opt(r.plan.prepare_overlap);
    case Field::PlanFirstSegment: return opt(r.plan.first_segment);
    case Field::PlanPrepareSplitChunk: return opt(r.plan.prepare_split_chunk);
    case Field::PlanPrepareHeads: return opt(r.plan.prepare_heads);
    case Field::PlanTailPrepareHeads: return opt(r.plan.tail_prepare_heads);
    case Field::PlanFixupCols: return opt(r.plan.fixup_cols);
    case Field::PlanBlockV: return opt(r.plan.block_v);
    case Field::PlanLocalHeads: return opt(r.plan.local_heads);
    case Field::PlanRecomputeCpChunks: return opt(r.plan.recompute_cp_chunks);
    case Field::PlanPass1BesideRecompute: return opt(r.plan.pass1_beside_recompute);
    case Field::PlanGroupSumBeside: return opt(r.plan.group_sum_beside);
  }
  return std::monostate{};
}

std::string format_value(const FieldValue& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&v)) return text::significant(*d, 4);
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  return {};
}

}  // namespace gdn::db
