"""python/gdnbench/peers.py and measure.autograd_step on CPU tensors: what each library's
training step calls, in which order and on which intermediates, and what FlashInfer's forward is
handed (its layouts and gate convention), with the libraries (libgdn's raw calls, FLA, FlashQLA,
FlashInfer) replaced by recording fakes. Needs torch (not a GPU); skipped without."""

import importlib.util
import os
import sys
import types
import unittest
from types import SimpleNamespace
from unittest import mock

HAVE_TORCH = importlib.util.find_spec("torch") is not None
if HAVE_TORCH:
    import torch
    from gdnbench import measure, peers


def cpu_inputs(T=6, Hk=1, Hv=2, K=4, V=4, N=2):
    """measure.Inputs-like tensors on the CPU (make_inputs itself needs a CUDA device)."""
    gen = torch.Generator().manual_seed(7)

    def randn(*shape):
        return torch.randn(*shape, generator=gen)
    return measure.Inputs(q=randn(1, T, Hk, K), k=randn(1, T, Hk, K), v=randn(1, T, Hv, V),
                          g=randn(1, T, Hv), beta=randn(1, T, Hv), h0=randn(N, Hv, K, V),
                          cu_seqlens=torch.tensor([0, 2, T]), cu_seqlens_cpu=[0, 2, T],
                          scale=K ** -0.5, do=randn(1, T, Hv, V), dht=randn(N, Hv, K, V))


def toy_chunk(q, k, v, g, beta, h0):
    """A differentiable stand-in for a chunk_gated_delta_rule: (o, final_state)."""
    o = v * (q.sum() + 2 * k.sum() + 3 * g.sum() + 4 * beta.sum())
    return o, 5 * h0


@unittest.skipUnless(HAVE_TORCH, "torch not installed")
class AutogradStepTest(unittest.TestCase):
    def test_gradients_come_back_and_never_accumulate(self):
        inp = cpu_inputs()
        step = measure.autograd_step(toy_chunk, inp)
        first = step()
        second = step()
        self.assertEqual(len(first), 6)
        dq, dk, dv, dg, dbeta, dh0 = second
        s = (inp.do * inp.v).sum()
        self.assertTrue(torch.allclose(dq, torch.full_like(inp.q, float(s))))
        self.assertTrue(torch.allclose(dk, torch.full_like(inp.k, 2 * float(s))))
        self.assertTrue(torch.allclose(dbeta, torch.full_like(inp.beta, 4 * float(s))))
        self.assertTrue(torch.equal(dh0, 5 * inp.dht))
        for a, b in zip(first, second):  # the same work every call: nothing accumulated
            self.assertTrue(torch.equal(a, b))
        for t in (inp.q, inp.k, inp.v, inp.g, inp.beta, inp.h0):
            self.assertFalse(t.requires_grad)  # the inputs themselves are left as they were
            self.assertIsNone(t.grad)


