"""chunk_gated_delta_rule as torch.library custom ops: gdn::chunk_gated_delta_rule_fwd and
gdn::chunk_gated_delta_rule_bwd, with fake-tensor implementations and autograd registered
through torch.library.

torch.compile therefore traces a call as one graph node (no graph break) whose output shapes
come from the fake implementations, AOTAutograd puts the backward op into the backward graph,
and CUDA graphs capture both: each op allocates its outputs and scratch memory through torch's
allocator and launches on the current stream, without host synchronisation.

Each op checks its real arguments again (pointers and the host copy of cu_seqlens are only
resolved here, never in traced code). Outputs the caller did not ask for (the final state, dh0)
come back as empty tensors: a custom op cannot return None.

Importing this module needs torch; gdn/__init__.py imports it when torch is present.
"""

from typing import List, Optional, Tuple

import torch

from . import _ops
from ._checks import check_fwd_inputs, check_grad, dtype_name

Tensor = torch.Tensor


def _state_shape(q, v, cu_seqlens, state_layout):
    """[N, Hv, K, V] (or [N, Hv, V, K] for 'vk'), from shapes alone (fake tensors too)."""
    N = q.shape[0] if cu_seqlens is None else cu_seqlens.shape[0] - 1
    Hv, K, V = v.shape[2], q.shape[3], v.shape[3]
    return (N, Hv, V, K) if state_layout == "vk" else (N, Hv, K, V)


def _none_marker(like):
    """The empty fp32 tensor that stands for an output the caller did not ask for."""
    return like.new_empty((0,), dtype=torch.float32)


@torch.library.custom_op("gdn::chunk_gated_delta_rule_fwd", mutates_args=())
def chunk_gated_delta_rule_fwd(q: Tensor, k: Tensor, v: Tensor, g: Tensor, beta: Tensor,
                               initial_state: Optional[Tensor], cu_seqlens: Optional[Tensor],
                               cu_seqlens_cpu: Optional[List[int]], scale: Optional[float],
                               output_final_state: bool, state_layout: str
                               ) -> Tuple[Tensor, Tensor]:
    """One gdn_fwd call: (o, final_state), final_state empty unless output_final_state."""
    spec = check_fwd_inputs(q, k, v, g, beta, scale=scale, initial_state=initial_state,
                            cu_seqlens=cu_seqlens, cu_seqlens_cpu=cu_seqlens_cpu,
                            state_layout=state_layout)
    o, ht = _ops.forward_raw(spec, q, k, v, g, beta, initial_state, output_final_state)
    return o, (ht if ht is not None else _none_marker(q))


@chunk_gated_delta_rule_fwd.register_fake
def _fwd_fake(q, k, v, g, beta, initial_state, cu_seqlens, cu_seqlens_cpu, scale,
              output_final_state, state_layout):
    o = torch.empty_like(v)
    if not output_final_state:
        return o, _none_marker(q)
    return o, q.new_empty(_state_shape(q, v, cu_seqlens, state_layout), dtype=torch.float32)


@torch.library.custom_op("gdn::chunk_gated_delta_rule_bwd", mutates_args=())
def chunk_gated_delta_rule_bwd(q: Tensor, k: Tensor, v: Tensor, g: Tensor, beta: Tensor,
                               initial_state: Optional[Tensor], cu_seqlens: Optional[Tensor],
                               cu_seqlens_cpu: Optional[List[int]], d_o: Tensor,
                               dht: Optional[Tensor], scale: Optional[float], state_layout: str,
                               want_dh0: bool
                               ) -> Tuple[Tensor, Tensor, Tensor, Tensor, Tensor, Tensor]:
    """One gdn_bwd call: (dq, dk, dv, dg, dbeta, dh0), dh0 empty unless want_dh0."""
    spec = check_fwd_inputs(q, k, v, g, beta, scale=scale, initial_state=initial_state,
                            cu_seqlens=cu_seqlens, cu_seqlens_cpu=cu_seqlens_cpu,
                            state_layout=state_layout)
    check_grad("grad of o", d_o, v.device, tuple(v.shape), {dtype_name(v.dtype)})
    if dht is not None:
        check_grad("grad of final_state", dht, q.device, spec.state_shape(), {"float32"})
    dq, dk, dv, dg, dbeta, dh0 = _ops.backward_raw(spec, q, k, v, g, beta, initial_state, d_o,
                                                   dht, want_dh0 and initial_state is not None)
    return dq, dk, dv, dg, dbeta, (dh0 if dh0 is not None else _none_marker(q))


@chunk_gated_delta_rule_bwd.register_fake
def _bwd_fake(q, k, v, g, beta, initial_state, cu_seqlens, cu_seqlens_cpu, d_o, dht, scale,
              state_layout, want_dh0):
    grads = [torch.empty_like(t) for t in (q, k, v, g, beta)]
    if want_dh0 and initial_state is not None:
        dh0 = q.new_empty(_state_shape(q, v, cu_seqlens, state_layout), dtype=torch.float32)
    else:
        dh0 = _none_marker(q)
    return (*grads, dh0)


def _setup_context(ctx, inputs, output):
    (q, k, v, g, beta, initial_state, cu_seqlens, cu_seqlens_cpu, scale, output_final_state,
     state_layout) = inputs
    # cu_seqlens is saved for the backward's call (and keeps its memory alive until then).
    ctx.save_for_backward(q, k, v, g, beta, initial_state, cu_seqlens)
    ctx.cu_seqlens_cpu = cu_seqlens_cpu
    ctx.scale = scale
    ctx.output_final_state = output_final_state
    ctx.state_layout = state_layout


def _backward(ctx, d_o, dht):
    q, k, v, g, beta, initial_state, cu_seqlens = ctx.saved_tensors
    # Unused outputs get zero gradients; broadcast ones (o.sum()) get made contiguous here.
    d_o = (torch.zeros_like(v) if d_o is None else d_o.to(v.dtype)).contiguous()
    if ctx.output_final_state and dht is not None:
        dht = dht.to(torch.float32).contiguous()
    else:
        dht = None  # no final state was returned, or it does not reach the loss: NULL dht
    want_dh0 = initial_state is not None and ctx.needs_input_grad[5]
    dq, dk, dv, dg, dbeta, dh0 = chunk_gated_delta_rule_bwd(
        q, k, v, g, beta, initial_state, cu_seqlens, ctx.cu_seqlens_cpu, d_o, dht, ctx.scale,
        ctx.state_layout, want_dh0)
    return (dq, dk, dv, dg, dbeta, dh0 if want_dh0 else None,
            None, None, None, None, None)


chunk_gated_delta_rule_fwd.register_autograd(_backward, setup_context=_setup_context)
