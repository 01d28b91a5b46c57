"""scripts/wheel_loads.py and scripts/install_wheel_load.sh on small wheels made here: the loads
are the fewest within the size limit, pieces join back to the wheels byte for byte, the
requirement check names what nothing meets, and the installer installs each wheel once all its
pieces have come, whatever load they came in, keeps wheels that share a folder, refuses a piece
of another packing and says when pieces of earlier loads are missing. Needs python3 with pip."""

import base64
import contextlib
import hashlib
import io
import importlib.util
import math
import os
import subprocess
import sys
import tempfile
import unittest
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
INSTALLER = REPO / "scripts" / "install_wheel_load.sh"
spec = importlib.util.spec_from_file_location("wheel_loads", REPO / "scripts" / "wheel_loads.py")
wheel_loads = importlib.util.module_from_spec(spec)
spec.loader.exec_module(wheel_loads)


def make_wheel(folder, name, version, files, requires=(), payload=0):
    """A valid py3-none-any wheel holding files ({path: text}) and, stored uncompressed so the
    wheel's size is about known, `payload` random bytes."""
    dist = f"{name}-{version}.dist-info"
    entries = {path: text.encode() for path, text in files.items()}
    if payload:
        entries[f"{name}_payload.bin"] = os.urandom(payload)
    entries[f"{dist}/METADATA"] = ("Metadata-Version: 2.1\n"
                                   f"Name: {name}\nVersion: {version}\n"
                                   + "".join(f"Requires-Dist: {r}\n" for r in requires)
                                   + "\nA description: Requires-Dist: not-a-header\n").encode()
    entries[f"{dist}/WHEEL"] = (b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                                b"Tag: py3-none-any\n")

    def record_line(path, data):
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        return f"{path},sha256={digest},{len(data)}\n"
    record = "".join(record_line(p, d) for p, d in entries.items()) + f"{dist}/RECORD,,\n"
    entries[f"{dist}/RECORD"] = record.encode()
    path = Path(folder) / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        for member, data in entries.items():
            z.writestr(member, data)
    return path


def pack(source, to, max_bytes, *specs):
    """wheel_loads.py pack with a limit in bytes; its printed summary is dropped."""
    with contextlib.redirect_stdout(io.StringIO()):
        return wheel_loads.main(["pack", "--from", str(source), "--to", str(to),
                                 "--max-load-mib", repr(max_bytes / wheel_loads.MIB), *specs])


def manifest(folder):
    rows = [line.split("\t") for line in (Path(folder) / "MANIFEST.tsv").read_text().splitlines()
            if not line.startswith("#")]
    return rows


class PackTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.src = Path(self.tmp.name) / "wheels"
        self.src.mkdir()
        self.loads = Path(self.tmp.name) / "loads"

    def test_fewest_loads_within_the_limit_and_pieces_join_back(self):
        wheels = [make_wheel(self.src, "alpha", "1.0", {"alpha.py": "A = 1\n"}, payload=3000),
                  make_wheel(self.src, "beta", "2.0", {"beta.py": "B = 2\n"}, payload=5000),
                  make_wheel(self.src, "gamma", "0.1", {"gamma.py": ""}, payload=100)]
        total = sum(w.stat().st_size for w in wheels)
        limit = 2500
        rc = pack(self.src, self.loads, limit, "alpha==1.0", "beta==2.0", "gamma==0.1")
        self.assertEqual(rc, 0)
        folders = sorted(p.name for p in self.loads.iterdir() if p.is_dir())
        self.assertEqual(len(folders), math.ceil(total / limit))
        rows = manifest(self.loads)
        for folder in folders:
            files = [p for p in (self.loads / folder).iterdir() if p.name != "MANIFEST.tsv"]
            self.assertLessEqual(sum(p.stat().st_size for p in files), limit, folder)
            self.assertEqual(manifest(self.loads / folder), rows)  # each load has the manifest
        for w in wheels:
            (_, _, size, sha, count), = [r for r in rows if r[0] == "wheel" and r[1] == w.name]
            pieces = [r for r in rows if r[0] == "piece" and r[1] == w.name]
            self.assertEqual(len(pieces), int(count))
            joined = b"".join((self.loads / load / piece).read_bytes()
                              for _, _, _, load, piece, _ in pieces)
            self.assertEqual(joined, w.read_bytes())
            self.assertEqual((int(size), sha), (len(joined), hashlib.sha256(joined).hexdigest()))
            if len(pieces) > 1:  # split's names, so `cat WHEEL.part-*` joins them too
                self.assertEqual([p[4] for p in pieces],
                                 [f"{w.name}.part-{s}" for s in ("aa", "ab", "ac", "ad")[:len(pieces)]])
        # packing again replaces the loads, leaving none of the old ones
        self.assertEqual(pack(self.src, self.loads, 10 ** 6, "alpha==1.0"), 0)
        self.assertEqual(sorted(p.name for p in self.loads.iterdir()), ["MANIFEST.tsv", "load1"])

    def test_requirements_nothing_meets_are_named(self):
        make_wheel(self.src, "alpha", "1.0", {}, requires=[
            "beta<2", "torch>=2.8", 'nccl; extra == "comm"', 'strenum; python_version < "3.11"',
            'winreg; platform_system == "Windows"'])
        make_wheel(self.src, "beta", "2.0", {})
        wheels = [wheel_loads.find_wheel(self.src, s) for s in ("alpha==1.0", "beta==2.0")]
        unmet = wheel_loads.unmet_requirements(wheels, provided=[], not_needed=[])
        self.assertEqual(len(unmet), 2, unmet)
        self.assertIn("alpha 1.0 needs beta<2; the set has beta 2.0", unmet[0])
        self.assertIn("alpha 1.0 needs torch>=2.8: not in the set", unmet[1])
        make_wheel(self.src, "beta", "1.5", {})
        wheels[1] = wheel_loads.find_wheel(self.src, "beta==1.5")
        self.assertEqual(wheel_loads.unmet_requirements(wheels, ["Torch"], []), [])
        self.assertEqual(wheel_loads.unmet_requirements(wheels[:1], [], ["beta", "torch"]), [])

    def test_bad_specs_and_missing_wheels(self):
        make_wheel(self.src, "alpha", "1.0", {})
        for bad, message in (("alpha", "expected NAME==VERSION"),
                             ("alpha==2.0", "found none"), ("delta==1.0", "found none")):
            with self.assertRaisesRegex(wheel_loads.PackError, message):
                wheel_loads.find_wheel(self.src, bad)
        self.assertEqual(wheel_loads.find_wheel(self.src, "Alpha==1.0.0").version, "1.0.0")


