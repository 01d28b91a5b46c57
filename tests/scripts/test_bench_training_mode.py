"""scripts/bench_training_mode.py without a GPU: --dry-run lists the selected backward anchor rows
and the CSV's columns (without importing torch), and a filter that matches no row is refused
with a message naming it."""

import subprocess
import sys
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "bench_training_mode.py"


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          timeout=60, cwd=REPO)


class DryRun(unittest.TestCase):
    def test_lists_the_selected_rows_and_the_columns(self):
        r = run("--dry-run", "--rows", "16/32")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertTrue(lines[0].startswith("row,h_qk,h_v,lengths,variant_fwd,variant_bwd"))
        self.assertIn("step_saved_ms", lines[0])
        self.assertEqual(len(lines), 1 + 8)  # 16/32: 8k and 32k in 1, 2, 4 and 8 sequences
        self.assertTrue(all(" 16/32 " in line for line in lines[1:]))
        self.assertIn("hqk16_hv32_32k_1seq 16/32 32768", lines)

    def test_every_backward_row_by_default(self):
        r = run("--dry-run")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(r.stdout.splitlines()), 1 + 32)

    def test_a_filter_without_rows_is_refused(self):
        r = run("--dry-run", "--rows", "no_such_row")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("--rows 'no_such_row': no backward anchor row matches", r.stderr)


if __name__ == "__main__":
    unittest.main()
