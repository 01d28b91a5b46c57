#!/usr/bin/env python3
"""Times context parallelism across ranks (gdn.chunk_gated_delta_rule(..., cp_group=...)) on
R GPUs of one host against the single-GPU call on the whole sequence, and writes a CSV with one
row per (pass, heads): one sequence of --tokens tokens (default 131072), value heads --hv
(default 16 and 32, q/k heads hv / 4: Qwen3-Next at TP4 and TP2), the anchor tables' inputs
(docs/benchmarking.md).

Passes: fwd (the forward, final state on) and train (the forward that saves for backward, then
the backward against random do and dht, through torch.autograd). Timing: the single-GPU call as
scripts/bench_peers.py times it (CUDA-graph replay, median) and eagerly; the CP call eagerly
(collectives inside; each sample starts after a barrier and ends when every rank is done: the
slowest rank's time), median of --reps samples after --warmup. bytes_gathered is what each
rank's all-gathers brought in per call, counted by the exchange (R - 1 carries of
Hv K (K + V) 4 bytes forward, plus R - 1 of Hv K V 4 bytes backward).

FlashQLA's inter-card path (flash_qla ops/gated_delta_rule/chunk/cp/) is not driven by this
script: its column says so, with whether flash_qla imports here.

Run on a machine with R >= 2 GPUs, from the repo root (NVLink multicast stays off):
  PYTHONPATH=python python3 scripts/bench_cp_ranks.py --ranks 2 \\
      --out bench/results/<gpus>_cp_ranks.csv
"""

import argparse
import csv
import importlib.util
import os
import statistics
import sys
import tempfile
import time
from types import SimpleNamespace

COLUMNS = ["pass", "h_qk", "h_v", "tokens", "ranks", "single_gpu_graph_ms", "single_gpu_eager_ms",
           "cp_eager_ms", "speedup_vs_graph", "bytes_gathered_per_rank", "flashqla_cp_ms"]


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ranks", type=int, default=2, help="GPUs (one process each); default 2")
    ap.add_argument("--tokens", type=int, default=131072, help="sequence length; default 131072")
    ap.add_argument("--hv", type=int, nargs="+", default=[16, 32], help="value heads; q/k = hv/4")
    ap.add_argument("--passes", nargs="+", default=["fwd", "train"], choices=["fwd", "train"])
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--out", required=True, help="CSV path")
    args = ap.parse_args(argv)
    if args.tokens % args.ranks != 0:
        ap.error(f"--tokens: expected a multiple of --ranks = {args.ranks}; got {args.tokens}")
    return args


def eager_ms(fn, reps, warmup, dist):
    """Median over reps of the slowest rank's time of fn(), each sample after a barrier."""
    import torch
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(reps):
        if dist is not None:
            dist.barrier()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        elapsed = torch.tensor([(time.perf_counter() - t0) * 1e3], device="cuda")
        if dist is not None:
            dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)
        samples.append(float(elapsed))
    return statistics.median(samples)


def flashqla_note():
    if importlib.util.find_spec("flash_qla") is None:
        return "not run: flash_qla does not import here"
    return "not run: this script does not drive FlashQLA's inter-card path"


def worker(rank, args, init_file, out_rows):
    import torch
    import torch.distributed as dist

    import gdn
    from gdn import context_parallel as cp
    from gdnbench.measure import autograd_step, make_inputs, time_graph

    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"file://{init_file}", rank=rank,
                            world_size=args.ranks)
    R, T = args.ranks, args.tokens
    rows = []
    try:
        for hv in args.hv:
            row = SimpleNamespace(total_tokens=T, h_qk=hv // 4, h_v=hv, k=128, v=128,
                                  dtype="bf16", lengths=[T])
            inp = make_inputs(row, seed=1, with_grads=True)  # the same on every rank
            exchange = cp.TorchDistributedExchange()
            ctx = cp.CPContext.even(exchange, T // R, inp.cu_seqlens_cpu)
            t = ctx.tokens
            local = [x[:, t].contiguous() for x in (inp.q, inp.k, inp.v, inp.g, inp.beta)]
            do_local = inp.do[:, t].contiguous()

            def whole(q, k, v, g, beta, h0):
                return gdn.chunk_gated_delta_rule(q, k, v, g, beta, initial_state=h0,
                                                  output_final_state=True,
                                                  cu_seqlens=inp.cu_seqlens,
                                                  cu_seqlens_cpu=inp.cu_seqlens_cpu)

            def split(q, k, v, g, beta, h0):
                return gdn.chunk_gated_delta_rule(q, k, v, g, beta, initial_state=h0,
                                                  output_final_state=True, cp_context=ctx)

            split_leaves = [x.detach().requires_grad_() for x in (*local, inp.h0)]

            def split_train():
                o, ht = split(*split_leaves)
                return torch.autograd.grad((o, ht), split_leaves, (do_local, inp.dht))

            for p in args.passes:
                if p == "fwd":
                    whole_fn = lambda: whole(inp.q, inp.k, inp.v, inp.g, inp.beta, inp.h0)  # noqa: E731
                    split_fn = lambda: split(*local, inp.h0)  # noqa: E731
                else:
                    whole_fn = autograd_step(whole, inp)
                    split_fn = split_train
                graph = time_graph(whole_fn, args.reps, args.warmup).median_ms
                single = eager_ms(whole_fn, args.reps, args.warmup, None)
                before = exchange.bytes_gathered
                cp_ms = eager_ms(split_fn, args.reps, args.warmup, dist)
                per_call = (exchange.bytes_gathered - before) // (args.reps + args.warmup)
                rows.append({"pass": p, "h_qk": hv // 4, "h_v": hv, "tokens": T, "ranks": R,
                             "single_gpu_graph_ms": f"{graph:.3f}",
                             "single_gpu_eager_ms": f"{single:.3f}",
                             "cp_eager_ms": f"{cp_ms:.3f}",
                             "speedup_vs_graph": f"{graph / cp_ms:.2f}",
                             "bytes_gathered_per_rank": per_call,
                             "flashqla_cp_ms": flashqla_note()})
                if rank == 0:
                    print(rows[-1], flush=True)
    finally:
        dist.destroy_process_group()
    if rank == 0:
        with open(out_rows, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=COLUMNS)
            w.writeheader()
            w.writerows(rows)


def main(argv=None):
    args = parse_args(argv)
    import torch
    import torch.multiprocessing as mp
    if torch.cuda.device_count() < args.ranks:
        print(f"bench_cp_ranks: needs {args.ranks} GPUs; this machine has "
              f"{torch.cuda.device_count()}", file=sys.stderr)
        return 2
    os.environ["NCCL_NVLS_ENABLE"] = "0"  # no NVLink multicast
    with tempfile.TemporaryDirectory() as tmp:
        mp.spawn(worker, args=(args, os.path.join(tmp, "rendezvous"), os.path.abspath(args.out)),
                 nprocs=args.ranks, join=True)
    print(f"bench_cp_ranks: wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
