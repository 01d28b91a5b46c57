"""The FLA backend without a GPU: the verifier's decision on each kind of call (with the
binding's tensor fakes and the built libgdn's own validation), and its registration in
fla-core's backend registry: priority above FlashQLA's, FLA_LIBGDN=0, availability.

Environment (set by tests/python/CMakeLists.txt): PYTHONPATH=python, GDN_LIBRARY. fla-core and
torch come from scripts/requirements.txt.
"""

import os
import subprocess
import sys
import unittest

import gdn
from gdn import _capi, _fla

from fakes import FakeTensor, device, fwd_inputs


def hopper(_device):
    return (9, 0)


def verdict(capability=hopper, **overrides):
    return _fla.verify(**{**fwd_inputs(), **overrides}, device_capability=capability)


class VerifierTest(unittest.TestCase):
    """Accepts exactly what libgdn computes; every decline names its reason."""

    @classmethod
    def setUpClass(cls):
        _capi.reset_library_for_tests()
        gdn.library()  # the verifier asks libgdn's own validation: it must load here

    def assertDeclines(self, fragment, **overrides):
        accepted, reason = verdict(**overrides)
        self.assertFalse(accepted, overrides)
        self.assertIn(fragment, reason)

    def test_accepts_what_libgdn_computes(self):
        h0 = FakeTensor((1, 4, 128, 128), "torch.float32")
        packed = fwd_inputs(T=100, seqlens=[0, 37, 63])
        cases = {
            "plain": {},
            "final state and h0": {"output_final_state": True, "initial_state": h0},
            "packed with host offsets": packed,
            "packed, int64 offsets, no host copy": {
                **packed, "cu_seqlens_cpu": None,
                "cu_seqlens": FakeTensor((4,), "torch.int64", ptr=0x6000)},
            "beta in q's dtype": {"beta": FakeTensor((1, 100, 4), "torch.bfloat16")},
            "fp16": {n: FakeTensor(t.shape, "torch.float16")
                     for n, t in fwd_inputs().items() if n in ("q", "k", "v")},
            "V-first state": {"state_v_first": True, "initial_state": h0},
            "strided q": {"q": FakeTensor((1, 100, 2, 128), contiguous=False)},
            "explicit scale": {"scale": 0.05},
            "FLA's tiling arguments": {"chunk_size": 32, "chunk_indices": object()},
            "q and k l2-normalised first": {"use_qk_l2norm_in_kernel": True},
        }
        for name, overrides in cases.items():
            self.assertEqual(verdict(**overrides), (True, None), name)
        # FLA's positional order, chunk_indices included (between cu_seqlens_cpu and cp_context).
        x = packed
        positional = (x["q"], x["k"], x["v"], x["g"], x["beta"], None, None, True, False, False,
                      False, False, x["cu_seqlens"], x["cu_seqlens_cpu"], object(), None)
        self.assertEqual(_fla.verify(*positional, device_capability=hopper), (True, None))

    def test_declines_fla_options_libgdn_lacks(self):
        self.assertDeclines("use_beta_sigmoid_in_kernel", use_beta_sigmoid_in_kernel=True)
        self.assertDeclines("use_qk_l2norm_in_kernel: expected a bool; got str",
                            use_qk_l2norm_in_kernel="yes")
        self.assertDeclines("allow_neg_eigval", allow_neg_eigval=True)
        self.assertDeclines("use_gate_in_kernel", use_gate_in_kernel=True)
        self.assertDeclines("cp_context", cp_context=object())
        self.assertDeclines("transpose_state_layout", transpose_state_layout=True)
        self.assertDeclines("chunk_size must be 16, 32 or 64", chunk_size=128)

    def test_declines_other_head_dims(self):
        small_k = fwd_inputs(K=64)
        self.assertDeclines("key head dim 128", **small_k)
        self.assertDeclines("value head dim 128", **fwd_inputs(V=256))

    def test_declines_dtypes_libgdn_does_not_take(self):
        self.assertDeclines("g: expected dtype float32", g=FakeTensor((1, 100, 4), "torch.bfloat16"))
        self.assertDeclines("q: expected dtype bfloat16 or float16",
                            **{n: FakeTensor(t.shape, "torch.float32")
                               for n, t in fwd_inputs().items() if n in ("q", "k", "v")})
        self.assertDeclines("initial_state: expected dtype float32",
                            initial_state=FakeTensor((1, 4, 128, 128), "torch.bfloat16"))
        self.assertDeclines("beta: expected dtype bfloat16 or float32",
                            beta=FakeTensor((1, 100, 4), "torch.float16"))

    def test_declines_layouts_and_shapes(self):
        self.assertDeclines("k: expected shape (1, 100, 2, 128)", k=FakeTensor((1, 100, 1, 128)))
        self.assertDeclines("q: expected batch size B = 1", **fwd_inputs(B=2, seqlens=[50, 50]))
        # [N, Hv, K, V] given where state_v_first asks for [N, Hv, V, K] (K != V only in shape).
        self.assertDeclines("initial_state", state_v_first=True, **fwd_inputs(V=64),
                            initial_state=FakeTensor((1, 4, 128, 64), "torch.float32"))

    def test_declines_offsets_libgdn_rejects(self):
        bad = {**fwd_inputs(T=100, seqlens=[40, 60]), "cu_seqlens_cpu": [0, 40, 90]}
        self.assertDeclines("cu_seqlens", **bad)

    def test_declines_devices_without_sm90_kernels(self):
        self.assertDeclines("a CUDA tensor",
                            q=FakeTensor((1, 100, 2, 128), dev=device("cpu")))
        for capability in [(8, 0), (10, 0), (12, 0)]:
            accepted, reason = verdict(capability=lambda _d, c=capability: c)
            self.assertFalse(accepted)
            self.assertIn(f"compute capability 9.0 (Hopper) GPUs; cuda:0 has "
                          f"{capability[0]}.{capability[1]}", reason)


