"""The libraries timed side by side: ours (through the gdn binding), FLA 0.5.0 live and, where
their packages import, FlashQLA and FlashInfer live.

Each maker returns a zero-argument callable doing one forward, one backward or one training step
(a forward that saves for backward, then the backward) on prepared inputs, ready for
measure.time_graph. FlashQLA (flash-qla + tilelang + z3) and FlashInfer (flashinfer-python + the
CuTe DSL) come to an offline GPU machine as wheel loads (docs/benchmarking.md, "Peers live on a
machine without network"); where one does not import, its published column is used, scaled as
docs/benchmarking.md says (no published training-step figure exists).
"""

import os

import gdn
from gdn import _capi, _ops
from gdn._checks import check_fwd_inputs
from gdn._ops import backward_raw, forward_raw

from .measure import autograd_step


def _spec(inp):
    return check_fwd_inputs(inp.q, inp.k, inp.v, inp.g, inp.beta, scale=inp.scale,
                            initial_state=inp.h0, cu_seqlens=inp.cu_seqlens,
                            cu_seqlens_cpu=inp.cu_seqlens_cpu)


def load_dispatch_table(path):
    _capi.library().load_dispatch_table(path)


def ours_variant(inp, pass_="fwd"):
    """The variant libgdn dispatches to for the row's pass (the backward's for bwd and train)."""
    lib, problem = _capi.library(), _spec(inp).to_problem()
    return lib.fwd_variant_name(problem) if pass_ == "fwd" else lib.bwd_variant_name(problem)


def ours_fwd(inp):
    spec = _spec(inp)
    return lambda: forward_raw(spec, inp.q, inp.k, inp.v, inp.g, inp.beta, inp.h0, True)


def ours_bwd(inp):
    """The backward alone from what the training forward saved (gdn_saved), as the peers' is
    timed from their forwards' intermediates (FLA's A and chunk-cumulated g): the forward runs
    once here, outside the timed call."""
    spec = _spec(inp)
    _, _, saved = forward_raw(spec, inp.q, inp.k, inp.v, inp.g, inp.beta, inp.h0, True,
                              save=True)
    return lambda: backward_raw(spec, inp.q, inp.k, inp.v, inp.g, inp.beta, inp.h0, inp.do,
                                inp.dht, True, saved=saved)


def ours_train_uses_torch_op():
    """True where the binding runs chunk_gated_delta_rule as a torch.library op: its autograd
    then goes through torch's dispatcher, and the training step is timed through the public API.
    Otherwise the step is the two raw calls its autograd.Function makes."""
    torch = _ops._torch()  # registers the binding's torch.library ops where it has them
    try:
        getattr(torch.ops.gdn, "chunk_gated_delta_rule_fwd")
    except (AttributeError, RuntimeError):
        return False
    return True


def ours_train_path():
    """How ours' training step is timed, for the provenance header."""
    if ours_train_uses_torch_op():
        return "gdn.chunk_gated_delta_rule + torch.autograd.grad (torch.library op)"
    return "forward_raw + backward_raw (the calls of gdn.chunk_gated_delta_rule's autograd)"


def ours_train(inp):
    if ours_train_uses_torch_op():
        return autograd_step(
            lambda q, k, v, g, beta, h0: gdn.chunk_gated_delta_rule(
                q, k, v, g, beta, scale=inp.scale, initial_state=h0, output_final_state=True,
                cu_seqlens=inp.cu_seqlens, cu_seqlens_cpu=inp.cu_seqlens_cpu), inp)
    spec = _spec(inp)

    def step():
        # The autograd forward in training mode: it keeps the saved block for the backward.
        _, _, saved = forward_raw(spec, inp.q, inp.k, inp.v, inp.g, inp.beta, inp.h0, True,
                                  save=True)
        return backward_raw(spec, inp.q, inp.k, inp.v, inp.g, inp.beta, inp.h0, inp.do,
                            inp.dht, True, saved=saved)
    return step


