#!/usr/bin/env python3
"""Packs wheels into loads: folders small enough to travel, one per call, to a GPU machine that
has no network and takes a limited size of files per call (docs/benchmarking.md, "Peers live on
a machine without network"). scripts/install_wheel_load.sh installs them there.

  scripts/wheel_loads.py pack --from DIR --to DIR [--max-load-mib N] [--provided NAMES]
                              [--not-needed NAMES] SPEC...

SPEC is NAME==VERSION, one per wheel of the set, each a file in --from (pip download's names).
Before packing, every wheel's Requires-Dist (extras left out, markers read for CPython 3.12 on
x86_64 Linux, the GPU machine's interpreter) must be met: by a wheel of the set at a version its
specifier allows, by a package the GPU machine's image has (--provided), or by a package known not
to be needed on the path used (--not-needed); anything else stops the packing with its name.

The wheels, in SPEC order, are cut into the fewest loads of at most --max-load-mib each, of
about equal size (the same number of loads, more room left for the rest of a call). A wheel that
crosses a load's end travels as pieces named WHEEL.part-aa, WHEEL.part-ab, ... (split's names:
`cat WHEEL.part-* > WHEEL` joins them) in consecutive loads. --to gets load1 ... loadN, each with
its files and a copy of MANIFEST.tsv, which names every wheel with its size, SHA-256 and pieces:

  wheel  FILE  BYTES  SHA256  PIECES
  piece  FILE  INDEX  LOAD  PIECE_FILE  BYTES      (a piece named FILE is the whole wheel)
  load   LOAD  BYTES
"""

import argparse
import hashlib
import math
import re
import shutil
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import List

try:
    from packaging.markers import Marker
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.version import Version
except ImportError:  # pip carries its own copy
    from pip._vendor.packaging.markers import Marker
    from pip._vendor.packaging.requirements import InvalidRequirement, Requirement
    from pip._vendor.packaging.version import Version

MANIFEST = "MANIFEST.tsv"
MIB = 1024 * 1024
# The GPU machine's interpreter, for the markers of Requires-Dist.
TARGET_ENV = {"python_version": "3.12", "python_full_version": "3.12.3",
              "implementation_name": "cpython", "platform_python_implementation": "CPython",
              "sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64",
              "os_name": "posix", "extra": ""}


class PackError(Exception):
    pass


def normalize(name):
    """PEP 503's name: lower case, runs of -_. as one -."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass
class Wheel:
    path: Path
    name: str       # normalized
    version: str

    @property
    def file(self):
        return self.path.name


def parse_spec(spec):
    m = re.fullmatch(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([A-Za-z0-9.+!_-]+)\s*", spec)
    if not m:
        raise PackError(f"SPEC '{spec}': expected NAME==VERSION")
    return normalize(m.group(1)), m.group(2)


def find_wheel(folder, spec):
    """The wheel file in folder that SPEC names (wheel names use _ for - in the name)."""
    name, version = parse_spec(spec)
    found = [p for p in sorted(Path(folder).glob("*.whl"))
             if normalize(p.name.split("-")[0]) == name
             and Version(p.name.split("-")[1]) == Version(version)]
    if len(found) != 1:
        have = ", ".join(p.name for p in found) or "none"
        raise PackError(f"SPEC '{spec}': expected one wheel of it in {folder}; found {have}")
    return Wheel(found[0], name, version)


def requires_dist(wheel):
    """The Requires-Dist lines of a wheel's METADATA."""
    with zipfile.ZipFile(wheel.path) as z:
        metas = [n for n in z.namelist() if n.endswith(".dist-info/METADATA")]
        if len(metas) != 1:
            raise PackError(f"{wheel.file}: expected one .dist-info/METADATA; found {len(metas)}")
        text = z.read(metas[0]).decode("utf-8", "replace")
    head = text.split("\n\n", 1)[0]  # the headers; the description follows a blank line
    return [line.split(":", 1)[1].strip() for line in head.splitlines()
            if line.startswith("Requires-Dist:")]


def unmet_requirements(wheels, provided, not_needed):
    """One line per requirement of the set that nothing meets (empty: all met)."""
    in_set = {w.name: w for w in wheels}
    known = {normalize(n) for n in provided} | {normalize(n) for n in not_needed}
    unmet = []
    for w in wheels:
        for text in requires_dist(w):
            try:
                req = Requirement(text)
            except InvalidRequirement as e:
                unmet.append(f"{w.name} {w.version}: unreadable Requires-Dist '{text}': {e}")
                continue
            if req.marker is not None and ("extra" in str(req.marker)
                                           or not req.marker.evaluate(TARGET_ENV)):
                continue
            name = normalize(req.name)
            if name in in_set:
                have = in_set[name].version
                if req.specifier and not req.specifier.contains(have, prereleases=True):
                    unmet.append(f"{w.name} {w.version} needs {req}; the set has {name} {have}")
            elif name not in known:
                unmet.append(f"{w.name} {w.version} needs {req}: not in the set, nor --provided, "
                             "nor --not-needed")
    return unmet


@dataclass
class Piece:
    wheel: Wheel
    index: int
    offset: int
    size: int
    whole: bool

    @property
    def file(self):
        if self.whole:
            return self.wheel.file
        return f"{self.wheel.file}.part-{split_suffix(self.index)}"


