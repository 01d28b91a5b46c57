"""Argument checks for chunk_gated_delta_rule, done in Python before any C call.

These work on anything tensor-like (torch tensors, or the small fakes the CPU tests use): they
read only .dtype, .device (.type, .index), .shape, .is_contiguous() and, for host copies of
cu_seqlens, the values. Every failure names the argument, what was expected and what was given.
"""

import ctypes
import math
from dataclasses import dataclass
from typing import List, Optional, Sequence

from . import _capi
from ._errors import GdnArgumentError

QKV_DTYPES = {"bfloat16": _capi.GDN_BF16, "float16": _capi.GDN_FP16}
BETA_DTYPES = {"float32": _capi.GDN_FP32, **QKV_DTYPES}
INDEX_DTYPES = {"int32": _capi.GDN_INT32, "int64": _capi.GDN_INT64}
STATE_LAYOUTS = {"kv": _capi.GDN_STATE_KV, "vk": _capi.GDN_STATE_VK}


def dtype_name(dtype):
    """'torch.bfloat16' -> 'bfloat16'; works for torch dtypes and plain strings."""
    return str(dtype).rsplit(".", 1)[-1]


def _fail(argument, expected, given):
    raise GdnArgumentError(f"{argument}: expected {expected}; got {given}")


def check_bool(name, value):
    """A flag argument: a Python bool, else GdnArgumentError naming it and what was given."""
    if not isinstance(value, bool):
        _fail(name, "a bool", type(value).__name__)


def _is_tensor_like(x):
    return all(hasattr(x, a) for a in ("dtype", "device", "shape", "is_contiguous"))


def describe_device(device):
    idx = getattr(device, "index", None)
    return f"{device.type}" if idx is None else f"{device.type}:{idx}"


def check_device_tensor(name, t, dtypes, ndim, device=None, cuda_hint="", contiguous=True):
    """A contiguous CUDA tensor of one of `dtypes` (names) with `ndim` dimensions (any strides
    with contiguous=False, for callers that make the tensor contiguous themselves)."""
    if not _is_tensor_like(t):
        _fail(name, "a torch.Tensor", type(t).__name__)
    if t.device.type != "cuda":
        _fail(name, "a CUDA tensor", f"a tensor on {describe_device(t.device)}{cuda_hint}")
    if device is not None and (t.device.type, t.device.index) != (device.type, device.index):
        _fail(name, f"a tensor on {describe_device(device)} (the device of q)",
              f"one on {describe_device(t.device)}")
    if dtype_name(t.dtype) not in dtypes:
        _fail(name, "dtype " + " or ".join(sorted(dtypes)), f"dtype {dtype_name(t.dtype)}")
    if len(t.shape) != ndim:
        _fail(name, f"{ndim} dimensions", f"shape {tuple(t.shape)}")
    if contiguous and not t.is_contiguous():
        _fail(name, "a contiguous tensor", "a non-contiguous one (call .contiguous() first)")


def check_shape(name, t, expected, layout):
    if tuple(t.shape) != tuple(expected):
        _fail(name, f"shape {tuple(expected)} {layout}", f"shape {tuple(t.shape)}")


@dataclass
class ProblemSpec:
    """Everything the C problem description needs, derived from the checked arguments."""
    B: int
    T: int
    N: int
    Hk: int
    Hv: int
    K: int
    V: int
    qkv_dtype: int
    beta_dtype: int
    scale: Optional[float]  # None only in an unresolved spec (the default K^-0.5)
    state_layout: int
    cu_seqlens_dtype: int = _capi.GDN_INT32
    cu_seqlens_ptr: int = 0
    cu_seqlens_host: Optional[ctypes.Array] = None  # kept alive with the spec
    cu_seqlens_offsets: Optional[List[int]] = None  # the checked host copy as ints
    max_seqlen_hint: int = 0

    def state_shape(self):
        if self.state_layout == _capi.GDN_STATE_VK:
            return (self.N, self.Hv, self.V, self.K)
        return (self.N, self.Hv, self.K, self.V)

    def to_problem(self):
        p = _capi.GdnProblem()
        p.B, p.T, p.num_seqs = self.B, self.T, self.N
        p.cu_seqlens = self.cu_seqlens_ptr or None
        p.cu_seqlens_host = (ctypes.addressof(self.cu_seqlens_host)
                             if self.cu_seqlens_host is not None else None)
        # The struct holds only the address: it keeps the host array alive itself, so a problem
        # made from a temporary spec (spec(...).to_problem()) never points at freed memory.
        p._cu_seqlens_host_owner = self.cu_seqlens_host
        p.cu_seqlens_dtype = self.cu_seqlens_dtype
        p.max_seqlen_hint = self.max_seqlen_hint
        p.Hk, p.Hv, p.K, p.V = self.Hk, self.Hv, self.K, self.V
        p.qkv_dtype, p.beta_dtype = self.qkv_dtype, self.beta_dtype
        p.scale = self.scale
        p.state_layout = self.state_layout
        return p


def host_offsets(values, name, expected_len):
    """The host copy of cu_seqlens (a CPU tensor or a sequence of ints) as a list of ints."""
    if _is_tensor_like(values):
        if values.device.type != "cpu":
            _fail(name, "a CPU tensor or a sequence of ints",
                  f"a tensor on {describe_device(values.device)}")
        if len(values.shape) != 1:
            _fail(name, "1 dimension", f"shape {tuple(values.shape)}")
        values = values.tolist()
    try:
        ints = [int(x) for x in values]
    except (TypeError, ValueError):
        _fail(name, "a CPU tensor or a sequence of ints", type(values).__name__)
    if len(ints) != expected_len:
        _fail(name, f"{expected_len} entries (as many as cu_seqlens)", f"{len(ints)}")
    return ints