@unittest.skipUnless(HAVE_TORCH, "torch not installed")
class OursTrainTest(unittest.TestCase):
    def test_raw_calls_are_the_autograd_functions_forward_then_backward(self):
        inp, log = cpu_inputs(), []
        spec, block = object(), object()
        with mock.patch.object(peers, "_spec", lambda i: spec), \
             mock.patch.object(peers, "ours_train_uses_torch_op", lambda: False), \
             mock.patch.object(peers, "forward_raw",
                               lambda *a, **kw: log.append(("fwd", a, kw)) or (1, 2, block)), \
             mock.patch.object(peers, "backward_raw",
                               lambda *a, **kw: log.append(("bwd", a, kw)) or "grads"):
            self.assertEqual(peers.ours_train(inp)(), "grads")
        self.assertEqual([name for name, _, _ in log], ["fwd", "bwd"])
        (_, fwd_args, fwd_kw), (_, bwd_args, bwd_kw) = log
        self.assertIs(fwd_args[0], spec)
        self.assertEqual(fwd_args[-1], True)  # output_final_state
        # Training mode: the forward saves, the backward reads what it saved.
        self.assertEqual(fwd_kw, {"save": True})
        self.assertEqual(bwd_kw, {"saved": block})
        self.assertIs(bwd_args[0], spec)
        self.assertIs(bwd_args[7], inp.do)
        self.assertIs(bwd_args[8], inp.dht)
        self.assertEqual(bwd_args[9], True)  # dh0 wanted, as h0 requires grad in training

    def test_torch_op_binding_is_timed_through_the_public_autograd_api(self):
        inp, seen = cpu_inputs(), {}

        def public(q, k, v, g, beta, **kw):
            seen.update(kw)
            return toy_chunk(q, k, v, g, beta, kw["initial_state"])
        with mock.patch.object(peers, "ours_train_uses_torch_op", lambda: True), \
             mock.patch.object(peers.gdn, "chunk_gated_delta_rule", public):
            grads = peers.ours_train(inp)()
        self.assertTrue(torch.equal(grads[5], 5 * inp.dht))
        self.assertEqual(seen["cu_seqlens_cpu"], [0, 2, 6])
        self.assertIs(seen["cu_seqlens"], inp.cu_seqlens)
        self.assertIs(seen["output_final_state"], True)

    def test_train_path_names_the_path_taken(self):
        with mock.patch.object(peers, "ours_train_uses_torch_op", lambda: False):
            self.assertIn("forward_raw + backward_raw", peers.ours_train_path())
        with mock.patch.object(peers, "ours_train_uses_torch_op", lambda: True):
            self.assertIn("torch.autograd.grad", peers.ours_train_path())


def fake_fla(log):
    """sys.modules entries for the parts of fla that peers.Fla imports."""
    chunk = types.ModuleType("fla.ops.gated_delta_rule.chunk")

    def fwd(**kw):
        log.append(("fwd", kw))
        return ("g_cum", "o", "A", "ht", "h0_used", None)

    def bwd(**kw):
        log.append(("bwd", kw))
        return ("dq", "dk", "dv", "db", "dg", "dh0")
    chunk.chunk_gated_delta_rule_fwd, chunk.chunk_gated_delta_rule_bwd = fwd, bwd
    index = types.ModuleType("fla.ops.utils.index")
    index.prepare_chunk_indices = lambda cu, size: ("chunk_indices", size)
    chunk_o = types.ModuleType("fla.ops.common.chunk_o")
    chunk_o.TRITON_ABOVE_3_4_0 = True
    fla = types.ModuleType("fla")
    fla.__version__ = "0.6.0-fake"
    gdr = types.ModuleType("fla.ops.gated_delta_rule")
    gdr.chunk = chunk
    common = types.ModuleType("fla.ops.common")
    common.chunk_o = chunk_o
    return {"fla": fla, "fla.ops": types.ModuleType("fla.ops"), "fla.ops.gated_delta_rule": gdr,
            "fla.ops.gated_delta_rule.chunk": chunk, "fla.ops.utils": types.ModuleType("fla.ops.utils"),
            "fla.ops.utils.index": index, "fla.ops.common": common,
            "fla.ops.common.chunk_o": chunk_o}


@unittest.skipUnless(HAVE_TORCH, "torch not installed")
class FlaTrainTest(unittest.TestCase):
    def test_step_is_forward_then_backward_from_its_outputs(self):
        log = []
        modules = fake_fla(log)
        with mock.patch.dict(sys.modules, modules), \
             mock.patch.dict(os.environ, {"FLA_FLASH_QLA": "1"}):
            fla = peers.Fla()
            self.assertEqual(os.environ["FLA_FLASH_QLA"], "0")  # FLA's own kernels only
            inp = cpu_inputs()
            step = fla.train(inp)
            self.assertEqual(log, [])  # nothing runs until the step is called
            self.assertEqual(step(), ("dq", "dk", "dv", "db", "dg", "dh0"))
        self.assertFalse(modules["fla.ops.common.chunk_o"].TRITON_ABOVE_3_4_0)
        self.assertEqual([name for name, _ in log], ["fwd", "bwd"])
        fwd, bwd = log[0][1], log[1][1]
        self.assertIs(fwd["output_final_state"], True)
        self.assertIs(fwd["initial_state"], inp.h0)
        # the backward gets what FLA's autograd saves from the forward
        self.assertEqual((bwd["g"], bwd["A"], bwd["initial_state"]), ("g_cum", "A", "h0_used"))
        self.assertIs(bwd["do"], inp.do)
        self.assertIs(bwd["dht"], inp.dht)
        self.assertEqual(bwd["chunk_indices"], fwd["chunk_indices"])