@dataclass
class Load:
    name: str
    pieces: List[Piece] = field(default_factory=list)

    @property
    def size(self):
        return sum(p.size for p in self.pieces)


def split_suffix(index):
    """split(1)'s two-letter suffixes: aa, ab, ..., zz."""
    if not 0 <= index < 26 * 26:
        raise PackError(f"a wheel cut into more than {26 * 26} pieces")
    return chr(ord("a") + index // 26) + chr(ord("a") + index % 26)


def plan_loads(wheels, max_bytes):
    """The fewest loads of at most max_bytes each, of about equal size, the wheels in order and
    cut where a load ends."""
    if max_bytes < 1:
        raise PackError(f"load size: expected >= 1 byte; got {max_bytes}")
    sizes = [w.path.stat().st_size for w in wheels]
    total = sum(sizes)
    count = max(1, math.ceil(total / max_bytes))
    per_load = math.ceil(total / count)
    loads = [Load(f"load{i + 1}") for i in range(count)]
    current = 0
    for wheel, size in zip(wheels, sizes):
        if size == 0:
            raise PackError(f"{wheel.path}: an empty file, not a wheel")
        offset = index = 0
        while offset < size:
            room = per_load - loads[current].size
            if room <= 0:
                current += 1
                continue
            take = min(room, size - offset)
            loads[current].pieces.append(Piece(wheel, index, offset, take,
                                               whole=offset == 0 and take == size))
            offset, index = offset + take, index + 1
    return loads


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def manifest_lines(wheels, loads):
    pieces = [p for load in loads for p in load.pieces]
    load_of = {id(p): load.name for load in loads for p in load.pieces}
    lines = ["# wheel loads (scripts/wheel_loads.py pack); scripts/install_wheel_load.sh LOADDIR "
             "SITEDIR installs them"]
    for w in wheels:
        mine = [p for p in pieces if p.wheel is w]
        lines.append(f"wheel\t{w.file}\t{w.path.stat().st_size}\t{sha256(w.path)}\t{len(mine)}")
        lines += [f"piece\t{w.file}\t{p.index}\t{load_of[id(p)]}\t{p.file}\t{p.size}" for p in mine]
    lines += [f"load\t{load.name}\t{load.size}" for load in loads]
    return lines


def write_loads(loads, lines, to):
    to = Path(to)
    to.mkdir(parents=True, exist_ok=True)
    for old in list(to.glob("load*")) + [to / MANIFEST]:
        if old.is_dir() and re.fullmatch(r"load\d+", old.name):
            shutil.rmtree(old)
        elif old.name == MANIFEST and old.exists():
            old.unlink()
    text = "\n".join(lines) + "\n"
    (to / MANIFEST).write_text(text)
    for load in loads:
        folder = to / load.name
        folder.mkdir()
        (folder / MANIFEST).write_text(text)
        for p in load.pieces:
            with open(p.wheel.path, "rb") as src, open(folder / p.file, "wb") as dst:
                src.seek(p.offset)
                remaining = p.size
                while remaining:
                    block = src.read(min(remaining, 1 << 20))
                    dst.write(block)
                    remaining -= len(block)


def names(text):
    return [n for n in re.split(r"[\s,]+", text or "") if n]


def pack(a):
    wheels, seen = [], set()
    for spec in a.specs:
        w = find_wheel(a.source, spec)
        if w.name not in seen:
            seen.add(w.name)
            wheels.append(w)
    unmet = unmet_requirements(wheels, names(a.provided), names(a.not_needed))
    if unmet:
        raise PackError("requirements not met:\n  " + "\n  ".join(unmet))
    loads = plan_loads(wheels, int(a.max_load_mib * MIB))
    write_loads(loads, manifest_lines(wheels, loads), a.to)
    total = sum(load.size for load in loads)
    print(f"{len(wheels)} wheels, {total / MIB:.1f} MiB, in {len(loads)} loads of at most "
          f"{a.max_load_mib:g} MiB under {a.to}:")
    for load in loads:
        parts = ", ".join(p.file for p in load.pieces)
        print(f"  {load.name}  {load.size / MIB:5.1f} MiB  {parts}")
    return 0


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("pack", help="check a wheel set's requirements and cut it into loads")
    p.add_argument("--from", dest="source", required=True, help="folder of the downloaded wheels")
    p.add_argument("--to", required=True, help="folder the loads are written to (its load* "
                   "folders and MANIFEST.tsv are replaced)")
    p.add_argument("--max-load-mib", type=float, default=50,
                   help="largest load in MiB (default 50: a call carries 64 MiB with the "
                        "repository's own files)")
    p.add_argument("--provided", default="", help="packages the GPU machine's image has")
    p.add_argument("--not-needed", default="",
                   help="requirements known not to be needed on the path used")
    p.add_argument("specs", nargs="+", metavar="SPEC", help="NAME==VERSION of each wheel")
    a = ap.parse_args(argv)
    if a.max_load_mib <= 0:
        ap.error(f"--max-load-mib: expected > 0; got {a.max_load_mib:g}")
    try:
        return pack(a)
    except (PackError, OSError, zipfile.BadZipFile) as e:
        print(f"wheel_loads: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
