// What crosses the coordinator <-> worker pipe: requests (a correctness gate or a timed
// measurement of one variant on one problem) and their outputs, encoded as wire messages.
// Outputs are the database's own row types, so a worker's answer is stored as it came.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gdn/db/records.hpp"
#include "gdn/profiler/metrics.hpp"
#include "gdn/profiler/protocol.hpp"
#include "gdn/tuner/wire.hpp"

namespace gdn::tuner {

enum class RequestKind { Gate, Measure };

struct TrialRequest {
  RequestKind kind = RequestKind::Measure;
  std::uint64_t id = 0;              // echoed in the answer
  std::string variant;               // procedural name
  gdn::Pass pass = gdn::Pass::Forward;
  db::ProblemRecord problem;         // for a gate: the family's representative problem
  std::string layout = "packed";     // packed (B = 1 + cu_seqlens) | batched (B rows, one length)
  int rung = -1;                     // kPreciseRung or a successive-halving rung
  profiler::MetricSet metrics = profiler::MetricSet::Basic;
  bool pm_sampling = false;
  // The sweep's precise protocol (used when rung is kPreciseRung). It travels with every
  // request so a worker, live or replay, keeps no sweep state. On the wire: warm-up, sample
  // bounds, target spread and time cap; the other fields are Protocol::precise()'s.
  profiler::Protocol precise = profiler::Protocol::precise();
};

// A worker's answer. `result` has no ids (the coordinator fills them).
struct TrialOutput {
  std::uint64_t id = 0;
  db::ResultRecord result;
  std::vector<double> samples_ms;
  std::vector<db::PmSample> pm_timeline;
  double worker_busy_ms = 0;  // time the worker spent on the request (overhead accounting)
  // The worker exits after this answer (its CUDA context is unusable after a sticky error):
  // the pool restarts it before giving it another request.
  bool worker_exiting = false;
};

wire::Message encode_request(const TrialRequest& r);
TrialRequest decode_request(const wire::Message& m);  // throws std::runtime_error
wire::Message encode_output(const TrialOutput& o);
TrialOutput decode_output(const wire::Message& m);    // throws std::runtime_error

// Problem fields <-> message fields (prefix "p_"); also used by the replay runner's keys.
void put_problem(wire::Message& m, const db::ProblemRecord& p);
db::ProblemRecord get_problem(const wire::Message& m);

// Problems are matched across databases by shape, never by id or hash.
std::string problem_shape_key(const db::ProblemRecord& p);

}  // namespace gdn::tuner
