#!/usr/bin/env python3
"""Times libgdn against FLA (live, same process, same inputs, same timer) over the anchor
shape sets, and writes bench/results/<out>.csv with a provenance header plus a printed table.

Passes: fwd (scripts/shapes/fwd_anchors.csv), bwd (bwd_anchors.csv: the backward alone, from the
forward's intermediates) and train (the bwd_anchors.csv rows as one training step: the forward
that saves for backward, then the backward, in one graph); --pass both = fwd,bwd; --pass all =
fwd,bwd,train. Rows are joined with the published tables in bench/anchors/ (FlashQLA's H200
table: FlashQLA, FlashInfer and FLA columns); no training-step figure is published, so train
rows compare live figures only. Inputs: docs/benchmarking.md. Timer: CUDA-graph replay, median of
--reps samples after --warmup replays; each library's first (eager) call per row absorbs Triton
JIT and FLA's autotuning, which costs 30-110 s per new head configuration (rows are grouped by
head configuration, so once each). Set TRITON_CACHE_DIR to a kept folder to keep the
autotuning between runs.

FlashQLA runs live where the flash_qla package imports (flash-qla + tilelang + z3; TileLang
compiles each new shape on its first call, ~20 s, inside the eager first call, never timed):
flashqla_ms is then measured with the same timer, flashqla_source=live. Otherwise (or with
--no-flashqla, or on rows outside --flashqla-rows) flashqla_ms is its published figure,
flashqla_source=published, and train rows have none.

FlashInfer runs live on the forward rows where the flashinfer package imports (flashinfer-python
+ the CuTe DSL; its kernels compile on the first call of each configuration, inside the eager
first call): flashinfer_ms, flashinfer_source=live, its output and final state checked against
ours. It has no backward: bwd and train rows leave it empty. Rows whose shapes it cannot run get
flashinfer_source empty and the reason in note. flashinfer_published_ms is always the published
figure. How both come to a GPU machine without network: docs/benchmarking.md.

The CSV keeps published figures raw; the printed table scales them by the row's FLA
live/published ratio (docs/benchmarking.md).

FLA's backward (bwd and train) is timed with its Hopper/Triton>=3.4 guard bypassed (its issue
640): timing only.

Examples (on the H200, from the repo root, with FLA importable):
  PYTHONPATH=python:/tmp/site python3 scripts/bench_peers.py --pass fwd --out fwd_h200
  ... --pass bwd --rows 16/32,32k_1seq --reps 50 --out bwd_h200
  ... --pass train --out train_h200                      # training step, 32 backward rows
  ... --pass fwd --out fwd_h200 --resume --budget-s 500     # continue a run cut short
  . /tmp/site-peers/env.sh && ... --pass fwd --flashqla-rows 1x32768  # FlashQLA, FlashInfer live
  python3 scripts/bench_peers.py --pass all --dry-run        # list rows, no GPU needed
"""

import argparse
import os
import platform
import shlex
import sys
import time
from collections import OrderedDict
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "python"))

from gdnbench import report  # noqa: E402  (torch-free)
from gdnbench.provenance import git_sha, nvidia_smi, results_csv  # noqa: E402
from gdnbench.rows import RowError, load_rows, select_rows  # noqa: E402

