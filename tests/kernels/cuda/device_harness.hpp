// Runs one kernel variant on a RandomCase: uploads the inputs, poisons every output (all-ones
// bytes, a NaN in every dtype), launches through Variant::run_fwd / run_bwd with a workspace of
// the variant's size, and copies the outputs back. Host API only (links CUDA::cudart).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "gdn/gdn.h"
#include "gdn/testing/compare.hpp"
#include "gdn/testing/random_case.hpp"
#include "gdn/variant.hpp"

namespace gdn::testing::gpu {

// True when a compute capability 9.x device is present (the kernels are sm_90a only).
bool hopper_available();

// Throws std::runtime_error with the CUDA message and the call site.
void check_cuda(cudaError_t err, const char* what);

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes);
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) { o.ptr_ = nullptr; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  ~DeviceBuffer();
  void* get() const { return ptr_; }
  size_t bytes() const { return bytes_; }
  template <class T>
  static DeviceBuffer from(const std::vector<T>& host) {
    DeviceBuffer b(host.size() * sizeof(T));
    if (!host.empty())
      check_cuda(cudaMemcpy(b.ptr_, host.data(), b.bytes_, cudaMemcpyHostToDevice), "upload");
    return b;
  }
  template <class T>
  std::vector<T> download() const {
    std::vector<T> host(bytes_ / sizeof(T));
    if (!host.empty())
      check_cuda(cudaMemcpy(host.data(), ptr_, bytes_, cudaMemcpyDeviceToHost), "download");
    return host;
  }
  void poison() const;  // every byte 0xFF

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// The inputs of one case on the device, and the gdn_problem describing them.
struct DeviceCase {
  // cu_seqlens_int64: pass cu_seqlens as int64 (else int32), so both index dtypes are run.
  DeviceCase(const RandomCase& c, bool cu_seqlens_int64);
  gdn_problem problem{};
  HalfType dtype;
  bool want_final_state;
  int64_t tokens, num_seqs, state_elements;
  DeviceBuffer q, k, v, g, beta, h0, d_o, dht, cu_seqlens;
  std::vector<int64_t> cu_host64;
  std::vector<int32_t> cu_host32;
};

struct RunOptions {
  bool want_dh0 = true;                       // backward: request dh0
  const gdn_launch_options* pins = nullptr;   // backward: the call's launch-plan pins
  const gdn_saved* saved = nullptr;           // backward: a training forward's saved block
};

// A training forward's saved block (gdn_saved) for a case, poisoned: gdn_saved_size bytes
// for CP segments of segment_chunks chunks (0: none).
struct SavedBlock {
  SavedBlock(const DeviceCase& dc, int segment_chunks);
  DeviceBuffer data;
  gdn_saved desc{};
};

// Status of the launch plus the copied-back outputs (after a device synchronisation).
// elapsed_ms: device time of the call (CUDA events around it; includes the launches'
// first-use attribute setup, so only the second run of a case is a fair figure).
struct FwdRun {
  gdn_status status;
  DeviceFwdResult out;
  float elapsed_ms = 0;
};
struct BwdRun {
  gdn_status status;
  DeviceBwdResult out;
  float elapsed_ms = 0;
};

// Output buffers of one forward call on a case, poisoned; ht is empty without a final state.
struct FwdOutputs {
  explicit FwdOutputs(const DeviceCase& dc);
  DeviceBuffer o, ht;
};
// Output buffers of one backward call on a case, poisoned; dh0 is empty unless asked for.
struct BwdOutputs {
  BwdOutputs(const DeviceCase& dc, bool want_dh0);
  DeviceBuffer dq, dk, dv, dg, dbeta, dh0;
};

// The API arguments of one call: the case's inputs, the given outputs and workspace.
gdn_fwd_args fwd_args(const DeviceCase& dc, const FwdOutputs& out, const DeviceBuffer& ws);
gdn_bwd_args bwd_args(const DeviceCase& dc, const BwdOutputs& out, const DeviceBuffer& ws);

// pins: the call's launch-plan pins (gdn_fwd_args::launch; nullptr: the default rules).
// save: training mode (gdn_fwd_args::save), nullptr for inference.
FwdRun run_forward(const Variant& variant, const DeviceCase& dc,
                   const gdn_launch_options* pins = nullptr, const gdn_saved* save = nullptr);
BwdRun run_backward(const Variant& variant, const DeviceCase& dc, const RunOptions& opt = {});

// The registered variants of one pass.
std::vector<const Variant*> variants_of(Pass pass);

}  // namespace gdn::testing::gpu
