"""The torch-free parts of scripts/bench_peers.py: row loading and joining, the CSV writer, and
the summary arithmetic (checked by hand)."""

import csv
import math
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from gdnbench import report
from gdnbench.rows import RowError, load_rows, parse_seqlens, read_shape_set, select_rows

REPO = Path(__file__).resolve().parents[2]
SHAPES = REPO / "scripts" / "shapes"
ANCHORS = REPO / "bench" / "anchors"
HEADER = "name,h_qk,h_v,k,v,dtype,layout,seqlens,tag\n"


def write(path, text):
    Path(path).write_text(text)
    return path


def csv_row(**kw):
    base = {c: "" for c in report.COLUMNS}
    base.update({"pass": "fwd", "name": "r", "h_qk": "2", "h_v": "8", "lengths": "8192",
                 "flashqla_source": "published"})
    base.update({k: str(v) for k, v in kw.items()})
    return base


class RowsTest(unittest.TestCase):
    def test_parse_seqlens(self):
        self.assertEqual(parse_seqlens("8192+4096*3", "x"), [8192, 4096, 4096, 4096])
        self.assertEqual(parse_seqlens("0+1", "x"), [0, 1])
        for bad in ("a", "10*0", "1*2*3", "-5", ""):
            with self.assertRaises(RowError, msg=bad) as cm:
                parse_seqlens(bad, "f.csv:7")
            self.assertIn("f.csv:7", str(cm.exception))

    @unittest.skipUnless((SHAPES / "fwd_anchors.csv").exists() and ANCHORS.exists(),
                         "anchor shape sets or bench/anchors not in this checkout")
    def test_anchor_rows_join_every_published_figure(self):
        fwd = load_rows("fwd", SHAPES, ANCHORS)
        bwd = load_rows("bwd", SHAPES, ANCHORS)
        self.assertEqual((len(fwd), len(bwd)), (171, 32))
        self.assertEqual(len({r.heads for r in fwd}), 9)
        for r in fwd:
            self.assertTrue(all(r.published[k] for k in ("fla", "flashqla", "flashinfer")), r.name)
        for r in bwd:
            self.assertTrue(r.published["fla"] and r.published["flashqla"], r.name)
            self.assertIsNone(r.published["flashinfer"])
        first = fwd[0]
        self.assertEqual((first.label, first.lengths, first.published["flashqla"]),
                         ("1x32768", [32768], 0.320))
        split = next(r for r in bwd if r.label == "8k_4seq")
        self.assertEqual((len(split.lengths), split.total_tokens), (4, 8192))
        self.assertEqual(len(select_rows(fwd, "2/8")), 19)
        self.assertEqual(len(select_rows(fwd, "1x32768,1024x8")), 18)

    @unittest.skipUnless((SHAPES / "bwd_anchors.csv").exists() and ANCHORS.exists(),
                         "anchor shape sets or bench/anchors not in this checkout")
    def test_train_rows_are_the_backward_rows_without_published_figures(self):
        bwd = load_rows("bwd", SHAPES, ANCHORS)
        train = load_rows("train", SHAPES, ANCHORS)
        self.assertEqual(len(train), 32)
        self.assertEqual([(r.name, r.label, r.lengths, r.heads, r.model) for r in train],
                         [(r.name, r.label, r.lengths, r.heads, r.model) for r in bwd])
        for r in train:
            self.assertEqual(r.pass_, "train")
            # the backward table's figures time the backward alone: never a training step
            self.assertEqual(r.published, {"fla": None, "flashqla": None, "flashinfer": None})
        self.assertEqual(len(select_rows(train, "16/32")), 8)
        self.assertEqual([r.name for r in select_rows(train, "32k_1seq")],
                         [r.name for r in select_rows(bwd, "32k_1seq")])

    def test_unknown_pass_is_refused(self):
        with self.assertRaisesRegex(RowError, "pass 'step': expected one of fwd, bwd, train"):
            load_rows("step", SHAPES, ANCHORS)

    def test_malformed_shape_files_name_the_line(self):
        with tempfile.TemporaryDirectory() as d:
            p = write(Path(d) / "s.csv", "# c\n" + HEADER + "a,2,8,128,128,bf16,packed,10,t\n"
                      "b,2,x,128,128,bf16,packed,10,t\n")
            with self.assertRaises(RowError) as cm:
                read_shape_set(p)
            self.assertIn("s.csv:4", str(cm.exception))
            write(p, HEADER + "a,2,8,128,128,bf16,packed,10\n")
            with self.assertRaisesRegex(RowError, r"s.csv:2: expected 9 fields"):
                read_shape_set(p)
            write(p, "name,h_qk\n")
            with self.assertRaisesRegex(RowError, "lacks column"):
                read_shape_set(p)

    def test_row_name_must_carry_the_anchor_label(self):
        with tempfile.TemporaryDirectory() as d:
            write(Path(d) / "fwd_anchors.csv", HEADER + "bogus,2,8,128,128,bf16,packed,10,t\n")
            write(Path(d) / "flashqla_h200_fwd.csv",
                  "model,seqlens,h_qk,h_v,flashqla_ms,flashinfer_ms,fla_ms\n")
            with self.assertRaisesRegex(RowError, "does not start with 'hqk2_hv8_'"):
                load_rows("fwd", d, d)


