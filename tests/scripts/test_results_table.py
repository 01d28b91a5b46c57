"""scripts/results_table.py: the README's results table is the one its CSV gives, the arithmetic
is the geometric mean of each column, and bad input is refused with a reason."""

import importlib.util
import math
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "results_table.py"
spec = importlib.util.spec_from_file_location("results_table", SCRIPT)
results_table = importlib.util.module_from_spec(spec)
spec.loader.exec_module(results_table)

HEADER = ("pass,name,model,seqlens,lengths,h_qk,h_v,tokens,ours_ms,fla_ms,fla_published_ms,"
          "flashqla_ms,flashqla_source,flashinfer_published_ms,ours_p20_ms,ours_p80_ms,fla_p20_ms,"
          "fla_p80_ms,samples,ours_variant,error")


def write_csv(folder, rows):
    path = Path(folder) / "peers.csv"
    lines = ["# provenance", HEADER]
    for name, hk, hv, ours, fla, flap, fqla, fi, err in rows:
        lines.append(f"fwd,{name},m,1x64,64,{hk},{hv},64,{ours},{fla},{flap},{fqla},published,"
                     f"{fi},,,,,30,v,{err}")
    lines.append("bwd,b,m,1x64,64,2,8,64,9.0,1.0,1.0,0.5,published,,,,,,30,v,")
    path.write_text("\n".join(lines) + "\n")
    return path


