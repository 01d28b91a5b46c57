"""pip wheel . and pip install . of the repository into a fresh virtual environment, then
`import gdn` there loads the libgdn.so the package carries (not the build folder's, not
$GDN_LIBRARY's), with the project's version.

The build is kept small for CI's two cores: GDN_VARIANTS names one staged forward variant, so
the fused family is not compiled (GDN_PIP_TEST_VARIANTS overrides). The wheel and the install
share one CMake build folder, so the second build only relinks. The venv sees the system's
site-packages (torch, fla-core), not this checkout's python/ folder. Needs PyPI for
scikit-build-core (pip's isolated build environment) and nvcc.
"""

import os
import re
import subprocess
import sys
import tempfile
import unittest
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
VARIANTS = os.environ.get("GDN_PIP_TEST_VARIANTS", "gdn_fwd_sm90_staged_v64_cp0")


def project_version():
    text = (REPO / "CMakeLists.txt").read_text()
    return re.search(r"project\(gdnlab\s+VERSION\s+([0-9.]+)", text).group(1)


class PipInstallTest(unittest.TestCase):
    def run_checked(self, cmd, **kw):
        out = subprocess.run(cmd, capture_output=True, text=True, **kw)
        if out.returncode != 0:
            self.fail(f"{' '.join(map(str, cmd))} exited {out.returncode}\n"
                      f"--- stdout (tail)\n{out.stdout[-6000:]}\n--- stderr (tail)\n{out.stderr[-6000:]}")
        return out

    def test_wheel_install_and_import(self):
        with tempfile.TemporaryDirectory(prefix="gdn-pip-") as tmp:
            tmp = Path(tmp)
            venv = tmp / "venv"
            self.run_checked([sys.executable, "-m", "venv", "--system-site-packages", str(venv)])
            python = venv / "bin" / "python"
            env = {k: v for k, v in os.environ.items()
                   if k not in ("GDN_LIBRARY", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
            settings = ["--config-settings", f"cmake.define.GDN_VARIANTS={VARIANTS}",
                        "--config-settings", f"build-dir={tmp / 'cmake-build'}"]
            pip = [str(python), "-m", "pip", "--disable-pip-version-check", "--no-input"]

            self.run_checked([*pip, "wheel", "--no-deps", "-w", str(tmp / "dist"), *settings,
                              str(REPO)], env=env, timeout=3000)
            wheels = list((tmp / "dist").glob("gdn-*.whl"))
            self.assertEqual(len(wheels), 1, wheels)
            self.assertRegex(wheels[0].name,
                             rf"^gdn-{re.escape(project_version())}-py3-none-linux_x86_64\.whl$")
            names = zipfile.ZipFile(wheels[0]).namelist()
            for member in ("gdn/__init__.py", "gdn/_torch_library.py", "gdn/_fla.py",
                           "gdn/libgdn.so"):
                self.assertIn(member, names)
            self.assertEqual([n for n in names if "libgdn" in n], ["gdn/libgdn.so"])

            self.run_checked([*pip, "install", "--no-deps", *settings, str(REPO)], env=env,
                             timeout=3000)
            code = ("import gdn\n"
                    "lib = gdn.library()\n"
                    "print('path', lib.path)\n"
                    "print('version', lib.version())\n"
                    "print('package', gdn.__file__)\n")
            # Run outside the checkout so that nothing of it is importable by accident.
            out = self.run_checked([str(python), "-c", code], env=env, cwd=tmp, timeout=300)
            lines = dict(line.split(" ", 1) for line in out.stdout.splitlines() if " " in line)
            package_dir = Path(lines["package"]).parent
            self.assertTrue(package_dir.is_relative_to(venv), lines)
            self.assertEqual(Path(lines["path"]), package_dir / "libgdn.so")
            self.assertEqual(lines["version"], project_version())
            # The library needs no CUDA runtime library from the system (linked in), only the
            # driver, which it opens when a call first needs the device.
            ldd = self.run_checked(["ldd", lines["path"]]).stdout
            self.assertNotIn("libcudart", ldd)


class ConfigureErrorsTest(unittest.TestCase):
    """What the build says before compiling anything when it cannot make the package."""

    def configure(self, *options):
        with tempfile.TemporaryDirectory(prefix="gdn-configure-") as tmp:
            env = {k: v for k, v in os.environ.items() if k != "CUDACXX"}
            return subprocess.run(["cmake", "-S", str(REPO), "-B", tmp, *options],
                                  capture_output=True, text=True, env=env, timeout=600)

    def test_missing_nvcc_is_named(self):
        out = self.configure("-DGDN_NVCC=/nonexistent/bin/nvcc")
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("nvcc not found: libgdn's kernels need the CUDA 13 toolkit", out.stderr)
        self.assertIn("GDN_NVCC='/nonexistent/bin/nvcc'", out.stderr)

    def test_static_runtime_needs_the_lab_off(self):
        out = self.configure("-DGDN_STATIC_CUDART=ON", "-DGDN_BUILD_LAB=ON")
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("GDN_STATIC_CUDART=ON needs GDN_BUILD_LAB=OFF", out.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
