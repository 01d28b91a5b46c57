/* libgdn public C API: Gated DeltaNet chunked prefill, forward and backward.
 *
 * Semantics (docs/spec.md): per sequence and value head h (k-head = h / (Hv/Hk)),
 *   S *= exp(g_t);  u = beta_t (v_t - S^T k_t);  S += k_t u^T;  o_t = scale S^T q_t
 * with S in R^{K x V}, fp32. Tensors are token-major and contiguous (the FLA convention):
 *   q, k  [B, T, Hk, K]   (bf16 or fp16)        v, o  [B, T, Hv, V]  (same dtype as q)
 *   g     [B, T, Hv] fp32 (log decay, <= 0)     beta  [B, T, Hv]     (fp32 or the q dtype)
 *   h0/ht [N, Hv, K, V] fp32, or [N, Hv, V, K] with GDN_STATE_VK
 * With cu_seqlens (B must be 1) the T tokens hold N packed sequences; without it N = B.
 *
 * Every entry point validates its arguments first and returns a status; the detailed
 * message (which argument, what was expected, what was given) is in gdn_last_error().
 * No entry point synchronises the device with the host: calls are safe to capture in a
 * CUDA graph. Validation that needs cu_seqlens' contents uses cu_seqlens_host when the
 * caller provides it (a host copy); it is never copied back from the device.
 */
#ifndef GDN_GDN_H
#define GDN_GDN_H

#include <stddef.h>
#include <stdint.h>

/* GDN_API marks the C API: the only symbols libgdn.so exports (the library is compiled with
 * hidden visibility; a ctest checks its dynamic symbol table against this header). */
#if defined(__GNUC__) || defined(__clang__)
#define GDN_API __attribute__((visibility("default")))
#else
#define GDN_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* cudaStream_t without pulling in the CUDA headers. */
typedef struct CUstream_st* gdn_stream_t;

typedef enum gdn_status {
  GDN_OK = 0,
  GDN_ERROR_INVALID_ARGUMENT = 1, /* a pointer, size or value is not acceptable */
  GDN_ERROR_UNSUPPORTED = 2,      /* valid GDN problem this build has no kernel for */
  GDN_ERROR_NOT_AVAILABLE = 3,    /* no CUDA device, or the library was built without kernels */
  GDN_ERROR_CUDA = 4,             /* a CUDA call failed; the message holds cudaGetErrorString */
  GDN_ERROR_WORKSPACE = 5,        /* the workspace given is smaller than gdn_*_workspace_size */
  GDN_ERROR_INTERNAL = 6
} gdn_status;

typedef enum gdn_dtype { GDN_BF16 = 0, GDN_FP16 = 1, GDN_FP32 = 2 } gdn_dtype;
typedef enum gdn_index_dtype { GDN_INT32 = 0, GDN_INT64 = 1 } gdn_index_dtype;

/* Layout of h0 / ht / dht / dh0: [N, Hv, K, V] (FLA) or [N, Hv, V, K] (FlashInfer). */
typedef enum gdn_state_layout { GDN_STATE_KV = 0, GDN_STATE_VK = 1 } gdn_state_layout;

/* A plain description of one problem. Pointers are device pointers unless named _host. */
typedef struct gdn_problem {
  int64_t B;                       /* batch; must be 1 when cu_seqlens is given */
  int64_t T;                       /* tokens per batch row (total tokens when packed) */
  int64_t num_seqs;                /* N when cu_seqlens is given (cu_seqlens has N+1 entries) */
  const void* cu_seqlens;          /* device, optional: [N+1] int32/int64, 0 .. T, non-decreasing */
  const void* cu_seqlens_host;     /* host copy of cu_seqlens, optional: validation and hints */
  gdn_index_dtype cu_seqlens_dtype;
  int64_t max_seqlen_hint;         /* longest sequence if the caller knows it, else 0 */
  int32_t Hk;                      /* q/k heads */
  int32_t Hv;                      /* v heads; Hv % Hk == 0 (GVA) */
  int32_t K;                       /* key head dim (128) */
  int32_t V;                       /* value head dim (128) */
  gdn_dtype qkv_dtype;             /* dtype of q, k, v, o (and dq, dk, dv, do) */
  gdn_dtype beta_dtype;            /* fp32 or qkv_dtype (dbeta has the same dtype) */
  float scale;                     /* usually K^-0.5 */
  gdn_state_layout state_layout;
} gdn_problem;

/* Fills a problem with defaults: scale = K^-0.5, bf16, fp32 beta, KV layout, no cu_seqlens. */
GDN_API void gdn_problem_init(gdn_problem* p, int64_t B, int64_t T, int32_t Hk, int32_t Hv,
                              int32_t K, int32_t V);

