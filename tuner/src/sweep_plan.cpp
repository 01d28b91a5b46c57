// Resolving a sweep's variants, problems and provenance (see sweep_plan.hpp).
#include "sweep_plan.hpp"

#include <algorithm>
#include <stdexcept>

#include "gdn/launch_plan.hpp"
#include "gdn/problems/api_problem.hpp"
#include "gdn/profiler/device_info.hpp"

#include "gdn_git_sha.h"  // GDN_GIT_SHA, generated at build time (tuner/write_git_sha.cmake)
#ifndef GDN_BUILD_FLAGS
#define GDN_BUILD_FLAGS ""
#endif
#ifndef GDN_VARIANT_SET
#define GDN_VARIANT_SET "unknown"
#endif

namespace gdn::tuner {

db::ProblemRecord problem_record(const problems::ShapeSet& set, std::size_t row) {
  const auto& p = set.problems.at(row);
  db::ProblemRecord r;
  r.shape_set_name = set.name;
  r.shape_set_hash = set.hash_hex();
  r.row_index = static_cast<int>(row);
  r.h_qk = p.h_qk;
  r.h_v = p.h_v;
  r.k = p.k;
  r.v = p.v;
  r.dtype = problems::dtype_name(p.dtype);
  r.batch = static_cast<int>(p.batch());
  r.num_seqs = p.num_seqs();
  r.total_tokens = p.total_tokens();
  r.max_seqlen = p.max_seqlen();
  r.seqlens = p.seqlens_list();
  return r;
}

namespace {

std::vector<PlannedProblem> shape_set_problems(const std::string& shapes) {
  problems::ShapeSet set;
  try {
    set = problems::load_shape_set(shapes);
  } catch (const std::exception& e) {
    throw std::invalid_argument(std::string("--shapes: ") + e.what());
  }
  if (set.problems.empty()) throw std::invalid_argument("--shapes: set '" + shapes + "' has no problem");
  std::vector<PlannedProblem> out;
  for (std::size_t i = 0; i < set.problems.size(); ++i)
    out.push_back({problem_record(set, i), set.problems[i],
                   set.name + "#" + std::to_string(i) + " " + set.problems[i].name});
  return out;
}

db::DeviceRecord device_record(const profiler::DeviceInfo& d) {
  db::DeviceRecord r;
  r.name = d.name;
  r.uuid = d.uuid;
  r.sm_count = d.sm_count;
  r.cc_major = d.cc_major;
  r.cc_minor = d.cc_minor;
  r.sm_clock_mhz = d.sm_clock_peak_khz / 1000;
  r.mem_clock_mhz = d.mem_clock_peak_khz / 1000;
  r.memory_bytes = static_cast<std::int64_t>(d.total_memory_bytes);
  r.l2_bytes = d.l2_bytes;
  r.driver_version = profiler::format_cuda_version(d.driver_version);
  r.cuda_version = profiler::format_cuda_version(d.runtime_version);
  return r;
}

// One sweep = one kind of device: GPUs that differ in anything but their identity would mix
// results silently, so they are refused.
db::DeviceRecord gpu_device(const std::vector<int>& gpus) {
  std::string reason;
  const int count = profiler::cuda_device_count(&reason);
  if (count == 0)
    throw std::invalid_argument("--gpus: no CUDA device is usable here (" + reason +
                                "); use --replay <db> to run the pipeline from a recorded database");
  std::optional<db::DeviceRecord> first;
  for (int g : gpus) {
    if (g >= count)
      throw std::invalid_argument("--gpus: expected ordinals below " + std::to_string(count) +
                                  " (devices present), got " + std::to_string(g));
    auto rec = device_record(profiler::query_device(g));
    if (!first) {
      first = rec;
      continue;
    }
    auto same = rec;
    same.uuid = first->uuid;
    if (same.name != first->name || same.sm_count != first->sm_count ||
        same.sm_clock_mhz != first->sm_clock_mhz || same.driver_version != first->driver_version)
      throw std::invalid_argument("--gpus: GPU " + std::to_string(g) + " (" + rec.name + ", " +
                                  std::to_string(rec.sm_count) + " SMs) differs from GPU " +
                                  std::to_string(gpus.front()) + " (" + first->name +
                                  "); sweep one kind of device at a time");
  }
  return *first;
}

void attach_replay(SweepPlan& plan, const SweepOptions& o) {
  auto src = std::make_shared<ReplaySource>(ReplaySource::load(o.replay_db, o.replay_sweep));
  plan.variants = resolve_replay_space(*src, o.space, o.variant_filter);
  // A variant the recording could not build at all replays as CompileRejected, not as a gate failure.
  for (auto& v : plan.variants) {
    const auto rows = src->rows_of(v.record.name);
    const bool all_rejected = !rows.empty() && std::all_of(rows.begin(), rows.end(), [](const db::ResultRow* r) {
      return r->result.outcome == db::Outcome::CompileRejected;
    });
    if (all_rejected) {
      v.runnable = false;
      v.reject_reason = rows.front()->result.message;
    }
  }
  if (!o.shapes.empty()) {
    plan.problems = shape_set_problems(o.shapes);
  } else {
    for (auto p : src->problems()) {
      p.id = 0;
      plan.problems.push_back({p, std::nullopt,
                               p.shape_set_name + "#" + std::to_string(p.row_index)});
    }
  }
  // The data was measured on the recorded device with the recorded build: say so.
  plan.device = src->sweep().device;
  plan.device.id = 0;
  plan.build = src->sweep().build;
  plan.build.id = 0;
  plan.worker_args = {"--replay", o.replay_db, "--replay-sweep", std::to_string(src->sweep().sweep.id)};
  plan.implementable = [src](const SpaceEntry& v, const PlannedProblem& p) -> gdn::Implementable {
    const auto* row = src->find(v.record.name, p.record);
    if (!row) return {false, "replay: not recorded in " + src->path()};
    if (row->result.outcome == db::Outcome::Unsupported) return {false, row->result.message};
    return {true, ""};
  };
  plan.replay = std::move(src);
}

}  // namespace

db::BuildRecord this_build() {
  db::BuildRecord b;
  b.git_sha = GDN_GIT_SHA;
  b.flags = GDN_BUILD_FLAGS;
  b.variant_set = GDN_VARIANT_SET;
  return b;
}

SweepPlan make_plan(const SweepOptions& o) {
  SweepPlan plan;
  if (!o.replay_db.empty()) {
    attach_replay(plan, o);
    return plan;
  }
  plan.variants = resolve_space(o.space, o.variant_filter, o.plans);
  plan.problems = shape_set_problems(o.shapes);
  plan.device = gpu_device(o.gpus);
  plan.build = this_build();
  plan.implementable = [](const SpaceEntry& v, const PlannedProblem& p) -> gdn::Implementable {
    const auto* variant = gdn::find_variant(v.record.variant_name());
    if (!variant) return {false, "not compiled into this build"};
    const auto api = problems::to_api_problem(*p.source);
    const gdn::Implementable impl = variant->can_implement(api.problem);
    if (!impl.ok) return impl;
    const int group = api.problem.Hk > 0 ? api.problem.Hv / api.problem.Hk : 0;
    if (const std::string why = gdn::check_launch_options(v.record.pins, group); !why.empty())
      return {false, "plan pins: " + why};
    return impl;
  };
  return plan;
}

}  // namespace gdn::tuner
