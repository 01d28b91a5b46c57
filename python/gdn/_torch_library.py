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
from ._checks import check_device_tensor, check_fwd_inputs, check_grad, dtype_name

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
                               output_final_state: bool, state_layout: str,
                               save_for_backward: bool = False
                               ) -> Tuple[Tensor, Tensor, Tensor]:
    """One gdn_fwd call: (o, final_state, saved), final_state empty unless
    output_final_state; saved, with save_for_backward (training mode), the uint8 block the
    backward reads (gdn_saved), else empty."""
    spec = check_fwd_inputs(q, k, v, g, beta, scale=scale, initial_state=initial_state,
                            cu_seqlens=cu_seqlens, cu_seqlens_cpu=cu_seqlens_cpu,
                            state_layout=state_layout)
    o, ht, saved = _ops.forward_raw(spec, q, k, v, g, beta, initial_state, output_final_state,
                                    save=save_for_backward)
    return (o, (ht if ht is not None else _none_marker(q)),
            saved if saved is not None else q.new_empty((0,), dtype=torch.uint8))


@chunk_gated_delta_rule_fwd.register_fake
def _fwd_fake(q, k, v, g, beta, initial_state, cu_seqlens, cu_seqlens_cpu, scale,
              output_final_state, state_layout, save_for_backward=False):
    o = torch.empty_like(v)
    ht = (q.new_empty(_state_shape(q, v, cu_seqlens, state_layout), dtype=torch.float32)
          if output_final_state else _none_marker(q))
    # The saved block's size is the library's decision on the concrete problem (its CP segments
    # follow the dispatched backward's plan, which depends on the lengths and the device): a
    # size known only when the op runs. Meta tensors cannot carry such a size: there (shape
    # propagation only) the block is empty, which the backward reads as none.
    dynamic = save_for_backward and q.device.type != "meta"
    saved_bytes = torch.library.get_ctx().new_dynamic_size() if dynamic else 0
    return o, ht, q.new_empty((saved_bytes,), dtype=torch.uint8)


@torch.library.custom_op("gdn::chunk_gated_delta_rule_bwd", mutates_args=())
def chunk_gated_delta_rule_bwd(q: Tensor, k: Tensor, v: Tensor, g: Tensor, beta: Tensor,
                               initial_state: Optional[Tensor], cu_seqlens: Optional[Tensor],
                               cu_seqlens_cpu: Optional[List[int]], d_o: Tensor,
                               dht: Optional[Tensor], scale: Optional[float], state_layout: str,
                               want_dh0: bool, saved: Optional[Tensor] = None
                               ) -> Tuple[Tensor, Tensor, Tensor, Tensor, Tensor, Tensor]:
    """One gdn_bwd call: (dq, dk, dv, dg, dbeta, dh0), dh0 empty unless want_dh0. saved: the
    training forward's block for these inputs (None or empty: computed again)."""
    spec = check_fwd_inputs(q, k, v, g, beta, scale=scale, initial_state=initial_state,
                            cu_seqlens=cu_seqlens, cu_seqlens_cpu=cu_seqlens_cpu,
                            state_layout=state_layout)
    check_grad("grad of o", d_o, v.device, tuple(v.shape), {dtype_name(v.dtype)})
    if dht is not None:
        check_grad("grad of final_state", dht, q.device, spec.state_shape(), {"float32"})
    if saved is not None and saved.numel() > 0:
        check_device_tensor("saved", saved, {"uint8"}, 1, v.device)
    dq, dk, dv, dg, dbeta, dh0 = _ops.backward_raw(spec, q, k, v, g, beta, initial_state, d_o,
                                                   dht, want_dh0 and initial_state is not None,
                                                   saved=saved if saved is not None and
                                                   saved.numel() > 0 else None)
    return dq, dk, dv, dg, dbeta, (dh0 if dh0 is not None else _none_marker(q))


@chunk_gated_delta_rule_bwd.register_fake
def _bwd_fake(q, k, v, g, beta, initial_state, cu_seqlens, cu_seqlens_cpu, d_o, dht, scale,
              state_layout, want_dh0, saved=None):
    grads = [torch.empty_like(t) for t in (q, k, v, g, beta)]
    if want_dh0 and initial_state is not None:
        dh0 = q.new_empty(_state_shape(q, v, cu_seqlens, state_layout), dtype=torch.float32)
    else:
        dh0 = _none_marker(q)
    return (*grads, dh0)


def _setup_context(ctx, inputs, output):
    (q, k, v, g, beta, initial_state, cu_seqlens, cu_seqlens_cpu, scale, output_final_state,
     state_layout, *_) = inputs
    # cu_seqlens is saved for the backward's call (and keeps its memory alive until then), and
    # the training forward's block (empty unless it ran with save_for_backward).
    ctx.save_for_backward(q, k, v, g, beta, initial_state, cu_seqlens, output[2])
    ctx.cu_seqlens_cpu = cu_seqlens_cpu
    ctx.scale = scale
    ctx.output_final_state = output_final_state
    ctx.state_layout = state_layout


def _backward(ctx, d_o, dht, _d_saved):
    q, k, v, g, beta, initial_state, cu_seqlens, saved = ctx.saved_tensors
    # Unused outputs get zero gradients; broadcast ones (o.sum()) get made contiguous here.
    d_o = (torch.zeros_like(v) if d_o is None else d_o.to(v.dtype)).contiguous()
    if ctx.output_final_state and dht is not None:
        dht = dht.to(torch.float32).contiguous()
    else:
        dht = None  # no final state was returned, or it does not reach the loss: NULL dht
    want_dh0 = initial_state is not None and ctx.needs_input_grad[5]
    dq, dk, dv, dg, dbeta, dh0 = chunk_gated_delta_rule_bwd(
        q, k, v, g, beta, initial_state, cu_seqlens, ctx.cu_seqlens_cpu, d_o, dht, ctx.scale,
        ctx.state_layout, want_dh0, saved)
    return (dq, dk, dv, dg, dbeta, dh0 if want_dh0 else None,
            None, None, None, None, None, None)


chunk_gated_delta_rule_fwd.register_autograd(_backward, setup_context=_setup_context)