# --pass values: the passes each one times, in this order.
PASS_SETS = {"fwd": ["fwd"], "bwd": ["bwd"], "train": ["train"], "both": ["fwd", "bwd"],
             "all": ["fwd", "bwd", "train"]}


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pass", dest="pass_", choices=list(PASS_SETS), default="fwd",
                    help="what to time: fwd, bwd, train (a training step on the backward "
                         "rows), both (fwd,bwd) or all (fwd,bwd,train) (default fwd)")
    ap.add_argument("--rows", default="",
                    help="comma-separated filters: a row-name substring, an anchor seqlens "
                         "label (1x32768, 8k_2seq) or a head pair h_qk/h_v (2/8)")
    ap.add_argument("--reps", type=int, default=30, help="timed graph replays per row (default 30)")
    ap.add_argument("--warmup", type=int, default=5, help="untimed replays per row (default 5)")
    ap.add_argument("--out", default="",
                    help="output CSV: a path, or a name put under bench/results/ "
                         "(default peers_<pass>_<UTC date>.csv)")
    ap.add_argument("--anchors-dir", default=str(REPO / "bench" / "anchors"),
                    help="folder of the published anchor CSVs (default bench/anchors)")
    ap.add_argument("--shapes-dir", default=str(REPO / "scripts" / "shapes"),
                    help="folder of fwd_anchors.csv / bwd_anchors.csv (default scripts/shapes)")
    ap.add_argument("--no-fla", action="store_true", help="do not time FLA (fla_ms left empty)")
    ap.add_argument("--no-flashqla", action="store_true",
                    help="do not time FlashQLA live even where flash_qla imports (published "
                         "figures only)")
    ap.add_argument("--flashqla-rows", default="",
                    help="time FlashQLA live only on the rows these --rows-style filters match "
                         "(its TileLang compile costs ~20 s per new shape); the other rows keep "
                         "its published figure (default: every row)")
    ap.add_argument("--no-flashinfer", action="store_true",
                    help="do not time FlashInfer live even where flashinfer imports (published "
                         "figures only)")
    ap.add_argument("--resume", action="store_true",
                    help="keep the rows of an existing --out that have no error; time the rest")
    ap.add_argument("--budget-s", type=float, default=0,
                    help="stop starting new rows after this many seconds (0: no limit); "
                         "finish later with --resume")
    ap.add_argument("--seed", type=int, default=1234, help="input seed (row i uses seed + i)")
    ap.add_argument("--git-sha", default=os.environ.get("GDN_GIT_SHA", ""),
                    help="commit measured (default $GDN_GIT_SHA, else git rev-parse HEAD)")
    ap.add_argument("--dispatch-table", default="",
                    help="time libgdn with this dispatch.json (gdnlab export) loaded at run time "
                         "instead of its built-in table")
    ap.add_argument("--dry-run", action="store_true",
                    help="list the rows with their published figures and exit (no GPU needed)")
    a = ap.parse_args(argv)
    if a.reps < 1:
        ap.error(f"--reps: expected >= 1; got {a.reps}")
    if a.warmup < 0:
        ap.error(f"--warmup: expected >= 0; got {a.warmup}")
    return a


def provenance(a, torch, fla_version, flashqla_note, flashinfer_note, gdn_version, train_path):
    import triton
    props = torch.cuda.get_device_properties(0)
    lines = [
        f"gdnlab peer benchmark, {datetime.now(timezone.utc):%Y-%m-%d %H:%M UTC}",
        f"GPU: {props.name}, {props.multi_processor_count} SMs, "
        f"{props.total_memory / 2**30:.0f} GiB; clocks now (sm, mem, max sm): "
        f"{nvidia_smi('clocks.sm,clocks.mem,clocks.max.sm')}",
        f"driver: {nvidia_smi('driver_version')}; CUDA (torch): {torch.version.cuda}; "
        f"torch: {torch.__version__}; triton: {triton.__version__}; python: {platform.python_version()}",
        f"FLA: {fla_version} (fla-core wheel, FLA_FLASH_QLA=0; bwd guard for its issue 640 "
        f"bypassed: timing only); FlashQLA: {flashqla_note}; FlashInfer: {flashinfer_note}",
        f"libgdn: {gdn_version}; git SHA: {git_sha(a.git_sha)}; dispatch table: "
        + (f"{a.dispatch_table} (loaded at run time)" if a.dispatch_table else "built in"),
        f"timing: CUDA-graph replay, median of {a.reps} after {a.warmup} warm-up replays, "
        f"eager first call per row; no L2 flush between replays (same for every library)",
        "inputs: docs/benchmarking.md (l2norm q/k bf16, g = logsigmoid(randn)/16 with 25% of value "
        f"heads g = 0, beta = sigmoid(randn), h0 = randn, cu_seqlens always), seed {a.seed} + row",
        "published columns are raw (unscaled); flashqla_source and flashinfer_source say live "
        "or published",
        "command: " + " ".join(shlex.quote(x) for x in [sys.executable] + sys.argv),
    ]
    if train_path:
        lines.insert(-3, "training step (pass train): forward that saves for backward + backward "
                     f"in one graph; ours: {train_path}; FLA: its chunk_gated_delta_rule_fwd then "
                     "_bwd from the forward's outputs (its autograd's calls); FlashQLA (live): "
                     "its autograd API")
    return lines


def relative_error(x, ref):
    d = (x.float() - ref.float()).norm()
    n = ref.float().norm()
    return float(d / n) if float(n) > 0 else float(d)


def time_library(name, make, out, errors, a):
    """Times make()'s callable into out's <name>_ms / _p20_ms / _p80_ms; a failure becomes one
    entry of errors (one failing library or row must not stop the run). True on success."""
    from gdnbench import measure
    try:
        t = measure.time_graph(make(), a.reps, a.warmup)
    except Exception as e:
        errors.append(f"{name}: {type(e).__name__}: {e}")
        return False
    out.update({f"{name}_ms": report.fmt_ms(t.median_ms), f"{name}_p20_ms": report.fmt_ms(t.p20_ms),
                f"{name}_p80_ms": report.fmt_ms(t.p80_ms)})
    return True