class ResultsTableTest(unittest.TestCase):
    def test_readme_table_matches_its_csv(self):
        out = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)

    def test_geometric_means_per_head_configuration_and_overall(self):
        with tempfile.TemporaryDirectory() as d:
            # FLA live == published: the peers' figures are not scaled.
            path = write_csv(d, [("a", 2, 8, 0.1, 0.4, 0.4, 0.2, 0.3, ""),
                                 ("b", 2, 8, 0.4, 0.4, 0.4, 0.2, 0.8, ""),
                                 ("c", 4, 16, 1.0, 2.0, 1.0, 1.5, 1.2, "")])
            lines = results_table.render(str(path))
        rows = {l.split("|")[1].strip(): [c.strip() for c in l.split("|")[2:-1]]
                for l in lines if l.startswith("| ") and not l.startswith("| h_qk")}
        self.assertEqual(list(rows), ["2/8", "4/16", "all"])
        # Columns: rows, ms of ours and FLA, FLA, FlashQLA, FlashInfer and best peer over ours,
        # rows where the best peer is more than 3 % faster (row b: 0.2 against 0.4).
        self.assertEqual(rows["2/8"], ["2", "0.200", "0.400", "2.00", "1.00", "2.45", "1.00", "1"])
        # Row c: FLA live / published = 2 scales FlashQLA to 3.0 and FlashInfer to 2.4.
        self.assertEqual(rows["4/16"], ["1", "1.000", "2.000", "2.00", "3.00", "2.40", "2.40", "0"])
        self.assertEqual(rows["all"][0], "3")
        self.assertEqual(rows["all"][3], f"{(4 * 1 * 2) ** (1 / 3):.2f}")
        self.assertEqual(rows["all"][6], f"{math.exp((math.log(2) + math.log(0.5) + math.log(2.4)) / 3):.2f}")
        self.assertEqual(rows["all"][7], "1")

    def test_rows_with_errors_or_missing_timings_are_refused(self):
        with tempfile.TemporaryDirectory() as d:
            path = write_csv(d, [("a", 2, 8, 0.1, 0.4, 0.4, 0.2, 0.3, ""),
                                 ("broken", 2, 8, "", 0.4, 0.4, 0.2, 0.3, "launch failed")])
            with self.assertRaisesRegex(results_table.TableError, "broken"):
                results_table.render(str(path))
        with self.assertRaisesRegex(results_table.TableError, "no such benchmark CSV"):
            results_table.render("bench/results/missing.csv")

    def test_best_peer_is_live_flashinfer_where_it_ran_live(self):
        header = HEADER.replace("flashinfer_published_ms,",
                                "flashinfer_published_ms,flashinfer_ms,flashinfer_source,")
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "peers.csv"
            # FLA live / published = 2: published figures are doubled, live ones are not. Row a:
            # live FlashInfer 0.5 against published FlashQLA 0.4 * 2; row b: FlashInfer did not
            # run live (unsupported), its published 0.3 * 2 against FlashQLA's 0.4 * 2.
            path.write_text("\n".join([
                header,
                "fwd,a,m,1x64,64,2,8,64,1.0,2.0,1.0,0.4,published,0.9,0.5,live,,,,,30,v,",
                "fwd,b,m,1x64,64,2,8,64,1.0,2.0,1.0,0.4,published,0.3,,,,,,,30,v,",
            ]) + "\n")
            lines = results_table.render(str(path))
        row = next(l for l in lines if l.startswith("| 2/8 "))
        cells = [c.strip() for c in row.split("|")[2:-1]]
        self.assertEqual(cells[5], f"{math.sqrt(0.5 * 0.6):.2f}")  # FlashInfer / ours
        self.assertEqual(cells[6], f"{math.sqrt(0.5 * 0.6):.2f}")  # best peer / ours

    def test_backward_table_per_head_configuration_from_published_figures(self):
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "bwd.csv"
            path.write_text("\n".join([
                "# provenance",
                "pass,name,h_qk,h_v,ours_ms,fla_ms,fla_published_ms,flashqla_ms,flashqla_source,error",
                "bwd,a,16,32,2.0,4.0,1.0,0.5,published,",
                "bwd,b,16,32,8.0,4.0,4.0,8.0,published,",
                "bwd,c,2,4,1.0,,1.5,0.5,published,",
                "bwd,d,2,4,1.0,3.0,1.5,0.5,published,",
                "fwd,f,2,4,9.0,9.0,9.0,9.0,published,",
            ]) + "\n")
            lines = results_table.render_bwd(str(path))
        rows = {l.split("|")[1].strip(): [c.strip() for c in l.split("|")[2:-1]]
                for l in lines if l.startswith("| ") and not l.startswith("| heads")}
        self.assertEqual(list(rows), ["16/32", "2/4", "all"])
        # 16/32: ours gmean(2, 8) = 4; FLA live gmean(2, 0.5) = 1; FLA published gmean(0.5,
        # 0.5) = 0.5; FlashQLA gmean(0.25, 1) = 0.5.
        self.assertEqual(rows["16/32"], ["2", "4.000", "1.00", "0.50", "0.50"])
        # 2/4: FLA live on one of the two rows only, and said so.
        self.assertEqual(rows["2/4"], ["2", "1.000", "3.00 (1 rows)", "1.50", "0.50"])
        self.assertEqual(rows["all"][0], "4")
        self.assertEqual(rows["all"][2], f"{(2 * 0.5 * 3) ** (1 / 3):.2f} (3 rows)")

    def test_backward_rows_without_published_figures_are_refused(self):
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "bwd.csv"
            path.write_text("pass,name,h_qk,h_v,ours_ms,fla_published_ms,flashqla_ms,error\n"
                            "bwd,lonely,2,4,1.0,,0.5,\n")
            with self.assertRaisesRegex(results_table.TableError, "lonely"):
                results_table.render_bwd(str(path))

    def test_the_backward_block_is_replaced_between_its_own_markers(self):
        b, e = results_table.BWD_BEGIN, results_table.BWD_END
        text = f"{results_table.BEGIN}\nf\n{results_table.END}\n{b}\nold\n{e}\n"
        new = results_table.replace_block(text, ["bwd"], b, e)
        self.assertIn(f"{b}\nbwd\n{e}", new)
        self.assertIn(f"{results_table.BEGIN}\nf\n{results_table.END}", new)

    def test_replace_block_needs_both_markers_in_order(self):
        b, e = results_table.BEGIN, results_table.END
        self.assertEqual(results_table.replace_block(f"x\n{b}\nold\n{e}\ny", ["new"]),
                         f"x\n{b}\nnew\n{e}\ny")
        for bad in (f"{b}\nno end", f"{e}\n{b}\n", "nothing", f"{b}\n{e}\n{b}\n{e}"):
            with self.assertRaises(results_table.TableError):
                results_table.replace_block(bad, ["new"])

    def test_check_reports_a_stale_table(self):
        with tempfile.TemporaryDirectory() as d:
            readme = Path(d) / "README.md"
            readme.write_text(f"{results_table.BEGIN}\nstale\n{results_table.END}\n")
            out = subprocess.run([sys.executable, str(SCRIPT), "--check", "--readme", str(readme)],
                                 capture_output=True, text=True)
            self.assertEqual(out.returncode, 1)
            self.assertIn("--write", out.stderr)
            out = subprocess.run([sys.executable, str(SCRIPT), "--write", "--readme", str(readme)],
                                 capture_output=True, text=True)
            self.assertEqual(out.returncode, 0, out.stderr)
            self.assertIn("| all | 171 |", readme.read_text())


if __name__ == "__main__":
    unittest.main()
