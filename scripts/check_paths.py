#!/usr/bin/env python3
"""Lists the repository paths that tracked files name but the repository does not hold.

Scans every tracked text file for words that start with a top-level folder of the repository
(`kernels/`, `docs/`, `bench/`, ...) and for references outside it (`../`), and prints
`file:line: path` for each one that does not exist in the working tree. Build outputs
(`build/...`) and paths a command creates (`results/`, `table/`) are not repository paths and
are not checked. Exit status 1 when something is missing.

  scripts/check_paths.py            check the working tree
  scripts/check_paths.py --allow PATH,PATH    accept these paths as present
"""

import argparse
import glob
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TOP = ("kernels", "problems", "app", "tuner", "profiler", "db", "gui", "scripts", "bench", "tests", "docs",
       "python", "cmake", ".ci")
PATH = re.compile(r"(?<![\w./${}-])((?:%s)/[\w./*{},+-]*[\w*}/])" % "|".join(re.escape(t) for t in TOP))
OUTSIDE = re.compile(r"\.\./shared/|(?<![\w/])(?:gdn|anchors|profiling|architecture)\.md\b")
BINARY = (".sqlite", ".png", ".gz", ".so", ".a")
# Words that look like paths and are not meant as files of the repository, with the reason.
NOT_PATHS = {
    "scripts/requirements.txt": "optional: scripts/setup.sh reads it when the project has one",
    "bench/results/missing.csv": "a test's deliberately missing file",
    "tests/screenshots": "prose: the dashboard's headless mode",
    "profiler/PM-sampling": "prose: profiler or PM-sampling support",
    "kernels/call": "a log label: kernels per call",
}


def expand(path):
    """Brace lists ({a,b}) expanded; globs kept for glob()."""
    m = re.search(r"\{([^{}]*)\}", path)
    if not m:
        return [path]
    out = []
    for alt in m.group(1).split(","):
        out += expand(path[:m.start()] + alt + path[m.end():])
    return out


def exists(path, allowed, folder):
    """path exists from the repository root or from the naming file's folder, as written or as
    a stem with an extension (`gui/src/plot_draw` for plot_draw.cpp)."""
    path = path.rstrip(".,")
    if path in allowed or path in NOT_PATHS:
        return True
    for p in expand(path):
        if not any(glob.glob(str(base / p)) or glob.glob(str(base / p) + ".*")
                   for base in (REPO, REPO / folder)):
            return False
    return True


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--allow", default="", help="comma-separated paths to accept as present")
    a = ap.parse_args(argv)
    allowed = {x for x in a.allow.split(",") if x}
    files = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True,
                           check=True).stdout.split("\n")
    missing = 0
    for f in files:
        if not f or f.endswith(BINARY) or not (REPO / f).is_file():
            continue
        try:
            text = (REPO / f).read_text()
        except UnicodeDecodeError:
            continue
        for n, line in enumerate(text.split("\n"), 1):
            for m in PATH.finditer(line):
                if not exists(m.group(1), allowed, Path(f).parent):
                    print(f"{f}:{n}: {m.group(1)}")
                    missing += 1
            for m in OUTSIDE.finditer(line):
                print(f"{f}:{n}: outside the repository: {m.group(0)}")
                missing += 1
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
