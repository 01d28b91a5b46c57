"""chunk_gated_delta_rule for PyTorch tensors, forward and autograd backward, through libgdn.

No torch extension is built: tensors are handed to the C API as raw data_ptr()s with the current
CUDA stream, and scratch memory comes from torch's allocator (so calls capture into CUDA graphs).
The calls run inside the torch.library custom ops of _torch_library.py, which give torch.compile
and autograd their view of them. torch is imported on first call, so `import gdn` works where
torch is absent.
"""

from . import _capi
from ._checks import check_bool, check_fwd_inputs
from ._errors import GdnArgumentError, GdnNotAvailableError, GdnUnsupportedError


def _torch():
    """torch, with gdn's custom ops registered (a no-op after `import gdn` found torch)."""
    try:
        import torch
    except ImportError as e:
        raise GdnNotAvailableError("gdn.chunk_gated_delta_rule needs PyTorch (import torch "
                                   "failed); the ctypes layer gdn.library() works without it") from e
    from . import _torch_library  # noqa: F401  (defines torch.ops.gdn.*)
    return torch


def _ptr(t):
    return None if t is None else (t.data_ptr() or None)


def _workspace(torch, nbytes, device):
    if nbytes == 0:
        return None
    return torch.empty(nbytes, dtype=torch.uint8, device=device)


def _stream(torch):
    return _capi.ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)


def saved_layout(spec):
    """(bytes, segment_chunks) of a training forward's saved block for this problem
    (gdn_saved_init: the segment length is the dispatched backward's), or None where the
    dispatched forward keeps nothing. A host-only decision on the concrete problem, so the
    forward that writes the block and the backward that reads it agree on its layout."""
    try:
        return _capi.library().saved_init(spec.to_problem())
    except GdnUnsupportedError:
        return None


def _saved_arg(saved, layout):
    """The gdn_saved of a saved block tensor (None: none). The block must be exactly the
    layout's size: the segment lengths are powers of two, so two lengths give blocks of one
    size only where neither splits a sequence (then their contents agree). A block written
    under another dispatch (a table loaded between the forward and the backward) is left
    unread rather than read with the wrong segments."""
    if saved is None or layout is None or layout[0] == 0 or saved.numel() != layout[0]:
        return None
    return _capi.GdnSaved(data=_ptr(saved), bytes=saved.numel(), segment_chunks=layout[1])


def forward_raw(spec, q, k, v, g, beta, initial_state, output_final_state, save=False):
    """One gdn_fwd call on the current stream; returns (o, final_state or None, saved).

    save=True is training mode: saved is the block the backward reads (backward_raw's
    `saved`, a uint8 tensor), or None where the dispatched forward keeps nothing."""
    torch = _torch()
    lib = _capi.library()
    problem = spec.to_problem()
    with torch.cuda.device(q.device):
        o = torch.empty_like(v)
        ht = (torch.empty(spec.state_shape(), dtype=torch.float32, device=q.device)
              if output_final_state else None)
        layout = saved_layout(spec) if save else None
        saved = (torch.empty(layout[0], dtype=torch.uint8, device=q.device)
                 if layout is not None and layout[0] > 0 else None)
        save_arg = _saved_arg(saved, layout)
        ws = _workspace(torch, lib.fwd_workspace_size(problem), q.device)
        args = _capi.GdnFwdArgs(q=_ptr(q), k=_ptr(k), v=_ptr(v), g=_ptr(g), beta=_ptr(beta),
                                h0=_ptr(initial_state), o=_ptr(o), ht=_ptr(ht),
                                workspace=_ptr(ws), workspace_bytes=0 if ws is None else ws.numel(),
                                save=None if save_arg is None else _capi.ctypes.pointer(save_arg))
        lib.fwd(problem, args, _stream(torch))
    return o, ht, (saved if save_arg is not None else None)


def backward_raw(spec, q, k, v, g, beta, initial_state, d_o, dht, want_dh0, saved=None):
    """One gdn_bwd call; returns (dq, dk, dv, dg, dbeta, dh0 or None). saved: what
    forward_raw(save=True) returned for the same problem and inputs (None: recomputed)."""
    torch = _torch()
    lib = _capi.library()
    problem = spec.to_problem()
    saved_arg = _saved_arg(saved, saved_layout(spec)) if saved is not None else None
    with torch.cuda.device(q.device):
        dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
        dg, dbeta = torch.empty_like(g), torch.empty_like(beta)
        dh0 = (torch.empty(spec.state_shape(), dtype=torch.float32, device=q.device)
               if want_dh0 else None)
        ws = _workspace(torch, lib.bwd_workspace_size(problem), q.device)
        args = _capi.GdnBwdArgs(q=_ptr(q), k=_ptr(k), v=_ptr(v), g=_ptr(g), beta=_ptr(beta),
                                h0=_ptr(initial_state), d_o=_ptr(d_o), dht=_ptr(dht),
                                dq=_ptr(dq), dk=_ptr(dk), dv=_ptr(dv), dg=_ptr(dg),
                                dbeta=_ptr(dbeta), dh0=_ptr(dh0), workspace=_ptr(ws),
                                workspace_bytes=0 if ws is None else ws.numel(),
                                saved=None if saved_arg is None else _capi.ctypes.pointer(saved_arg))
        lib.bwd(problem, args, _stream(torch))
    return dq, dk, dv, dg, dbeta, dh0


