"""Context parallelism across ranks: one long (or packed) problem split over the GPUs of a
group, each holding a contiguous run of the tokens (docs/context_parallel.md).

    import torch.distributed as dist, gdn
    o_local, final_state = gdn.chunk_gated_delta_rule(
        q_local, k_local, v_local, g_local, beta_local, initial_state=h0,
        output_final_state=True, cu_seqlens=cu, cu_seqlens_cpu=cu_list, cp_group=dist.group.WORLD)

q_local etc. are this rank's tokens ([1, T_local, ...]; rank r holds tokens
[r * T_local, (r + 1) * T_local) of the whole); cu_seqlens and initial_state are the *global*
ones. o_local is this rank's output. final_state (and the gradient of initial_state) has the
global shape [N, Hv, K, V] and holds the rows of the sequences that end (start) on this rank,
zeros elsewhere: their sum over the ranks is the single-GPU result. CPContext gives uneven
splits and other exchanges (an MPI wrapper, or ThreadGroup: simulated ranks in one process).

Each call all-gathers one small carry per rank in the forward (Hv * K * (K + V) * 4 bytes) and
one in the backward (Hv * K * V * 4 bytes): never tokens. The arithmetic is libgdn's
(gdn_cp.h); this module only moves the carries.
"""

import ctypes
import threading

from . import _capi
from ._checks import check_bool, check_fwd_inputs, check_grad, host_offsets
from ._errors import GdnArgumentError, error_for_status


def _torch():
    from ._ops import _torch as torch_with_ops
    return torch_with_ops()


def _ptr(t):
    return None if t is None else (t.data_ptr() or None)


def _stream(torch):
    return ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)


class TorchDistributedExchange:
    """The carries' all-gather over a torch.distributed process group (NCCL for CUDA tensors).

    bytes_gathered counts the bytes each all-gather brought in from the other ranks.
    """

    def __init__(self, group=None):
        import torch.distributed as dist
        self._dist = dist
        self.group = group
        self.rank = dist.get_rank(group)
        self.size = dist.get_world_size(group)
        self.bytes_gathered = 0

    def all_gather(self, tensor):
        tensor = tensor.contiguous()
        out = tensor.new_empty((self.size, *tensor.shape))
        self._dist.all_gather_into_tensor(out, tensor, group=self.group)
        self.bytes_gathered += (self.size - 1) * tensor.numel() * tensor.element_size()
        return out


class ThreadGroup:
    """R simulated ranks: threads of one process sharing one GPU, exchanging through memory.

    For tests and debugging on one device: run_ranks(group, fn) runs fn(rank, exchange) on R
    threads. Each all-gather waits for every rank (a barrier), as a collective does.
    """

    def __init__(self, size, timeout_s=600.0):
        if not isinstance(size, int) or size < 1:
            raise GdnArgumentError(f"size: expected a rank count >= 1; got {size!r}")
        self.size = size
        self._slots = [None] * size
        self._barrier = threading.Barrier(size, timeout=timeout_s)

    def exchange(self, rank):
        return _ThreadExchange(self, rank)

    def abort(self):
        self._barrier.abort()


class _ThreadExchange:
    def __init__(self, group, rank):
        self._group = group
        self.rank = rank
        self.size = group.size
        self.bytes_gathered = 0

    def all_gather(self, tensor):
        torch = _torch()
        g = self._group
        g._slots[self.rank] = tensor.contiguous()
        g._barrier.wait()
        out = torch.stack(g._slots)  # a copy: each rank owns its gathered carries
        g._barrier.wait()  # every rank has read the slots before any rank refills them
        self.bytes_gathered += (self.size - 1) * tensor.numel() * tensor.element_size()
        return out


