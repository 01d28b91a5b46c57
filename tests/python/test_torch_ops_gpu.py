"""The torch.library ops on a GPU: torch.compile(fullgraph=True) of a module calling
gdn.chunk_gated_delta_rule (inductor) against the float64 reference for the forward and the
backward, CUDA graphs of the forward and of a whole forward + backward step replayed on new
inputs, torch.compile's own CUDA graphs (mode="reduce-overhead"), and torch.library.opcheck of
both ops. Prints "skipped: no CUDA device" and exits 0 without torch or a device."""

import sys
import unittest

from test_binding_gpu import (BAR_FWD, BAR_GATE_GRAD, BAR_GRAD, HAVE_DEVICE, leaves,
                              make_inputs, reference, rel)

if HAVE_DEVICE:
    import torch

import gdn

DIFF = ("q", "k", "v", "g", "beta", "initial_state")


class Layer(torch.nn.Module if HAVE_DEVICE else object):
    """A module whose forward is one gdn call plus torch ops around it (one graph for compile)."""

    def forward(self, q, k, v, g, beta, initial_state, cu_seqlens, cu_seqlens_cpu):
        o, ht = gdn.chunk_gated_delta_rule(q, k, v, g, beta, initial_state=initial_state,
                                           output_final_state=True, cu_seqlens=cu_seqlens,
                                           cu_seqlens_cpu=cu_seqlens_cpu)
        return o * 2.0, ht + 1.0


def call_args(x):
    return (x["q"], x["k"], x["v"], x["g"], x["beta"], x["initial_state"], x["cu_seqlens"],
            x["cu_seqlens_cpu"])


class CompileTest(unittest.TestCase):
    def test_compiled_module_matches_reference(self):
        torch._dynamo.reset()
        x = make_inputs([0, 47, 130, 1], Hk=1, Hv=3, seed=21)
        ours = leaves(x, DIFF)
        layer = torch.compile(Layer(), fullgraph=True)
        o, ht = layer(*call_args(ours))
        ref = leaves({n: t for n, t in x.items() if n != "cu_seqlens"}, DIFF)
        o_ref, ht_ref = reference(**ref, scale=128 ** -0.5)
        o_ref, ht_ref = o_ref * 2.0, ht_ref + 1.0
        self.assertLessEqual(rel(o, o_ref), BAR_FWD)
        self.assertLessEqual(rel(ht, ht_ref), BAR_FWD)

        gen = torch.Generator(device="cuda").manual_seed(22)
        do = torch.randn(o.shape, generator=gen, device="cuda")
        dht = torch.randn(ht.shape, generator=gen, device="cuda")
        ((o.float() * do).sum() + (ht * dht).sum()).backward()
        ((o_ref * do.double()).sum() + (ht_ref * dht.double()).sum()).backward()
        for name in DIFF:
            bar = BAR_GATE_GRAD if name in ("g", "beta") else BAR_GRAD
            self.assertLessEqual(rel(ours[name].grad, ref[name].grad), bar, f"d{name}")

    def test_reduce_overhead_replays_match_eager(self):
        torch._dynamo.reset()
        layer = Layer()
        compiled = torch.compile(layer, mode="reduce-overhead", fullgraph=True)
        for seed in (31, 32, 33):  # the third call replays the recorded CUDA graph
            x = make_inputs([300, 1000], Hk=2, Hv=8, seed=seed)
            with torch.no_grad():
                want = layer(*call_args(x))
                got = compiled(*call_args(x))
            for a, b in zip(got, want):
                self.assertTrue(torch.equal(a, b), f"seed {seed}")


def copy_into(static, fresh):
    for name, t in fresh.items():
        if isinstance(t, torch.Tensor):
            static[name].copy_(t)


class CudaGraphTest(unittest.TestCase):
    def test_forward_graph_replays_on_new_inputs(self):
        static = make_inputs([300, 1000], Hk=2, Hv=8, seed=41)
        with torch.no_grad():
            gdn.chunk_gated_delta_rule(**static, output_final_state=True)  # warm-up, eager
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                o, ht = gdn.chunk_gated_delta_rule(**static, output_final_state=True)
            fresh = make_inputs([300, 1000], Hk=2, Hv=8, seed=42)
            copy_into(static, fresh)
            graph.replay()
            want_o, want_ht = gdn.chunk_gated_delta_rule(**fresh, output_final_state=True)
        torch.cuda.synchronize()
        self.assertTrue(torch.equal(o, want_o) and torch.equal(ht, want_ht))

    def test_training_step_graph_replays_on_new_inputs(self):
        # Forward and backward (both ops, their workspaces from torch's allocator) in one graph.
        static = leaves(make_inputs([513], Hk=2, Hv=4, seed=51), DIFF)

        def step():
            for name in DIFF:
                static[name].grad = None
            o, ht = gdn.chunk_gated_delta_rule(**static, output_final_state=True)
            (o.float().square().sum() + ht.sum()).backward()
            return o

        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            step()  # warm-up on a side stream, as torch.cuda.graphs asks
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            o = step()
        grads = {n: static[n].grad for n in DIFF}

        fresh = leaves(make_inputs([513], Hk=2, Hv=4, seed=52), DIFF)
        with torch.no_grad():
            copy_into(static, fresh)
        graph.replay()
        torch.cuda.synchronize()
        want = gdn.chunk_gated_delta_rule(**fresh, output_final_state=True)
        (want[0].float().square().sum() + want[1].sum()).backward()
        self.assertTrue(torch.equal(o, want[0]))
        for name in DIFF:  # the backward may sum in any order: equal up to rounding
            self.assertLessEqual(rel(grads[name], fresh[name].grad), 1e-5, f"d{name}")