# Relative RMS within which a peer's forward must agree with ours.
CHECK_TOLERANCE = 2e-2


def check_forward(inp, fla, flashinfer, errors):
    """A cheap check that the peers computed what ours did: FLA's o (its forward is trustworthy;
    its backward is not, so only the forward is compared) and FlashInfer's o and final state (a
    wrong layout or gate convention of its adapter shows up here, not as a time)."""
    from gdnbench import peers
    try:
        o_ours, ht_ours = peers.ours_fwd(inp)()
    except Exception as e:
        errors.append(f"check: ours: {type(e).__name__}: {e}")
        return
    outputs = []
    if fla is not None:
        outputs.append(("FLA", lambda: [("o", fla.fwd(inp)()[1], o_ours)]))
    if flashinfer is not None:
        outputs.append(("FlashInfer", lambda: zip(("o", "final state"), flashinfer.fwd_outputs(inp),
                                                  (o_ours, ht_ours))))
    for name, compared in outputs:
        try:
            for what, x, ref in compared():
                rel = relative_error(x, ref)
                if not rel <= CHECK_TOLERANCE:
                    errors.append(f"check: {what} differs from {name}'s by {rel:.3g} relative RMS")
        except Exception as e:
            errors.append(f"check: {name}: {type(e).__name__}: {e}")


def measure_row(row, index, a, torch, fla, flashqla=None, flashinfer=None):
    from gdnbench import measure, peers
    out = {"pass": row.pass_, "name": row.name, "model": row.model, "seqlens": row.label,
           "lengths": "+".join(map(str, row.lengths)), "h_qk": row.h_qk, "h_v": row.h_v,
           "tokens": row.total_tokens, "samples": a.reps,
           "fla_published_ms": report.fmt_ms(row.published.get("fla")),
           "flashqla_ms": report.fmt_ms(row.published.get("flashqla")),
           "flashqla_source": "published" if row.published.get("flashqla") else "",
           "flashinfer_source": "published" if row.published.get("flashinfer") else "",
           "flashinfer_published_ms": report.fmt_ms(row.published.get("flashinfer"))}
    errors, notes = [], []
    inp = measure.make_inputs(row, a.seed + index, with_grads=row.pass_ in ("bwd", "train"))
    try:
        out["ours_variant"] = peers.ours_variant(inp, row.pass_)
    except Exception as e:
        errors.append(f"ours: {type(e).__name__}: {e}")
    if not errors:
        # Each library's maker is named after the pass: ours_fwd / ours_bwd / ours_train, and
        # the peers' fwd / bwd / train methods.
        time_library("ours", lambda: getattr(peers, f"ours_{row.pass_}")(inp), out, errors, a)
    if fla is not None:
        time_library("fla", lambda: getattr(fla, row.pass_)(inp), out, errors, a)
    if flashqla is not None and select_rows([row], a.flashqla_rows):
        live = {}
        if time_library("flashqla", lambda: getattr(flashqla, row.pass_)(inp), live, errors, a):
            out.update(live, flashqla_source="live")
    flashinfer_live = False
    if flashinfer is not None and row.pass_ == "fwd":
        reason = flashinfer.unsupported(inp)
        if reason:
            out["flashinfer_source"] = ""
            notes.append(f"flashinfer: unsupported: {reason}")
        else:
            live = {}
            flashinfer_live = time_library("flashinfer", lambda: flashinfer.fwd(inp), live,
                                           errors, a)
            if flashinfer_live:
                out.update(live, flashinfer_source="live")
    if row.pass_ == "fwd" and not errors and (fla is not None or flashinfer_live):
        check_forward(inp, fla, flashinfer if flashinfer_live else None, errors)
    out["note"] = "; ".join(notes)
    out["error"] = "; ".join(e.replace("\n", " ")[:300] for e in errors)
    del inp
    torch.cuda.empty_cache()
    return out


def open_live_peer(name, package, column, make, disabled_by):
    """(peer or None, provenance note) of a peer timed live where its package imports: its wheels
    are not always on the GPU machine, so a failed import leaves its published column. column is
    the peer's CSV column prefix."""
    if disabled_by:
        return None, f"published column ({disabled_by})"
    try:
        peer = make()
    except Exception as e:
        print(f"bench_peers: {name} not importable, published figures only: {e}", file=sys.stderr)
        return None, f"published column ({package} not importable: {type(e).__name__}: {e})"
    return peer, f"{peer.version} live ({column}_source=live)"


