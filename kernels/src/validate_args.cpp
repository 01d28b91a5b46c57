// Pointer rules of gdn_fwd_args / gdn_bwd_args. Token tensors are required whenever the
// problem has tokens (an empty problem may pass NULL, as frameworks do for empty tensors);
// states are optional by design (NULL h0 = zero start, NULL ht = no final state).
// Then where the pointers point (memory rules): every tensor aligned as the kernels read it, no
// tensor a call writes overlapping any other tensor of the call, and - when a device is usable -
// no pointer to host memory the device cannot read. A misaligned or host address reaching a TMA
// kernel leaves a sticky CUDA error that poisons the caller's whole process; these are refused
// before any launch, by gdn_validate_* and the entry points alike.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "device.hpp"
#include "gdn/launch_plan.hpp"
#include "training/saved_size.hpp"
#include "status.hpp"
#include "validation.hpp"

namespace gdn::detail {

namespace {

const char* dtype_word(gdn_dtype d) {
  switch (d) {
    case GDN_BF16: return "bf16";
    case GDN_FP16: return "fp16";
    case GDN_FP32: return "fp32";
  }
  return "?";
}

struct Required {
  const char* argument;  // e.g. "a->q"
  const void* pointer;
  std::string tensor;    // shape and dtype the pointer must hold
};

gdn_status check_required(std::string_view where, const ProblemFacts& f,
                          std::initializer_list<Required> required) {
  if (f.tokens == 0) return GDN_OK;
  for (const Required& r : required)
    if (r.pointer == nullptr)
      return reject(GDN_ERROR_INVALID_ARGUMENT, where, r.argument,
                    cat("a device pointer to ", r.tensor, " (", f.tokens, " tokens)"), "NULL");
  return GDN_OK;
}

gdn_status check_workspace_pair(std::string_view where, const char* argument,
                                const void* workspace, size_t bytes) {
  if (workspace == nullptr && bytes != 0)
    return reject(GDN_ERROR_INVALID_ARGUMENT, where, argument,
                  "0 when the workspace pointer is NULL (NULL lets the library allocate)",
                  cat(bytes, " bytes with a NULL workspace"));
  return GDN_OK;
}

struct TensorTexts {
  std::string qk, v, gate, beta, state;
};

TensorTexts tensor_texts(const gdn_problem& p) {
  const char* qkv = dtype_word(p.qkv_dtype);
  return {cat("[B, T, Hk, K] ", qkv), cat("[B, T, Hv, V] ", qkv), "[B, T, Hv] fp32",
          cat("[B, T, Hv] ", dtype_word(p.beta_dtype)),
          p.state_layout == GDN_STATE_VK ? "[N, Hv, V, K] fp32" : "[N, Hv, K, V] fp32"};
}

// One memory range a call touches.
struct Tensor {
  const char* argument;
  const void* pointer;  // NULL: absent (optional, or no tokens)
  std::string text;     // shape and dtype
  uint64_t bytes;
  uint64_t align;       // the alignment its kernels read it with
  bool written;         // an output of the call
};

// Byte sizes of a problem's tensors (validate_index_ranges has checked they fit 64 bits).
struct TensorBytes {
  uint64_t qk, v, gate, beta, state, cu_seqlens;
};

uint64_t dtype_bytes(gdn_dtype d) { return d == GDN_FP32 ? 4 : 2; }

TensorBytes tensor_bytes(const gdn_problem& p, const ProblemFacts& f) {
  const auto tokens = static_cast<uint64_t>(f.tokens);
  const auto hk = static_cast<uint64_t>(p.Hk), hv = static_cast<uint64_t>(p.Hv);
  const auto k = static_cast<uint64_t>(p.K), v = static_cast<uint64_t>(p.V);
  const auto n = static_cast<uint64_t>(f.num_seqs);
  const uint64_t index_bytes = p.cu_seqlens_dtype == GDN_INT64 ? 8 : 4;
  return {tokens * hk * k * dtype_bytes(p.qkv_dtype), tokens * hv * v * dtype_bytes(p.qkv_dtype),
          tokens * hv * 4, tokens * hv * dtype_bytes(p.beta_dtype), n * hv * k * v * 4,
          p.cu_seqlens ? (n + 1) * index_bytes : 0};
}

// 16 bytes: tensors read and written in 16-byte vectors (TMA boxes, cp.async rows, vector
// stores), the states and the workspace (TMA tile maps over its buffers). Per-token gates and
// betas are read one element at a time: their element size.
constexpr uint64_t kVectorAlign = 16;

gdn_status check_alignment(std::string_view where, const std::vector<Tensor>& tensors) {
  for (const Tensor& t : tensors) {
    const auto address = reinterpret_cast<uintptr_t>(t.pointer);
    if (t.pointer != nullptr && t.bytes != 0 && address % t.align != 0)
      return reject(GDN_ERROR_INVALID_ARGUMENT, where, t.argument,
                    cat("a ", t.align, "-byte aligned device pointer to ", t.text),
                    cat("an address ", address % t.align, " bytes past a ", t.align, "-byte boundary"));
  }
  return GDN_OK;
}

// An output that shares memory with another tensor of the call gives undefined results (the
// kernels read inputs after outputs of other blocks were written), so none may: not o == q,
// not ht == h0, not dq == dk, not a workspace inside a tensor. Inputs may share memory.
gdn_status check_no_overlap(std::string_view where, const std::vector<Tensor>& tensors) {
  for (const Tensor& out : tensors) {
    if (!out.written || out.pointer == nullptr || out.bytes == 0) continue;
    const auto out_begin = reinterpret_cast<uintptr_t>(out.pointer);
    for (const Tensor& other : tensors) {
      if (&other == &out || other.pointer == nullptr || other.bytes == 0) continue;
      const auto begin = reinterpret_cast<uintptr_t>(other.pointer);
      if (out_begin >= begin + other.bytes || begin >= out_begin + out.bytes) continue;
      return reject(GDN_ERROR_INVALID_ARGUMENT, where, out.argument,
                    cat("memory of its own (", out.bytes, " bytes for ", out.text,
                        "): an output may not share memory with another tensor of the call"),
                    begin == out_begin ? cat("the same address as ", other.argument)
                                       : cat("a range overlapping ", other.argument, " (", other.bytes,
                                             " bytes at ", other.pointer, ")"));
    }
  }
  return GDN_OK;
}

// With a usable device: a pointer to ordinary (pageable, unregistered) host memory cannot be
// read by a kernel unless the device reads pageable memory (HMM, ATS). One driver query per
// pointer (cudaPointerGetAttributes, no synchronisation, allowed during graph capture).
gdn_status check_device_accessible(std::string_view where, const std::vector<Tensor>& tensors) {
  const std::optional<bool> pageable = usable_device_reads_pageable_memory();
  if (!pageable || *pageable) return GDN_OK;
  for (const Tensor& t : tensors) {
    if (t.pointer == nullptr || t.bytes == 0) continue;
    cudaPointerAttributes attributes{};
    if (cudaPointerGetAttributes(&attributes, t.pointer) != cudaSuccess) {
      (void)cudaGetLastError();  // the query's own failure must not leak into the caller's
      continue;
    }
    if (attributes.type == cudaMemoryTypeUnregistered)
      return reject(GDN_ERROR_INVALID_ARGUMENT, where, t.argument,
                    cat("a device pointer to ", t.text, " (device, managed or registered host memory)"),
                    cat("a pointer to ordinary host memory (", t.pointer,
                        "), which this device cannot read"));
  }
  return GDN_OK;
}

// The workspace pair rule, then the memory rules over the call's tensors and its workspace.
gdn_status check_memory(std::string_view where, std::vector<Tensor> tensors, void* workspace,
                        size_t workspace_bytes) {
  if (gdn_status s = check_workspace_pair(where, "a->workspace_bytes", workspace, workspace_bytes); s != GDN_OK)
    return s;
  tensors.push_back({"a->workspace", workspace, "the workspace", workspace_bytes, kVectorAlign, true});
  if (gdn_status s = check_alignment(where, tensors); s != GDN_OK) return s;
  if (gdn_status s = check_no_overlap(where, tensors); s != GDN_OK) return s;
  return check_device_accessible(where, tensors);
}

// The tensors both passes read: the problem's cu_seqlens and the inputs of the forward.
std::vector<Tensor> input_tensors(const gdn_problem& p, const TensorTexts& t, const TensorBytes& b,
                                  const void* q, const void* k, const void* v, const float* g,
                                  const void* beta, const float* h0) {
  const uint64_t index_bytes = p.cu_seqlens_dtype == GDN_INT64 ? 8 : 4;
  return {{"p->cu_seqlens", p.cu_seqlens, "[N+1] offsets", b.cu_seqlens, index_bytes, false},
          {"a->q", q, t.qk, b.qk, kVectorAlign, false},
          {"a->k", k, t.qk, b.qk, kVectorAlign, false},
          {"a->v", v, t.v, b.v, kVectorAlign, false},
          {"a->g", g, t.gate, b.gate, 4, false},
          {"a->beta", beta, t.beta, b.beta, dtype_bytes(p.beta_dtype), false},
          {"a->h0", h0, t.state, b.state, kVectorAlign, false}};
}

// The plan pins (a->launch): optional; each field GDN_PLAN_RULE or a value it takes
// (gdn/launch_plan.hpp: check_launch_options).
gdn_status check_launch(std::string_view where, const gdn_problem& p, const gdn_launch_options* o) {
  if (o == nullptr) return GDN_OK;
  const std::string why = check_launch_options(*o, p.Hk > 0 ? p.Hv / p.Hk : 0);
  if (why.empty()) return GDN_OK;
  return fail(GDN_ERROR_INVALID_ARGUMENT, cat(where, ": a->launch->", why));
}

// The saved block of a training call (gdn_saved: a->save of the forward, a->saved of the
// backward): a segment length a CP chunk loop runs (check_config's rule), bytes at least
// gdn_saved_init's for that length, data present whenever the problem has tokens. Appends the
// block to the call's tensors (written by the forward, read by the backward).
gdn_status check_saved(std::string_view where, const char* argument, const gdn_problem& p,
                       const ProblemFacts& f, const gdn_saved* saved, bool written,
                       std::vector<Tensor>* tensors) {
  if (saved == nullptr) return GDN_OK;
  const std::string name(argument);
  const int seg = saved->segment_chunks;
  KernelConfig probe;
  probe.cp_segment_chunks = seg;
  if (!check_config(probe).ok)
    return reject(GDN_ERROR_INVALID_ARGUMENT, where, name + "->segment_chunks",
                  "0 or a power of two in [4, 256] (the CP segment length of gdn_saved_init)",
                  cat(seg));
  const size_t needed = fused::saved_bytes(p, seg);
  if (saved->bytes < needed)
    return reject(GDN_ERROR_INVALID_ARGUMENT, where, name + "->bytes",
                  cat("at least ", needed, " bytes for this problem with ", seg,
                      "-chunk segments (gdn_saved_init)"),
                  cat(saved->bytes, " bytes"));
  if (f.tokens > 0 && saved->data == nullptr)
    return reject(GDN_ERROR_INVALID_ARGUMENT, where, name + "->data",
                  cat("a device pointer to ", saved->bytes, " bytes (", f.tokens, " tokens)"),
                  "NULL");
  tensors->push_back({written ? "a->save->data" : "a->saved->data", saved->data,
                      "the saved block", saved->bytes, kVectorAlign, written});
  return GDN_OK;
}

}  // namespace

gdn_status validate_fwd_args(const gdn_problem& p, const gdn_fwd_args* a, const ProblemFacts& f,
                             std::string_view where) {
  if (a == nullptr)
    return reject(GDN_ERROR_INVALID_ARGUMENT, where, "a", "a pointer to a gdn_fwd_args", "NULL");
  const TensorTexts t = tensor_texts(p);
  if (gdn_status s = check_required(where, f,
                                    {{"a->q", a->q, t.qk},
                                     {"a->k", a->k, t.qk},
                                     {"a->v", a->v, t.v},
                                     {"a->g", a->g, t.gate},
                                     {"a->beta", a->beta, t.beta},
                                     {"a->o", a->o, t.v}});
      s != GDN_OK)
    return s;
  if (gdn_status s = check_launch(where, p, a->launch); s != GDN_OK) return s;
  const TensorBytes b = tensor_bytes(p, f);
  std::vector<Tensor> tensors = input_tensors(p, t, b, a->q, a->k, a->v, a->g, a->beta, a->h0);
  tensors.push_back({"a->o", a->o, t.v, b.v, kVectorAlign, true});
  tensors.push_back({"a->ht", a->ht, t.state, b.state, kVectorAlign, true});
  if (gdn_status s = check_saved(where, "a->save", p, f, a->save, true, &tensors); s != GDN_OK)
    return s;
  return check_memory(where, std::move(tensors), a->workspace, a->workspace_bytes);
}

gdn_status validate_bwd_args(const gdn_problem& p, const gdn_bwd_args* a, const ProblemFacts& f,
                             std::string_view where) {
  if (a == nullptr)
    return reject(GDN_ERROR_INVALID_ARGUMENT, where, "a", "a pointer to a gdn_bwd_args", "NULL");
  const TensorTexts t = tensor_texts(p);
  if (gdn_status s = check_required(where, f,
                                    {{"a->q", a->q, t.qk},
                                     {"a->k", a->k, t.qk},
                                     {"a->v", a->v, t.v},
                                     {"a->g", a->g, t.gate},
                                     {"a->beta", a->beta, t.beta},
                                     {"a->d_o", a->d_o, t.v},
                                     {"a->dq", a->dq, t.qk},
                                     {"a->dk", a->dk, t.qk},
                                     {"a->dv", a->dv, t.v},
                                     {"a->dg", a->dg, t.gate},
                                     {"a->dbeta", a->dbeta, t.beta}});
      s != GDN_OK)
    return s;
  if (gdn_status s = check_launch(where, p, a->launch); s != GDN_OK) return s;
  const TensorBytes b = tensor_bytes(p, f);
  std::vector<Tensor> tensors = input_tensors(p, t, b, a->q, a->k, a->v, a->g, a->beta, a->h0);
  tensors.push_back({"a->d_o", a->d_o, t.v, b.v, kVectorAlign, false});
  tensors.push_back({"a->dht", a->dht, t.state, b.state, kVectorAlign, false});
  tensors.push_back({"a->dq", a->dq, t.qk, b.qk, kVectorAlign, true});
  tensors.push_back({"a->dk", a->dk, t.qk, b.qk, kVectorAlign, true});
  tensors.push_back({"a->dv", a->dv, t.v, b.v, kVectorAlign, true});
  tensors.push_back({"a->dg", a->dg, t.gate, b.gate, 4, true});
  tensors.push_back({"a->dbeta", a->dbeta, t.beta, b.beta, dtype_bytes(p.beta_dtype), true});
  tensors.push_back({"a->dh0", a->dh0, t.state, b.state, kVectorAlign, true});
  if (gdn_status s = check_saved(where, "a->saved", p, f, a->saved, false, &tensors); s != GDN_OK)
    return s;
  return check_memory(where, std::move(tensors), a->workspace, a->workspace_bytes);
}

}  // namespace gdn::detail
