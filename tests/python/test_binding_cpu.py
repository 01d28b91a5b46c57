"""The binding without torch or a GPU: import, ctypes layout, argument checks, status mapping,
library lookup, and the C validation reached through ctypes.

Environment (set by tests/python/CMakeLists.txt): PYTHONPATH=python, GDN_LIBRARY (the built
libgdn.so), GDN_ABI_LAYOUT (the gdn_abi_layout program).
"""

import ctypes
import os
import subprocess
import sys
import tempfile
import unittest

import gdn
from gdn import _capi
from gdn._checks import check_fwd_inputs
from gdn._errors import error_for_status

from fakes import FakeTensor, device, fwd_inputs


def check(**kw):
    return check_fwd_inputs(**kw)


class ImportTest(unittest.TestCase):
    def test_import_without_torch(self):
        # sys.modules['torch'] = None makes any `import torch` fail, as on a machine without it.
        code = ("import sys; sys.modules['torch'] = None\n"
                "import gdn\n"
                "try:\n"
                "    gdn.chunk_gated_delta_rule(None, None, None, None, None)\n"
                "except gdn.GdnNotAvailableError as e:\n"
                "    print('raised:', e)\n")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             env=os.environ.copy())
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("raised: gdn.chunk_gated_delta_rule needs PyTorch", out.stdout)


class AbiLayoutTest(unittest.TestCase):
    """Each ctypes.Structure has the size and field offsets the C compiler gives gdn.h."""

    def test_structs_match_header(self):
        program = os.environ.get("GDN_ABI_LAYOUT")
        if not program:
            self.skipTest("GDN_ABI_LAYOUT unset (run through ctest)")
        lines = subprocess.run([program], capture_output=True, text=True, check=True).stdout.split("\n")
        mirrors = {"gdn_problem": _capi.GdnProblem, "gdn_fwd_args": _capi.GdnFwdArgs,
                   "gdn_bwd_args": _capi.GdnBwdArgs, "gdn_cp_rank_plan": _capi.GdnCpRankPlan,
                   "gdn_saved": _capi.GdnSaved}
        seen = 0
        for line in filter(None, lines):
            struct, field, value = line.split()
            cls = mirrors[struct]
            if field == "sizeof":
                self.assertEqual(ctypes.sizeof(cls), int(value), f"sizeof({struct})")
            else:
                self.assertEqual(getattr(cls, field).offset, int(value), f"{struct}.{field}")
            seen += 1
        # every Python field was checked against C (sizes + all fields)
        self.assertEqual(seen, len(mirrors) + sum(len(c._fields_) for c in mirrors.values()))


