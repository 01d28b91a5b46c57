// PM sampling (CUPTI 13): a single-pass metric set sampled every interval_ns of GPU time while
// the call runs `calls` times; leading start-up samples are trimmed.
#include "gdn/profiler/pm_sampling.hpp"

#include <cupti_pmsampling.h>

#include "call_runner.hpp"
#include "cupti_common.hpp"
#include "gdn/profiler/metrics.hpp"

namespace gdn::profiler {
namespace {

using namespace detail;

class PmSamplingSession {
 public:
  explicit PmSamplingSession(int device) {
    CUpti_PmSampling_Enable_Params p{CUpti_PmSampling_Enable_Params_STRUCT_SIZE};
    p.deviceIndex = static_cast<std::size_t>(device);
    cupti_check(cuptiPmSamplingEnable(&p), "cuptiPmSamplingEnable");
    object_ = p.pPmSamplingObject;
  }
  ~PmSamplingSession() {
    if (started_) {
      CUpti_PmSampling_Stop_Params stop{CUpti_PmSampling_Stop_Params_STRUCT_SIZE};
      stop.pPmSamplingObject = object_;
      cuptiPmSamplingStop(&stop);
    }
    CUpti_PmSampling_Disable_Params p{CUpti_PmSampling_Disable_Params_STRUCT_SIZE};
    p.pPmSamplingObject = object_;
    cuptiPmSamplingDisable(&p);
  }
  PmSamplingSession(const PmSamplingSession&) = delete;
  PmSamplingSession& operator=(const PmSamplingSession&) = delete;
  CUpti_PmSampling_Object* get() const { return object_; }

  void start() {
    CUpti_PmSampling_Start_Params p{CUpti_PmSampling_Start_Params_STRUCT_SIZE};
    p.pPmSamplingObject = object_;
    cupti_check(cuptiPmSamplingStart(&p), "cuptiPmSamplingStart");
    started_ = true;
  }
  void stop() {
    CUpti_PmSampling_Stop_Params p{CUpti_PmSampling_Stop_Params_STRUCT_SIZE};
    p.pPmSamplingObject = object_;
    started_ = false;
    cupti_check(cuptiPmSamplingStop(&p), "cuptiPmSamplingStop");
  }

