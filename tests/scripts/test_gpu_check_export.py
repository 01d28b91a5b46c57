"""scripts/gpu_check.sh's table export after a tuning stage (export_table): with a forward anchor
sweep in the tuning database, that sweep with the backward one merged; with a backward sweep
alone (tune-bwd), the committed forward sweep as the base and the backward sweep merged from the
tuning database; and a failing export (another kind of device) fails the stage. gdnlab is a
fake here that records its arguments and writes what the real one would."""

import os
import sqlite3
import subprocess
import tarfile
import tempfile
import textwrap
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "gpu_check.sh"
COMMITTED_FWD = "bench/results/h200_2026-11-30_anchors_sweep.sqlite"

# The fake gdnlab: `sweep` adds a finished sweep of its --shapes to --db; `report` prints;
# `export` logs its arguments and writes --out (or fails when GDNLAB_FAKE_EXPORT_FAILS is set).
FAKE_GDNLAB = textwrap.dedent("""\
    #!/usr/bin/env python3
    import os, sqlite3, sys
    args = sys.argv[1:]
    def opt(name):
        return args[args.index(name) + 1]
    with open(os.environ["GDNLAB_FAKE_LOG"], "a") as log:
        log.write(" ".join(args) + "\\n")
    if args[0] == "sweep":
        db = sqlite3.connect(opt("--db"))
        db.execute("CREATE TABLE IF NOT EXISTS sweeps (id INTEGER PRIMARY KEY, shapes TEXT, status TEXT)")
        db.execute("INSERT INTO sweeps (shapes, status) VALUES (?, 'finished')", (opt("--shapes"),))
        db.commit()
    elif args[0] == "compare" and "--out" in args:
        open(opt("--out"), "w").write("shape_set,row_index\\n")
    elif args[0] == "export":
        if os.environ.get("GDNLAB_FAKE_EXPORT_FAILS"):
            sys.exit("gdnlab export: error: merged sweep 1 ran on NVIDIA H100, sweep 1 on NVIDIA H200")
        os.makedirs(opt("--out"), exist_ok=True)
        open(os.path.join(opt("--out"), "dispatch.json"), "w").write("{}")
    """)


def run_stage(tmp, stages, tune_db=None, export_fails=False):
    build = tmp / "build"
    build.mkdir(exist_ok=True)
    (build / "CMakeCache.txt").write_text(f"CMAKE_CACHEFILE_DIR:INTERNAL={build}\n")
    fake = build / "gdnlab"
    fake.write_text(FAKE_GDNLAB)
    fake.chmod(0o755)
    log = tmp / "gdnlab.log"
    env = dict(os.environ, TMPDIR=str(tmp), PATH="/usr/bin:/bin", GDNLAB_FAKE_LOG=str(log))
    if export_fails:
        env["GDNLAB_FAKE_EXPORT_FAILS"] = "1"
    cmd = ["bash", str(SCRIPT), str(tmp / "out"), "--stages", stages, "--wheels",
           str(tmp / "no-wheels"), "--build-dir", str(build)]
    if tune_db:
        cmd += ["--tune-db", str(tune_db)]
    r = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    calls = log.read_text().splitlines() if log.exists() else []
    return r, [c for c in calls if c.startswith("export")]


class ExportAfterTuning(unittest.TestCase):
    def test_a_backward_sweep_alone_is_merged_into_the_committed_forward_sweep(self):
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            r, exports = run_stage(tmp, "tune-bwd")
            self.assertIn("stage tune_bwd: ok", r.stdout, r.stdout + r.stderr)
            self.assertEqual(len(exports), 1, exports)
            args = exports[0].split()
            self.assertEqual(args[args.index("--db") + 1], COMMITTED_FWD)
            self.assertEqual(args[args.index("--sweep") + 1], "1")
            self.assertEqual(args[args.index("--merge-db") + 1], str(tmp / "out" / "tuning.sqlite"))
            self.assertEqual(args[args.index("--merge-sweep") + 1], "1")
            with tarfile.open(tmp / "out" / "table.tar.gz") as tar:
                self.assertIn("table/dispatch.json", tar.getnames())

    def test_the_backward_sweep_is_compared_by_each_overlap_pin(self):
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            r, _ = run_stage(tmp, "tune-bwd")
            self.assertIn("stage tune_bwd: ok", r.stdout, r.stdout + r.stderr)
            calls = [c.split() for c in (tmp / "gdnlab.log").read_text().splitlines() if c.startswith("compare")]
            pins = []
            for args in calls:
                self.assertEqual(args[args.index("--by") + 1], "pin")
                # the new backward sweep against itself
                self.assertEqual(args[args.index("--sweep") + 1], "1")
                self.assertEqual(args[args.index("--against") + 1], "1")
                pins.append(args[args.index("--pin") + 1])
            self.assertEqual(sorted(set(pins)), ["group_sum_beside=1", "pass1_beside_recompute=1"])
            for field in ("pass1_beside_recompute", "group_sum_beside"):
                self.assertTrue((tmp / "out" / f"pin_{field}.csv").exists(), field)

    def test_a_forward_sweep_in_the_tuning_database_is_the_base(self):
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            db = tmp / "earlier.sqlite"
            con = sqlite3.connect(db)
            con.execute("CREATE TABLE sweeps (id INTEGER PRIMARY KEY, shapes TEXT, status TEXT)")
            con.execute("INSERT INTO sweeps (shapes, status) VALUES ('fwd_anchors', 'finished')")
            con.commit()
            con.close()
            r, exports = run_stage(tmp, "tune-bwd", tune_db=db)
            self.assertIn("stage tune_bwd: ok", r.stdout, r.stdout + r.stderr)
            args = exports[0].split()
            self.assertEqual(args[args.index("--db") + 1], str(tmp / "out" / "tuning.sqlite"))
            self.assertEqual(args[args.index("--sweep") + 1], "1")  # the forward sweep
            self.assertEqual(args[args.index("--merge-sweep") + 1], "2")  # the backward one
            self.assertNotIn("--merge-db", args)

    def test_an_export_that_fails_fails_the_stage(self):
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            r, exports = run_stage(tmp, "tune-bwd", export_fails=True)
            self.assertIn("stage tune_bwd: FAILED (rc 1)", r.stdout, r.stdout + r.stderr)
            self.assertFalse((tmp / "out" / "table.tar.gz").exists())
            with tarfile.open(tmp / "out" / "logs.tar.gz") as tar:
                log = tar.extractfile("logs/tune_bwd.log").read().decode()
            self.assertIn("ran on NVIDIA H100", log)


if __name__ == "__main__":
    unittest.main()