class ReportArithmeticTest(unittest.TestCase):
    def test_ratios_scale_published_peers_by_the_fla_calibration(self):
        r = csv_row(ours_ms=0.1, fla_ms=1.1, fla_published_ms=1.0, flashqla_ms=0.3,
                    flashinfer_published_ms=0.2)
        x = report.row_ratios(r)
        self.assertAlmostEqual(x["vs_fla"], 11.0)
        self.assertAlmostEqual(x["flashqla_scaled"], 0.33)
        self.assertAlmostEqual(x["vs_flashqla"], 3.3)
        self.assertAlmostEqual(x["vs_flashinfer"], 2.2)
        self.assertAlmostEqual(x["vs_best"], 2.2)
        live = report.row_ratios({**r, "flashqla_source": "live"})
        self.assertAlmostEqual(live["vs_flashqla"], 3.0)  # live figures are not scaled

    def test_live_flashinfer_is_used_unscaled_and_published_where_it_did_not_run(self):
        r = csv_row(ours_ms=0.1, fla_ms=1.1, fla_published_ms=1.0, flashqla_ms=0.3,
                    flashinfer_published_ms=0.2, flashinfer_ms=0.25, flashinfer_source="live")
        x = report.row_ratios(r)
        self.assertAlmostEqual(x["flashinfer_scaled"], 0.25)   # live: as measured
        self.assertAlmostEqual(x["vs_best"], 2.5)
        self.assertIn("fqla=pub*cal", report.format_table([r]))
        self.assertNotIn("fi=pub*cal", report.format_table([r]))
        for source in ("published", ""):  # not live: its published figure, scaled
            x = report.row_ratios({**r, "flashinfer_source": source})
            self.assertAlmostEqual(x["flashinfer_scaled"], 0.22)
        # a live source without a figure (a failed run) falls back to the published one
        x = report.row_ratios({**r, "flashinfer_ms": ""})
        self.assertAlmostEqual(x["flashinfer_scaled"], 0.22)
        note = csv_row(ours_ms=0.1, fla_ms=1.0, note="flashinfer: unsupported: heads")
        self.assertIn("flashinfer: unsupported: heads", report.format_table([note]))

    def test_missing_figures(self):
        x = report.row_ratios(csv_row(ours_ms="", fla_ms=1.0))
        self.assertIsNone(x["vs_fla"])
        x = report.row_ratios(csv_row(ours_ms=0.5, fla_ms=1.0, fla_published_ms="",
                                      flashqla_ms=0.25))
        self.assertAlmostEqual(x["vs_flashqla"], 0.5)  # no published FLA: calibration 1
        self.assertIsNone(x["vs_flashinfer"])

    def test_summary_groups_by_head_configuration(self):
        rows = [csv_row(name="a", ours_ms=1, fla_ms=4, fla_published_ms=4, flashqla_ms=2),
                csv_row(name="b", ours_ms=1, fla_ms=1, fla_published_ms=1, flashqla_ms=0.5,
                        lengths="4096+4096"),
                csv_row(name="c", h_qk=4, h_v=16, ours_ms=2, fla_ms=2, fla_published_ms=1,
                        flashqla_ms=0.5),
                csv_row(name="d", h_qk=4, h_v=16, error="ours: boom")]
        s = report.summarize(rows)
        self.assertEqual(list(s), ["fwd 2/8", "fwd 4/16", "all fwd"])
        self.assertAlmostEqual(s["fwd 2/8"]["vs_fla"], 2.0)        # sqrt(4 * 1)
        self.assertAlmostEqual(s["fwd 2/8"]["vs_flashqla"], 1.0)   # sqrt(2 * 0.5)
        self.assertEqual(s["fwd 2/8"]["single_seq_slower_than_flashqla"], [])
        self.assertEqual((s["fwd 4/16"]["rows"], s["fwd 4/16"]["measured"]), (2, 1))
        self.assertAlmostEqual(s["fwd 4/16"]["vs_flashqla"], 0.5)  # 0.5 * 2 / 2
        self.assertEqual(s["fwd 4/16"]["single_seq_slower_than_flashqla"], ["c"])
        self.assertAlmostEqual(s["all fwd"]["vs_fla"], (4 * 1 * 1) ** (1 / 3))
        table = report.format_table(rows)
        self.assertIn("fwd 2/8", table)
        self.assertIn("ours: boom", table)
        self.assertTrue(math.isnan(report.gmean([])))

    def test_summary_keeps_passes_apart(self):
        rows = [csv_row(name="f", ours_ms=1, fla_ms=8, fla_published_ms=8, flashqla_ms=2),
                csv_row(**{"pass": "bwd"}, name="b", h_qk=16, h_v=32, ours_ms=1, fla_ms=4,
                        fla_published_ms=2, flashqla_ms=1),
                csv_row(**{"pass": "train"}, name="t1", h_qk=16, h_v=32, ours_ms=2, fla_ms=4,
                        flashqla_source=""),
                csv_row(**{"pass": "train"}, name="t2", h_qk=16, h_v=32, ours_ms=2, fla_ms=9,
                        flashqla_source="")]
        s = report.summarize(rows)
        self.assertEqual(list(s), ["fwd 2/8", "bwd 16/32", "train 16/32",
                                   "all fwd", "all bwd", "all train"])
        self.assertAlmostEqual(s["all fwd"]["vs_fla"], 8.0)
        self.assertAlmostEqual(s["all bwd"]["vs_flashqla"], 2.0)   # 1 * (4 / 2) / 1
        self.assertAlmostEqual(s["all train"]["vs_fla"], 3.0)      # sqrt(4 / 2 * 9 / 2)
        self.assertEqual((s["all train"]["rows"], s["all train"]["measured"]), (2, 2))
        # no published training-step figure: the FlashQLA mean stays empty, never estimated
        self.assertTrue(math.isnan(s["all train"]["vs_flashqla"]))
        self.assertTrue(math.isnan(s["all train"]["vs_best"]))
        table = report.format_table(rows)
        train_line = next(line for line in table.splitlines() if line.startswith("all train"))
        self.assertEqual(train_line.split()[2:7], ["2/2", "3.00", "-", "-", "-"])
        row_line = next(line for line in table.splitlines() if " t1 " in line)
        self.assertEqual(row_line.split()[:5], ["train", "t1", "2.0000", "4.0000", "2.00"])

    def test_live_flashqla_training_step_is_compared_unscaled(self):
        r = csv_row(**{"pass": "train"}, ours_ms=2, fla_ms=6, fla_published_ms="",
                    flashqla_ms=3, flashqla_source="live", flashqla_p20_ms=2.9,
                    flashqla_p80_ms=3.1)
        x = report.row_ratios(r)
        self.assertAlmostEqual(x["vs_fla"], 3.0)
        self.assertAlmostEqual(x["vs_flashqla"], 1.5)
        self.assertAlmostEqual(report.summarize([r])["all train"]["vs_flashqla"], 1.5)
        self.assertNotIn("fqla=pub*cal", report.format_table([r]))

    def test_csv_round_trip_keeps_provenance_out_of_the_rows(self):
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "x.csv"
            w = report.CsvWriter(path, ["GPU: test", "git SHA: abc"],
                                 kept_rows=[csv_row(name="kept", ours_ms="0.1000")])
            w.write(csv_row(name="new", ours_ms="0.2000", error="fla: x, y"))
            w.close()
            text = path.read_text()
            self.assertTrue(text.startswith("# GPU: test\n# git SHA: abc\npass,name,"))
            rows = report.read_csv(path)
            self.assertEqual([r["name"] for r in rows], ["kept", "new"])
            self.assertEqual(rows[1]["error"], "fla: x, y")
            header = next(csv.reader([text.splitlines()[2]]))
            needed = {"pass", "seqlens", "h_qk", "h_v", "ours_ms", "fla_ms", "fla_published_ms",
                      "flashqla_ms", "flashqla_source", "flashinfer_published_ms", "ours_p20_ms",
                      "ours_p80_ms", "fla_p20_ms", "fla_p80_ms", "flashqla_p20_ms",
                      "flashqla_p80_ms", "samples", "flashinfer_ms", "flashinfer_source",
                      "flashinfer_p20_ms", "flashinfer_p80_ms", "note"}
            self.assertTrue(needed <= set(header))