def kept_rows(path, resume):
    if not (resume and path.exists()):
        return []
    return [r for r in report.read_csv(path) if not r.get("error") and r.get("ours_ms")]


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    passes = PASS_SETS[a.pass_]
    try:
        rows = [r for p in passes for r in select_rows(load_rows(p, a.shapes_dir, a.anchors_dir), a.rows)]
    except (RowError, OSError) as e:
        print(f"bench_peers: {e}", file=sys.stderr)
        return 2
    if not rows:
        print(f"bench_peers: no rows match --rows '{a.rows}'", file=sys.stderr)
        return 2
    if a.dry_run:
        for r in rows:
            pub = " ".join(f"{k}={report.fmt_ms(v) or '-'}" for k, v in r.published.items())
            print(f"{r.pass_:5} {r.name:28} N={len(r.lengths):<2} T={r.total_tokens:<6} {pub}")
        print(f"{len(rows)} rows")
        return 0

    try:
        import torch
    except ImportError:
        print("bench_peers: skipped: no CUDA device (torch is not installed)", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("bench_peers: skipped: no CUDA device", file=sys.stderr)
        return 2
    from gdnbench import peers
    if a.dispatch_table:
        try:
            peers.load_dispatch_table(a.dispatch_table)
        except Exception as e:
            print(f"bench_peers: --dispatch-table: {e}", file=sys.stderr)
            return 2
    fla, fla_version = None, "not run (--no-fla)"
    if not a.no_fla:
        try:
            fla = peers.Fla()
            fla_version = fla.version
        except Exception as e:
            fla_version = f"unavailable ({type(e).__name__}: {e})"
            print(f"bench_peers: FLA not importable, not timed: {e}", file=sys.stderr)
    flashqla, flashqla_note = open_live_peer("FlashQLA", "flash_qla", "flashqla", peers.FlashQla,
                                             "--no-flashqla" if a.no_flashqla else "")
    if flashqla is not None and a.flashqla_rows:
        flashqla_note = (f"{flashqla.version} live on the rows --flashqla-rows '{a.flashqla_rows}' "
                         "matches (flashqla_source=live), published column on the others")
    flashinfer, flashinfer_note = open_live_peer("FlashInfer", "flashinfer", "flashinfer",
                                                 peers.FlashInfer,
                                                 "--no-flashinfer" if a.no_flashinfer else
                                                 "" if "fwd" in passes else
                                                 "no forward pass; it has no backward")

    path = results_csv(a.out, f"peers_{a.pass_}")
    kept = kept_rows(path, a.resume)
    done = {(r["pass"], r["name"]) for r in kept}
    train_path = peers.ours_train_path() if "train" in passes else ""
    lines = provenance(a, torch, fla_version, flashqla_note, flashinfer_note,
                       peers.library_version(), train_path)
    if kept:
        lines.append(f"resumed: {len(kept)} rows kept from an earlier run of this file")
    writer = report.CsvWriter(path, lines, kept)
    results = list(kept)
    start = time.monotonic()
    todo = [(i, r) for i, r in enumerate(rows) if (r.pass_, r.name) not in done]
    print(f"bench_peers: {len(todo)} rows to time ({len(kept)} kept) -> {path}", flush=True)
    heads_seen = OrderedDict()
    for n, (i, row) in enumerate(todo):
        if a.budget_s and time.monotonic() - start > a.budget_s:
            print(f"bench_peers: --budget-s {a.budget_s:g} reached; {len(todo) - n} rows left: "
                  f"rerun with --resume --out {path}", flush=True)
            break
        t0 = time.monotonic()
        first = (row.pass_, row.heads) not in heads_seen
        heads_seen[(row.pass_, row.heads)] = True
        try:
            out = measure_row(row, i, a, torch, fla, flashqla, flashinfer)
        except Exception as e:  # input creation or anything outside the per-library guards
            out = {"pass": row.pass_, "name": row.name, "seqlens": row.label, "h_qk": row.h_qk,
                   "h_v": row.h_v, "error": f"row: {type(e).__name__}: {e}"[:300]}
        writer.write(out)
        results.append({c: str(out.get(c, "")) for c in report.COLUMNS})
        qla = f", FlashQLA {out.get('flashqla_ms') or '-'} ms" if flashqla is not None else ""
        if flashinfer is not None and row.pass_ == "fwd":
            qla += f", FlashInfer {out.get('flashinfer_ms') or '-'} ms"
        print(f"[{n + 1}/{len(todo)}] {row.pass_} {row.name}: ours {out.get('ours_ms') or '-'} ms, "
              f"FLA {out.get('fla_ms') or '-'} ms{qla} ({time.monotonic() - t0:.1f} s"
              f"{', incl. warm-up of this head config' if first else ''})"
              f"{'  ERROR ' + out['error'] if out.get('error') else ''}", flush=True)
    writer.close()
    print()
    print(report.format_table(results))
    print(f"\nwrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
