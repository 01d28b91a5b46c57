#include "device_harness.hpp"

#include <cmath>

namespace gdn::testing::gpu {

bool hopper_available() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    cudaGetLastError();
    return false;
  }
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) return false;
  return prop.major == 9;
}

void check_cuda(cudaError_t err, const char* what) {
  if (err != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(err));
}

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  if (bytes > 0) check_cuda(cudaMalloc(&ptr_, bytes), "cudaMalloc");
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (ptr_) cudaFree(ptr_);
    ptr_ = o.ptr_;
    bytes_ = o.bytes_;
    o.ptr_ = nullptr;
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_) cudaFree(ptr_);
}

void DeviceBuffer::poison() const {
  if (ptr_) check_cuda(cudaMemset(ptr_, 0xFF, bytes_), "poison");
}

DeviceCase::DeviceCase(const RandomCase& c, bool cu_seqlens_int64)
    : dtype(c.options.dtype), want_final_state(c.shape.want_final_state) {
  const ref::Shape& s = c.shape;
  tokens = s.B * s.T;
  num_seqs = s.num_seqs();
  state_elements = num_seqs * s.Hv * int64_t(s.K) * s.V;
  gdn_problem_init(&problem, s.B, s.T, s.Hk, s.Hv, s.K, s.V);
  problem.qkv_dtype = dtype == HalfType::BF16 ? GDN_BF16 : GDN_FP16;
  problem.beta_dtype = GDN_FP32;
  problem.scale = static_cast<float>(s.effective_scale());
  problem.state_layout = s.layout == ref::StateLayout::VK ? GDN_STATE_VK : GDN_STATE_KV;
  q = DeviceBuffer::from(c.host.q);
  k = DeviceBuffer::from(c.host.k);
  v = DeviceBuffer::from(c.host.v);
  g = DeviceBuffer::from(c.host.g);
  beta = DeviceBuffer::from(c.host.beta);
  h0 = DeviceBuffer::from(c.host.h0);
  d_o = DeviceBuffer::from(c.host.d_o);
  dht = DeviceBuffer::from(c.host.dht);
  if (!s.cu_seqlens.empty()) {
    problem.num_seqs = num_seqs;
    cu_host64 = c.host.cu_seqlens;
    cu_host32 = c.host.cu_seqlens_i32();
    if (cu_seqlens_int64) {
      cu_seqlens = DeviceBuffer::from(cu_host64);
      problem.cu_seqlens_dtype = GDN_INT64;
      problem.cu_seqlens_host = cu_host64.data();
    } else {
      cu_seqlens = DeviceBuffer::from(cu_host32);
      problem.cu_seqlens_dtype = GDN_INT32;
      problem.cu_seqlens_host = cu_host32.data();
    }
    problem.cu_seqlens = cu_seqlens.get();
  }
}

