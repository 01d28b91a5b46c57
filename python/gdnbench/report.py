"""The benchmark CSV (provenance header + one line per row) and the printed summary.

Pure Python: no torch. The arithmetic is docs/benchmarking.md's: published
FlashQLA and FlashInfer figures (used where the peer did not run live) are scaled by the row's FLA
live/published ratio, live ones are used as measured; the CSV itself keeps every published figure
raw.
"""

import csv
import math
from collections import OrderedDict

COLUMNS = ["pass", "name", "model", "seqlens", "lengths", "h_qk", "h_v", "tokens",
           "ours_ms", "fla_ms", "fla_published_ms", "flashqla_ms", "flashqla_source",
           "flashinfer_ms", "flashinfer_source", "flashinfer_published_ms", "ours_p20_ms",
           "ours_p80_ms", "fla_p20_ms", "fla_p80_ms", "flashqla_p20_ms", "flashqla_p80_ms",
           "flashinfer_p20_ms", "flashinfer_p80_ms", "samples", "ours_variant", "note", "error"]


def fnum(x):
    """A positive finite float, or None (empty, 'nan', errors)."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if v > 0 and math.isfinite(v) else None


def gmean(xs):
    xs = [x for x in xs if x]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def fmt_ms(x):
    return "" if x is None else f"{x:.4f}"


class CsvWriter:
    """Writes the header once and each row as it is measured (flushed), so a run cut short by a
    time limit still leaves every finished row on disk."""

    def __init__(self, path, provenance_lines, kept_rows=()):
        self._f = open(path, "w", newline="")
        for line in provenance_lines:
            self._f.write(f"# {line}\n")
        self._w = csv.DictWriter(self._f, fieldnames=COLUMNS, extrasaction="ignore")
        self._w.writeheader()
        for r in kept_rows:
            self._w.writerow(r)
        self._f.flush()

    def write(self, row):
        self._w.writerow({c: row.get(c, "") for c in COLUMNS})
        self._f.flush()

    def close(self):
        self._f.close()


def read_csv(path):
    """The data rows of a benchmark CSV (lines starting with '#' skipped)."""
    with open(path, newline="") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def is_live(r, peer):
    """True where the row's figure of peer (flashqla, flashinfer) was measured here."""
    return r.get(f"{peer}_source", "").strip() == "live"


def row_ratios(r):
    """Speed-ups of ours over each peer for one CSV row (dict of str); None where unknown. A
    peer's live figure is used as measured; a published one is scaled by FLA live/published.
    FlashQLA's flashqla_ms holds either (flashqla_source says which); FlashInfer's live figure is
    flashinfer_ms and its published one flashinfer_published_ms, used where it did not run live."""
    ours, fla, flap = fnum(r.get("ours_ms")), fnum(r.get("fla_ms")), fnum(r.get("fla_published_ms"))
    out = {"vs_fla": None, "vs_flashqla": None, "vs_flashinfer": None, "vs_best": None,
           "flashqla_scaled": None, "flashinfer_scaled": None}
    if not ours or not fla:
        return out
    cal = fla / flap if flap else 1.0
    out["vs_fla"] = fla / ours
    q = fnum(r.get("flashqla_ms"))
    if q:
        out["flashqla_scaled"] = q * (cal if r.get("flashqla_source", "").strip() == "published" else 1.0)
        out["vs_flashqla"] = out["flashqla_scaled"] / ours
    fi_live = fnum(r.get("flashinfer_ms")) if is_live(r, "flashinfer") else None
    fi = fi_live or fnum(r.get("flashinfer_published_ms"))
    if fi:
        out["flashinfer_scaled"] = fi * (1.0 if fi_live else cal)
        out["vs_flashinfer"] = out["flashinfer_scaled"] / ours
    peers = [x for x in (out["flashqla_scaled"], out["flashinfer_scaled"]) if x]
    if peers:
        out["vs_best"] = min(peers) / ours
    return out