def fla_installed():
    try:
        import fla.backends  # noqa: F401
    except ImportError:
        return False
    return True


@unittest.skipUnless(fla_installed(), "fla-core >= 0.6 not installed (scripts/requirements.txt)")
class RegistrationTest(unittest.TestCase):
    """`import gdn` puts the backend into fla-core's registry for gated_delta_rule."""

    @classmethod
    def setUpClass(cls):
        import fla.backends
        from fla.ops.gated_delta_rule.backends import FlashQLABackend
        import fla.ops.gated_delta_rule  # noqa: F401  (loads FLA's own backends)
        cls.registry = fla.backends._operation_registries[_fla.OPERATION]
        cls.flash_qla = FlashQLABackend

    def backend(self):
        return self.registry._backends[_fla.BACKEND_TYPE]

    def test_registered_on_import_ahead_of_flash_qla(self):
        order = [b.backend_type for b in self.registry._get_sorted_backends()]
        self.assertIn("flash_qla", order)
        self.assertLess(order.index("libgdn"), order.index("flash_qla"))
        self.assertLess(self.backend().priority, self.flash_qla.priority)

    def test_available_when_libgdn_loads(self):
        _capi.reset_library_for_tests()
        self.assertTrue(self.backend().is_available())

    def test_switched_off_by_fla_libgdn_0(self):
        saved = os.environ.pop("FLA_LIBGDN", None)
        try:
            self.assertTrue(self.backend().is_enabled())
            os.environ["FLA_LIBGDN"] = "0"
            self.assertFalse(self.backend().is_enabled())
            os.environ["FLA_LIBGDN"] = "1"
            self.assertTrue(self.backend().is_enabled())
        finally:
            os.environ.pop("FLA_LIBGDN", None)
            if saved is not None:
                os.environ["FLA_LIBGDN"] = saved

    def test_fla_asks_our_verifier(self):
        # FLA's BaseBackend.verify calls chunk_gated_delta_rule_verifier with the call's arguments.
        accepted, reason = self.backend().verify("chunk_gated_delta_rule",
                                                 **fwd_inputs(), use_beta_sigmoid_in_kernel=True)
        self.assertFalse(accepted)
        self.assertIn("use_beta_sigmoid_in_kernel", reason)
        # Without a GPU the call is declined, and FLA would run its own kernels.
        import torch
        if not torch.cuda.is_available():
            self.assertEqual(
                self.backend().verify("chunk_gated_delta_rule", **fwd_inputs()),
                (False, "libgdn runs on compute capability 9.0 (Hopper) GPUs; torch sees no GPU"))

    def test_register_again_keeps_one_backend(self):
        count = len(self.registry._backends)
        cls = gdn.register_fla_backend()
        self.assertEqual(len(self.registry._backends), count)
        self.assertIs(type(self.backend()), cls)

    def test_import_in_a_fresh_process_registers(self):
        code = ("import gdn, fla.backends\n"
                "r = fla.backends._operation_registries['gated_delta_rule']\n"
                "print(sorted(r._backends))\n")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             env=os.environ.copy(), timeout=300)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("'libgdn'", out.stdout)


if __name__ == "__main__":
    unittest.main()
