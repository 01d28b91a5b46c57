"""FLA's own API on a GPU with the libgdn backend: fla.ops.gated_delta_rule.chunk_gated_delta_rule
runs libgdn (bit for bit gdn.chunk_gated_delta_rule's results) for the forward and the backward,
and agrees with the float64 reference; FLA's way of passing tensors (strided views, int64
cu_seqlens with a CPU LongTensor host copy, state_v_first) reaches libgdn as it should.

fla-core >= 0.6 must be importable: from the environment, or from the folder named by
GDN_FLA_SITE (a `pip install --target` folder, for a machine whose image lacks it). Prints
"skipped: no CUDA device" and exits 0 without torch or a device, and "skipped: fla-core >= 0.6
not importable" without FLA.
"""

import os
import sys
import unittest

if os.environ.get("GDN_FLA_SITE"):
    sys.path.insert(0, os.environ["GDN_FLA_SITE"])

from test_binding_gpu import (BAR_FWD, BAR_GATE_GRAD, BAR_GRAD, HAVE_DEVICE, leaves,
                              make_inputs, reference, rel)

import gdn

DIFF = ("q", "k", "v", "g", "beta", "initial_state")


def fla_api():
    try:
        import fla.backends  # noqa: F401
        from fla.ops.gated_delta_rule import chunk_gated_delta_rule
    except ImportError:
        return None
    return chunk_gated_delta_rule


class FlaBackendGpuTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import torch
        cls.torch = torch
        cls.fla = staticmethod(fla_api())
        os.environ.pop("FLA_LIBGDN", None)

    def run_both(self, x, layout="kv", fla_kwargs=None):
        """(FLA's results, gdn's results), each (o, ht, grads), for the same inputs."""
        torch = self.torch
        results = []
        for api in ("fla", "gdn"):
            y = leaves(x, DIFF)
            if api == "fla":
                o, ht = self.fla(y["q"], y["k"], y["v"], y["g"], y["beta"],
                                 initial_state=y["initial_state"], output_final_state=True,
                                 cu_seqlens=y.get("cu_seqlens"),
                                 **(fla_kwargs or {}))
            else:  # the same host copy of the offsets (or none): the same kernel choice
                kw = fla_kwargs or {}
                o, ht = gdn.chunk_gated_delta_rule(
                    y["q"], y["k"], y["v"], y["g"], y["beta"], initial_state=y["initial_state"],
                    output_final_state=True, cu_seqlens=y.get("cu_seqlens"),
                    cu_seqlens_cpu=kw.get("cu_seqlens_cpu"), state_layout=layout,
                    use_qk_l2norm_in_kernel=kw.get("use_qk_l2norm_in_kernel", False))
            gen = torch.Generator(device="cuda").manual_seed(99)
            do = torch.randn(o.shape, generator=gen, device="cuda")
            dht = torch.randn(ht.shape, generator=gen, device="cuda")
            ((o.float() * do).sum() + (ht * dht).sum()).backward()
            results.append((o, ht, {n: y[n].grad for n in DIFF}, do, dht))
        return results

    def test_fla_runs_libgdn_forward_and_backward(self):
        x = make_inputs([0, 47, 130, 1], Hk=1, Hv=3, seed=81)
        host = x["cu_seqlens_cpu"]
        x["cu_seqlens"] = x["cu_seqlens"].long()  # FLA's convention: LongTensor offsets
        fla_res, gdn_res = self.run_both(
            x, fla_kwargs={"cu_seqlens_cpu": self.torch.tensor(host, dtype=self.torch.long)})
        self.assertTrue(self.torch.equal(fla_res[0], gdn_res[0]), "o differs: FLA did not run libgdn")
        self.assertTrue(self.torch.equal(fla_res[1], gdn_res[1]), "final state differs")
        for name in DIFF:
            self.assertLessEqual(rel(fla_res[2][name], gdn_res[2][name]), 1e-5, f"d{name}")

        self.assert_matches_reference(fla_res, x)

    def assert_matches_reference(self, result, x, inputs=lambda ref: ref):
        """result (o, ht, grads, do, dht) within the bars of the float64 reference on x, whose
        leaves `inputs` maps to the reference's inputs (the gradients are the leaves')."""
        o, ht, grads, do, dht = result
        ref = leaves({n: t for n, t in x.items() if n != "cu_seqlens"}, DIFF)
        o_ref, ht_ref = reference(**inputs(ref), scale=128 ** -0.5)
        self.assertLessEqual(rel(o, o_ref), BAR_FWD)
        self.assertLessEqual(rel(ht, ht_ref), BAR_FWD)
        ((o_ref * do.double()).sum() + (ht_ref * dht.double()).sum()).backward()
        for name in DIFF:
            bar = BAR_GATE_GRAD if name in ("g", "beta") else BAR_GRAD
            self.assertLessEqual(rel(grads[name], ref[name].grad), bar, f"d{name}")

    def test_qk_l2norm_in_kernel(self):
        # Qwen3-Next-style layers pass unnormalised q and k with use_qk_l2norm_in_kernel=True:
        # FLA runs libgdn (bit for bit gdn's call with the same flag), and the result is the
        # float64 reference's on l2-normalised q and k, gradients through the normalisation.
        x = make_inputs([0, 70, 129], Hk=1, Hv=2, seed=84)
        gen = self.torch.Generator(device="cuda").manual_seed(85)
        for name in ("q", "k"):  # undo the unit norm: scales of a raw projection
            x[name] = (x[name].float() * (1 + 4 * self.torch.rand(
                x[name].shape[:-1] + (1,), generator=gen, device="cuda"))).to(x[name].dtype)
        x["cu_seqlens"] = x["cu_seqlens"].long()  # FLA's convention, as above
        host = self.torch.tensor(x["cu_seqlens_cpu"], dtype=self.torch.long)
        fla_res, gdn_res = self.run_both(
            x, fla_kwargs={"use_qk_l2norm_in_kernel": True, "cu_seqlens_cpu": host})
        self.assertTrue(self.torch.equal(fla_res[0], gdn_res[0]), "o differs: FLA did not run libgdn")
        self.assertTrue(self.torch.equal(fla_res[1], gdn_res[1]), "final state differs")
        self.assert_matches_reference(
            fla_res, x, lambda ref: {**ref, "q": gdn.l2norm(ref["q"]), "k": gdn.l2norm(ref["k"])})

    def test_state_v_first(self):
        x = make_inputs([100, 63], Hk=2, Hv=2, seed=82, layout="vk")
        fla_res, gdn_res = self.run_both(x, layout="vk", fla_kwargs={"state_v_first": True})
        self.assertTrue(self.torch.equal(fla_res[0], gdn_res[0]))
        self.assertTrue(self.torch.equal(fla_res[1], gdn_res[1]))

    def test_strided_inputs_are_taken(self):
        # q, k, v as views of one fused projection (FLA's layers do this): FLA's call makes
        # them contiguous for libgdn, as its own kernels would.
        x = make_inputs([200], Hk=2, Hv=2, B=1, packed=False, seed=83)
        qkv = self.torch.cat([x["q"], x["k"], x["v"]], dim=-1)
        q, k, v = qkv.split(128, dim=-1)
        self.assertFalse(q.is_contiguous())
        o, _ = self.fla(q, k, v, x["g"], x["beta"])
        want, _ = gdn.chunk_gated_delta_rule(q.contiguous(), k.contiguous(), v.contiguous(),
                                             x["g"], x["beta"])
        self.assertTrue(self.torch.equal(o, want))


if __name__ == "__main__":
    if not HAVE_DEVICE or not gdn.device_available():
        print("skipped: no CUDA device (torch missing, no GPU, or no compute-capability-9.0 GPU)")
        sys.exit(0)
    if fla_api() is None:
        print("skipped: fla-core >= 0.6 not importable (install it, or set GDN_FLA_SITE)")
        sys.exit(0)
    unittest.main(verbosity=2)