class ArgumentCheckTest(unittest.TestCase):
    def assertRejects(self, argument, fragment, **overrides):
        kw = {**fwd_inputs(), **overrides}
        with self.assertRaises(gdn.GdnArgumentError) as cm:
            check(**kw)
        msg = str(cm.exception)
        self.assertTrue(msg.startswith(argument + ":"), msg)
        self.assertIn(fragment, msg)
        self.assertIsInstance(cm.exception, ValueError)
        self.assertIsInstance(cm.exception, TypeError)

    def test_valid_inputs_give_the_problem(self):
        spec = check(**fwd_inputs(T=100, Hk=2, Hv=8))
        self.assertEqual((spec.B, spec.T, spec.N, spec.Hk, spec.Hv, spec.K, spec.V),
                         (1, 100, 1, 2, 8, 128, 128))
        self.assertAlmostEqual(spec.scale, 128 ** -0.5)
        self.assertEqual(spec.qkv_dtype, _capi.GDN_BF16)
        self.assertEqual(spec.beta_dtype, _capi.GDN_FP32)
        self.assertEqual(spec.state_shape(), (1, 8, 128, 128))

    def test_not_a_tensor(self):
        self.assertRejects("q", "a torch.Tensor", q=[1, 2, 3])

    def test_cpu_tensor(self):
        self.assertRejects("k", "a CUDA tensor",
                           k=FakeTensor((1, 100, 2, 128), dev=device("cpu")))

    def test_cpu_hint_without_gpu(self):
        kw = fwd_inputs()
        kw["q"] = FakeTensor((1, 100, 2, 128), dev=device("cpu"))
        with self.assertRaises(gdn.GdnArgumentError) as cm:
            check(**kw, cuda_hint=" (this machine has no usable CUDA device)")
        self.assertIn("no usable CUDA device", str(cm.exception))

    def test_other_device(self):
        self.assertRejects("v", "cuda:0 (the device of q)",
                           v=FakeTensor((1, 100, 4, 128), dev=device("cuda", 1)))

    def test_qkv_dtype(self):
        self.assertRejects("q", "dtype bfloat16 or float16",
                           q=FakeTensor((1, 100, 2, 128), "torch.float32"))
        self.assertRejects("v", "dtype bfloat16", v=FakeTensor((1, 100, 4, 128), "torch.float16"))

    def test_gate_and_beta_dtype(self):
        self.assertRejects("g", "dtype float32", g=FakeTensor((1, 100, 4), "torch.bfloat16"))
        self.assertRejects("beta", "bfloat16 or float32", beta=FakeTensor((1, 100, 4), "torch.float16"))

    def test_non_contiguous(self):
        self.assertRejects("g", "contiguous",
                           g=FakeTensor((1, 100, 4), "torch.float32", contiguous=False))

    def test_shapes(self):
        self.assertRejects("q", "4 dimensions", q=FakeTensor((100, 2, 128)))
        self.assertRejects("k", "shape (1, 100, 2, 128)", k=FakeTensor((1, 99, 2, 128)))
        self.assertRejects("v", "B, T of q", v=FakeTensor((1, 99, 4, 128)))
        self.assertRejects("v", "multiple of q's Hk = 2", v=FakeTensor((1, 100, 3, 128)))
        self.assertRejects("beta", "shape (1, 100, 4)", beta=FakeTensor((1, 100, 2), "torch.float32"))

    def test_scale_and_layout(self):
        self.assertRejects("scale", "finite", scale=float("nan"))
        self.assertRejects("scale", "finite", scale="0.1")
        self.assertRejects("state_layout", "'kv'", state_layout="kvt")

    def test_initial_state(self):
        self.assertRejects("initial_state", "shape (1, 4, 128, 128)",
                           initial_state=FakeTensor((1, 4, 64, 128), "torch.float32"))
        self.assertRejects("initial_state", "dtype float32",
                           initial_state=FakeTensor((1, 4, 128, 128), "torch.bfloat16"))
        spec = check(**fwd_inputs(V=64, K=128), state_layout="vk",
                     initial_state=FakeTensor((1, 4, 64, 128), "torch.float32"))
        self.assertEqual(spec.state_layout, _capi.GDN_STATE_VK)

    def test_cu_seqlens(self):
        kw = fwd_inputs(T=100, seqlens=[0, 40, 60])
        spec = check(**kw)
        self.assertEqual(spec.N, 3)
        self.assertEqual(spec.max_seqlen_hint, 60)
        self.assertEqual(list(spec.cu_seqlens_host), [0, 0, 40, 100])
        self.assertEqual(spec.cu_seqlens_ptr, 0x6000)
        kw.pop("cu_seqlens_cpu")
        self.assertIsNone(check(**kw).cu_seqlens_host)  # no host copy: none is made
        self.assertRejects("cu_seqlens", "dtype int32 or int64",
                           cu_seqlens=FakeTensor((3,), "torch.float32"))
        self.assertRejects("q", "B = 1 when cu_seqlens", **fwd_inputs(B=2, seqlens=[50, 50]))
        self.assertRejects("cu_seqlens_cpu", "4 entries", **{**fwd_inputs(seqlens=[0, 40, 60]),
                                                             "cu_seqlens_cpu": [0, 100]})
        self.assertRejects("cu_seqlens_cpu", "CPU tensor", **{
            **fwd_inputs(seqlens=[100]),
            "cu_seqlens_cpu": FakeTensor((2,), "torch.int32", values=[0, 100])})
        self.assertRejects("cu_seqlens_cpu", "None unless cu_seqlens", cu_seqlens_cpu=[0, 100])

    def test_unresolved_spec_reads_no_pointer(self):
        # The form traced by torch.compile: same checks, no data pointer, no ctypes host copy.
        kw = fwd_inputs(T=100, seqlens=[40, 60])
        kw["cu_seqlens"].ptr = None  # data_ptr() would return None: a read would show
        spec = check_fwd_inputs(**kw, resolve=False)
        self.assertEqual((spec.N, spec.cu_seqlens_ptr, spec.cu_seqlens_host), (2, 0, None))
        self.assertEqual(spec.cu_seqlens_offsets, [0, 40, 100])
        with self.assertRaises(gdn.GdnArgumentError) as cm:
            check_fwd_inputs(**{**kw, "cu_seqlens_cpu": [0, 100]}, resolve=False)
        self.assertIn("3 entries", str(cm.exception))

    def test_strides_only_when_asked(self):
        kw = {**fwd_inputs(), "q": FakeTensor((1, 100, 2, 128), contiguous=False)}
        self.assertRejects("q", "contiguous", q=kw["q"])
        self.assertEqual(check_fwd_inputs(**kw, contiguous=False).K, 128)

    def test_host_copy_from_cpu_tensor(self):
        kw = fwd_inputs(seqlens=[30, 70])
        kw["cu_seqlens_cpu"] = FakeTensor((3,), "torch.int64", dev=device("cpu"), values=[0, 30, 100])
        self.assertEqual(check(**kw).max_seqlen_hint, 70)


