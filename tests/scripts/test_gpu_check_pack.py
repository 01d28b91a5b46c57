"""scripts/gpu_check.sh --build-dir FILE.tar.xz, the archive --pack writes: it is unpacked into
$TMPDIR and used as the build; a missing archive, or one without build/CMakeCache.txt, is refused
with a message naming it, before any stage runs. (--pack itself builds the project: the GPU
workflow exercises it, docs/benchmarking.md.)"""

import os
import subprocess
import tarfile
import tempfile
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "gpu_check.sh"


def run_check(tmp, build_dir):
    env = dict(os.environ, TMPDIR=str(tmp), PATH="/usr/bin:/bin")  # no nvidia-smi, no ctest GPU
    return subprocess.run(["bash", str(SCRIPT), str(tmp / "out"), "--stages", "tests",
                           "--wheels", str(tmp / "no-wheels"), "--build-dir", str(build_dir)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=120)


def make_archive(tmp, files):
    """An xz tar of {path: text} under one top folder, as --pack lays it out."""
    src = tmp / "src"
    for path, text in files.items():
        (src / path).parent.mkdir(parents=True, exist_ok=True)
        (src / path).write_text(text)
    archive = tmp / "build.tar.xz"
    with tarfile.open(archive, "w:xz") as tar:
        for top in sorted({p.split("/")[0] for p in files}):
            tar.add(src / top, arcname=top)
    return archive


class PackedBuild(unittest.TestCase):
    def test_an_archive_is_unpacked_and_used_as_the_build(self):
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            unpacked = tmp / "gdn-packed-build" / "build"
            archive = make_archive(tmp, {
                "build/CMakeCache.txt": f"CMAKE_HOME_DIRECTORY:INTERNAL={REPO}\n"
                                        f"CMAKE_CACHEFILE_DIR:INTERNAL={unpacked}\n",
                "build/kernels/marker.txt": "unpacked\n"})
            r = run_check(tmp, archive)
            summary = (tmp / "out" / "summary.txt").read_text()
            self.assertIn(f"build: {unpacked}", summary, r.stdout + r.stderr)
            self.assertEqual((unpacked / "kernels" / "marker.txt").read_text(), "unpacked\n")

    def test_a_missing_archive_is_refused_naming_it(self):
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            r = run_check(tmp, tmp / "nothing.tar.xz")
            self.assertEqual(r.returncode, 2)
            self.assertIn("--build-dir: no archive", r.stderr)
            self.assertIn("nothing.tar.xz", r.stderr)

    def test_an_archive_without_a_build_is_refused(self):
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            archive = make_archive(tmp, {"other/readme.txt": "not a build\n"})
            r = run_check(tmp, archive)
            self.assertEqual(r.returncode, 2)
            self.assertIn("holds no build/CMakeCache.txt", r.stderr)


if __name__ == "__main__":
    unittest.main()
