"""scripts/bench_peers.py's measuring loop without a GPU: torch, triton, the timer and the
libraries are replaced by fakes, so what is checked is the orchestration (one CSV line per row,
a failing library recorded as that row's error while the run goes on, provenance, --resume,
--budget-s, the training-step pass, FlashQLA and FlashInfer live where they import) with timings
the fakes dictate."""

import contextlib
import importlib.util
import io
import sys
import tempfile
import types
import unittest
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

from gdnbench import report

REPO = Path(__file__).resolve().parents[2]
HAVE_SHAPES = (REPO / "scripts" / "shapes" / "fwd_anchors.csv").exists()


class FakeCall:
    """A library call whose graph replay the fake timer says takes `ms`; called, it returns
    (o, final_state)-like placeholders as ours does and FLA's (g, o, ...) tuple is indexed."""

    def __init__(self, ms):
        self.ms = ms

    def __call__(self):
        return ("o", "o")


class FakeFlashQla:
    """FlashQLA live: every pass 0.25 ms, except the 8k_2seq rows, which fail."""
    version = "0.1.3-fake"

    def _make(self, inp):
        if inp.row.label == "8k_2seq":
            raise RuntimeError("boom in flashqla")
        return FakeCall(0.25)

    fwd = bwd = train = _make


class MissingFlashQla:
    """FlashQla where the flash_qla package is not installed."""

    def __init__(self):
        raise ModuleNotFoundError("No module named 'flash_qla'")


class FakeFlashInfer:
    """FlashInfer live: forward only, 0.2 ms; the 1x16384 rows are 'unsupported', the 4096+4096
    rows fail. Its outputs are the check's placeholders; checks record what was compared."""
    version = "0.7.2.post1-fake"
    checked = []

    def unsupported(self, inp):
        return "heads 16/32: fake limit" if inp.row.label == "1x16384" else None

    def fwd(self, inp):
        if inp.row.label == "4096+4096":
            raise RuntimeError("boom in flashinfer")
        return FakeCall(0.2)

    def fwd_outputs(self, inp):
        self.checked.append(inp.row.name)
        return ("o_fi", "ht_fi")


class MissingFlashInfer:
    """FlashInfer where the flashinfer package is not installed."""

    def __init__(self):
        raise ModuleNotFoundError("No module named 'flashinfer'")


def fake_modules(calls, flashqla=None, flashinfer=None):
    """sys.modules entries standing in for torch, triton, gdnbench.measure and gdnbench.peers;
    flashqla and flashinfer are the peers module's FlashQla and FlashInfer classes (default: ones
    whose packages do not import)."""
    torch = types.ModuleType("torch")
    torch.__version__ = "2.11.0+fake"
    torch.version = SimpleNamespace(cuda="13.0")
    torch.cuda = SimpleNamespace(
        is_available=lambda: True, empty_cache=lambda: None,
        get_device_properties=lambda i: SimpleNamespace(name="FakeGPU", multi_processor_count=132,
                                                        total_memory=141 * 2**30))
    triton = types.ModuleType("triton")
    triton.__version__ = "3.6.0"

    measure = types.ModuleType("gdnbench.measure")
    measure.make_inputs = lambda row, seed, with_grads: SimpleNamespace(row=row,
                                                                        with_grads=with_grads)
    measure.time_graph = lambda fn, reps, warmup: SimpleNamespace(
        median_ms=fn.ms, p20_ms=fn.ms * 0.9, p80_ms=fn.ms * 1.1, samples=reps)

    def ours_fwd(inp):
        calls.append(inp.row.name)
        if inp.row.label == "1x4096":
            raise RuntimeError("boom in ours")
        return FakeCall(0.5 if inp.row.label == "1x32768" else 0.1)

    def ours_bwd(inp):
        calls.append(inp.row.name)
        return FakeCall(0.3)

    def ours_train(inp):
        calls.append(inp.row.name)
        if not inp.with_grads:
            raise AssertionError("a training step needs do and dht")
        return FakeCall(2.0 if inp.row.label == "32k_1seq" else 0.4)

    class Fla:
        version = "0.5.0-fake"

        def fwd(self, inp):
            if inp.row.label == "1x2048":
                raise ValueError("boom in fla")
            return FakeCall(1.0)

        def bwd(self, inp):
            return FakeCall(1.5)

        def train(self, inp):
            if inp.row.label == "8k_8seq":
                raise ValueError("boom in fla train")
            return FakeCall(3.0)

    peers = types.ModuleType("gdnbench.peers")
    peers.ours_fwd, peers.ours_bwd, peers.ours_train, peers.Fla = ours_fwd, ours_bwd, ours_train, Fla
    peers.ours_train_path = lambda: "fake raw calls"
    peers.FlashQla = flashqla or MissingFlashQla
    peers.FlashInfer = flashinfer or MissingFlashInfer
    peers.ours_variant = lambda inp, pass_="fwd": "fake_variant"
    peers.library_version = lambda: "libgdn-fake"
    return {"torch": torch, "triton": triton, "gdnbench.measure": measure,
            "gdnbench.peers": peers}


