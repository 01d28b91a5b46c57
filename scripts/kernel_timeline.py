#!/usr/bin/env python3
"""Per-kernel device times of one call per anchor row (forward, backward or training step) of
libgdn or of a peer (--library): where a call's time goes, kernel by kernel, on the benchmark's
inputs.

Each row's call runs once eagerly (dispatch, first-launch costs), then --reps times under
torch.profiler (CUPTI activity records of the device). Per kernel the CSV gives its launches per
call, the median over the reps of its device time per call and its share of the call; per row
the median of the call's summed device time (kernels and copies, not the gaps between them) and
of its span, the first activity's start to the last one's end. Kernels that run side by side
(the backward's local kernel beside the chain) make the sum exceed the span.
Rows, inputs and the dispatch are those of scripts/bench_peers.py (docs/benchmarking.md).

Examples (on the GPU machine, from the repo root):
  PYTHONPATH=python python3 scripts/kernel_timeline.py --pass fwd --rows 1024x8,4096x8 --out t_fwd
  ... --pass fwd --rows 1024x8 --library flashinfer --out t_fwd_fi   # a peer's kernels, same rows
  ... --pass bwd --rows 16/32 --reps 5 --out t_bwd
  python3 scripts/kernel_timeline.py --pass bwd --rows 32k_1seq --dry-run   # rows only, no GPU
"""

import argparse
import csv
import os
import platform
import shlex
import statistics
import sys
from collections import OrderedDict
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "python"))

from gdnbench.provenance import git_sha, nvidia_smi, results_csv  # noqa: E402  (torch-free)
from gdnbench.rows import RowError, load_rows, select_rows  # noqa: E402

PASSES = ("fwd", "bwd", "train")
LIBRARIES = ("ours", "fla", "flashqla", "flashinfer")
# What each peer times (scripts/bench_peers.py's makers): FlashInfer has no backward.
PEER_PASSES = {"fla": PASSES, "flashqla": PASSES, "flashinfer": ("fwd",)}


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pass", dest="pass_", choices=PASSES, default="fwd",
                    help="fwd (forward anchor rows), bwd or train (backward anchor rows)")
    ap.add_argument("--rows", default="",
                    help="comma-separated row filters: a name part, an anchor label (1024x8) "
                         "or h_qk/h_v (16/32); default every row of the pass")
    ap.add_argument("--library", choices=LIBRARIES, default="ours",
                    help="whose call: libgdn (default) or a peer, importable as in scripts/bench_peers.py")
    ap.add_argument("--reps", type=int, default=3, help="profiled calls per row (default 3)")
    ap.add_argument("--seed", type=int, default=1234, help="input seed (row i uses seed + i)")
    ap.add_argument("--out", default="", help="CSV path (default: timeline_<pass>_<time>.csv in the results folder, bench/results)")
    ap.add_argument("--anchors-dir", default=str(REPO / "bench" / "anchors"))
    ap.add_argument("--shapes-dir", default=str(REPO / "scripts" / "shapes"))
    ap.add_argument("--git-sha", default=os.environ.get("GDN_GIT_SHA", ""),
                    help="commit measured (default $GDN_GIT_SHA, else git rev-parse HEAD)")
    ap.add_argument("--dry-run", action="store_true", help="list the rows and exit (no GPU needed)")
    a = ap.parse_args(argv)
    if a.reps < 1:
        ap.error(f"--reps: expected >= 1; got {a.reps}")
    if a.library != "ours" and a.pass_ not in PEER_PASSES[a.library]:
        ap.error(f"--library {a.library}: has no {a.pass_} pass (expected --pass "
                 f"{' or '.join(PEER_PASSES[a.library])})")
    return a


def kernel_label(name):
    """A demangled kernel name without its return type, anonymous namespaces and parameter
    list: 'void gdn::bwd::(anonymous namespace)::k<float>(P)' -> 'gdn::bwd::k<float>'.
    Names that are no function signature (copies, memsets) stay as they are."""
    s = name.replace("(anonymous namespace)::", "").strip()
    if s.startswith("void "):
        s = s[len("void "):]
    depth = 0
    for i, ch in enumerate(s):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0 and i > 0 and not s[i - 1].isspace():
            return s[:i]  # a parameter list follows the name directly; "Memset (Device)" stays
    return s