class StatusMappingTest(unittest.TestCase):
    def test_each_status_has_its_class(self):
        expected = {1: gdn.GdnInvalidArgumentError, 2: gdn.GdnUnsupportedError,
                    3: gdn.GdnNotAvailableError, 4: gdn.GdnCudaError,
                    5: gdn.GdnWorkspaceError, 6: gdn.GdnInternalError, 99: gdn.GdnInternalError}
        for status, cls in expected.items():
            err = error_for_status(status, "gdn_fwd", "p->K: expected 128; got 64")
            self.assertIsInstance(err, cls)
            self.assertIsInstance(err, gdn.GdnError)
            self.assertEqual(err.status, status)
            self.assertIn("gdn_fwd failed with status", str(err))
            self.assertIn("p->K: expected 128; got 64", str(err))


class LibraryLookupTest(unittest.TestCase):
    def setUp(self):
        self.saved = os.environ.get("GDN_LIBRARY")

    def tearDown(self):
        if self.saved is None:
            os.environ.pop("GDN_LIBRARY", None)
        else:
            os.environ["GDN_LIBRARY"] = self.saved
        _capi.reset_library_for_tests()

    def test_env_alone_when_set(self):
        os.environ["GDN_LIBRARY"] = "/nonexistent/libgdn.so"
        self.assertEqual([str(p) for p in _capi.candidate_paths()], ["/nonexistent/libgdn.so"])

    def test_env_naming_a_missing_file_fails_clearly(self):
        # An explicit override never falls back to another copy silently.
        os.environ["GDN_LIBRARY"] = "/nonexistent/libgdn.so"
        _capi.reset_library_for_tests()
        with self.assertRaises(gdn.GdnNotAvailableError) as cm:
            gdn.library()
        self.assertIn("GDN_LIBRARY=/nonexistent/libgdn.so", str(cm.exception))
        self.assertIn("no such file", str(cm.exception))

    def test_package_copy_before_the_build_folder(self):
        os.environ.pop("GDN_LIBRARY", None)
        paths = _capi.candidate_paths()
        package_dir = os.path.dirname(gdn.__file__)
        self.assertEqual(str(paths[0]), os.path.join(package_dir, "libgdn.so"))
        self.assertEqual(paths[1].parts[-3:], ("build", "kernels", "libgdn.so"))

    def test_an_explicit_library_that_is_missing_is_an_error(self):
        # Regression: a GDN_LIBRARY naming a missing file silently loaded the repo's build.
        old = os.environ.get("GDN_LIBRARY")
        try:
            for missing in ("/nonexistent/libgdn.so", tempfile.gettempdir()):
                os.environ["GDN_LIBRARY"] = missing
                _capi.reset_library_for_tests()
                with self.assertRaises(gdn.GdnNotAvailableError) as cm:
                    _capi.library()
                self.assertIn(f"GDN_LIBRARY names {missing}", str(cm.exception))
        finally:
            if old is None:
                os.environ.pop("GDN_LIBRARY")
            else:
                os.environ["GDN_LIBRARY"] = old

    def test_not_a_library(self):
        with tempfile.NamedTemporaryFile(suffix=".so") as f:
            f.write(b"not an ELF file")
            f.flush()
            with self.assertRaises(gdn.GdnNotAvailableError) as cm:
                _capi.Library(f.name)
            self.assertIn("cannot load libgdn", str(cm.exception))