/* Launch-plan pins. Every shape-dependent launch decision of a call is a field of a launch plan
 * (gdn/launch_plan.hpp), computed per call from the variant's config, the problem and the
 * device: by the default rules, with the fields the dispatch table's entry pins, and then the
 * fields pinned here. GDN_PLAN_RULE leaves a field to the table entry, else to the rule. A pin
 * applies wherever the variant runs the mechanism it names (a variant without it ignores the
 * pin: the 128-column loop has no prepare overlap, a call without CP no fix-up). A value
 * outside the set a field takes is rejected (GDN_ERROR_INVALID_ARGUMENT, naming the field).
 * Zero-initialised fields are NOT the rule: start from gdn_launch_options_init. */
#define GDN_PLAN_RULE (-1)
typedef struct gdn_launch_options {
  int32_t prepare_overlap;  /* forward: 0 the first chunk loop after the prepare kernel,
                               1 beside it on shared SMs, 2 beside it on SMs of its own */
  int32_t cp_first_segment; /* forward, CP: 1 = pass 1 runs each sequence's first segment as
                               its output (the main pass skips it), 0 = not */
  int32_t prepare_split;    /* forward, CP, one sequence: 1 = the prepare kernel's last-segment
                               chunks run as a second grid beside CP pass 1, 0 = not */
  int32_t prepare_heads;    /* forward: value heads per prepare CTA, 1 .. 8 dividing Hv / Hk */
  int32_t fixup_cols;       /* CP (forward, and the backward's two fix-ups): state columns
                               per fix-up CTA, 8, 16 or 32 */
  int32_t local_heads;      /* backward: value heads per local-gradient CTA, 1 .. 8 dividing
                               Hv / Hk; Hv / Hk sums dq, dk over the group on chip */
  int32_t recompute_cp_chunks; /* backward, variant without CP: segment length in chunks of
                               the forward recompute's exact CP, 0 (none), 16, 32, 64 or 128
                               (a variant with CP recomputes in its own segments) */
  int32_t pass1_beside_recompute; /* backward, CP: 1 = the reverse chain's CP pass 1 launches
                               before the forward recompute's state loop, which runs beside it
                               on the SMs it leaves (neither reads what the other writes);
                               0 = after it */
  int32_t group_sum_beside; /* backward, fused kernel, Hv > Hk: 1 = dq and dk summed over each
                               q/k head's value heads by a grid beside the fused kernel, on the
                               SMs it leaves, chunk by chunk as the kernel publishes them;
                               0 = by a launch after it */
} gdn_launch_options;

/* Every field GDN_PLAN_RULE. */
GDN_API void gdn_launch_options_init(gdn_launch_options* o);

/* Training mode: what a forward keeps for the backward that follows it, so that the backward
 * does not compute it again. The forward writes, in `data`:
 *   - its prepare kernel's outputs: g's chunk-local cumulative sums (fp32), the gate-free
 *     inverse T of every chunk (16-bit, in the two layouts the backward reads) and the
 *     per-chunk exp gates and beta;
 *   - with segment_chunks > 0, the CP segment table, each segment's transition (pass 1 of the
 *     forward's exact CP, fp32) and each segment's start state (fp32), the forward's CP then
 *     running in the segments of that length.
 * The backward skips its prepare kernel and, when its forward recompute runs in segments of the
 * same length (the dispatched backward's, which gdn_saved_init reads), the recompute's CP pass 1
 * and fix-up. gdn_saved_init gives the size: 272 bytes per token and value head, plus
 * 3072 / segment_chunks with segments (96 at 32-chunk segments); docs/training.md. */
typedef struct gdn_saved {
  void* data;              /* device memory of at least `bytes` bytes, 16-byte aligned */
  size_t bytes;
  int32_t segment_chunks;  /* CP segment length of the saved segment starts; 0: none */
} gdn_saved;

typedef struct gdn_fwd_args {
  const void* q;
  const void* k;
  const void* v;
  const float* g;
  const void* beta;
  const float* h0;      /* optional: NULL means a zero initial state */
  void* o;              /* required */
  float* ht;            /* optional: NULL means no final state is written */
  void* workspace;      /* optional: NULL lets the library allocate stream-ordered memory */
  size_t workspace_bytes;
  const gdn_launch_options* launch; /* optional: plan pins (NULL: table entry, else rules) */
  const gdn_saved* save;  /* optional: training mode, written for gdn_bwd (NULL: inference) */
} gdn_fwd_args;

typedef struct gdn_bwd_args {
  const void* q;
  const void* k;
  const void* v;
  const float* g;
  const void* beta;
  const float* h0;      /* optional, as in the forward */
  const void* d_o;      /* required: gradient of o */
  const float* dht;     /* optional: gradient of the final state */
  void* dq;             /* required [B,T,Hk,K], summed over the Hv/Hk heads sharing a k head */
  void* dk;             /* required, as dq */
  void* dv;             /* required [B,T,Hv,V] */
  float* dg;            /* required [B,T,Hv] */
  void* dbeta;          /* required [B,T,Hv], beta_dtype */
  float* dh0;           /* optional: written when not NULL (zero start state if h0 is NULL) */
  void* workspace;
  size_t workspace_bytes;
  const gdn_launch_options* launch; /* optional, as in the forward */
  const gdn_saved* saved; /* optional: what gdn_fwd wrote with `save` for this problem and
                             these inputs (NULL: the backward computes it again) */
} gdn_bwd_args;

