"""What a measurement file's header names: the commit measured and the GPU's state, read the
same way by every script that writes results (torch-free)."""

import subprocess
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent


def git_sha(explicit=""):
    """The commit measured: `explicit` when given (a copied tree's .git may be stale), else
    HEAD, with -dirty when tracked files differ."""
    if explicit:
        return explicit
    try:
        out = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--verify", "-q", "HEAD"],
                             capture_output=True, text=True, timeout=10)
        sha = out.stdout.strip()
        if out.returncode == 0 and sha:
            dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain",
                                    "--untracked-files=no"], capture_output=True, text=True,
                                   timeout=10).stdout.strip()
            return sha + ("-dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        pass
    return "unknown (no .git here and GDN_GIT_SHA unset)"


def nvidia_smi(query):
    """One nvidia-smi --query-gpu value line of the first GPU, or n/a."""
    try:
        out = subprocess.run(["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)
        return out.stdout.strip().splitlines()[0] if out.returncode == 0 else "n/a"
    except (OSError, subprocess.SubprocessError, IndexError):
        return "n/a"


def results_csv(out, stem):
    """Where a results script writes: `out`, or STEM_<UTC time>.csv; a bare file name goes to
    bench/results/, a missing .csv suffix is added; the folder is created."""
    path = Path(out or f"{stem}_{datetime.now(timezone.utc):%Y%m%d_%H%M}.csv")
    if path.parent == Path("."):
        path = REPO / "bench" / "results" / path
    if path.suffix != ".csv":
        path = path.with_suffix(".csv")
    path.parent.mkdir(parents=True, exist_ok=True)
    return path
