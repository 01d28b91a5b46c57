"""scripts/kernel_timeline.py without a GPU: kernel names, the per-kernel medians, the CSV lines
and the command line (the profiling itself runs on the GPU machine)."""

import importlib.util
import subprocess
import sys
import unittest
from pathlib import Path
from types import SimpleNamespace

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "kernel_timeline.py"
spec = importlib.util.spec_from_file_location("kernel_timeline", SCRIPT)
kt = importlib.util.module_from_spec(spec)
spec.loader.exec_module(kt)


class KernelLabelTest(unittest.TestCase):
    def test_signature_is_cut_to_the_qualified_name_with_template_arguments(self):
        self.assertEqual(kt.kernel_label(
            "void gdn::bwd::(anonymous namespace)::local_grads_kernel<__nv_bfloat16>(gdn::bwd::LocalParams)"),
            "gdn::bwd::local_grads_kernel<__nv_bfloat16>")
        self.assertEqual(kt.kernel_label(
            "void gdn::fused::chunk_loop_cw_kernel<64, __nv_bfloat16, false, true>(gdn::fused::FusedParams)"),
            "gdn::fused::chunk_loop_cw_kernel<64, __nv_bfloat16, false, true>")

    def test_parentheses_inside_template_arguments_are_kept(self):
        self.assertEqual(kt.kernel_label("void k<(int)3>(float*)"), "k<(int)3>")

    def test_activities_that_are_no_signature_stay(self):
        self.assertEqual(kt.kernel_label("Memset (Device)"), "Memset (Device)")
        self.assertEqual(kt.kernel_label("Memcpy DtoD (Device -> Device)"),
                         "Memcpy DtoD (Device -> Device)")


class AggregateTest(unittest.TestCase):
    def test_medians_per_kernel_launches_and_first_seen_order(self):
        reps = [[("prep", 10.0, 0.0), ("loop", 100.0, 12.0), ("fixup", 5.0, 113.0), ("fixup", 5.0, 119.0)],
                [("prep", 12.0, 0.0), ("loop", 90.0, 13.0), ("fixup", 6.0, 104.0), ("fixup", 6.0, 111.0)],
                [("prep", 11.0, 0.0), ("loop", 95.0, 12.0), ("fixup", 7.0, 108.0), ("fixup", 7.0, 116.0)]]
        kernels, call_us, span_us = kt.aggregate(reps)
        self.assertEqual(list(kernels), ["prep", "loop", "fixup"])
        self.assertEqual(kernels["prep"], (1, 11.0))
        self.assertEqual(kernels["loop"], (1, 95.0))
        self.assertEqual(kernels["fixup"], (2, 12.0))
        self.assertEqual(call_us, 120.0)  # medians of 120, 114, 120
        self.assertEqual(span_us, 123.0)  # medians of 124, 117, 123 (the gaps count)

    def test_kernels_side_by_side_make_the_sum_exceed_the_span(self):
        # A chain and a local kernel that overlap: 100 + 80 us of kernels in 110 us.
        _, call_us, span_us = kt.aggregate([[("chain", 100.0, 0.0), ("local", 80.0, 30.0)]])
        self.assertEqual(call_us, 180.0)
        self.assertEqual(span_us, 110.0)

    def test_a_kernel_missing_from_one_call_counts_zero_there(self):
        kernels, _, _ = kt.aggregate([[("a", 4.0, 0.0), ("b", 2.0, 5.0)], [("a", 4.0, 0.0)],
                                      [("a", 4.0, 0.0), ("b", 6.0, 5.0)]])
        self.assertEqual(kernels["b"], (1, 2.0))

    def test_no_calls_is_an_error(self):
        with self.assertRaises(ValueError):
            kt.aggregate([])

    def test_csv_lines_carry_the_share_of_the_call(self):
        row = SimpleNamespace(pass_="fwd", name="hqk16_hv16_1024x8")
        lines = kt.csv_rows(row, {"prep": (1, 25.0), "loop": (1, 75.0)}, 100.0, 104.0)
        self.assertEqual([l["kernel"] for l in lines], ["prep", "loop"])
        self.assertEqual(lines[0]["share"], "0.250")
        self.assertEqual(lines[1]["median_us"], "75.00")
        self.assertEqual(lines[0]["span_us"], "104.00")
        self.assertEqual(set(lines[0]), set(kt.FIELDS))


class CommandLineTest(unittest.TestCase):
    def run_script(self, *args):
        return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True)

    def test_dry_run_lists_the_selected_rows(self):
        out = self.run_script("--pass", "bwd", "--rows", "16/32,32k_1seq", "--dry-run")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("bwd hqk16_hv32_8k_1seq", out.stdout)
        self.assertIn("bwd hqk2_hv4_32k_1seq", out.stdout)

    def test_a_filter_matching_nothing_is_refused(self):
        out = self.run_script("--pass", "fwd", "--rows", "no_such_row", "--dry-run")
        self.assertEqual(out.returncode, 2)
        self.assertIn("matches no fwd row", out.stderr)

    def test_a_peer_without_the_pass_is_refused(self):
        out = self.run_script("--pass", "bwd", "--library", "flashinfer", "--dry-run")
        self.assertEqual(out.returncode, 2)
        self.assertIn("--library flashinfer: has no bwd pass (expected --pass fwd)", out.stderr)

    def test_make_call_picks_the_library_and_pass(self):
        made = []

        class Peer:
            def __init__(self):
                made.append(type(self).__name__)

            def fwd(self, inp):
                return ("fwd", inp)

        peers = SimpleNamespace(ours_fwd="ours-fwd", ours_bwd="ours-bwd", ours_train="ours-train",
                                Fla=Peer, FlashQla=Peer, FlashInfer=Peer)
        self.assertEqual(kt.make_call(SimpleNamespace(library="ours", pass_="bwd"), peers), "ours-bwd")
        self.assertEqual(kt.make_call(SimpleNamespace(library="flashinfer", pass_="fwd"), peers)(7),
                         ("fwd", 7))
        self.assertEqual(made, ["Peer"])

    def test_bad_reps_names_the_argument(self):
        out = self.run_script("--reps", "0", "--dry-run")
        self.assertEqual(out.returncode, 2)
        self.assertIn("--reps: expected >= 1; got 0", out.stderr)


if __name__ == "__main__":
    unittest.main()