class BenchScriptTest(unittest.TestCase):
    def run_script(self, *args):
        return subprocess.run([sys.executable, str(REPO / "scripts" / "bench_peers.py"), *args],
                              capture_output=True, text=True)

    def test_help(self):
        out = self.run_script("--help")
        self.assertEqual(out.returncode, 0, out.stderr)
        for flag in ("--pass", "--rows", "--reps", "--out", "--anchors-dir", "--resume",
                     "--no-flashqla", "--flashqla-rows", "--no-flashinfer", "train", "all"):
            self.assertIn(flag, out.stdout)

    @unittest.skipUnless((SHAPES / "bwd_anchors.csv").exists(), "shape sets not here")
    def test_dry_run_lists_rows_without_a_gpu(self):
        out = self.run_script("--pass", "both", "--dry-run")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("203 rows", out.stdout)

    @unittest.skipUnless((SHAPES / "bwd_anchors.csv").exists(), "shape sets not here")
    def test_dry_run_of_every_pass_lists_the_training_step_rows(self):
        out = self.run_script("--pass", "all", "--dry-run")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("235 rows", out.stdout)  # 171 fwd + 32 bwd + 32 train
        lines = out.stdout.splitlines()
        self.assertEqual([line.split()[0] for line in lines[:-1]],
                         ["fwd"] * 171 + ["bwd"] * 32 + ["train"] * 32)
        out = self.run_script("--pass", "train", "--rows", "16/32", "--dry-run")
        self.assertEqual(out.returncode, 0, out.stderr)
        lines = out.stdout.splitlines()
        self.assertEqual(lines[-1], "8 rows")
        for line in lines[:-1]:
            self.assertTrue(line.startswith("train hqk16_hv32_"), line)
            self.assertTrue(line.endswith("fla=- flashqla=- flashinfer=-"), line)

    def test_bad_arguments(self):
        out = self.run_script("--reps", "0", "--dry-run")
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("--reps: expected >= 1; got 0", out.stderr)
        out = self.run_script("--pass", "step", "--dry-run")
        self.assertEqual(out.returncode, 2)
        self.assertIn("invalid choice: 'step'", out.stderr)
        out = self.run_script("--dry-run", "--anchors-dir", "/nonexistent")
        self.assertEqual(out.returncode, 2)
        self.assertIn("/nonexistent", out.stderr)


