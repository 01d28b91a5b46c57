"""chunk_gated_delta_rule for PyTorch tensors, forward and autograd backward, through libgdn.

No torch extension is built: tensors are handed to the C API as raw data_ptr()s with the current
CUDA stream, and scratch memory comes from torch's allocator (so calls capture into CUDA graphs).
torch is imported on first call, so `import gdn` works where torch is absent.
"""

import functools

from . import _capi
from ._checks import check_fwd_inputs, check_grad, dtype_name
from ._errors import GdnArgumentError, GdnNotAvailableError


def _torch():
    try:
        import torch
    except ImportError as e:
        raise GdnNotAvailableError("gdn.chunk_gated_delta_rule needs PyTorch (import torch "
                                   "failed); the ctypes layer gdn.library() works without it") from e
    return torch


def _ptr(t):
    return None if t is None else (t.data_ptr() or None)


def _workspace(torch, nbytes, device):
    if nbytes == 0:
        return None
    return torch.empty(nbytes, dtype=torch.uint8, device=device)


def _stream(torch):
    return _capi.ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)


def forward_raw(spec, q, k, v, g, beta, initial_state, output_final_state):
    """One gdn_fwd call on the current stream; returns (o, final_state or None)."""
    torch = _torch()
    lib = _capi.library()
    problem = spec.to_problem()
    with torch.cuda.device(q.device):
        o = torch.empty_like(v)
        ht = (torch.empty(spec.state_shape(), dtype=torch.float32, device=q.device)
              if output_final_state else None)
        ws = _workspace(torch, lib.fwd_workspace_size(problem), q.device)
        args = _capi.GdnFwdArgs(q=_ptr(q), k=_ptr(k), v=_ptr(v), g=_ptr(g), beta=_ptr(beta),
                                h0=_ptr(initial_state), o=_ptr(o), ht=_ptr(ht),
                                workspace=_ptr(ws), workspace_bytes=0 if ws is None else ws.numel())
        lib.fwd(problem, args, _stream(torch))
    return o, ht


def backward_raw(spec, q, k, v, g, beta, initial_state, d_o, dht, want_dh0):
    """One gdn_bwd call; returns (dq, dk, dv, dg, dbeta, dh0 or None)."""
    torch = _torch()
    lib = _capi.library()
    problem = spec.to_problem()
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
                                workspace_bytes=0 if ws is None else ws.numel())
        lib.bwd(problem, args, _stream(torch))
    return dq, dk, dv, dg, dbeta, dh0


@functools.lru_cache(maxsize=1)
def _autograd_function():
    """The torch.autograd.Function, defined on first use (its base class needs torch)."""
    torch = _torch()

    class ChunkGatedDeltaRule(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q, k, v, g, beta, initial_state, cu_seqlens, spec, output_final_state):
            o, ht = forward_raw(spec, q, k, v, g, beta, initial_state, output_final_state)
            # cu_seqlens is saved only to keep the memory behind spec's pointer alive.
            ctx.save_for_backward(q, k, v, g, beta, initial_state, cu_seqlens)
            ctx.spec = spec  # the device pointer and the host copy of cu_seqlens
            ctx.set_materialize_grads(False)  # an unused final state gives dht = None -> NULL
            return o, ht

        @staticmethod
        def backward(ctx, d_o, dht):
            q, k, v, g, beta, h0, _ = ctx.saved_tensors
            if d_o is None:
                d_o = torch.zeros_like(v)
            d_o = d_o.to(v.dtype).contiguous()
            check_grad("grad of o", d_o, v.device, tuple(v.shape), {dtype_name(v.dtype)})
            if dht is not None:
                dht = dht.to(torch.float32).contiguous()
                check_grad("grad of final_state", dht, q.device, ctx.spec.state_shape(),
                           {"float32"})
            want_dh0 = h0 is not None and ctx.needs_input_grad[5]
            dq, dk, dv, dg, dbeta, dh0 = backward_raw(ctx.spec, q, k, v, g, beta, h0, d_o, dht,
                                                      want_dh0)
            needs = ctx.needs_input_grad
            grads = [dq, dk, dv, dg, dbeta, dh0]
            grads = [t if needs[i] else None for i, t in enumerate(grads)]
            return (*grads, None, None, None)

    return ChunkGatedDeltaRule


def chunk_gated_delta_rule(q, k, v, g, beta, scale=None, initial_state=None,
                           output_final_state=False, cu_seqlens=None, cu_seqlens_cpu=None,
                           state_layout="kv"):
    """Gated DeltaNet chunked prefill with FLA's call signature; returns (o, final_state).

    q, k: [B, T, Hk, K] bf16/fp16; v: [B, T, Hv, V] (q's dtype); g: [B, T, Hv] fp32 log decay;
    beta: [B, T, Hv] fp32 or q's dtype; initial_state: [N, Hv, K, V] fp32 ([N, Hv, V, K] with
    state_layout="vk"); cu_seqlens: [N+1] int32/int64 CUDA tensor of packed offsets (B = 1).
    cu_seqlens_cpu: optional host copy of cu_seqlens (list or CPU tensor); given, it lets the
    library check the offsets and pick a kernel from the longest sequence without any
    device-to-host copy. final_state is None unless output_final_state. Differentiable with
    respect to q, k, v, g, beta and initial_state (and through final_state).
    """
    torch = _torch()
    if not isinstance(output_final_state, bool):
        raise GdnArgumentError(f"output_final_state: expected a bool; got "
                               f"{type(output_final_state).__name__}")
    hint = "" if torch.cuda.is_available() else " (this machine has no usable CUDA device)"
    spec = check_fwd_inputs(q, k, v, g, beta, scale=scale, initial_state=initial_state,
                            cu_seqlens=cu_seqlens, cu_seqlens_cpu=cu_seqlens_cpu,
                            state_layout=state_layout, cuda_hint=hint)
    return _autograd_function().apply(q, k, v, g, beta, initial_state, cu_seqlens, spec,
                                      output_final_state)