 private:
  CUpti_PmSampling_Object* object_ = nullptr;
  bool started_ = false;
};

std::vector<std::uint8_t> make_counter_data(const PmSamplingSession& session,
                                            const std::vector<const char*>& names, std::size_t max_samples) {
  CUpti_PmSampling_GetCounterDataSize_Params size{CUpti_PmSampling_GetCounterDataSize_Params_STRUCT_SIZE};
  size.pPmSamplingObject = session.get();
  size.pMetricNames = const_cast<const char**>(names.data());
  size.numMetrics = names.size();
  size.maxSamples = max_samples;
  cupti_check(cuptiPmSamplingGetCounterDataSize(&size), "cuptiPmSamplingGetCounterDataSize");
  std::vector<std::uint8_t> data(size.counterDataSize);
  CUpti_PmSampling_CounterDataImage_Initialize_Params init{
      CUpti_PmSampling_CounterDataImage_Initialize_Params_STRUCT_SIZE};
  init.pPmSamplingObject = session.get();
  init.counterDataSize = data.size();
  init.pCounterData = data.data();
  cupti_check(cuptiPmSamplingCounterDataImageInitialize(&init), "cuptiPmSamplingCounterDataImageInitialize");
  return data;
}

void sample(const LaunchFn& launch, const PmOptions& o, cudaStream_t stream, PmTimeline& out) {
  int device = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  ensure_profiler_initialized();
  const std::string chip = chip_name(device);
  require_device_support(device, CUPTI_PROFILER_PM_SAMPLING, "PM sampling");
  const std::vector<std::uint8_t> availability = counter_availability();

  std::vector<const char*> requested;
  for (const MetricDef& d : pm_sampling_metrics()) requested.push_back(d.cupti_name.data());
  const MetricConfig config = build_metric_config(CUPTI_PROFILER_TYPE_PM_SAMPLING, chip, availability, requested);
  if (config.passes != 1)
    throw std::runtime_error("PM sampling needs a single-pass metric set; this one needs " +
                             std::to_string(config.passes) + " passes");

  PmSamplingSession session(device);
  std::vector<std::uint8_t> counter_data = make_counter_data(session, config.names, o.max_samples);
  CUpti_PmSampling_SetConfig_Params set{CUpti_PmSampling_SetConfig_Params_STRUCT_SIZE};
  set.pPmSamplingObject = session.get();
  set.configSize = config.image.size();
  set.pConfig = config.image.data();
  set.hardwareBufferSize = o.hardware_buffer_bytes;
  set.samplingInterval = o.interval_ns;
  set.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
  set.hwBufferAppendMode = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST;
  cupti_check(cuptiPmSamplingSetConfig(&set), "cuptiPmSamplingSetConfig");

  session.start();
  for (int i = 0; i < o.calls; ++i) {
    launch(stream);
    check_cuda(cudaGetLastError(), "launch of the call (PM sampling)");
  }
  synchronize(stream, "PM-sampled calls");
  session.stop();

  CUpti_PmSampling_DecodeData_Params decode{CUpti_PmSampling_DecodeData_Params_STRUCT_SIZE};
  decode.pPmSamplingObject = session.get();
  decode.pCounterDataImage = counter_data.data();
  decode.counterDataImageSize = counter_data.size();
  cupti_check(cuptiPmSamplingDecodeData(&decode), "cuptiPmSamplingDecodeData");
  out.overflow = decode.overflow != 0;
  CUpti_PmSampling_GetCounterDataInfo_Params info{CUpti_PmSampling_GetCounterDataInfo_Params_STRUCT_SIZE};
  info.pCounterDataImage = counter_data.data();
  info.counterDataImageSize = counter_data.size();
  cupti_check(cuptiPmSamplingGetCounterDataInfo(&info), "cuptiPmSamplingGetCounterDataInfo");

  std::vector<SampleSpan> spans;
  for (std::size_t i = 0; i < info.numCompletedSamples; ++i) {
    CUpti_PmSampling_CounterData_GetSampleInfo_Params s{CUpti_PmSampling_CounterData_GetSampleInfo_Params_STRUCT_SIZE};
    s.pPmSamplingObject = session.get();
    s.pCounterDataImage = counter_data.data();
    s.counterDataImageSize = counter_data.size();
    s.sampleIndex = i;
    cupti_check(cuptiPmSamplingCounterDataGetSampleInfo(&s), "cuptiPmSamplingCounterDataGetSampleInfo");
    spans.push_back({s.startTimestamp, s.endTimestamp});
  }
  out.trimmed_leading = count_startup_samples(spans, o.interval_ns);

  const auto defs = pm_sampling_metrics();
  for (std::size_t d = 0; d < defs.size(); ++d)
    if (config.accepted[d]) out.metric_keys.emplace_back(defs[d].key);
  HostObject host(CUPTI_PROFILER_TYPE_PM_SAMPLING, chip, availability);
  for (std::size_t i = out.trimmed_leading; i < spans.size(); ++i) {
    PmSample sample;
    sample.t_ns = spans[i].start_ns - spans[out.trimmed_leading].start_ns;
    sample.duration_ns = spans[i].end_ns - spans[i].start_ns;
    sample.values = evaluate_metrics(host, counter_data, i, config.names);
    out.samples.push_back(std::move(sample));
  }
  out.available = true;
  if (!config.rejected.empty()) {
    out.unavailable_reason = "partial: left out ";
    for (const std::string& r : config.rejected) out.unavailable_reason += r + "; ";
  }
}

}  // namespace

PmTimeline sample_pm_timeline(const LaunchFn& launch, const PmOptions& options, cudaStream_t stream) {
  validate(options);
  PmTimeline out;
  out.interval_ns = options.interval_ns;
  MeasurementStream owned_or_given(stream);
  try {
    sample(launch, options, owned_or_given.get(), out);
  } catch (const MeasurementError&) {
    throw;
  } catch (const std::exception& e) {
    out = PmTimeline{};
    out.interval_ns = options.interval_ns;
    out.unavailable_reason = e.what();
  }
  return out;
}

}  // namespace gdn::profiler