@unittest.skipUnless(HAVE_TORCH, "torch not installed")
class FlashQlaTest(unittest.TestCase):
    def setUp(self):
        self.log = []
        qla = types.ModuleType("flash_qla")
        qla.__version__ = "0.1.3-fake"

        def fwd(q, k, v, g, beta, **kw):
            self.log.append(("fwd", kw))
            return ("g_cum", "A", "o", None, "ht", None)

        def bwd(q, k, v, g, beta, A, do, dht, **kw):
            self.log.append(("bwd", (g, A, do, dht), kw))
            return "grads"

        def public(q, k, v, g, beta, **kw):
            self.log.append(("autograd", kw))
            return toy_chunk(q, k, v, g, beta, kw["initial_state"])
        qla.chunk_gated_delta_rule_fwd = fwd
        qla.chunk_gated_delta_rule_bwd = bwd
        qla.chunk_gated_delta_rule = public
        patcher = mock.patch.dict(sys.modules, {"flash_qla": qla})
        patcher.start()
        self.addCleanup(patcher.stop)
        self.qla = peers.FlashQla()
        self.inp = cpu_inputs()

    def test_version_and_int32_offsets(self):
        self.assertEqual(self.qla.version, "0.1.3-fake")
        self.qla.fwd(self.inp)()
        cu = self.log[0][1]["cu_seqlens"]
        self.assertEqual((cu.dtype, cu.tolist()), (torch.int32, [0, 2, 6]))

    def test_backward_starts_from_the_forwards_intermediates(self):
        call = self.qla.bwd(self.inp)
        self.assertEqual([x[0] for x in self.log], ["fwd"])  # once, outside the timed call
        self.assertEqual(call(), "grads")
        _, (g, A, do, dht), kw = self.log[1]
        self.assertEqual((g, A), ("g_cum", "A"))
        self.assertIs(do, self.inp.do)
        self.assertIs(dht, self.inp.dht)
        self.assertIs(kw["initial_state"], self.inp.h0)

    def test_training_step_goes_through_its_autograd(self):
        grads = self.qla.train(self.inp)()
        self.assertEqual([x[0] for x in self.log], ["autograd"])
        kw = self.log[0][1]
        self.assertIs(kw["output_final_state"], True)
        self.assertEqual(kw["cu_seqlens"].dtype, torch.int32)
        self.assertTrue(torch.equal(grads[5], 5 * self.inp.dht))


def fake_flashinfer(log, cp_module=True):
    """sys.modules entries for the parts of flashinfer that peers.FlashInfer imports; its
    chunk_gated_delta_rule records its arguments and returns o = 2 v and final state = 3 h0, in
    its own layouts ([T, Hv, V], [N, Hv, V, K])."""
    def chunk_gated_delta_rule(q, k, v, g=None, beta=None, scale=None, initial_state=None,
                               output_final_state=False, cu_seqlens=None, max_seqlen=None):
        log.append(dict(q=q, k=k, v=v, g=g, beta=beta, scale=scale, initial_state=initial_state,
                        output_final_state=output_final_state, cu_seqlens=cu_seqlens,
                        max_seqlen=max_seqlen))
        return 2 * v, 3 * initial_state
    fi = types.ModuleType("flashinfer")
    fi.__version__ = "0.7.2.post1-fake"
    prefill = types.ModuleType("flashinfer.gdn_prefill")
    prefill.chunk_gated_delta_rule = chunk_gated_delta_rule
    dsl = "flashinfer.gdn_kernels.delta_rule_dsl"
    return {"flashinfer": fi, "flashinfer.gdn_prefill": prefill,
            "flashinfer.gdn_kernels": types.ModuleType("flashinfer.gdn_kernels"),
            dsl: types.ModuleType(dsl), f"{dsl}.delta_rule_sm90": types.ModuleType("sm90"),
            # None in sys.modules makes its import fail, as a missing kernel module does
            f"{dsl}.delta_rule_cp_sm90": types.ModuleType("cp_sm90") if cp_module else None}