namespace {

// Times a call on the default stream with CUDA events.
class EventTimer {
 public:
  EventTimer() {
    check_cuda(cudaEventCreate(&start_), "cudaEventCreate");
    check_cuda(cudaEventCreate(&stop_), "cudaEventCreate");
    check_cuda(cudaEventRecord(start_, nullptr), "cudaEventRecord");
  }
  ~EventTimer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  float stop() {
    check_cuda(cudaEventRecord(stop_, nullptr), "cudaEventRecord");
    check_cuda(cudaEventSynchronize(stop_), "cudaEventSynchronize");
    float ms = 0;
    check_cuda(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
    return ms;
  }

 private:
  cudaEvent_t start_{}, stop_{};
};

DeviceBuffer half_out(int64_t elements) { return DeviceBuffer(size_t(elements) * 2); }
DeviceBuffer float_out(int64_t elements) { return DeviceBuffer(size_t(elements) * 4); }

}  // namespace

FwdOutputs::FwdOutputs(const DeviceCase& dc)
    : o(half_out(dc.tokens * dc.problem.Hv * dc.problem.V)),
      ht(float_out(dc.want_final_state ? dc.state_elements : 0)) {
  o.poison();
  ht.poison();
}

BwdOutputs::BwdOutputs(const DeviceCase& dc, bool want_dh0)
    : dq(half_out(dc.tokens * dc.problem.Hk * dc.problem.K)),
      dk(half_out(dc.tokens * dc.problem.Hk * dc.problem.K)),
      dv(half_out(dc.tokens * dc.problem.Hv * dc.problem.V)),
      dg(float_out(dc.tokens * dc.problem.Hv)),
      dbeta(float_out(dc.tokens * dc.problem.Hv)),
      dh0(float_out(want_dh0 ? dc.state_elements : 0)) {
  for (const DeviceBuffer* b : {&dq, &dk, &dv, &dg, &dbeta, &dh0}) b->poison();
}

gdn_fwd_args fwd_args(const DeviceCase& dc, const FwdOutputs& out, const DeviceBuffer& ws) {
  gdn_fwd_args a{};
  a.q = dc.q.get();
  a.k = dc.k.get();
  a.v = dc.v.get();
  a.g = static_cast<const float*>(dc.g.get());
  a.beta = dc.beta.get();
  a.h0 = static_cast<const float*>(dc.h0.get());
  a.o = out.o.get();
  a.ht = out.ht.bytes() ? static_cast<float*>(out.ht.get()) : nullptr;
  a.workspace = ws.get();
  a.workspace_bytes = ws.bytes();
  return a;
}

gdn_bwd_args bwd_args(const DeviceCase& dc, const BwdOutputs& out, const DeviceBuffer& ws) {
  gdn_bwd_args a{};
  a.q = dc.q.get();
  a.k = dc.k.get();
  a.v = dc.v.get();
  a.g = static_cast<const float*>(dc.g.get());
  a.beta = dc.beta.get();
  a.h0 = static_cast<const float*>(dc.h0.get());
  a.d_o = dc.d_o.get();
  a.dht = static_cast<const float*>(dc.dht.get());
  a.dq = out.dq.get();
  a.dk = out.dk.get();
  a.dv = out.dv.get();
  a.dg = static_cast<float*>(out.dg.get());
  a.dbeta = out.dbeta.get();
  a.dh0 = out.dh0.bytes() ? static_cast<float*>(out.dh0.get()) : nullptr;
  a.workspace = ws.get();
  a.workspace_bytes = ws.bytes();
  return a;
}

SavedBlock::SavedBlock(const DeviceCase& dc, int segment_chunks)
    : data(gdn_saved_size(&dc.problem, segment_chunks)) {
  data.poison();  // the backward must read only what the forward wrote
  desc.data = data.get();
  desc.bytes = data.bytes();
  desc.segment_chunks = segment_chunks;
}

FwdRun run_forward(const Variant& variant, const DeviceCase& dc, const gdn_launch_options* pins,
                   const gdn_saved* save) {
  const FwdOutputs out(dc);
  DeviceBuffer ws(variant.workspace_bytes(dc.problem));
  ws.poison();  // the kernels must not depend on workspace contents
  gdn_fwd_args a = fwd_args(dc, out, ws);
  a.launch = pins;
  a.save = save;
  FwdRun r;
  EventTimer timer;
  r.status = variant.run_fwd(dc.problem, a, nullptr);
  r.elapsed_ms = timer.stop();
  check_cuda(cudaDeviceSynchronize(), "forward");
  r.out.o = out.o.download<uint16_t>();
  r.out.ht = out.ht.download<float>();
  return r;
}

BwdRun run_backward(const Variant& variant, const DeviceCase& dc, const RunOptions& opt) {
  const BwdOutputs out(dc, opt.want_dh0);
  DeviceBuffer ws(variant.workspace_bytes(dc.problem));
  ws.poison();
  gdn_bwd_args a = bwd_args(dc, out, ws);
  a.launch = opt.pins;
  a.saved = opt.saved;
  BwdRun r;
  EventTimer timer;
  r.status = variant.run_bwd(dc.problem, a, nullptr);
  r.elapsed_ms = timer.stop();
  check_cuda(cudaDeviceSynchronize(), "backward");
  r.out.dq = out.dq.download<uint16_t>();
  r.out.dk = out.dk.download<uint16_t>();
  r.out.dv = out.dv.download<uint16_t>();
  r.out.dg = out.dg.download<float>();
  r.out.dbeta = out.dbeta.download<float>();
  r.out.dh0 = out.dh0.download<float>();
  return r;
}

std::vector<const Variant*> variants_of(Pass pass) {
  std::vector<const Variant*> out;
  for (const Variant* v : registry())
    if (v->pass() == pass) out.push_back(v);
  return out;
}

}  // namespace gdn::testing::gpu
