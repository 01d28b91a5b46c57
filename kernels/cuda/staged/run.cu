// Workspace carving and launch sequences of the staged family (see staged/kernels.cuh).
#include "staged/kernels.cuh"
#include "staged/run.cuh"

namespace gdn::staged {
namespace {

int64_t num_sequences(const gdn_problem& p) { return p.cu_seqlens ? p.num_seqs : p.B; }

}  // namespace

Dims make_dims(const gdn_problem& p) {
  Dims d{};
  d.Ttot = p.B * p.T;
  d.num_seqs = num_sequences(p);
  d.max_chunks = max_chunks(p);
  d.Hk = p.Hk;
  d.Hv = p.Hv;
  d.group = p.Hv / p.Hk;
  d.scale = p.scale;
  d.in_bf16 = p.qkv_dtype == GDN_BF16;
  d.beta_f32 = p.beta_dtype == GDN_FP32;
  d.state_vk = p.state_layout == GDN_STATE_VK;
  return d;
}

namespace {

ChunkWorkspace carve_chunk_workspace(WorkspaceCarver& c, const Dims& d) {
  ChunkWorkspace ws;
  const int64_t chunk_heads = d.max_chunks * d.Hv;
  ws.chunk_first = c.take<int64_t>(d.num_seqs + 1);
  ws.table = c.take<ChunkInfo>(d.max_chunks);
  ws.gcum = c.take<float>(d.Ttot * d.Hv);
  ws.tmat = c.take<float>(chunk_heads * kC * kC);
  ws.states = c.take<float>(chunk_heads * kK * kV);
  ws.vnew = c.take<float>(d.Ttot * d.Hv * kV);
  return ws;
}

struct BwdWorkspace {
  float *dstate_end, *dvnew, *dw, *dq_h, *dk_h;
};

BwdWorkspace carve_bwd_workspace(WorkspaceCarver& c, const Dims& d) {
  BwdWorkspace w;
  const int64_t chunk_heads = d.max_chunks * d.Hv;
  w.dstate_end = c.take<float>(chunk_heads * kK * kV);
  w.dvnew = c.take<float>(d.Ttot * d.Hv * kV);
  w.dw = c.take<float>(d.Ttot * d.Hv * kV);
  w.dq_h = c.take<float>(d.Ttot * d.Hv * kK);
  w.dk_h = c.take<float>(d.Ttot * d.Hv * kK);
  return w;
}

gdn_status to_status(cudaError_t err) { return err == cudaSuccess ? GDN_OK : GDN_ERROR_CUDA; }

// Chunk table, gamma + T, and the state recurrence: shared by forward and backward.
cudaError_t run_recurrence(const gdn_problem& p, const FwdParams& f, int block_v, cudaStream_t s) {
  cudaError_t err = cudaSuccess;
  if (f.d.num_seqs == 0) return err;
  err = build_chunk_table(p, f.d, f.ws.chunk_first, f.ws.table, s);
  if (err == cudaSuccess && f.d.max_chunks > 0) err = launch_prepare(f, device_sm_count(), s);
  if (err == cudaSuccess) err = launch_state_fwd(f, block_v, s);
  return err;
}

FwdParams make_fwd_params(const gdn_problem& p, const void* q, const void* k, const void* v,
                          const float* g, const void* beta, const float* h0, void* workspace,
                          WorkspaceCarver& carver) {
  FwdParams f{};
  f.d = make_dims(p);
  f.q = q;
  f.k = k;
  f.v = v;
  f.g = g;
  f.beta = beta;
  f.h0 = h0;
  carver.base = static_cast<char*>(workspace);
  f.ws = carve_chunk_workspace(carver, f.d);
  return f;
}

}  // namespace

size_t fwd_workspace_bytes(const gdn_problem& p) {
  WorkspaceCarver c{nullptr};
  carve_chunk_workspace(c, make_dims(p));
  return c.used;
}

size_t bwd_workspace_bytes(const gdn_problem& p) {
  WorkspaceCarver c{nullptr};
  const Dims d = make_dims(p);
  carve_chunk_workspace(c, d);
  carve_bwd_workspace(c, d);
  return c.used;
}

gdn_status run_forward(const gdn_problem& p, const gdn_fwd_args& a, int block_v,
                       gdn_stream_t stream) {
  if (a.workspace_bytes < fwd_workspace_bytes(p) || (!a.workspace && fwd_workspace_bytes(p) > 0))
    return GDN_ERROR_WORKSPACE;
  const auto s = reinterpret_cast<cudaStream_t>(stream);
  WorkspaceCarver carver{nullptr};
  FwdParams f = make_fwd_params(p, a.q, a.k, a.v, a.g, a.beta, a.h0, a.workspace, carver);
  f.o = a.o;
  f.ht = a.ht;
  cudaError_t err = run_recurrence(p, f, block_v, s);
  if (err == cudaSuccess && f.d.max_chunks > 0) err = launch_output(f, s);
  return to_status(err);
}

gdn_status run_backward(const gdn_problem& p, const gdn_bwd_args& a, int block_v,
                        gdn_stream_t stream) {
  if (a.workspace_bytes < bwd_workspace_bytes(p) || (!a.workspace && bwd_workspace_bytes(p) > 0))
    return GDN_ERROR_WORKSPACE;
  const auto s = reinterpret_cast<cudaStream_t>(stream);
  WorkspaceCarver carver{nullptr};
  BwdParams b{};
  b.f = make_fwd_params(p, a.q, a.k, a.v, a.g, a.beta, a.h0, a.workspace, carver);
  const BwdWorkspace w = carve_bwd_workspace(carver, b.f.d);
  b.d_o = a.d_o;
  b.dht = a.dht;
  b.dq = a.dq;
  b.dk = a.dk;
  b.dv = a.dv;
  b.dg = a.dg;
  b.dbeta = a.dbeta;
  b.dh0 = a.dh0;
  b.dstate_end = w.dstate_end;
  b.dvnew = w.dvnew;
  b.dw = w.dw;
  b.dq_h = w.dq_h;
  b.dk_h = w.dk_h;
  cudaError_t err = run_recurrence(p, b.f, block_v, s);
  if (err == cudaSuccess && b.f.d.num_seqs > 0) err = launch_dstate_bwd(b, block_v, s);
  if (err == cudaSuccess && b.f.d.max_chunks > 0) err = launch_local_bwd(b, s);
  if (err == cudaSuccess) err = launch_group_sum(b, s);
  return to_status(err);
}

}  // namespace gdn::staged