/* Checks a problem alone (sizes, dtypes, host copy of cu_seqlens). gdn_validate_fwd/bwd run
 * every check gdn_fwd/bwd run before they use the device: the problem, each pointer (NULL,
 * alignment: 16 bytes for q, k, v, o, d_o, dq, dk, dv, the states and the workspace, the
 * element size for g, beta, dg, dbeta and cu_seqlens), no output sharing memory with any
 * other tensor of the call (o == q, ht == h0, dq == dk are refused; inputs may share), and,
 * with a usable device that cannot read pageable memory, no pointer to ordinary host memory. */
GDN_API gdn_status gdn_validate_problem(const gdn_problem* p);
GDN_API gdn_status gdn_validate_fwd(const gdn_problem* p, const gdn_fwd_args* a);
GDN_API gdn_status gdn_validate_bwd(const gdn_problem* p, const gdn_bwd_args* a);

/* Fills *s for problem p: data = NULL, bytes and segment_chunks (that of the recompute of the
 * backward gdn_bwd would dispatch to, with its table pins; 0 without CP). Needs a usable
 * device (the dispatch reads its SM count), as gdn_fwd_variant_name does;
 * GDN_ERROR_UNSUPPORTED when the forward gdn_fwd would dispatch to cannot save (the staged
 * family). The caller allocates `bytes` of device memory and keeps it from the forward to the
 * backward; a problem without tokens needs none (bytes 0). */
GDN_API gdn_status gdn_saved_init(const gdn_problem* p, gdn_saved* s);
/* The bytes of a saved block with segments of segment_chunks chunks (0: none; else a power of
 * two in [4, 256]), without a device; 0 with the message set when p or the length is invalid. */
GDN_API size_t gdn_saved_size(const gdn_problem* p, int32_t segment_chunks);

/* Bytes of scratch a call needs; 0 with the message set when the problem is invalid. */
GDN_API size_t gdn_fwd_workspace_size(const gdn_problem* p);
GDN_API size_t gdn_bwd_workspace_size(const gdn_problem* p);

GDN_API gdn_status gdn_fwd(const gdn_problem* p, const gdn_fwd_args* a, gdn_stream_t stream);
GDN_API gdn_status gdn_bwd(const gdn_problem* p, const gdn_bwd_args* a, gdn_stream_t stream);

/* Name of the kernel variant a forward call with this problem would use (the dispatch
 * decision, made on the host without touching the device). NULL if invalid. */
GDN_API const char* gdn_fwd_variant_name(const gdn_problem* p);

/* Why gdn_fwd would use that variant, in one line: "table: exact bucket {...}, tuned on
 * <device> (<uuid>), sweep <id> started <time>, git <sha>" (or "nearest bucket ... at
 * distance d") when the dispatch table compiled in with -DGDN_DISPATCH_TABLE decided, else
 * "default rule (<why the table did not decide>)": no table in this build, no entry near the
 * shape, or the entry's variant is not compiled / cannot implement the problem. Same
 * requirements as gdn_fwd_variant_name; NULL if invalid. The string stays valid until the
 * next call of this function on the same thread. */
GDN_API const char* gdn_fwd_dispatch_source(const gdn_problem* p);

/* The same two for the backward pass (gdn_bwd). */
GDN_API const char* gdn_bwd_variant_name(const gdn_problem* p);
GDN_API const char* gdn_bwd_dispatch_source(const gdn_problem* p);

/* Replaces the dispatch table in force with the one in a dispatch.json written by `gdnlab
 * export` (format gdnlab-dispatch-table, version 3; version 2 files have no plan pins), so
 * that a retune needs no rebuild. The file is read and checked whole first: a file that cannot
 * be read or parsed, of another format or version, or with a bad entry is rejected
 * (GDN_ERROR_INVALID_ARGUMENT, the message naming the file and the entry) and the table in
 * force stays. An entry naming a variant this build lacks is kept: its bucket falls back to
 * the default rule, as with a compiled table. NULL restores the table built in. Safe to call
 * while other threads dispatch: a call sees either table whole. */
GDN_API gdn_status gdn_load_dispatch_table(const char* path);

GDN_API const char* gdn_status_string(gdn_status s);
/* The message of the last failing call on this thread ("" when none). */
GDN_API const char* gdn_last_error(void);
/* 1 when a CUDA device with compute capability 9.0 is usable, else 0. */
GDN_API int gdn_device_available(void);
GDN_API const char* gdn_version(void);

#ifdef __cplusplus
}
#endif

#endif /* GDN_GDN_H */