@unittest.skipUnless(HAVE_TORCH, "torch not installed")
class FlashInferTest(unittest.TestCase):
    def setUp(self):
        self.log = []
        patcher = mock.patch.dict(sys.modules, fake_flashinfer(self.log))
        patcher.start()
        self.addCleanup(patcher.stop)
        self.fi = peers.FlashInfer()
        # its kernels' shapes: head dims 128, bf16 q/k/v; GVA 1 -> 2 heads, two sequences
        self.inp = cpu_inputs(T=6, Hk=1, Hv=2, K=128, V=128, N=2)
        for name in ("q", "k", "v"):
            setattr(self.inp, name, getattr(self.inp, name).to(torch.bfloat16))

    def test_version(self):
        self.assertEqual(self.fi.version, "0.7.2.post1-fake")

    def test_forward_gets_its_layouts_and_gate_convention(self):
        inp = self.inp
        self.fi.fwd(inp)()
        (kw,) = self.log
        for name in ("q", "k", "v"):  # [T, H, D]: ours without its batch dimension, not copied
            self.assertEqual(kw[name].shape, getattr(inp, name).shape[1:])
            self.assertEqual(kw[name].data_ptr(), getattr(inp, name).data_ptr())
        # alpha = exp(g), linear space, [T, Hv] fp32
        self.assertTrue(torch.equal(kw["g"], torch.exp(inp.g[0])))
        self.assertEqual(kw["g"].dtype, torch.float32)
        self.assertTrue(torch.equal(kw["beta"], inp.beta[0]))
        # state [N, Hv, V, K]: ours transposed, made contiguous
        self.assertTrue(torch.equal(kw["initial_state"], inp.h0.transpose(-1, -2)))
        self.assertTrue(kw["initial_state"].is_contiguous())
        self.assertIs(kw["output_final_state"], True)
        self.assertIs(kw["cu_seqlens"], inp.cu_seqlens)
        self.assertEqual((kw["scale"], kw["max_seqlen"]), (inp.scale, 4))  # lengths 2 and 4

    def test_conversions_are_made_once_outside_the_timed_call(self):
        call = self.fi.fwd(self.inp)
        call()
        call()
        first, second = self.log
        for name in ("g", "beta", "initial_state"):
            self.assertIs(first[name], second[name])

    def test_outputs_come_back_in_our_layouts(self):
        o, ht = self.fi.fwd_outputs(self.inp)
        self.assertTrue(torch.equal(o, 2 * self.inp.v))          # [1, T, Hv, V]
        self.assertTrue(torch.equal(ht, 3 * self.inp.h0))        # [N, Hv, K, V]

    def test_unsupported_shapes_say_why(self):
        self.assertIsNone(self.fi.unsupported(self.inp))
        self.assertIn("head dims 4/4", self.fi.unsupported(cpu_inputs()))
        fp32 = cpu_inputs(K=128, V=128)
        self.assertIn("dtype torch.float32", self.fi.unsupported(fp32))
        odd = cpu_inputs(Hk=2, Hv=3, K=128, V=128)
        for name in ("q", "k", "v"):
            setattr(odd, name, getattr(odd, name).to(torch.bfloat16))
        self.assertIn("heads 2/3", self.fi.unsupported(odd))

    def test_a_missing_kernel_module_fails_at_construction(self):
        with mock.patch.dict(sys.modules, fake_flashinfer([], cp_module=False)):
            with self.assertRaises(ImportError):
                peers.FlashInfer()


if __name__ == "__main__":
    unittest.main()