@unittest.skipUnless(os.environ.get("GDN_LIBRARY"), "GDN_LIBRARY unset (run through ctest)")
class ThroughTheLibraryTest(unittest.TestCase):
    """The C validation reached through the ctypes mirror (no device needed)."""

    @classmethod
    def setUpClass(cls):
        _capi.reset_library_for_tests()
        cls.lib = gdn.library()

    def test_version(self):
        self.assertTrue(self.lib.version())

    def test_valid_problem_passes_and_sizes_workspace(self):
        spec = check(**fwd_inputs(T=1000, Hk=2, Hv=8, seqlens=[0, 410, 590]))
        self.lib.validate_problem(spec.to_problem())
        self.assertGreaterEqual(self.lib.fwd_workspace_size(spec.to_problem()), 0)

    def test_problem_from_a_temporary_spec_keeps_its_host_offsets(self):
        # Regression: the struct held only the address of the spec's host array, so a problem
        # made from a spec that was then collected read freed memory (seen on the H200 bench).
        import gc
        import weakref
        spec = check(**fwd_inputs(T=1000, Hk=2, Hv=8, seqlens=[410, 590]))
        host_array = weakref.ref(spec.cu_seqlens_host)
        problem = spec.to_problem()
        del spec
        gc.collect()
        self.assertIsNotNone(host_array(), "the host offsets died while the problem points at them")
        self.lib.validate_problem(problem)

    def test_problem_init_matches_the_documented_defaults(self):
        p = _capi.GdnProblem()
        self.lib.gdn_problem_init(ctypes.byref(p), 2, 64, 4, 8, 128, 128)
        self.assertEqual((p.B, p.T, p.Hk, p.Hv, p.K, p.V), (2, 64, 4, 8, 128, 128))
        self.assertAlmostEqual(p.scale, 128 ** -0.5, places=6)
        self.assertEqual((p.qkv_dtype, p.beta_dtype, p.state_layout),
                         (_capi.GDN_BF16, _capi.GDN_FP32, _capi.GDN_STATE_KV))
        self.assertFalse(p.cu_seqlens)

    def test_a_bad_dispatch_table_is_refused_and_none_restores_the_built_in_one(self):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, "dispatch.json")
            with open(bad, "w") as f:
                f.write('{"format": "something else"}')
            with self.assertRaises(gdn.GdnError) as cm:
                gdn.load_dispatch_table(bad)
            self.assertIn("gdn_load_dispatch_table", str(cm.exception))
            self.assertIn("format", str(cm.exception))
            with self.assertRaises(gdn.GdnError) as cm:
                gdn.load_dispatch_table(os.path.join(d, "missing.json"))
            self.assertIn("missing.json", str(cm.exception))
        gdn.load_dispatch_table(None)

    def test_bad_host_offsets_are_reported_with_the_library_message(self):
        kw = fwd_inputs(T=100, seqlens=[40, 60])
        kw["cu_seqlens_cpu"] = [0, 40, 90]  # does not end at T
        spec = check(**kw)
        with self.assertRaises(gdn.GdnInvalidArgumentError) as cm:
            self.lib.validate_problem(spec.to_problem())
        self.assertIn("cu_seqlens", str(cm.exception))
        self.assertIn("gdn_validate_problem failed with status 1", str(cm.exception))

    def test_fwd_without_a_device_is_not_available(self):
        if self.lib.device_available():
            self.skipTest("a device is present: covered by test_binding_gpu.py")
        spec = check(**fwd_inputs(T=64))
        slot = 1 << 32  # far apart: an output overlapping an input is refused before the device
        args = _capi.GdnFwdArgs(q=slot, k=2 * slot, v=3 * slot, g=4 * slot, beta=5 * slot, o=7 * slot)
        with self.assertRaises(gdn.GdnNotAvailableError) as cm:
            self.lib.fwd(spec.to_problem(), args, None)
        self.assertIn("gdn_fwd failed with status 3", str(cm.exception))
        self.assertGreater(len(str(cm.exception)), len("gdn_fwd failed with status 3: "))
        self.assertFalse(gdn.device_available())

    def test_variant_name_without_a_device_is_not_available(self):
        # Regression: "no usable CUDA device" came back as GdnUnsupportedError.
        if self.lib.device_available():
            self.skipTest("a device is present: covered by test_binding_gpu.py")
        spec = check(**fwd_inputs(T=64))
        with self.assertRaises(gdn.GdnNotAvailableError) as cm:
            self.lib.fwd_variant_name(spec.to_problem())
        self.assertIn("status 3", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
