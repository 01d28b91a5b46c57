"""Context parallelism across two real GPUs over NCCL (torch.distributed, one process per
GPU): gdn.chunk_gated_delta_rule(..., cp_group=...) through torch.autograd against the
single-GPU call on the whole problem, which each process also runs on its own GPU. NVLink
multicast stays off (NCCL_NVLS_ENABLE=0). Prints "skipped: ..." and exits 0 without torch,
without two compute-capability-9.0 GPUs."""

import os
import sys
import tempfile

try:
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False

import gdn

WORLD = 2
DIFF = ("q", "k", "v", "g", "beta", "initial_state")
CASES = [  # (name, sequence lengths, Hk, Hv, state layout, rank offsets or None for even)
    ("one sequence", [4096], 2, 4, "kv", None),
    ("ragged pack", [410, 431, 294, 991, 386, 1584], 1, 3, "kv", None),
    ("uneven split, vk", [410, 431, 294, 991, 386, 1584], 2, 4, "vk", [0, 1000, 4096]),
]


def run_case(rank, name, lengths, Hk, Hv, layout, rank_offsets):
    from test_binding_gpu import (BAR_FWD, BAR_GATE_GRAD, BAR_GRAD, leaves, make_inputs, rel)
    from gdn import context_parallel as cp

    x = make_inputs(lengths, Hk, Hv, seed=11, layout=layout)  # the same on every rank
    ref = leaves(x, DIFF)
    o_ref, ht_ref = gdn.chunk_gated_delta_rule(**ref, output_final_state=True,
                                               state_layout=layout)
    gen = torch.Generator(device="cuda").manual_seed(12)
    do = torch.randn(o_ref.shape, generator=gen, device="cuda").to(o_ref.dtype)
    dht = torch.randn(ht_ref.shape, generator=gen, device="cuda")
    ((o_ref.float() * do.float()).sum() + (ht_ref * dht).sum()).backward()

    T = sum(lengths)
    if rank_offsets is None:
        ctx = None
        tokens = slice(rank * T // WORLD, (rank + 1) * T // WORLD)
    else:
        exchange = cp.TorchDistributedExchange()
        ctx = cp.CPContext(exchange, rank_offsets, x["cu_seqlens_cpu"])
        tokens = ctx.tokens
    ours = leaves({n: (t[:, tokens].contiguous() if n in DIFF[:5] else t) for n, t in x.items()},
                  DIFF)
    o, final = gdn.chunk_gated_delta_rule(
        ours["q"], ours["k"], ours["v"], ours["g"], ours["beta"],
        initial_state=ours["initial_state"], output_final_state=True, state_layout=layout,
        cu_seqlens=x["cu_seqlens"], cu_seqlens_cpu=x["cu_seqlens_cpu"],
        cp_group=None if ctx is not None else dist.group.WORLD, cp_context=ctx)
    ((o.float() * do[:, tokens].float()).sum() + (final * dht).sum()).backward()

    final = final.detach().clone()
    dist.all_reduce(final)  # every sequence's final state is written by one rank
    dh0 = ours["initial_state"].grad.clone()
    dist.all_reduce(dh0)
    errors = {"o": (rel(o, o_ref[:, tokens]), BAR_FWD), "final_state": (rel(final, ht_ref), BAR_FWD),
              "dinitial_state": (rel(dh0, ref["initial_state"].grad), BAR_GRAD)}
    for n in DIFF[:5]:
        errors["d" + n] = (rel(ours[n].grad, ref[n].grad[:, tokens]),
                           BAR_GATE_GRAD if n in ("g", "beta") else BAR_GRAD)
    failed = {k: v for k, v in errors.items() if not v[0] <= v[1]}
    shown = ", ".join(f"{k} {v[0]:.1e}" for k, v in errors.items())
    print(f"rank {rank}: {name}: {shown}: {'FAILED ' + str(sorted(failed)) if failed else 'ok'}",
          flush=True)
    return not failed


def worker(rank, init_file):
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"file://{init_file}", rank=rank,
                            world_size=WORLD)
    try:
        ok = all([run_case(rank, *case) for case in CASES])
        flags = torch.tensor([0 if ok else 1], device="cuda")
        dist.all_reduce(flags)
        if flags.item() != 0:
            raise SystemExit(f"rank {rank}: a case failed on some rank")
    finally:
        dist.destroy_process_group()


def main():
    if not HAVE_TORCH or not torch.cuda.is_available() or not gdn.device_available():
        print("skipped: no CUDA device (torch missing, no GPU, or no compute-capability-9.0 GPU)")
        return 0
    if torch.cuda.device_count() < WORLD:
        print(f"skipped: the two-GPU NCCL test needs {WORLD} GPUs; this machine has "
              f"{torch.cuda.device_count()}")
        return 0
    os.environ["NCCL_NVLS_ENABLE"] = "0"  # no NVLink multicast (the lent machines' rule)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    with tempfile.TemporaryDirectory() as tmp:
        mp.spawn(worker, args=(os.path.join(tmp, "rendezvous"),), nprocs=WORLD, join=True)
    print("two-GPU NCCL context parallelism: every case within the bars on both ranks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
