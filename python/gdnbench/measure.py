"""Benchmark inputs (gdn.md section 5) and the one timer every library is measured with.

Needs torch and a CUDA device; imported only by scripts/bench_peers.py on the GPU machine.
"""

import statistics
from dataclasses import dataclass

import torch
import torch.nn.functional as F


@dataclass
class Inputs:
    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    g: torch.Tensor
    beta: torch.Tensor
    h0: torch.Tensor
    cu_seqlens: torch.Tensor     # int64 on the device, always passed (one sequence too)
    cu_seqlens_cpu: list
    scale: float
    do: torch.Tensor = None      # backward and training step: gradient of o
    dht: torch.Tensor = None     # backward and training step: gradient of the final state


def make_inputs(row, seed, with_grads):
    """The anchor tables' inputs: q, k = l2norm(randn) bf16; v = randn bf16; g = logsigmoid(randn)
    / 16 fp32 with g = 0 on a random 25% of the value heads; beta = sigmoid(randn) fp32;
    h0 = randn fp32 [N, Hv, K, V]; B = 1 with cu_seqlens."""
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev).manual_seed(seed)
    T, Hk, Hv, K, V = row.total_tokens, row.h_qk, row.h_v, row.k, row.v
    dtype = torch.bfloat16 if row.dtype == "bf16" else torch.float16

    def randn(*shape):
        return torch.randn(*shape, generator=gen, device=dev, dtype=torch.float32)

    q = F.normalize(randn(1, T, Hk, K), dim=-1).to(dtype)
    k = F.normalize(randn(1, T, Hk, K), dim=-1).to(dtype)
    v = randn(1, T, Hv, V).to(dtype)
    g = F.logsigmoid(randn(1, T, Hv)) / 16
    no_decay = torch.randperm(Hv, generator=gen, device=dev)[: Hv // 4]
    g[:, :, no_decay] = 0
    beta = torch.sigmoid(randn(1, T, Hv))
    N = len(row.lengths)
    h0 = randn(N, Hv, K, V)
    offsets = [0]
    for n in row.lengths:
        offsets.append(offsets[-1] + n)
    cu = torch.tensor(offsets, dtype=torch.int64, device=dev)
    inp = Inputs(q=q, k=k, v=v, g=g.contiguous(), beta=beta, h0=h0, cu_seqlens=cu,
                 cu_seqlens_cpu=offsets, scale=K ** -0.5)
    if with_grads:
        inp.do = randn(1, T, Hv, V).to(dtype)
        inp.dht = randn(N, Hv, K, V)
    return inp


def autograd_step(call, inp):
    """One training step through a library's autograd: call(q, k, v, g, beta, h0) ->
    (o, final_state) on leaf aliases of the inputs that require grad, then torch.autograd.grad of
    (o, final_state) against (do, dht). The gradients are returned, never accumulated into .grad,
    so every call and every graph replay does the same work."""
    leaves = [t.detach().requires_grad_() for t in (inp.q, inp.k, inp.v, inp.g, inp.beta, inp.h0)]

    def step():
        o, ht = call(*leaves)
        return torch.autograd.grad((o, ht), leaves, (inp.do, inp.dht))
    return step


@dataclass
class Timing:
    median_ms: float
    p20_ms: float
    p80_ms: float
    samples: int


def _quantile(sorted_xs, q):
    i = min(len(sorted_xs) - 1, max(0, round(q * (len(sorted_xs) - 1))))
    return sorted_xs[i]


def time_graph(fn, reps, warmup):
    """Median GPU time of one CUDA-graph replay of fn(). fn runs eagerly first (Triton JIT and
    autotuning, caches keyed by tensor identity), once more on a side stream, then is captured;
    each sample is one replay between two events, after `warmup` untimed replays."""
    fn()
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        fn()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    for _ in range(warmup):
        graph.replay()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for s, e in zip(starts, ends):
        s.record()
        graph.replay()
        e.record()
    torch.cuda.synchronize()
    times = sorted(s.elapsed_time(e) for s, e in zip(starts, ends))
    del graph
    return Timing(median_ms=statistics.median(times), p20_ms=_quantile(times, 0.2),
                  p80_ms=_quantile(times, 0.8), samples=len(times))