# FLA's l2norm epsilon (fla.modules.l2norm.l2norm_fwd), which its use_qk_l2norm_in_kernel uses.
L2NORM_EPS = 1e-6


def l2norm(x, eps=L2NORM_EPS):
    """x * (1 / sqrt(sum(x^2) + eps)) over the last dimension, formed in fp32 and returned in
    x's dtype: FLA's l2norm (fla.modules.norm.l2norm), which FLA's and FlashQLA's
    use_qk_l2norm_in_kernel apply to q and k (both in a kernel of its own before the chunked
    ones). Differentiable (torch ops)."""
    torch = _torch()
    xf = x.float()
    return (xf * (1 / torch.sqrt((xf * xf).sum(-1, keepdim=True) + eps))).to(x.dtype)


def _l2norm_qk(q, k, use_qk_l2norm_in_kernel):
    """q and k l2-normalised when asked (tensors only: anything else is left for the input
    checks to name)."""
    check_bool("use_qk_l2norm_in_kernel", use_qk_l2norm_in_kernel)
    if not use_qk_l2norm_in_kernel:
        return q, k
    torch = _torch()
    return tuple(l2norm(t) if isinstance(t, torch.Tensor) and t.is_floating_point() else t
                 for t in (q, k))


def chunk_gated_delta_rule(q, k, v, g, beta, scale=None, initial_state=None,
                           output_final_state=False, cu_seqlens=None, cu_seqlens_cpu=None,
                           state_layout="kv", cp_group=None, cp_context=None,
                           use_qk_l2norm_in_kernel=False):
    """Gated DeltaNet chunked prefill with FLA's call signature; returns (o, final_state).

    q, k: [B, T, Hk, K] bf16/fp16; v: [B, T, Hv, V] (q's dtype); g: [B, T, Hv] fp32 log decay;
    beta: [B, T, Hv] fp32 or q's dtype; initial_state: [N, Hv, K, V] fp32 ([N, Hv, V, K] with
    state_layout="vk"); cu_seqlens: [N+1] int32/int64 CUDA tensor of packed offsets (B = 1).
    cu_seqlens_cpu: optional host copy of cu_seqlens (list or CPU tensor); given, it lets the
    library check the offsets and pick a kernel from the longest sequence without any
    device-to-host copy. final_state is None unless output_final_state. Differentiable with
    respect to q, k, v, g, beta and initial_state (and through final_state).

    Under torch.compile the call is one graph node (torch.ops.gdn.chunk_gated_delta_rule_fwd);
    give cu_seqlens_cpu as a list of ints there (a CPU tensor's values cannot be read while
    tracing).

    Context parallelism across ranks (docs/context_parallel.md): with cp_group (a
    torch.distributed group, NCCL) q, k, v, g, beta are this rank's T_local tokens, rank r
    holding [r T_local, (r+1) T_local) of the whole; cu_seqlens / cu_seqlens_cpu and
    initial_state are the global ones; final_state (and initial_state's gradient) has the
    global shape with the rows of the sequences that end (start) on this rank, zeros elsewhere.
    cp_context (a gdn.context_parallel.CPContext) gives uneven splits or another exchange.
    Not traced by torch.compile (it runs collectives).

    use_qk_l2norm_in_kernel (FLA's name and meaning; Qwen3-Next-style layers set it): q and k
    are l2-normalised over their head dim first (gdn.l2norm: fp32, epsilon 1e-6, back in their
    dtype), with torch ops that the gradient flows through, as FLA and FlashQLA do in a kernel
    before their chunked ones.
    """
    q, k = _l2norm_qk(q, k, use_qk_l2norm_in_kernel)
    if cp_group is not None or cp_context is not None:
        from . import context_parallel
        if cp_group is not None and cp_context is not None:
            raise GdnArgumentError("cp_group: expected None when cp_context is given (the "
                                   "context holds its exchange); got both")
        if cp_context is None:
            cp_context = context_parallel.context_for_group(
                cp_group, q.shape[1], cu_seqlens=cu_seqlens, cu_seqlens_cpu=cu_seqlens_cpu)
        return context_parallel.chunk_gated_delta_rule(
            q, k, v, g, beta, scale=scale, initial_state=initial_state,
            output_final_state=output_final_state, state_layout=state_layout,
            cp_context=cp_context)
    torch = _torch()
    check_bool("output_final_state", output_final_state)
    hint = "" if torch.cuda.is_available() else " (this machine has no usable CUDA device)"
    spec = check_fwd_inputs(q, k, v, g, beta, scale=scale, initial_state=initial_state,
                            cu_seqlens=cu_seqlens, cu_seqlens_cpu=cu_seqlens_cpu,
                            state_layout=state_layout, cuda_hint=hint, resolve=False)
    # Training mode when a gradient will flow back: the forward keeps what the backward would
    # otherwise compute again (gdn_saved; docs/training.md).
    training = torch.is_grad_enabled() and any(
        t is not None and t.requires_grad for t in (q, k, v, g, beta, initial_state))
    o, final_state, _ = torch.ops.gdn.chunk_gated_delta_rule_fwd(
        q, k, v, g, beta, initial_state, cu_seqlens, spec.cu_seqlens_offsets, spec.scale,
        output_final_state, state_layout, training)
    return o, (final_state if output_final_state else None)