def host_seqlens(values, name, dtype, expected_len):
    """A ctypes array holding a host copy of cu_seqlens, in the device tensor's dtype."""
    ints = host_offsets(values, name, expected_len)
    ctype = ctypes.c_int64 if dtype == _capi.GDN_INT64 else ctypes.c_int32
    return (ctype * len(ints))(*ints), ints


def check_fwd_inputs(q, k, v, g, beta, scale=None, initial_state=None, cu_seqlens=None,
                     cu_seqlens_cpu: Optional[Sequence[int]] = None, state_layout="kv",
                     cuda_hint="", resolve=True, contiguous=True):
    """Checks the forward's arguments and returns their ProblemSpec.

    resolve=False reads no data pointer and builds no host copy (the spec then holds neither):
    the form torch.compile traces, and the form that works on fake tensors. contiguous=False
    accepts any strides (for callers that make the tensors contiguous before the call).
    """
    def tensor(name, t, dtypes, ndim, device=None):
        check_device_tensor(name, t, dtypes, ndim, device, cuda_hint, contiguous)

    # int() would pin a symbolic size to its traced value (a recompile per length under
    # torch.compile): sizes stay as given unless the spec is resolved for a call.
    size = int if resolve else (lambda x: x)

    tensor("q", q, QKV_DTYPES, 4)
    dev = q.device
    B, T, Hk, K = (size(x) for x in q.shape)
    qdt = dtype_name(q.dtype)
    tensor("k", k, {qdt}, 4, dev)
    check_shape("k", k, (B, T, Hk, K), "[B, T, Hk, K] like q")
    tensor("v", v, {qdt}, 4, dev)
    Hv, V = size(v.shape[2]), size(v.shape[3])
    if tuple(v.shape[:2]) != (B, T):
        _fail("v", f"shape ({B}, {T}, Hv, V) [B, T, Hv, V] with B, T of q", f"shape {tuple(v.shape)}")
    if Hk <= 0 or Hv % Hk != 0:
        _fail("v", f"a head count Hv that is a multiple of q's Hk = {Hk}", f"Hv = {Hv}")
    tensor("g", g, {"float32"}, 3, dev)
    check_shape("g", g, (B, T, Hv), "[B, T, Hv]")
    tensor("beta", beta, {"float32", qdt}, 3, dev)
    check_shape("beta", beta, (B, T, Hv), "[B, T, Hv]")

    if state_layout not in STATE_LAYOUTS:
        _fail("state_layout", "'kv' ([N, Hv, K, V], FLA) or 'vk' ([N, Hv, V, K])", repr(state_layout))
    # Unresolved, a default scale stays None: K may be symbolic while tracing, and the op
    # computes K**-0.5 from the real tensors.
    if scale is None and resolve:
        scale = K ** -0.5
    if scale is not None and (isinstance(scale, bool) or not isinstance(scale, (int, float))
                              or not math.isfinite(scale)):
        _fail("scale", "a finite float or None", repr(scale))

    spec = ProblemSpec(B=B, T=T, N=B, Hk=Hk, Hv=Hv, K=K, V=V, qkv_dtype=QKV_DTYPES[qdt],
                       beta_dtype=BETA_DTYPES[dtype_name(beta.dtype)],
                       scale=None if scale is None else float(scale),
                       state_layout=STATE_LAYOUTS[state_layout], max_seqlen_hint=T)
    if cu_seqlens is not None:
        tensor("cu_seqlens", cu_seqlens, INDEX_DTYPES, 1, dev)
        if B != 1:
            _fail("q", "batch size B = 1 when cu_seqlens is given (packed sequences)", f"B = {B}")
        n_entries = size(cu_seqlens.shape[0])
        if n_entries < 1:
            _fail("cu_seqlens", "at least 1 entry ([N+1] offsets)", "0 entries")
        spec.N = n_entries - 1
        spec.cu_seqlens_dtype = INDEX_DTYPES[dtype_name(cu_seqlens.dtype)]
        spec.max_seqlen_hint = 0
        if resolve:
            spec.cu_seqlens_ptr = int(cu_seqlens.data_ptr())
        if cu_seqlens_cpu is not None and not resolve:
            spec.cu_seqlens_offsets = host_offsets(cu_seqlens_cpu, "cu_seqlens_cpu", n_entries)
        elif cu_seqlens_cpu is not None:
            spec.cu_seqlens_host, ints = host_seqlens(cu_seqlens_cpu, "cu_seqlens_cpu",
                                                      spec.cu_seqlens_dtype, n_entries)
            spec.cu_seqlens_offsets = ints
            spec.max_seqlen_hint = max((b - a for a, b in zip(ints, ints[1:])), default=0)
            spec.max_seqlen_hint = max(spec.max_seqlen_hint, 0)
    elif cu_seqlens_cpu is not None:
        _fail("cu_seqlens_cpu", "None unless cu_seqlens (the device tensor) is given too",
              "a host copy without cu_seqlens")

    if initial_state is not None:
        tensor("initial_state", initial_state, {"float32"}, 4, dev)
        check_shape("initial_state", initial_state, spec.state_shape(),
                    "[N, Hv, K, V]" if state_layout == "kv" else "[N, Hv, V, K]")
    return spec


def check_grad(name, t, device, shape, dtypes):
    """A gradient handed to backward: the device and shape of the output it belongs to."""
    check_device_tensor(name, t, dtypes, len(shape), device)
    check_shape(name, t, shape, "(the shape of the output it is the gradient of)")