def run_ranks(group, fn):
    """Runs fn(rank, exchange) for every rank of a ThreadGroup on its own thread; returns the
    results in rank order and re-raises the first failure (the others are released)."""
    results = [None] * group.size
    errors = []

    def body(rank):
        try:
            results[rank] = fn(rank, group.exchange(rank))
        except BaseException as e:  # noqa: BLE001  (re-raised below, in the caller's thread)
            errors.append((rank, e))
            group.abort()

    threads = [threading.Thread(target=body, args=(r,), name=f"gdn-rank-{r}")
               for r in range(group.size)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        errors.sort(key=lambda e: isinstance(e[1], threading.BrokenBarrierError))
        rank, error = errors[0]
        raise RuntimeError(f"simulated rank {rank} failed: {error}") from error
    return results


class CPContext:
    """Where this rank stands in the split of one problem's tokens over the ranks of a group.

    exchange: has .rank, .size and .all_gather(tensor) -> [size, *tensor.shape]
              (TorchDistributedExchange, ThreadGroup.exchange(rank), or your own).
    rank_offsets: [size + 1] ints: rank r holds the tokens [rank_offsets[r], rank_offsets[r+1])
              of the whole (every rank at least one).
    cu_seqlens: the global offsets of the packed sequences (host: list or CPU tensor), or None
              for one sequence of all the tokens.
    """

    def __init__(self, exchange, rank_offsets, cu_seqlens=None):
        for attr in ("rank", "size", "all_gather"):
            if not hasattr(exchange, attr):
                raise GdnArgumentError(f"exchange: expected an object with .rank, .size and "
                                       f".all_gather(tensor); got {type(exchange).__name__} "
                                       f"without .{attr}")
        size = int(exchange.size)
        offsets = host_offsets(rank_offsets, "rank_offsets", size + 1)
        cu = None if cu_seqlens is None else [int(x) for x in _as_list(cu_seqlens)]
        if cu is not None and len(cu) < 2:
            raise GdnArgumentError(f"cu_seqlens: expected [N + 1] >= 2 global offsets; got {cu}")
        self.exchange = exchange
        self.rank_offsets = offsets
        self.cu_seqlens = cu
        self.num_seqs = 1 if cu is None else len(cu) - 1
        lib = _capi.library()
        cu_array = None if cu is None else (ctypes.c_int64 * len(cu))(*cu)
        rank_array = (ctypes.c_int64 * len(offsets))(*offsets)
        local = (ctypes.c_int64 * (self.num_seqs + 1))()
        self.plan = _capi.GdnCpRankPlan()
        lib.cp_call("gdn_cp_plan", cu_array, self.num_seqs, rank_array, size, int(exchange.rank),
                    ctypes.byref(self.plan), local, self.num_seqs + 1)
        self.local_cu_seqlens = list(local[:self.plan.num_local_seqs + 1])

    @classmethod
    def even(cls, exchange, local_tokens, cu_seqlens=None):
        """Every rank holds local_tokens tokens, in rank order."""
        return cls(exchange, [r * int(local_tokens) for r in range(int(exchange.size) + 1)],
                   cu_seqlens)

    @property
    def tokens(self):
        """This rank's slice of the whole problem's tokens."""
        return slice(self.plan.token_begin, self.plan.token_end)

    @property
    def sequences(self):
        """The rows of the global state arrays this rank's pieces belong to."""
        return slice(self.plan.first_seq, self.plan.first_seq + self.plan.num_local_seqs)


def _as_list(values):
    return values.tolist() if hasattr(values, "tolist") else list(values)


class RankCall:
    """One rank's part of a forward and its backward, without autograd: what
    chunk_gated_delta_rule runs inside torch.autograd, and what simulated ranks call directly
    (the autograd engine runs every backward of a device on one thread, where simulated ranks
    waiting for each other would block)."""

    def __init__(self, context, q, k, v, g, beta, scale=None, initial_state=None,
                 state_layout="kv"):
        torch = _torch()
        plan = context.plan
        self.context = context
        local_tokens = plan.token_end - plan.token_begin
        if len(q.shape) == 4 and q.shape[1] != local_tokens:
            raise GdnArgumentError(
                f"q: expected this rank's {local_tokens} tokens (rank {plan.rank} holds "
                f"[{plan.token_begin}, {plan.token_end}) of the whole); got shape {tuple(q.shape)}")
        if initial_state is not None and (len(initial_state.shape) != 4 or
                                          initial_state.shape[0] != context.num_seqs):
            raise GdnArgumentError(
                f"initial_state: expected the global [N = {context.num_seqs}, Hv, K, V] states "
                f"(every rank gets all of them); got shape {tuple(initial_state.shape)}")
        self.cu_local = torch.tensor(context.local_cu_seqlens, dtype=torch.int32, device=q.device)
        h0_local = None if initial_state is None else initial_state[context.sequences]
        self.spec = check_fwd_inputs(q, k, v, g, beta, scale=scale, initial_state=h0_local,
                                     cu_seqlens=self.cu_local,
                                     cu_seqlens_cpu=context.local_cu_seqlens,
                                     state_layout=state_layout)
        self.problem = self.spec.to_problem()
        self.inputs = (q, k, v, g, beta)
        self.h0_local = h0_local
        self.global_state_shape = (context.num_seqs, *self.spec.state_shape()[1:])
        lib = _capi.library()
        sizes = [lib.cp(name)(ctypes.byref(self.problem))
                 for name in ("gdn_cp_fwd_carry_bytes", "gdn_cp_bwd_carry_bytes")]
        if 0 in sizes:  # the library refused the problem: its message says why
            message = lib.last_error()
            lib.validate_problem(self.problem)  # raises for an invalid problem
            raise error_for_status(2, "gdn_cp_fwd_carry_bytes", message)  # valid, not for CP
        self.carry_floats, self.dcarry_floats = (n // 4 for n in sizes)
        self.carries = None
        self.start = None

    def _call(self, name, args, *extra):
        torch = _torch()
        _capi.library().cp_call(name, ctypes.byref(self.problem), ctypes.byref(self.context.plan),
                                ctypes.byref(args), *extra, _stream(torch))

    def forward(self, output_final_state):
        """(o of this rank's tokens, this rank's final-state rows [num_local_seqs, ...] or
        None): rows of sequences that do not end here are zero."""
        torch = _torch()
        q, k, v, g, beta = self.inputs
        plan = self.context.plan
        lib = _capi.library()
        with torch.cuda.device(q.device):
            o = torch.empty_like(v)
            ht = (torch.zeros(self.spec.state_shape(), dtype=torch.float32, device=q.device)
                  if output_final_state else None)
            carry = torch.zeros(self.carry_floats, dtype=torch.float32, device=q.device)
            args = _capi.GdnFwdArgs(q=_ptr(q), k=_ptr(k), v=_ptr(v), g=_ptr(g), beta=_ptr(beta),
                                    h0=_ptr(self.h0_local), o=_ptr(o), ht=_ptr(ht))
            self._call("gdn_cp_fwd_begin", args, _ptr(carry))
            self.carries = self.context.exchange.all_gather(carry)
            if plan.head_continues:
                self.start = torch.empty(self.dcarry_floats, dtype=torch.float32, device=q.device)
                lib.cp_call("gdn_cp_fwd_chain", ctypes.byref(self.problem),
                            _ptr(self.carries[plan.fwd_chain_first]), plan.fwd_chain_count,
                            _ptr(self.start), _stream(torch))
            self._call("gdn_cp_fwd_end", args, _ptr(self.start))
        return o, ht

    def backward(self, d_o, dht_local, want_dh0):
        """(dq, dk, dv, dg, dbeta, dh0 rows [num_local_seqs, ...] or None) of this rank: dh0
        rows of sequences that do not start here are zero."""
        torch = _torch()
        q, k, v, g, beta = self.inputs
        plan = self.context.plan
        lib = _capi.library()
        check_grad("grad of o", d_o, v.device, tuple(v.shape), {str(v.dtype).rsplit(".", 1)[-1]})
        if dht_local is not None:
            check_grad("grad of final_state", dht_local, q.device, self.spec.state_shape(),
                       {"float32"})
        with torch.cuda.device(q.device):
            dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
            dg, dbeta = torch.empty_like(g), torch.empty_like(beta)
            dh0 = (torch.zeros(self.spec.state_shape(), dtype=torch.float32, device=q.device)
                   if want_dh0 else None)
            dcarry = torch.zeros(self.dcarry_floats, dtype=torch.float32, device=q.device)
            args = _capi.GdnBwdArgs(q=_ptr(q), k=_ptr(k), v=_ptr(v), g=_ptr(g), beta=_ptr(beta),
                                    h0=_ptr(self.h0_local), d_o=_ptr(d_o), dht=_ptr(dht_local),
                                    dq=_ptr(dq), dk=_ptr(dk), dv=_ptr(dv), dg=_ptr(dg),
                                    dbeta=_ptr(dbeta), dh0=_ptr(dh0))
            self._call("gdn_cp_bwd_begin", args, _ptr(self.start), _ptr(dcarry))
            dcarries = self.context.exchange.all_gather(dcarry)
            end_dstate = None
            if plan.tail_continues:
                end_dstate = torch.empty(self.dcarry_floats, dtype=torch.float32,
                                         device=q.device)
                first = plan.bwd_chain_first
                lib.cp_call("gdn_cp_bwd_chain", ctypes.byref(self.problem),
                            _ptr(self.carries[first]), _ptr(dcarries[first]),
                            plan.bwd_chain_count, _ptr(end_dstate), _stream(torch))
            self._call("gdn_cp_bwd_end", args, _ptr(self.start), _ptr(end_dstate))
        return dq, dk, dv, dg, dbeta, dh0

    def to_global(self, rows):
        """This rank's state rows placed in the global [N, ...] array (zeros elsewhere)."""
        torch = _torch()
        out = torch.zeros(self.global_state_shape, dtype=torch.float32, device=rows.device)
        out[self.context.sequences] = rows
        return out


def _autograd_function():
    torch = _torch()

    class ContextParallelGdn(torch.autograd.Function):
        @staticmethod
        def forward(fctx, q, k, v, g, beta, initial_state, context, scale, state_layout,
                    output_final_state):
            call = RankCall(context, q, k, v, g, beta, scale=scale, initial_state=initial_state,
                            state_layout=state_layout)
            o, ht = call.forward(output_final_state)
            fctx.call = call
            fctx.output_final_state = output_final_state
            fctx.has_h0 = initial_state is not None
            final = call.to_global(ht) if output_final_state else q.new_empty((0,),
                                                                              dtype=torch.float32)
            return o, final

        @staticmethod
        def backward(fctx, d_o, d_final):
            call = fctx.call
            v = call.inputs[2]
            d_o = (torch.zeros_like(v) if d_o is None else d_o.to(v.dtype)).contiguous()
            dht = None
            if fctx.output_final_state and d_final is not None:
                dht = d_final.to(torch.float32)[call.context.sequences].contiguous()
            want_dh0 = fctx.has_h0 and fctx.needs_input_grad[5]
            dq, dk, dv, dg, dbeta, dh0 = call.backward(d_o, dht, want_dh0)
            return (dq, dk, dv, dg, dbeta, call.to_global(dh0) if want_dh0 else None,
                    None, None, None, None)

    return ContextParallelGdn


_function = None


def chunk_gated_delta_rule(q, k, v, g, beta, scale=None, initial_state=None,
                           output_final_state=False, state_layout="kv", cp_context=None):
    """This rank's part of chunk_gated_delta_rule over the ranks of cp_context (a CPContext).

    q, k, v, g, beta: this rank's tokens ([1, T_local, ...], contiguous); initial_state: the
    global [N, Hv, K, V] (or None). Returns (o of this rank's tokens, final_state or None);
    final_state has the global shape with the rows of the sequences that end on this rank.
    Differentiable (torch.autograd): the backward runs the ranks' second exchange; the gradient
    of initial_state holds the rows of the sequences that start on this rank.
    """
    global _function
    if not isinstance(cp_context, CPContext):
        raise GdnArgumentError(f"cp_context: expected a gdn.context_parallel.CPContext; got "
                               f"{type(cp_context).__name__}")
    check_bool("output_final_state", output_final_state)
    if _function is None:
        _function = _autograd_function()
    o, final = _function.apply(q, k, v, g, beta, initial_state, cp_context, scale, state_layout,
                               output_final_state)
    return o, (final if output_final_state else None)


def context_for_group(group, local_tokens, cu_seqlens=None, cu_seqlens_cpu=None):
    """The CPContext of an even split over a torch.distributed group (what cp_group= builds):
    global offsets from cu_seqlens_cpu, else copied from the device cu_seqlens (a sync)."""
    offsets = cu_seqlens_cpu
    if offsets is None and cu_seqlens is not None:
        offsets = cu_seqlens.tolist()
    return CPContext.even(TorchDistributedExchange(group), local_tokens, offsets)
