#!/usr/bin/env python3
"""Writes the generated shape sets of scripts/shapes/ (stdlib only, deterministic).

    python3 scripts/shapes/generate_shape_sets.py          # rewrite the files
    python3 scripts/shapes/generate_shape_sets.py --check  # fail if a file is out of date

fwd_anchors.csv  the 171 rows of bench/anchors/flashqla_h200_fwd.csv (9 head configs x 19
                 layouts). The anchor notation becomes explicit lengths: 'A+B' lists them;
                 'AxB' means count x length, the length being the larger number (the table
                 writes both '1x32768' = one sequence of 32768 and '8192x4' = four of 8192).
                 Anchor rows list every length explicitly (no L*C terms).
bwd_anchors.csv  the 32 rows of bench/anchors/flashqla_h200_bwd.csv. Its '8k_2seq' rows were
                 published as random splits of the total whose lengths were not published; we
                 draw our own split, deterministically: cut points = sorted(random.Random(
                 f"42/{total}/{nseq}").sample(range(1, total), nseq - 1)). The seed string
                 (Python's str seeding is stable across versions) keeps the split of a given
                 (total, nseq) the same for every head configuration.
product.csv      packed variable-length batches that look like serving traffic (see
                 PRODUCT_LAYOUTS), over the four TP configurations of the 397B model.

smoke.csv and edge.csv are written by hand.
"""
import argparse
import csv
import math
import pathlib
import random
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHAPES = ROOT / "scripts" / "shapes"
ANCHORS = ROOT / "bench" / "anchors"

FORMAT_COMMENT = [
    "# gdnlab shape set (format: README.md, 'Shape sets'). Columns:",
    "#   name     unique within the set",
    "#   h_qk,h_v q/k heads and v heads (h_v % h_qk == 0); k,v head dims",
    "#   dtype    bf16 | fp16 (q, k, v, o)",
    "#   layout   packed: B = 1 and cu_seqlens from seqlens (passed even for one sequence)",
    "#            batched: B = number of sequences, all of one length, no cu_seqlens",
    "#   seqlens  lengths joined by '+'; a term L*C is C sequences of length L",
    "#   tag      free text without commas, may be empty",
]
HEADER = "name,h_qk,h_v,k,v,dtype,layout,seqlens,tag"


def read_anchor(path):
    lines = [l for l in path.read_text().splitlines() if l and not l.startswith("#")]
    return list(csv.DictReader(lines))


def compact(lengths):
    """'+'-joined lengths with runs written L*C (a run of one stays L)."""
    terms, i = [], 0
    while i < len(lengths):
        j = i
        while j < len(lengths) and lengths[j] == lengths[i]:
            j += 1
        run = j - i
        terms.append(str(lengths[i]) if run == 1 else f"{lengths[i]}*{run}")
        i = j
    return "+".join(terms)


def anchor_fwd_lengths(notation):
    if "+" in notation:
        return [int(x) for x in notation.split("+")]
    a, b = (int(x) for x in notation.split("x"))
    length, count = max(a, b), min(a, b)
    return [length] * count


def random_split(total, nseq):
    if nseq == 1:
        return [total]
    rng = random.Random(f"42/{total}/{nseq}")
    cuts = sorted(rng.sample(range(1, total), nseq - 1))
    bounds = [0] + cuts + [total]
    return [bounds[i + 1] - bounds[i] for i in range(nseq)]


def bwd_total(notation):  # '32k_4seq' -> (32768, 4)
    size, seqs = notation.split("_")
    return int(size.rstrip("k")) * 1024, int(seqs.rstrip("seq"))


def row(name, h_qk, h_v, layout, lengths, tag, explicit=False):
    seqlens = "+".join(map(str, lengths)) if explicit else compact(lengths)
    return f"{name},{h_qk},{h_v},128,128,bf16,{layout},{seqlens},{tag}"


def fwd_anchors():
    out = []
    for r in read_anchor(ANCHORS / "flashqla_h200_fwd.csv"):
        h_qk, h_v = int(r["h_qk"]), int(r["h_v"])
        name = f"hqk{h_qk}_hv{h_v}_{r['seqlens']}"
        out.append(row(name, h_qk, h_v, "packed", anchor_fwd_lengths(r["seqlens"]), r["model"],
                       explicit=True))
    return out