def aggregate(reps):
    """reps: per profiled call, its device activities in launch order as (label, us, start_us).
    Returns (kernels, call_us, span_us): kernels maps each label, in first-seen order, to
    (launches per call, median us per call); call_us is the median of the calls' summed times,
    span_us the median of their spans (first start to last end)."""
    if not reps:
        raise ValueError("aggregate: no profiled calls")
    order = OrderedDict()
    per_rep = []
    for events in reps:
        sums = OrderedDict()
        for label, us, _ in events:
            order.setdefault(label, None)
            launches, total = sums.get(label, (0, 0.0))
            sums[label] = (launches + 1, total + us)
        per_rep.append(sums)
    kernels = OrderedDict()
    for label in order:
        launches = max(rep.get(label, (0, 0.0))[0] for rep in per_rep)
        kernels[label] = (launches, statistics.median(rep.get(label, (0, 0.0))[1] for rep in per_rep))
    call_us = statistics.median(sum(t for _, t in rep.values()) for rep in per_rep)
    span_us = statistics.median(max(start + us for _, us, start in events) - min(start for *_, start in events)
                                for events in reps)
    return kernels, call_us, span_us


def csv_rows(row, kernels, call_us, span_us):
    """The CSV lines of one anchor row: one per kernel, in launch order."""
    return [{"pass": row.pass_, "name": row.name, "kernel": label, "launches": launches,
             "median_us": f"{us:.2f}", "share": f"{us / call_us:.3f}" if call_us > 0 else "",
             "call_us": f"{call_us:.2f}", "span_us": f"{span_us:.2f}"}
            for label, (launches, us) in kernels.items()]


FIELDS = ["pass", "name", "kernel", "launches", "median_us", "share", "call_us", "span_us"]


def make_call(a, peers):
    """The maker of one call for the chosen library and pass: maker(inputs) -> callable."""
    if a.library == "ours":
        return {"fwd": peers.ours_fwd, "bwd": peers.ours_bwd, "train": peers.ours_train}[a.pass_]
    lib = {"fla": peers.Fla, "flashqla": peers.FlashQla, "flashinfer": peers.FlashInfer}[a.library]()
    return getattr(lib, a.pass_)


def profile_row(row, index, a, torch, make, measure):
    inp = measure.make_inputs(row, a.seed + index, with_grads=a.pass_ != "fwd")
    fn = make(inp)
    fn()
    torch.cuda.synchronize()
    reps = []
    for _ in range(a.reps):
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
        events = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
        reps.append([(kernel_label(e.name), getattr(e, "device_time", None) or e.cuda_time,
                      e.time_range.start) for e in events])
    return aggregate(reps)


def main(argv=None):
    a = parse_args(argv if argv is not None else sys.argv[1:])
    try:
        rows = select_rows(load_rows(a.pass_, a.shapes_dir, a.anchors_dir), a.rows)
    except RowError as e:
        print(f"kernel_timeline: {e}", file=sys.stderr)
        return 2
    if not rows:
        print(f"kernel_timeline: --rows '{a.rows}' matches no {a.pass_} row", file=sys.stderr)
        return 2
    if a.dry_run:
        for r in rows:
            print(f"{r.pass_} {r.name} ({'+'.join(map(str, r.lengths))} tokens, {r.h_qk}/{r.h_v} heads)")
        return 0
    import torch
    from gdnbench import measure, peers
    if not torch.cuda.is_available():
        print("kernel_timeline: no CUDA device (use --dry-run to list the rows)", file=sys.stderr)
        return 2
    out = results_csv(a.out, f"timeline_{a.pass_}")
    props = torch.cuda.get_device_properties(0)
    header = [
        f"gdnlab kernel timeline, {datetime.now(timezone.utc):%Y-%m-%d %H:%M UTC}",
        f"GPU: {props.name}, {props.multi_processor_count} SMs; driver: {nvidia_smi('driver_version')}; "
        f"clocks now (sm, mem, max sm): {nvidia_smi('clocks.sm,clocks.mem,clocks.max.sm')}",
        f"CUDA (torch): {torch.version.cuda}; torch: {torch.__version__}; python: {platform.python_version()}",
        f"library: {a.library}; libgdn: {peers.library_version()}; git SHA: {git_sha(a.git_sha)}; "
        "dispatch table: built in",
        f"timing: torch.profiler (CUPTI activity records), median over {a.reps} profiled calls after one "
        "eager call; inputs: docs/benchmarking.md, seed + row",
        "command: " + " ".join(shlex.quote(x) for x in [sys.executable, *sys.argv]),
    ]
    with open(out, "w", newline="") as f:
        f.writelines(f"# {line}\n" for line in header)
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        make = make_call(a, peers)
        for i, row in enumerate(rows):
            kernels, call_us, span_us = profile_row(row, i, a, torch, make, measure)
            w.writerows(csv_rows(row, kernels, call_us, span_us))
            f.flush()
            top = sorted(kernels.items(), key=lambda kv: -kv[1][1])[:4]
            print(f"[{i + 1}/{len(rows)}] {a.pass_} {row.name}: span {span_us / 1000:.3f} ms, "
                  f"kernels {call_us / 1000:.3f} ms; "
                  + ", ".join(f"{label.split('::')[-1][:40]} {us / 1000:.3f}" for label, (_, us) in top))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