class OpcheckTest(unittest.TestCase):
    """torch.library.opcheck: schema, fake tensors against real outputs, autograd registration,
    and AOT dispatch with dynamic shapes."""

    def fwd_samples(self):
        packed = make_inputs([0, 47, 130], Hk=1, Hv=2, seed=61)
        batched = make_inputs([70], Hk=2, Hv=2, B=2, packed=False, seed=62)
        vk = make_inputs([65, 64], Hk=1, Hv=1, seed=63, layout="vk")
        scale = 128 ** -0.5
        samples = []
        for x, layout, with_h0 in [(packed, "kv", True), (batched, "kv", False),
                                   (vk, "vk", True)]:
            y = leaves(x, DIFF)
            samples.append((y["q"], y["k"], y["v"], y["g"], y["beta"],
                            y["initial_state"] if with_h0 else None, y.get("cu_seqlens"),
                            y.get("cu_seqlens_cpu"), scale, True, layout))
        # Without a final state (the empty placeholder output) and without grads.
        x = make_inputs([200], Hk=2, Hv=4, seed=64)
        samples.append((x["q"], x["k"], x["v"], x["g"], x["beta"], x["initial_state"],
                        x["cu_seqlens"], x["cu_seqlens_cpu"], scale, False, "kv"))
        return samples

    def test_forward_op(self):
        for args in self.fwd_samples():
            torch.library.opcheck(torch.ops.gdn.chunk_gated_delta_rule_fwd.default, args)

    def test_forward_op_in_training_mode(self):
        # The saved block, whose size the library decides when the op runs. Its bytes between
        # the pieces (alignment, unused chunk-table entries, T's lower-packed tails) are never
        # written, so the eager and AOT-traced blocks are compared through what reads them: the
        # backward op (test_backward_op); opcheck checks the schema, fake tensors against real
        # outputs and autograd's registration.
        y = leaves(make_inputs([1500, 70], Hk=1, Hv=2, seed=65), DIFF)
        args = (y["q"], y["k"], y["v"], y["g"], y["beta"], y["initial_state"], y["cu_seqlens"],
                y["cu_seqlens_cpu"], 128 ** -0.5, True, "kv", True)
        torch.library.opcheck(torch.ops.gdn.chunk_gated_delta_rule_fwd.default, args,
                              test_utils=("test_schema", "test_autograd_registration",
                                          "test_faketensor"))

    def test_backward_op(self):
        x = make_inputs([0, 47, 130], Hk=1, Hv=2, seed=71)
        gen = torch.Generator(device="cuda").manual_seed(72)
        do = torch.randn(x["v"].shape, generator=gen, device="cuda").to(x["v"].dtype)
        dht = torch.randn(x["initial_state"].shape, generator=gen, device="cuda")
        common = (x["q"], x["k"], x["v"], x["g"], x["beta"], x["initial_state"],
                  x["cu_seqlens"], x["cu_seqlens_cpu"], do)
        for dht_arg, want_dh0 in [(dht, True), (None, False)]:
            torch.library.opcheck(torch.ops.gdn.chunk_gated_delta_rule_bwd.default,
                                  (*common, dht_arg, 128 ** -0.5, "kv", want_dh0))
        # With the block a training forward saved for these inputs.
        _, _, saved = torch.ops.gdn.chunk_gated_delta_rule_fwd(*common[:8], 128 ** -0.5, True,
                                                               "kv", True)
        self.assertGreater(saved.numel(), 0)
        torch.library.opcheck(torch.ops.gdn.chunk_gated_delta_rule_bwd.default,
                              (*common, dht, 128 ** -0.5, "kv", True, saved))


if __name__ == "__main__":
    if not HAVE_DEVICE or not gdn.device_available():
        print("skipped: no CUDA device (torch missing, no GPU, or no compute-capability-9.0 GPU)")
        sys.exit(0)
    unittest.main(verbosity=2)