class InstallerTest(unittest.TestCase):
    """Three wheels, two of which share the folder sharedns/ and one of which carries a .pth
    file, cut into loads so that wheels span loads."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        root = Path(self.tmp.name)
        src = root / "wheels"
        src.mkdir()
        make_wheel(src, "alpha", "1.0", {"alpha.py": "A = 1\n"}, payload=3000)
        make_wheel(src, "shared_a", "1.0", {"sharedns/a.py": "X = 'a'\n",
                                            "sharedns/sub/deep.py": "D = 'deep'\n",
                                            "shared_paths.pth": "sharedns/sub\n"}, payload=4000)
        make_wheel(src, "shared_b", "1.0", {"sharedns/b.py": "X = 'b'\n"}, payload=2000)
        self.loads = root / "loads"
        self.assertEqual(pack(src, self.loads, 3500, "alpha==1.0", "shared-a==1.0",
                              "shared_b==1.0"), 0)
        self.count = len([p for p in self.loads.iterdir() if p.is_dir()])
        self.site, self.staging = root / "site", root / "staging"

    def install(self, load, *extra):
        args = [str(self.loads / load), str(self.site), str(self.staging)] if not extra else extra
        return subprocess.run(["bash", str(INSTALLER), *args], capture_output=True, text=True)

    def imports(self):
        code = ("import alpha, sharedns.a, sharedns.b, deep; "
                "print(alpha.A, sharedns.a.X, sharedns.b.X, deep.D)")
        return subprocess.run(["bash", "-c", f". '{self.site}/env.sh' && cd / && "
                               f"{sys.executable} -c \"{code}\""], capture_output=True, text=True)

    def test_loads_in_order_install_every_wheel_once(self):
        self.assertGreaterEqual(self.count, 3)
        first = self.install("load1")
        self.assertEqual(first.returncode, 0, first.stdout + first.stderr)
        self.assertIn("waiting for pieces", first.stdout)
        self.assertIn("alpha-1.0-py3-none-any.whl: 1 of 2 pieces here; awaiting "
                      "alpha-1.0-py3-none-any.whl.part-ab (load2)", first.stdout)
        for k in range(2, self.count + 1):
            out = self.install(f"load{k}")
            self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        self.assertIn("3 of 3 wheels installed", out.stdout)
        self.assertNotIn("waiting", out.stdout)
        imported = self.imports()
        self.assertEqual(imported.stdout.split(), ["1", "a", "b", "deep"], imported.stderr)
        self.assertIn(f"{self.site}/sharedns/sub", (self.site / "env.sh").read_text())
        # the pieces are gone once joined; a load installed again changes nothing
        def staged():
            return [p.name for p in self.staging.iterdir() if ".whl" in p.name]
        self.assertEqual(staged(), [])
        again = self.install("load1")
        self.assertEqual(again.returncode, 0, again.stderr)
        self.assertIn("0 files staged", again.stdout)
        self.assertIn("installed before (3)", again.stdout)
        self.assertNotIn("installed now", again.stdout)
        self.assertEqual(staged(), [])

    def test_pieces_of_another_packing_are_refused(self):
        for k in range(1, self.count):
            self.install(f"load{k}")
        last = self.loads / f"load{self.count}"
        piece = next(p for p in last.iterdir() if p.name != "MANIFEST.tsv")
        piece.write_bytes(b"x" + piece.read_bytes()[1:])
        out = self.install(f"load{self.count}")
        self.assertEqual(out.returncode, 1)
        self.assertIn("FAILED", out.stdout)
        self.assertIn("SHA-256", out.stdout)

    def test_missing_earlier_loads_are_said(self):
        out = self.install(f"load{self.count}")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("pieces of earlier loads are not in", out.stdout)
        self.assertIn("Install from load1 again", out.stdout)

    def test_bad_arguments(self):
        out = self.install("", str(self.loads / "load1"))
        self.assertEqual(out.returncode, 2)
        self.assertIn("expected LOADDIR SITEDIR [STAGING]; got 1", out.stderr)
        out = self.install("", str(self.loads), str(self.site))
        self.assertEqual(out.returncode, 2)
        self.assertIn("'loads' is not a load of", out.stderr)
        out = self.install("", str(self.site), str(self.site))
        self.assertEqual(out.returncode, 2)
        self.assertIn("no such folder", out.stderr)


if __name__ == "__main__":
    unittest.main()
