"""scripts/bench_peers.py's measuring loop without a GPU: torch, triton, the timer and the two
libraries are replaced by fakes, so what is checked is the orchestration (one CSV line per row,
a failing library recorded as that row's error while the run goes on, provenance, --resume,
--budget-s) with timings the fakes dictate."""

import importlib.util
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


def fake_modules(calls):
    """sys.modules entries standing in for torch, triton, gdnbench.measure and gdnbench.peers."""
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
    measure.make_inputs = lambda row, seed, with_grads: SimpleNamespace(row=row)
    measure.time_graph = lambda fn, reps, warmup: SimpleNamespace(
        median_ms=fn.ms, p20_ms=fn.ms * 0.9, p80_ms=fn.ms * 1.1, samples=reps)

    def ours_fwd(inp):
        calls.append(inp.row.name)
        if inp.row.label == "1x4096":
            raise RuntimeError("boom in ours")
        return FakeCall(0.5 if inp.row.label == "1x32768" else 0.1)

    class Fla:
        version = "0.5.0-fake"

        def fwd(self, inp):
            if inp.row.label == "1x2048":
                raise ValueError("boom in fla")
            return FakeCall(1.0)

    peers = types.ModuleType("gdnbench.peers")
    peers.ours_fwd, peers.Fla = ours_fwd, Fla
    peers.ours_variant = lambda inp: "fake_variant"
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
    def run_main(self, *args):
        calls = []
        with mock.patch.dict(sys.modules, fake_modules(calls)):
            import gdnbench
            with mock.patch.object(gdnbench, "measure", sys.modules["gdnbench.measure"], create=True), \
                 mock.patch.object(gdnbench, "peers", sys.modules["gdnbench.peers"], create=True):
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
            rows = {r["seqlens"]: r for r in report.read_csv(out)}
            self.assertEqual(len(rows), 19)
            big = rows["1x32768"]
            self.assertEqual((big["ours_ms"], big["fla_ms"], big["fla_published_ms"]),
                             ("0.5000", "1.0000", "0.9020"))
            self.assertEqual((big["flashqla_ms"], big["flashqla_source"],
                              big["flashinfer_published_ms"]), ("0.3200", "published", "1.6550"))
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


if __name__ == "__main__":
    unittest.main()