def load_script():
    spec = importlib.util.spec_from_file_location("bench_peers_under_test",
                                                  REPO / "scripts" / "bench_peers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.relative_error = lambda x, ref: 0.0  # the fakes' outputs are not tensors
    return module


@unittest.skipUnless(HAVE_SHAPES, "scripts/shapes/fwd_anchors.csv not in this checkout")
class BenchLoopTest(unittest.TestCase):
    def run_main(self, *args, flashqla=None, flashinfer=None, stdout=None):
        calls = []
        with mock.patch.dict(sys.modules, fake_modules(calls, flashqla, flashinfer)):
            import gdnbench
            with mock.patch.object(gdnbench, "measure", sys.modules["gdnbench.measure"], create=True), \
                 mock.patch.object(gdnbench, "peers", sys.modules["gdnbench.peers"], create=True), \
                 contextlib.redirect_stdout(stdout or io.StringIO()):
                rc = load_script().main(list(args))
        return rc, calls

    def test_rows_errors_and_provenance(self):
        with tempfile.TemporaryDirectory() as d:
            out = Path(d) / "fwd.csv"
            rc, calls = self.run_main("--pass", "fwd", "--rows", "2/8", "--reps", "3",
                                      "--out", str(out), "--git-sha", "abc123")
            self.assertEqual(rc, 0)
            self.assertEqual(len(set(calls)), 19)  # (ours runs twice per forward row: time, check)
            text = out.read_text()
            self.assertIn("# GPU: FakeGPU, 132 SMs", text)
            self.assertIn("git SHA: abc123", text)
            self.assertIn("FLA: 0.5.0-fake", text)
            self.assertIn("FlashInfer: published column (flashinfer not importable: "
                          "ModuleNotFoundError", text)
            self.assertNotIn("training step", text)  # said only where a train pass runs
            rows = {r["seqlens"]: r for r in report.read_csv(out)}
            self.assertEqual(len(rows), 19)
            big = rows["1x32768"]
            self.assertEqual((big["ours_ms"], big["fla_ms"], big["fla_published_ms"]),
                             ("0.5000", "1.0000", "0.9020"))
            self.assertEqual((big["flashqla_ms"], big["flashqla_source"],
                              big["flashinfer_published_ms"]), ("0.3200", "published", "1.6550"))
            self.assertEqual((big["flashinfer_ms"], big["flashinfer_source"]), ("", "published"))
            self.assertEqual((big["ours_variant"], big["samples"], big["error"]),
                             ("fake_variant", "3", ""))
            self.assertIn("ours: RuntimeError: boom in ours", rows["1x4096"]["error"])
            self.assertEqual(rows["1x4096"]["fla_ms"], "1.0000")  # FLA still measured
            self.assertIn("fla: ValueError: boom in fla", rows["1x2048"]["error"])
            self.assertEqual(rows["1x2048"]["ours_ms"], "0.1000")

    def test_resume_keeps_finished_rows_and_retries_failed_ones(self):
        with tempfile.TemporaryDirectory() as d:
            out = Path(d) / "fwd.csv"
            self.run_main("--pass", "fwd", "--rows", "2/8", "--out", str(out))
            rc, calls = self.run_main("--pass", "fwd", "--rows", "2/8", "--out", str(out),
                                      "--resume")
            self.assertEqual(rc, 0)
            # the two rows with an error are timed again, the 17 others kept
            self.assertEqual(sorted(set(calls)), ["hqk2_hv8_1x2048", "hqk2_hv8_1x4096"])
            names = [r["name"] for r in report.read_csv(out)]
            self.assertEqual(len(names), 19)
            self.assertEqual(len(set(names)), 19)
            self.assertIn("resumed: 17 rows kept", out.read_text())

    def test_budget_stops_starting_rows(self):
        with tempfile.TemporaryDirectory() as d:
            out = Path(d) / "fwd.csv"
            ticks = iter(range(0, 10000, 10))  # each monotonic() call advances 10 s
            with mock.patch("time.monotonic", lambda: next(ticks)):
                rc, calls = self.run_main("--pass", "fwd", "--rows", "2/8", "--out", str(out),
                                          "--budget-s", "25")
            self.assertEqual(rc, 0)
            self.assertLess(len(set(calls)), 19)
            self.assertEqual(len(report.read_csv(out)), len(set(calls)))


    def test_train_pass_times_one_step_per_backward_row(self):
        with tempfile.TemporaryDirectory() as d:
            out = Path(d) / "train.csv"
            printed = io.StringIO()
            rc, calls = self.run_main("--pass", "train", "--rows", "16/32", "--reps", "7",
                                      "--out", str(out), stdout=printed)
            self.assertEqual(rc, 0)
            self.assertEqual(len(calls), 8)
            text = out.read_text()
            self.assertIn("ours: fake raw calls", text)
            self.assertIn("FlashQLA: published column (flash_qla not importable", text)
            rows = {r["seqlens"]: r for r in report.read_csv(out)}
            self.assertEqual(len(rows), 8)
            self.assertEqual({r["pass"] for r in rows.values()}, {"train"})
            big = rows["32k_1seq"]
            self.assertEqual((big["ours_ms"], big["ours_p20_ms"], big["ours_p80_ms"]),
                             ("2.0000", "1.8000", "2.2000"))
            self.assertEqual((big["fla_ms"], big["fla_p20_ms"], big["samples"], big["error"]),
                             ("3.0000", "2.7000", "7", ""))
            # no published training-step figure of any peer, and FlashQLA did not run live
            for column in ("fla_published_ms", "flashqla_ms", "flashqla_source",
                           "flashinfer_published_ms", "flashqla_p20_ms"):
                self.assertEqual(big[column], "", column)
            self.assertIn("fla: ValueError: boom in fla train", rows["8k_8seq"]["error"])
            self.assertEqual(rows["8k_8seq"]["ours_ms"], "0.4000")
            summary = printed.getvalue()
            self.assertIn("train 16/32", summary)
            line = next(x for x in summary.splitlines() if x.startswith("all train"))
            # xFLA over the 7 measured rows: 3.0/2.0 once, 3.0/0.4 six times
            self.assertEqual(line.split()[2:4],
                             ["7/8", f"{(1.5 * 7.5 ** 6) ** (1 / 7):.2f}"])
            self.assertEqual(line.split()[4], "-")

    def test_flashqla_runs_live_where_it_imports(self):
        with tempfile.TemporaryDirectory() as d:
            out = Path(d) / "all.csv"
            rc, _ = self.run_main("--pass", "all", "--rows", "hqk16_hv32_8k", "--out", str(out),
                                  flashqla=FakeFlashQla)
            self.assertEqual(rc, 0)
            self.assertIn("FlashQLA: 0.1.3-fake live (flashqla_source=live)", out.read_text())
            rows = {(r["pass"], r["seqlens"]): r for r in report.read_csv(out)}
            self.assertEqual(sorted({p for p, _ in rows}), ["bwd", "train"])
            for pass_ in ("bwd", "train"):
                r = rows[(pass_, "8k_1seq")]
                self.assertEqual((r["flashqla_ms"], r["flashqla_source"], r["flashqla_p20_ms"],
                                  r["flashqla_p80_ms"]), ("0.2500", "live", "0.2250", "0.2750"))
            # a failing live run keeps the published figure (bwd) or none (train), and says why
            failed = rows[("bwd", "8k_2seq")]
            self.assertEqual((failed["flashqla_ms"], failed["flashqla_source"]),
                             ("0.8700", "published"))
            self.assertIn("flashqla: RuntimeError: boom in flashqla", failed["error"])
            failed = rows[("train", "8k_2seq")]
            self.assertEqual((failed["flashqla_ms"], failed["flashqla_source"]), ("", ""))
            self.assertIn("flashqla: RuntimeError: boom in flashqla", failed["error"])

    def run_16_32(self, pass_, *flags, **peers):
        """(CSV text, rows) of a run over the 16/32 rows of a pass."""
        with tempfile.TemporaryDirectory() as d:
            out = Path(d) / "peers.csv"
            rc, _ = self.run_main("--pass", pass_, "--rows", "16/32", "--out", str(out), *flags,
                                  **peers)
            self.assertEqual(rc, 0)
            return out.read_text(), report.read_csv(out)

    def test_no_flashqla_keeps_published_figures(self):
        text, rows = self.run_16_32("bwd", "--no-flashqla", flashqla=FakeFlashQla)
        self.assertIn("FlashQLA: published column (--no-flashqla)", text)
        self.assertEqual({r["flashqla_source"] for r in rows}, {"published"})
        self.assertEqual({r["error"] for r in rows}, {""})

    def test_flashqla_rows_limit_its_live_runs(self):
        with tempfile.TemporaryDirectory() as d:
            out = Path(d) / "fwd.csv"
            rc, _ = self.run_main("--pass", "fwd", "--rows", "16/32", "--out", str(out),
                                  "--flashqla-rows", "1x8192,8192x4", flashqla=FakeFlashQla)
            self.assertEqual(rc, 0)
            self.assertIn("FlashQLA: 0.1.3-fake live on the rows --flashqla-rows '1x8192,8192x4' "
                          "matches (flashqla_source=live), published column on the others",
                          out.read_text())
            rows = {r["seqlens"]: r for r in report.read_csv(out)}
            self.assertEqual(len(rows), 19)
            live = {k for k, r in rows.items() if r["flashqla_source"] == "live"}
            self.assertEqual(live, {"1x8192", "8192x4"})
            self.assertEqual(rows["1x8192"]["flashqla_ms"], "0.2500")
            # the others keep the published figure; ours and FLA ran on every row
            self.assertEqual((rows["1x32768"]["flashqla_ms"], rows["1x32768"]["flashqla_source"]),
                             ("0.8770", "published"))
            self.assertEqual({r["fla_ms"] for r in rows.values()}, {"1.0000", ""})
            self.assertTrue(all(r["ours_ms"] for k, r in rows.items() if k != "1x4096"))

    def test_flashinfer_runs_live_on_forward_rows(self):
        FakeFlashInfer.checked = []
        with tempfile.TemporaryDirectory() as d:
            out = Path(d) / "both.csv"
            printed = io.StringIO()
            rc, _ = self.run_main("--pass", "both", "--rows", "16/32", "--out", str(out),
                                  flashinfer=FakeFlashInfer, stdout=printed)
            self.assertEqual(rc, 0)
            text = out.read_text()
            self.assertIn("FlashInfer: 0.7.2.post1-fake live (flashinfer_source=live)", text)
            rows = {(r["pass"], r["seqlens"]): r for r in report.read_csv(out)}
            r = rows[("fwd", "1x32768")]
            self.assertEqual((r["flashinfer_ms"], r["flashinfer_source"], r["flashinfer_p20_ms"],
                              r["flashinfer_p80_ms"], r["flashinfer_published_ms"]),
                             ("0.2000", "live", "0.1800", "0.2200", "1.5500"))
            self.assertEqual((r["note"], r["error"]), ("", ""))
            # every forward row it timed had its output checked against ours
            self.assertIn("hqk16_hv32_1x32768", FakeFlashInfer.checked)
            # a shape it cannot run: no live figure, empty source, the reason as a note
            r = rows[("fwd", "1x16384")]
            self.assertEqual((r["flashinfer_ms"], r["flashinfer_source"], r["error"]),
                             ("", "", ""))
            self.assertEqual(r["note"], "flashinfer: unsupported: heads 16/32: fake limit")
            self.assertNotIn("hqk16_hv32_1x16384", FakeFlashInfer.checked)
            # a failing run is the row's error and keeps the published figure
            r = rows[("fwd", "4096+4096")]
            self.assertEqual((r["flashinfer_ms"], r["flashinfer_source"]), ("", "published"))
            self.assertIn("flashinfer: RuntimeError: boom in flashinfer", r["error"])
            # no backward: bwd rows never run it and have no figure of it
            for (pass_, _), r in rows.items():
                if pass_ == "bwd":
                    self.assertEqual((r["flashinfer_ms"], r["flashinfer_source"],
                                      r["flashinfer_published_ms"]), ("", "", ""))
            # the best peer of a row is live FlashInfer where it is faster
            ratios = report.row_ratios(rows[("fwd", "1x32768")])
            self.assertAlmostEqual(ratios["vs_best"], 0.2 / 0.5)
            self.assertIn("FlashInfer 0.2000 ms", printed.getvalue())

    def test_flashinfer_disagreeing_with_ours_is_an_error_not_a_time(self):
        with tempfile.TemporaryDirectory() as d:
            out = Path(d) / "fwd.csv"
            calls = []
            with mock.patch.dict(sys.modules, fake_modules(calls, flashinfer=FakeFlashInfer)):
                import gdnbench
                script = load_script()
                script.relative_error = lambda x, ref: 0.5 if x == "ht_fi" else 0.0
                with mock.patch.object(gdnbench, "measure", sys.modules["gdnbench.measure"],
                                       create=True), \
                     mock.patch.object(gdnbench, "peers", sys.modules["gdnbench.peers"],
                                       create=True), \
                     contextlib.redirect_stdout(io.StringIO()):
                    rc = script.main(["--pass", "fwd", "--rows", "hqk16_hv32_1x8192",
                                      "--out", str(out)])
            self.assertEqual(rc, 0)
            (r,) = report.read_csv(out)
            self.assertEqual(r["error"],
                             "check: final state differs from FlashInfer's by 0.5 relative RMS")

    def test_no_flashinfer_keeps_the_published_column_only(self):
        text, rows = self.run_16_32("fwd", "--no-flashinfer", flashinfer=FakeFlashInfer)
        self.assertIn("FlashInfer: published column (--no-flashinfer)", text)
        self.assertEqual({r["flashinfer_ms"] for r in rows}, {""})
        self.assertEqual({r["flashinfer_source"] for r in rows}, {"published"})
        self.assertTrue(all(r["flashinfer_published_ms"] for r in rows))

    def test_flashinfer_is_not_opened_without_a_forward_pass(self):
        text, _ = self.run_16_32("bwd", flashinfer=MissingFlashInfer)
        self.assertIn("FlashInfer: published column (no forward pass; it has no backward)", text)


if __name__ == "__main__":
    unittest.main()