def bwd_anchors():
    out = []
    for r in read_anchor(ANCHORS / "flashqla_h200_bwd.csv"):
        h_qk, h_v = int(r["h_qk"]), int(r["h_v"])
        total, nseq = bwd_total(r["seqlens"])
        assert nseq == int(r["num_seqs"]), r
        name = f"hqk{h_qk}_hv{h_v}_{r['seqlens']}"
        out.append(row(name, h_qk, h_v, "packed", random_split(total, nseq), r["model"],
                       explicit=True))
    return out


def lognormal_batch(seed, total, median, sigma, longest):
    """Lengths drawn log-normally (clipped to [1, longest]) until they add up to `total`."""
    rng = random.Random(seed)
    lengths, left = [], total
    while left > 0:
        draw = int(round(math.exp(rng.gauss(math.log(median), sigma))))
        draw = max(1, min(draw, longest, left))
        lengths.append(draw)
        left -= draw
    return lengths


# (name, lengths, description). Realistic shapes of a prefill batch in a serving engine.
PRODUCT_LAYOUTS = [
    ("ragged_4k", [410, 431, 294, 991, 386, 1584], "docs/spec.md ragged list"),
    ("short_pair", [47, 81], "docs/spec.md short list"),
    ("chat_16k", lognormal_batch("chat/16384", 16384, 600, 1.0, 8192), "chat prompts"),
    ("many_short_8k", lognormal_batch("short/8192", 8192, 100, 0.8, 1024), "short turns"),
    ("long_plus_short_32k", [24576] + lognormal_batch("tail/8192", 8192, 400, 0.9, 4096),
     "one long document and chat"),
    ("rag_64k", lognormal_batch("rag/65536", 65536, 8000, 0.4, 16384), "retrieval prompts"),
]
PRODUCT_HEADS = [(2, 8, "397B/122B TP8"), (4, 16, "397B/122B TP4"), (8, 32, "397B/122B TP2"),
                 (16, 64, "397B/122B TP1")]


def product():
    out = []
    for h_qk, h_v, model in PRODUCT_HEADS:
        for layout, lengths, what in PRODUCT_LAYOUTS:
            out.append(row(f"hqk{h_qk}_hv{h_v}_{layout}", h_qk, h_v, "packed", lengths,
                           f"{model} {what}"))
    return out


def document(title, rows):
    lines = [f"# {title}", "# Generated by scripts/shapes/generate_shape_sets.py; do not edit."]
    return "\n".join(lines + FORMAT_COMMENT + [HEADER] + rows) + "\n"


SETS = {
    "fwd_anchors.csv": lambda: document(
        "Forward anchors: FlashQLA's published H200 table (bench/anchors/flashqla_h200_fwd.csv),"
        " 9 head configurations x 19 layouts.", fwd_anchors()),
    "bwd_anchors.csv": lambda: document(
        "Backward anchors: FlashQLA's published H200 backward table (bench/anchors/"
        "flashqla_h200_bwd.csv). Multi-sequence splits are ours: seed string '42/<total>/<nseq>',"
        " see the generator.", bwd_anchors()),
    "fwd_anchors_tuned61.csv": lambda: document(
        "Forward anchors rows 0..60 (2/8, 4/16, 8/32 heads and 4 rows of 16/64): the rows that"
        " the H200 anchor sweeps of tests/data/anchors_sweeps_h200.sqlite measured with every fused"
        " variant; its oracle-gap validation sweep re-measured exactly these.", fwd_anchors()[:61]),
    "product.csv": lambda: document(
        "Product: packed variable-length batches shaped like serving traffic"
        " (seeded log-normal lengths).", product()),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if a file is out of date")
    args = parser.parse_args()
    stale = []
    for file_name, make in SETS.items():
        path, text = SHAPES / file_name, make()
        if args.check:
            if not path.exists() or path.read_text() != text:
                stale.append(file_name)
        else:
            path.write_text(text)
            print(f"wrote {path.relative_to(ROOT)} ({text.count(chr(10)) - len(FORMAT_COMMENT) - 3} rows)")
    if stale:
        sys.exit(f"out of date: {', '.join(stale)}; run {pathlib.Path(__file__).name}")


if __name__ == "__main__":
    main()
