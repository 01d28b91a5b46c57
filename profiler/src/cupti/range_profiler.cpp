// Range profiler, CUPTI 13 API: AutoRange (a range per kernel) + KernelReplay. Call order as in
// docs/benchmarking.md: initialize, chip, support, host config, enable, counter data, set config,
// start, launch, stop, decode, evaluate per range, disable.
#include "gdn/profiler/range_profiler.hpp"

#include <cupti_range_profiler.h>

#include "call_runner.hpp"
#include "cupti_common.hpp"

namespace gdn::profiler {
namespace {

using namespace detail;

// Disables the range profiler however profiling ends (also when the call throws).
class RangeProfilerSession {
 public:
  explicit RangeProfilerSession(CUcontext ctx) {
    CUpti_RangeProfiler_Enable_Params p{CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
    p.ctx = ctx;
    cupti_check(cuptiRangeProfilerEnable(&p), "cuptiRangeProfilerEnable");
    object_ = p.pRangeProfilerObject;
  }
  ~RangeProfilerSession() {
    CUpti_RangeProfiler_Disable_Params p{CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
    p.pRangeProfilerObject = object_;
    cuptiRangeProfilerDisable(&p);
  }
  RangeProfilerSession(const RangeProfilerSession&) = delete;
  RangeProfilerSession& operator=(const RangeProfilerSession&) = delete;
  CUpti_RangeProfiler_Object* get() const { return object_; }

 private:
  CUpti_RangeProfiler_Object* object_ = nullptr;
};

std::vector<std::uint8_t> make_counter_data(const RangeProfilerSession& session,
                                            const std::vector<const char*>& names, std::size_t ranges) {
  CUpti_RangeProfiler_GetCounterDataSize_Params size{CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
  size.pRangeProfilerObject = session.get();
  size.pMetricNames = const_cast<const char**>(names.data());
  size.numMetrics = names.size();
  size.maxNumOfRanges = ranges;
  size.maxNumRangeTreeNodes = ranges;
  cupti_check(cuptiRangeProfilerGetCounterDataSize(&size), "cuptiRangeProfilerGetCounterDataSize");
  std::vector<std::uint8_t> data(size.counterDataSize);
  CUpti_RangeProfiler_CounterDataImage_Initialize_Params init{
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
  init.pRangeProfilerObject = session.get();
  init.pCounterData = data.data();
  init.counterDataSize = data.size();
  cupti_check(cuptiRangeProfilerCounterDataImageInitialize(&init),
              "cuptiRangeProfilerCounterDataImageInitialize");
  return data;
}

void set_config(const RangeProfilerSession& session, const MetricConfig& config,
                std::vector<std::uint8_t>& counter_data, std::size_t ranges) {
  CUpti_RangeProfiler_SetConfig_Params p{CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
  p.pRangeProfilerObject = session.get();
  p.configSize = config.image.size();
  p.pConfig = config.image.data();
  p.counterDataImageSize = counter_data.size();
  p.pCounterDataImage = counter_data.data();
  // AutoRange + KernelReplay: per-kernel metrics. A user range around a loop misreads
  // (docs/benchmarking.md: 335 us and DRAM 67 % vs 268 us and 83 % for the same copy).
  p.range = CUPTI_AutoRange;
  p.replayMode = CUPTI_KernelReplay;
  p.maxRangesPerPass = ranges;
  p.numNestingLevels = 1;
  p.minNestingLevel = 1;
  p.passIndex = 0;
  p.targetNestingLevel = 1;
  cupti_check(cuptiRangeProfilerSetConfig(&p), "cuptiRangeProfilerSetConfig");
}

// Profiles; throws CuptiFailure / std::runtime_error for CUPTI trouble, MeasurementError for
// the call's own failures.
void profile(const LaunchFn& launch, const std::vector<MetricDef>& defs,
             const ProfileOptions& options, cudaStream_t stream, MetricsResult& result) {
  int device = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  ensure_profiler_initialized();
  const std::string chip = chip_name(device);
  require_device_support(device, CUPTI_PROFILER_RANGE_PROFILING, "range profiler");
  const CUcontext ctx = current_context();
  const std::vector<std::uint8_t> availability = counter_availability();

  std::vector<const char*> requested;
  for (const MetricDef& d : defs) requested.push_back(d.cupti_name.data());
  const MetricConfig config =
      build_metric_config(CUPTI_PROFILER_TYPE_RANGE_PROFILER, chip, availability, requested);
  result.passes = config.passes;

  RangeProfilerSession session(ctx);
  std::vector<std::uint8_t> counter_data = make_counter_data(session, config.names, options.max_kernels);
  set_config(session, config, counter_data, options.max_kernels);

  CUpti_RangeProfiler_Start_Params start{CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
  start.pRangeProfilerObject = session.get();
  cupti_check(cuptiRangeProfilerStart(&start), "cuptiRangeProfilerStart");
  launch(stream);
  check_cuda(cudaGetLastError(), "launch of the call (profiling)");
  CUpti_RangeProfiler_Stop_Params stop{CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
  stop.pRangeProfilerObject = session.get();
  cupti_check(cuptiRangeProfilerStop(&stop), "cuptiRangeProfilerStop");
  synchronize(stream, "profiled call");

  CUpti_RangeProfiler_DecodeData_Params decode{CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
  decode.pRangeProfilerObject = session.get();
  cupti_check(cuptiRangeProfilerDecodeData(&decode), "cuptiRangeProfilerDecodeData");
  result.ranges_dropped = decode.numOfRangeDropped;
  CUpti_RangeProfiler_GetCounterDataInfo_Params info{CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
  info.pCounterDataImage = counter_data.data();
  info.counterDataImageSize = counter_data.size();
  cupti_check(cuptiRangeProfilerGetCounterDataInfo(&info), "cuptiRangeProfilerGetCounterDataInfo");

  HostObject host(CUPTI_PROFILER_TYPE_RANGE_PROFILER, chip, availability);
  for (std::size_t r = 0; r < info.numTotalRanges; ++r) {
    KernelMetrics k;
    CUpti_RangeProfiler_CounterData_GetRangeInfo_Params range{
        CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE};
    range.pCounterDataImage = counter_data.data();
    range.counterDataImageSize = counter_data.size();
    range.rangeIndex = r;
    range.rangeDelimiter = "/";
    if (cuptiRangeProfilerCounterDataGetRangeInfo(&range) == CUPTI_SUCCESS && range.rangeName)
      k.range_name = range.rangeName;
    k.values.assign(defs.size(), std::nullopt);
    try {
      const std::vector<double> values = evaluate_metrics(host, counter_data, r, config.names);
      for (std::size_t d = 0, a = 0; d < defs.size(); ++d)
        if (config.accepted[d]) k.values[d] = values[a++];
    } catch (const CuptiFailure&) {
      // This range stays without values; the aggregate says how many kernels lacked them.
    }
    result.kernels.push_back(std::move(k));
  }
  result.values = aggregate_kernel_metrics(defs, result.kernels);
  // Metrics the host rejected carry CUPTI's reason instead of the generic "no kernel" one.
  for (std::size_t d = 0, rejected = 0; d < defs.size(); ++d)
    if (!config.accepted[d]) result.values[d].unavailable_reason = config.rejected[rejected++];
  result.available = true;
}

}  // namespace

MetricsResult profile_metrics(const LaunchFn& launch, MetricSet set, const ProfileOptions& options,
                              cudaStream_t stream) {
  MetricsResult result;
  result.set = set;
  const std::span<const MetricDef> defs = range_metrics(set);
  if (defs.empty()) {
    result.unavailable_reason = "metric set 'none': profiling not requested";
    return result;
  }
  if (options.max_kernels < 1)
    throw std::invalid_argument("ProfileOptions.max_kernels: expected >= 1, got 0");
  MeasurementStream owned_or_given(stream);
  const std::vector<MetricDef> def_list(defs.begin(), defs.end());
  try {
    profile(launch, def_list, options, owned_or_given.get(), result);
  } catch (const MeasurementError&) {
    throw;
  } catch (const std::exception& e) {
    result = MetricsResult{};
    result.set = set;
    result.unavailable_reason = e.what();
    for (const MetricDef& d : def_list) result.values.push_back({std::string(d.key), std::nullopt, e.what()});
  }
  return result;
}

}  // namespace gdn::profiler