class Fla:
    """FLA's chunked GDN entry points, imported from the fla-core package (fla.ops only: its
    models and layers, which import transformers, are never loaded)."""

    def __init__(self):
        # FLA >= 0.6 hands its public entry point to FlashQLA when that imports; the FLA column
        # is FLA's own Triton kernels (the low-level functions below never dispatch anyway).
        os.environ["FLA_FLASH_QLA"] = "0"
        import fla
        from fla.ops.gated_delta_rule import chunk as fla_chunk
        from fla.ops.utils.index import prepare_chunk_indices
        self.version = getattr(fla, "__version__", "unknown")
        self._chunk = fla_chunk
        self._prepare_chunk_indices = prepare_chunk_indices
        self._bwd_guard_bypassed = False

    def bypass_bwd_guard(self):
        """FLA 0.5.0 refuses its gated backward on Hopper with Triton >= 3.4 (wrong dbeta/dg, its
        issue 640) by testing fla.ops.common.chunk_o.TRITON_ABOVE_3_4_0 at call time. Clearing
        that flag lets the backward run: for TIMING ONLY, its results are never checked."""
        from fla.ops.common import chunk_o
        chunk_o.TRITON_ABOVE_3_4_0 = False
        self._bwd_guard_bypassed = True

    def _fwd_call(self, inp, chunk_indices):
        return self._chunk.chunk_gated_delta_rule_fwd(
            q=inp.q, k=inp.k, v=inp.v, g=inp.g, beta=inp.beta, scale=inp.scale,
            initial_state=inp.h0, output_final_state=True, cu_seqlens=inp.cu_seqlens,
            chunk_indices=chunk_indices)

    def fwd(self, inp):
        # chunk_indices is what FLA's autograd wrapper derives from cu_seqlens with a host copy
        # on every call; computed once here, as a graph replay would reuse it anyway.
        chunk_indices = self._prepare_chunk_indices(inp.cu_seqlens, 64)
        return lambda: self._fwd_call(inp, chunk_indices)

    def _bwd_call(self, inp, g_cum, A, initial_state, chunk_indices):
        return self._chunk.chunk_gated_delta_rule_bwd(
            q=inp.q, k=inp.k, v=inp.v, g=g_cum, beta=inp.beta, A=A, scale=inp.scale,
            initial_state=initial_state, do=inp.do, dht=inp.dht, cu_seqlens=inp.cu_seqlens,
            chunk_indices=chunk_indices)

    def bwd(self, inp):
        if not self._bwd_guard_bypassed:
            self.bypass_bwd_guard()
        chunk_indices = self._prepare_chunk_indices(inp.cu_seqlens, 64)
        # The backward starts from the forward's intermediates (chunk-cumulated g and A), as in
        # FlashQLA's published backward table.
        g_cum, _o, A, _ht, _h0, _ = self._fwd_call(inp, chunk_indices)
        return lambda: self._bwd_call(inp, g_cum, A, inp.h0, chunk_indices)

    def train(self, inp):
        """FLA's autograd step without the wrapper: the forward whose outputs its
        ChunkGatedDeltaRuleFunction saves (chunk-cumulated g, A, the initial state it used), then
        the backward from them."""
        if not self._bwd_guard_bypassed:
            self.bypass_bwd_guard()
        chunk_indices = self._prepare_chunk_indices(inp.cu_seqlens, 64)

        def step():
            g_cum, _o, A, _ht, h0, _ = self._fwd_call(inp, chunk_indices)
            return self._bwd_call(inp, g_cum, A, h0, chunk_indices)
        return step


class FlashQla:
    """FlashQLA's chunked GDN entry points (flash_qla package, TileLang kernels compiled per new
    shape on first call). Forward and backward are its low-level functions as its own benchmark
    calls them (the backward from the forward's intermediates, like its published table); the
    training step is its public autograd API, with its defaults (intra-card CP, forward CP cache)."""

    def __init__(self):
        import flash_qla
        import torch
        self.version = getattr(flash_qla, "__version__", "unknown")
        self._flash_qla = flash_qla
        self._torch = torch

    def _cu_seqlens(self, inp):
        # FlashQLA's kernels index with int32 offsets (its benchmark passes int32); one copy per
        # maker, made outside the timed call, so its caches keyed by tensor identity hit.
        return inp.cu_seqlens.to(self._torch.int32)

    def _fwd_call(self, inp, cu):
        return self._flash_qla.chunk_gated_delta_rule_fwd(
            inp.q, inp.k, inp.v, inp.g, inp.beta, scale=inp.scale, initial_state=inp.h0,
            output_final_state=True, cu_seqlens=cu)

    def fwd(self, inp):
        cu = self._cu_seqlens(inp)
        return lambda: self._fwd_call(inp, cu)

    def bwd(self, inp):
        cu = self._cu_seqlens(inp)
        g_cum, A = self._fwd_call(inp, cu)[:2]
        return lambda: self._flash_qla.chunk_gated_delta_rule_bwd(
            inp.q, inp.k, inp.v, g_cum, inp.beta, A, inp.do, inp.dht, scale=inp.scale,
            initial_state=inp.h0, cu_seqlens=cu)

    def train(self, inp):
        cu = self._cu_seqlens(inp)
        return autograd_step(
            lambda q, k, v, g, beta, h0: self._flash_qla.chunk_gated_delta_rule(
                q, k, v, g, beta, scale=inp.scale, initial_state=h0, output_final_state=True,
                cu_seqlens=cu), inp)



