// The CUPTI seam when the build has GDN_WITH_CUPTI=OFF: every CUPTI feature reports
// "built without CUPTI"; timing falls back to events.
#include "cupti_backend.hpp"
#include "gdn/profiler/pm_sampling.hpp"
#include "gdn/profiler/range_profiler.hpp"

namespace gdn::profiler {

namespace {
constexpr const char* no_cupti = "built without CUPTI (GDN_WITH_CUPTI=OFF)";
}

namespace detail {

CuptiSupport query_cupti_support(int) {
  CuptiSupport s;
  s.reason = no_cupti;
  return s;
}

std::string time_with_cupti_activity(const CallRunner&, const L2Flusher&, const Protocol&,
                                     cudaStream_t, int, Timing&) {
  return no_cupti;
}

}  // namespace detail

MetricsResult profile_metrics(const LaunchFn&, MetricSet set, const ProfileOptions&, cudaStream_t) {
  MetricsResult r;
  r.set = set;
  r.unavailable_reason = no_cupti;
  for (const MetricDef& d : range_metrics(set)) r.values.push_back({std::string(d.key), std::nullopt, no_cupti});
  return r;
}

PmTimeline sample_pm_timeline(const LaunchFn&, const PmOptions& options, cudaStream_t) {
  validate(options);
  PmTimeline t;
  t.interval_ns = options.interval_ns;
  t.unavailable_reason = no_cupti;
  return t;
}

}  // namespace gdn::profiler