def is_single_sequence(r):
    return len([x for x in str(r.get("lengths", "")).split("+") if x]) == 1


def summarize(rows):
    """Per pass and head configuration (in first-seen order), then per pass over all heads:
    geometric means of each ratio, measured and missing counts, and the single-sequence rows
    slower than FlashQLA. Passes are never mixed in one mean (a training step is not a forward)."""
    groups = OrderedDict()
    for r in rows:
        groups.setdefault(f"{r['pass']} {r['h_qk']}/{r['h_v']}", []).append(r)
    for r in rows:
        groups.setdefault(f"all {r['pass']}", []).append(r)
    out = OrderedDict()
    for key, members in groups.items():
        ratios = [row_ratios(r) for r in members]
        measured = [x for x in ratios if x["vs_fla"]]
        out[key] = {
            "rows": len(members),
            "measured": len(measured),
            "vs_fla": gmean(x["vs_fla"] for x in measured),
            "vs_flashqla": gmean(x["vs_flashqla"] for x in measured),
            "vs_flashinfer": gmean(x["vs_flashinfer"] for x in measured),
            "vs_best": gmean(x["vs_best"] for x in measured),
            "single_seq_slower_than_flashqla": [
                r["name"] for r, x in zip(members, ratios)
                if is_single_sequence(r) and x["vs_flashqla"] is not None and x["vs_flashqla"] < 1.0],
        }
    return out


def _ratio(x):
    return "   -  " if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:6.2f}"


def _published_note(r):
    """Which peers' figures of the row are published ones, scaled (as row_ratios uses them)."""
    notes = []
    if r.get("flashqla_source", "").strip() == "published" and fnum(r.get("flashqla_ms")):
        notes.append("fqla=pub*cal")
    if not is_live(r, "flashinfer") and fnum(r.get("flashinfer_published_ms")):
        notes.append("fi=pub*cal")
    return " ".join(notes)


def format_table(rows):
    """The printed table: one line per row, then the geometric means per head configuration.
    Peer columns are FLA live, FlashQLA and FlashInfer (live, or published scaled)."""
    lines = [f"{'pass':5} {'row':28} {'ours ms':>8} {'FLA ms':>8} {'xFLA':>6} "
             f"{'FQLA ms':>8} {'xFQLA':>6} {'FI ms':>8} {'xFI':>6} {'xbest':>6}  note"]
    for r in rows:
        x = row_ratios(r)
        note = r.get("error", "") or r.get("note", "") or _published_note(r)
        lines.append(
            f"{r['pass']:5} {r['name'][:28]:28} {fmt_ms(fnum(r.get('ours_ms'))):>8} "
            f"{fmt_ms(fnum(r.get('fla_ms'))):>8} {_ratio(x['vs_fla'])} "
            f"{fmt_ms(x['flashqla_scaled']):>8} {_ratio(x['vs_flashqla'])} "
            f"{fmt_ms(x['flashinfer_scaled']):>8} {_ratio(x['vs_flashinfer'])} "
            f"{_ratio(x['vs_best'])}  {note[:60]}")
    lines.append("")
    lines.append(f"{'geomean (speed-up of ours)':28} {'rows':>9} {'xFLA':>6} {'xFQLA':>6} "
                 f"{'xFI':>6} {'xbest':>6}  single-seq rows slower than FlashQLA")
    for key, s in summarize(rows).items():
        slow = ",".join(s["single_seq_slower_than_flashqla"]) or "none"
        lines.append(f"{key:28} {s['measured']:>4}/{s['rows']:<4} {_ratio(s['vs_fla'])} "
                     f"{_ratio(s['vs_flashqla'])} {_ratio(s['vs_flashinfer'])} "
                     f"{_ratio(s['vs_best'])}  {slow}")
    lines.append("x<peer> = peer ms / ours ms (> 1: ours faster). Published FlashQLA/FlashInfer "
                 "figures (note pub*cal) scaled by FLA live/published per row (docs/benchmarking.md); "
                 "train rows have none.")
    return "\n".join(lines)