class FlashInfer:
    """FlashInfer's GDN prefill, flashinfer.chunk_gated_delta_rule: CuTe-DSL kernels (SM90 on
    Hopper), compiled per kernel configuration on first call, with its intra-card context
    parallelism as it ships (use_cp="auto": on when sequences x heads leave the SMs idle).
    Forward only: FlashInfer has no backward.

    Its API differs from ours in layout, not in meaning; every conversion is made once per maker,
    outside the timed call:
      q, k, v   [T, H, D] (no batch dimension): our [1, T, H, D] viewed without its batch;
      g         its gate is alpha = exp(g), linear space (its kernel takes log2 of it): exp of ours;
      beta      [T, Hv] fp32, as ours without the batch;
      state     [N, Hv, V, K] fp32 ("k-last"): ours [N, Hv, K, V] transposed, and its final state
                transposed back for the check;
      heads     q and k share Hk heads, v has Hv = ratio * Hk (its "GVA"), as ours.
    max_seqlen is the longest sequence, the bound its CP path sizes its grids with (known on the
    host, as ours gets cu_seqlens_cpu)."""

    # Its SM90 kernel's limits (delta_rule_sm90.py: D == 128, fp16/bf16 inputs, Hv a multiple of
    # Hk): rows outside them are recorded as unsupported, not run.
    HEAD_DIM = 128

    def __init__(self):
        import flashinfer
        import torch
        from flashinfer.gdn_prefill import chunk_gated_delta_rule
        # flashinfer imports its kernel modules inside try/except and fails only at call time;
        # importing them here makes an incomplete install say why before any row runs. Both: the
        # plain kernel and the CP one (without it FlashInfer quietly falls back to no CP).
        import flashinfer.gdn_kernels.delta_rule_dsl.delta_rule_cp_sm90  # noqa: F401
        import flashinfer.gdn_kernels.delta_rule_dsl.delta_rule_sm90  # noqa: F401
        self.version = getattr(flashinfer, "__version__", "unknown")
        self._chunk = chunk_gated_delta_rule
        self._torch = torch

    def unsupported(self, inp):
        """Why FlashInfer cannot run this row's shapes, or None."""
        hk, d_k = inp.q.shape[-2:]
        hv, d_v = inp.v.shape[-2:]
        if (d_k, d_v) != (self.HEAD_DIM, self.HEAD_DIM):
            return f"head dims {d_k}/{d_v}: its kernels take {self.HEAD_DIM} only"
        if inp.q.dtype not in (self._torch.bfloat16, self._torch.float16):
            return f"dtype {inp.q.dtype}: its kernels take bf16 or fp16"
        if hv % hk:
            return f"heads {hk}/{hv}: its kernels need h_v a multiple of h_qk"
        return None

    def _args(self, inp):
        lengths = [b - a for a, b in zip(inp.cu_seqlens_cpu, inp.cu_seqlens_cpu[1:])]
        return dict(q=inp.q[0], k=inp.k[0], v=inp.v[0], g=self._torch.exp(inp.g[0]).contiguous(),
                    beta=inp.beta[0].contiguous(), scale=inp.scale,
                    initial_state=inp.h0.transpose(-1, -2).contiguous(), output_final_state=True,
                    cu_seqlens=inp.cu_seqlens, max_seqlen=max(lengths))

    def fwd(self, inp):
        args = self._args(inp)
        return lambda: self._chunk(**args)

    def fwd_outputs(self, inp):
        """(o, final state) of one forward, in our layouts ([1, T, Hv, V], [N, Hv, K, V])."""
        o, ht = self.fwd(inp)()
        return o.unsqueeze(0), ht.transpose(-1, -2)


def library_version():
    try:
        return _capi.library().version()
    except gdn.GdnError as e:
        return f"unavailable ({e})"
