"""Benchmark rows: the anchor shape sets (scripts/shapes/*_anchors.csv) joined with the published
anchor tables (bench/anchors/*.csv). Pure Python: no torch, testable anywhere.

A shape-set row is named hqk<h_qk>_hv<h_v>_<label>, where <label> is the anchor table's own
'seqlens' text (1x32768, 16384+16384, 8k_2seq, ...); that label is the join key.

Passes: fwd (forward anchors), bwd (backward anchors, backward only, from the forward's saved
intermediates) and train (the backward anchors again, timed as one training step: a forward that
saves for backward, then the backward). No peer publishes a training-step figure, so train rows
carry no published figures (only the model name of the backward table).
"""

import csv
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional

SHAPE_COLUMNS = ["name", "h_qk", "h_v", "k", "v", "dtype", "layout", "seqlens", "tag"]


class RowError(ValueError):
    """A malformed shape or anchor file; the message names the file and line."""


@dataclass
class BenchRow:
    pass_: str                       # one of PASSES
    name: str                        # shape-set row name
    label: str                       # the anchor's seqlens text, written as the CSV's seqlens
    lengths: List[int]
    h_qk: int
    h_v: int
    k: int = 128
    v: int = 128
    dtype: str = "bf16"
    model: str = ""
    published: dict = field(default_factory=dict)  # fla / flashqla / flashinfer -> ms or None

    @property
    def heads(self):
        return (self.h_qk, self.h_v)

    @property
    def total_tokens(self):
        return sum(self.lengths)


def _data_lines(path):
    """(line number, text) of the non-comment, non-empty lines of a CSV file."""
    with open(path, newline="") as f:
        return [(i, line) for i, line in enumerate(f, 1) if line.strip() and not line.startswith("#")]


def _dict_rows(path):
    lines = _data_lines(path)
    if not lines:
        raise RowError(f"{path}: no header line")
    header = next(csv.reader([lines[0][1]]))
    out = []
    for number, text in lines[1:]:
        values = next(csv.reader([text]))
        if len(values) != len(header):
            raise RowError(f"{path}:{number}: expected {len(header)} fields "
                           f"({','.join(header)}), got {len(values)}")
        out.append((number, dict(zip(header, (v.strip() for v in values)))))
    return header, out


def parse_seqlens(text, where):
    """'8192+4096*3' -> [8192, 4096, 4096, 4096] (a term L*C is C sequences of length L)."""
    lengths = []
    for term in text.split("+"):
        parts = term.split("*")
        try:
            length = int(parts[0])
            count = int(parts[1]) if len(parts) == 2 else 1
        except (ValueError, IndexError):
            raise RowError(f"{where}: seqlens term '{term}' is not L or L*C") from None
        if len(parts) > 2 or length < 0 or count < 1:
            raise RowError(f"{where}: seqlens term '{term}' is not L or L*C with L >= 0, C >= 1")
        lengths.extend([length] * count)
    return lengths


def read_shape_set(path):
    """The rows of a shape-set CSV as dicts with parsed ints and 'lengths'."""
    header, rows = _dict_rows(path)
    missing = [c for c in SHAPE_COLUMNS if c not in header]
    if missing:
        raise RowError(f"{path}: header lacks column(s) {', '.join(missing)}")
    out = []
    for number, r in rows:
        where = f"{path}:{number}"
        try:
            parsed = {key: int(r[key]) for key in ("h_qk", "h_v", "k", "v")}
        except ValueError:
            raise RowError(f"{where}: h_qk, h_v, k, v must be integers") from None
        if r["layout"] != "packed":
            raise RowError(f"{where}: layout '{r['layout']}': anchor rows must be packed")
        out.append({**r, **parsed, "lengths": parse_seqlens(r["seqlens"], where)})
    return out


def _ms(text):
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if value > 0 else None


def read_anchor_table(path, pass_):
    """{(h_qk, h_v, label): (model, {'fla', 'flashqla', 'flashinfer'} -> ms)} of one table."""
    _, rows = _dict_rows(path)
    table = {}
    for number, r in rows:
        try:
            key = (int(r["h_qk"]), int(r["h_v"]), r["seqlens"])
        except (KeyError, ValueError):
            raise RowError(f"{path}:{number}: needs integer h_qk, h_v and a seqlens label") from None
        table[key] = (r.get("model", ""), {
            "fla": _ms(r.get("fla_ms")),
            "flashqla": _ms(r.get("flashqla_ms")),
            # the backward table has no FlashInfer column
            "flashinfer": _ms(r.get("flashinfer_ms")) if pass_ == "fwd" else None,
        })
    return table


PASSES = ("fwd", "bwd", "train")
# The shape set and published table each pass reads; a training step times the backward rows.
SHAPE_FILES = {"fwd": "fwd_anchors.csv", "bwd": "bwd_anchors.csv", "train": "bwd_anchors.csv"}
ANCHOR_FILES = {"fwd": "flashqla_h200_fwd.csv", "bwd": "flashqla_h200_bwd.csv",
                "train": "flashqla_h200_bwd.csv"}
# Passes whose published figures are the table's own measurements of that pass.
PUBLISHED_PASSES = ("fwd", "bwd")


def load_rows(pass_, shapes_dir, anchors_dir):
    """BenchRows of one pass, in shape-set order, each with its published figures (none for
    train: the backward table's figures are backward-only and must not stand for a step)."""
    if pass_ not in PASSES:
        raise RowError(f"pass '{pass_}': expected one of {', '.join(PASSES)}")
    shapes = read_shape_set(Path(shapes_dir) / SHAPE_FILES[pass_])
    anchors = read_anchor_table(Path(anchors_dir) / ANCHOR_FILES[pass_], pass_)
    rows = []
    for s in shapes:
        prefix = f"hqk{s['h_qk']}_hv{s['h_v']}_"
        if not s["name"].startswith(prefix):
            raise RowError(f"{SHAPE_FILES[pass_]} row '{s['name']}': name does not start with "
                           f"'{prefix}' (expected hqk<h_qk>_hv<h_v>_<anchor seqlens>)")
        label = s["name"][len(prefix):]
        model, published = anchors.get((s["h_qk"], s["h_v"], label), ("", {}))
        if pass_ not in PUBLISHED_PASSES:
            published = {key: None for key in published}
        rows.append(BenchRow(pass_=pass_, name=s["name"], label=label, lengths=s["lengths"],
                             h_qk=s["h_qk"], h_v=s["h_v"], k=s["k"], v=s["v"], dtype=s["dtype"],
                             model=model or s.get("tag", ""), published=published))
    return rows


def select_rows(rows, pattern: Optional[str]):
    """Rows whose name, label or 'h_qk/h_v' contains any comma-separated part of `pattern`."""
    if not pattern:
        return rows
    parts = [p.strip() for p in pattern.split(",") if p.strip()]
    return [r for r in rows
            if any(p in r.name or p == r.label or p == f"{r.h_qk}/{r.h_v}" for p in parts)]
