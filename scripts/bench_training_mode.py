#!/usr/bin/env python3
"""Training mode against recomputation, side by side on the same inputs (docs/training.md).

For each backward anchor row (scripts/shapes/bwd_anchors.csv) times, by CUDA-graph replay
(gdnbench.measure.time_graph, the peer benchmark's timer):
  fwd_ms / fwd_save_ms        the forward alone, inference and training mode (gdn_fwd_args::save)
  bwd_ms / bwd_saved_ms       the backward alone, computing everything again or reading the block
  step_ms / step_saved_ms     forward + backward: the training step without and with the block
and the saved block's size in bytes per token and value head, its CP segment length
(gdn_saved_init) and the largest relative difference of the gradients between the two paths.

Usage: scripts/bench_training_mode.py [--rows PATTERN] [--out FILE] [--reps N] [--warmup N]
       scripts/bench_training_mode.py --dry-run [--rows PATTERN]   (the rows, without a GPU)
Needs torch, a Hopper GPU and libgdn (GDN_LIBRARY or the package); writes a CSV with its
provenance header (bench/results/ for a bare file name).
"""
import argparse
import csv
import shlex
import sys
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "python"))

from gdnbench.provenance import git_sha, nvidia_smi, results_csv  # noqa: E402
from gdnbench.rows import load_rows, select_rows  # noqa: E402

COLUMNS = ["row", "h_qk", "h_v", "lengths", "variant_fwd", "variant_bwd", "segment_chunks",
           "saved_bytes_per_token_head", "fwd_ms", "fwd_save_ms", "bwd_ms", "bwd_saved_ms",
           "step_ms", "step_saved_ms", "step_ratio", "max_grad_rel_diff"]


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", default="", help="row filter (scripts/bench_peers.py --rows)")
    ap.add_argument("--out", default="", help="CSV path (default: training_mode_<UTC time>.csv in the results folder)")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--git-sha", default="")
    ap.add_argument("--dry-run", action="store_true",
                    help="list the selected rows and the columns, without torch or a GPU")
    return ap.parse_args(argv)


def main(argv=None):
    a = parse_args(argv)
    rows = select_rows(load_rows("bwd", REPO / "scripts" / "shapes", REPO / "bench" / "anchors"),
                       a.rows)
    if not rows:
        sys.exit(f"--rows '{a.rows}': no backward anchor row matches")
    if a.dry_run:
        print(",".join(COLUMNS))
        for row in rows:
            print(f"{row.name} {row.h_qk}/{row.h_v} {'+'.join(map(str, row.lengths))}")
        return
    import torch
    import gdn
    from gdn._checks import check_fwd_inputs
    from gdn._ops import backward_raw, forward_raw, saved_layout
    from gdnbench import measure

    props = torch.cuda.get_device_properties(0)
    path = results_csv(a.out, "training_mode")
    with open(path, "w", newline="") as f:
        for line in [
            f"gdnlab training mode against recomputation, {datetime.now(timezone.utc):%Y-%m-%d %H:%M UTC}",
            f"GPU: {props.name}, {props.multi_processor_count} SMs; driver: "
            f"{nvidia_smi('driver_version')}; CUDA (torch): {torch.version.cuda}; torch: {torch.__version__}",
            f"libgdn: {gdn.library().version()}; git SHA: {git_sha(a.git_sha)}",
            f"timing: CUDA-graph replay, median of {a.reps} after {a.warmup} warm-up replays; "
            f"inputs: docs/benchmarking.md, seed {a.seed} + row",
            "command: " + " ".join(shlex.quote(x) for x in [sys.executable] + sys.argv),
        ]:
            f.write(f"# {line}\n")
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        for i, row in enumerate(rows):
            inp = measure.make_inputs(row, a.seed + i, with_grads=True)
            spec = check_fwd_inputs(inp.q, inp.k, inp.v, inp.g, inp.beta, scale=inp.scale,
                                    initial_state=inp.h0, cu_seqlens=inp.cu_seqlens,
                                    cu_seqlens_cpu=inp.cu_seqlens_cpu)
            problem = spec.to_problem()
            lib = gdn.library()
            layout = saved_layout(spec)
            x = (spec, inp.q, inp.k, inp.v, inp.g, inp.beta, inp.h0)
            _, _, saved = forward_raw(*x, True, save=True)

            def fwd(save):
                return lambda: forward_raw(*x, True, save=save)

            def bwd(block):
                return lambda: backward_raw(*x, inp.do, inp.dht, True, saved=block)

            def step(save):
                def run():
                    _, _, block = forward_raw(*x, True, save=save)
                    return backward_raw(*x, inp.do, inp.dht, True, saved=block)
                return run

            t = {name: measure.time_graph(fn, a.reps, a.warmup).median_ms
                 for name, fn in [("fwd_ms", fwd(False)), ("fwd_save_ms", fwd(True)),
                                  ("bwd_ms", bwd(None)), ("bwd_saved_ms", bwd(saved)),
                                  ("step_ms", step(False)), ("step_saved_ms", step(True))]}
            recomputed = backward_raw(*x, inp.do, inp.dht, True)
            from_block = backward_raw(*x, inp.do, inp.dht, True, saved=saved)
            diff = max(float((p.float() - q.float()).norm() / q.float().norm().clamp_min(1e-30))
                       for p, q in zip(from_block, recomputed) if q is not None)
            tokens_heads = row.total_tokens * row.h_v
            out = {"row": row.name, "h_qk": row.h_qk, "h_v": row.h_v,
                   "lengths": "+".join(map(str, row.lengths)),
                   "variant_fwd": lib.fwd_variant_name(problem),
                   "variant_bwd": lib.bwd_variant_name(problem),
                   "segment_chunks": layout[1] if layout else "",
                   "saved_bytes_per_token_head": f"{layout[0] / tokens_heads:.1f}" if layout else "",
                   **{k: f"{v:.4f}" for k, v in t.items()},
                   "step_ratio": f"{t['step_ms'] / t['step_saved_ms']:.3f}",
                   "max_grad_rel_diff": f"{diff:.2e}"}
            w.writerow(out)
            f.flush()
            print(" ".join(f"{k}={v}" for k, v in out.items()), flush=True)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