if __name__ == "__main__":
    unittest.main()


class ProvenanceTest(unittest.TestCase):
    """gdnbench.provenance: the commit and GPU lines every results header carries."""

    def test_an_explicit_sha_wins_over_the_checkout(self):
        from gdnbench import provenance
        self.assertEqual(provenance.git_sha("abc1234"), "abc1234")

    def test_the_checkout_head_is_read_and_marked_dirty_when_tracked_files_differ(self):
        from gdnbench import provenance
        head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True,
                              text=True).stdout.strip()
        sha = provenance.git_sha("")
        if not head:
            self.assertIn("unknown", sha)
        else:
            self.assertTrue(sha.startswith(head), sha)

    def test_nvidia_smi_without_a_driver_says_not_available(self):
        from gdnbench import provenance
        from unittest import mock
        with mock.patch.object(provenance.subprocess, "run", side_effect=FileNotFoundError("nvidia-smi")):
            self.assertEqual(provenance.nvidia_smi("driver_version"), "n/a")

    def test_results_csv_places_bare_names_in_bench_results_with_a_csv_suffix(self):
        from gdnbench import provenance
        self.assertEqual(provenance.results_csv("fwd_h200", "peers_fwd"),
                         REPO / "bench" / "results" / "fwd_h200.csv")
        with tempfile.TemporaryDirectory() as d:
            self.assertEqual(provenance.results_csv(f"{d}/sub/x.csv", "t"), Path(d) / "sub" / "x.csv")
            self.assertTrue((Path(d) / "sub").is_dir())
        self.assertTrue(provenance.results_csv("", "timeline_bwd").name.startswith("timeline_bwd_"))
