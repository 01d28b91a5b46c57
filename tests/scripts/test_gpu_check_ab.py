"""scripts/gpu_check.sh --stages ab: the base build (--ab-base, a folder or an archive of --pack)
and this build each sweep the same shapes and variants with the same protocol into a database of
their own, the base first, then this build's `gdnlab compare` reads both, per candidate and per
problem; without --ab-base, or with one that is not there, the stage is refused before anything
runs. gdnlab is a fake here that records which build ran it and its arguments."""

import os
import subprocess
import tarfile
import tempfile
import textwrap
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "gpu_check.sh"

# The fake gdnlab: logs "<build> <args>"; `sweep` creates --db; `compare --out` writes a CSV.
FAKE_GDNLAB = textwrap.dedent("""\
    #!/usr/bin/env python3
    import os, sys
    args = sys.argv[1:]
    def opt(name):
        return args[args.index(name) + 1]
    me = os.path.basename(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with open(os.environ["GDNLAB_FAKE_LOG"], "a") as log:
        log.write(me + " " + " ".join(args) + "\\n")
    if args[0] == "--version":
        print("gdnlab 0.1.0 (git " + me + ")")
    elif args[0] == "sweep":
        open(opt("--db"), "w").write("")
    elif args[0] == "compare":
        if "--out" in args:
            open(opt("--out"), "w").write("problem,b_over_a\\n")
        else:
            print("rows 2, compared 2: faster 2\\ngeometric mean of B/A: 0.9")
    """)


def make_build(root, name):
    """A build folder <root>/<name>/build with a CMakeCache.txt and the fake gdnlab."""
    build = root / name / "build"
    build.mkdir(parents=True)
    (build / "CMakeCache.txt").write_text(f"CMAKE_CACHEFILE_DIR:INTERNAL={build}\n")
    fake = build / "gdnlab"
    fake.write_text(FAKE_GDNLAB)
    fake.chmod(0o755)
    return build


def run_ab(tmp, head, extra):
    log = tmp / "gdnlab.log"
    env = dict(os.environ, TMPDIR=str(tmp), PATH="/usr/bin:/bin", GDNLAB_FAKE_LOG=str(log))
    r = subprocess.run(["bash", str(SCRIPT), str(tmp / "out"), "--stages", "ab", "--wheels",
                        str(tmp / "no-wheels"), "--build-dir", str(head)] + extra,
                       cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    calls = [line.split(" ", 1) for line in log.read_text().splitlines()] if log.exists() else []
    return r, [(who, args) for who, args in calls if not args.startswith("--version")]


class AbStage(unittest.TestCase):
    def test_both_builds_sweep_alike_and_the_head_compares_them(self):
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            base, head = make_build(tmp, "base"), make_build(tmp, "head")
            r, calls = run_ab(tmp, head, ["--ab-base", str(base), "--ab-shapes", "edge",
                                          "--ab-variants", "*pc_cp0,*pc_cp32"])
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertEqual([who for who, _ in calls], ["base", "head", "head", "head", "head", "head"])
            sweeps = [args for _, args in calls if args.startswith("sweep")]
            self.assertEqual(len(sweeps), 2)
            out = tmp / "out"
            self.assertIn(f"--db {out}/ab_base.sqlite", sweeps[0])
            self.assertIn(f"--db {out}/ab_head.sqlite", sweeps[1])
            same = [s.replace("ab_base", "ab_X").replace("ab_head", "ab_X") for s in sweeps]
            self.assertEqual(same[0], same[1], "the two sweeps differ in more than their database")
            self.assertIn("--shapes edge --variants *pc_cp0,*pc_cp32", sweeps[0])
            compares = [args for _, args in calls if args.startswith("compare")]
            self.assertTrue(all(f"--db {out}/ab_base.sqlite" in c and
                                f"--against-db {out}/ab_head.sqlite" in c for c in compares))
            self.assertTrue((out / "ab_compare_candidate.csv").exists())
            self.assertTrue((out / "ab_compare_problem.csv").exists())
            self.assertIn("stage ab: ok", (out / "summary.txt").read_text())

    def test_an_archived_base_is_unpacked_and_used(self):
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            base, head = make_build(tmp / "packed", "base"), make_build(tmp, "head")
            archive = tmp / "base.tar.xz"
            with tarfile.open(archive, "w:xz") as tar:
                tar.add(base, arcname="build")
            r, calls = run_ab(tmp, head, ["--ab-base", str(archive)])
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            # The archive's gdnlab runs from $TMPDIR/gdn-ab-base/build: the fake names its
            # build by the folder above build/.
            self.assertEqual(calls[0][0], "gdn-ab-base")
            self.assertTrue(calls[0][1].startswith("sweep"))
            self.assertIn("--shapes bwd_anchors --variants *", calls[0][1])

    def test_without_a_base_the_stage_is_refused_before_anything_runs(self):
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            head = make_build(tmp, "head")
            r, calls = run_ab(tmp, head, [])
            self.assertEqual(r.returncode, 2)
            self.assertIn("--stages ab needs --ab-base", r.stderr)
            self.assertEqual(calls, [])
            r, calls = run_ab(tmp, head, ["--ab-base", str(tmp / "nowhere.tar.xz")])
            self.assertEqual(r.returncode, 2)
            self.assertIn(f"--ab-base: no build folder or archive '{tmp}/nowhere.tar.xz'", r.stderr)
            self.assertEqual(calls, [])


if __name__ == "__main__":
    unittest.main()
