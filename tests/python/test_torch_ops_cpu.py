"""The torch.library ops without a GPU: registration by `import gdn`, the schemas, fake-tensor
shapes and dtypes of both ops (CUDA tensors under FakeTensorMode need no device), autograd
registered through torch.library, and torch.compile(fullgraph=True) tracing through
gdn.chunk_gated_delta_rule: the forward graph and, through AOTAutograd, the backward graph each
hold one gdn op and nothing breaks the graph.

Needs torch (scripts/requirements.txt); fails, not skips, without it.
"""

import unittest

import torch
from torch._dynamo.backends.common import aot_autograd
from torch._subclasses.fake_tensor import FakeTensorMode
from functorch.compile import make_boxed_func

import gdn

FWD = torch.ops.gdn.chunk_gated_delta_rule_fwd
BWD = torch.ops.gdn.chunk_gated_delta_rule_bwd


def fake_inputs(mode, B=1, T=100, Hk=2, Hv=4, dtype=torch.bfloat16, seqlens=None, layout="kv",
                beta_dtype=torch.float32, grad=False):
    """Fake CUDA tensors for one call (the keyword arguments of gdn.chunk_gated_delta_rule)."""
    N = B if seqlens is None else len(seqlens)
    state = (N, Hv, 128, 128)
    with mode:
        x = {"q": torch.empty(B, T, Hk, 128, dtype=dtype, device="cuda"),
             "k": torch.empty(B, T, Hk, 128, dtype=dtype, device="cuda"),
             "v": torch.empty(B, T, Hv, 128, dtype=dtype, device="cuda"),
             "g": torch.empty(B, T, Hv, dtype=torch.float32, device="cuda"),
             "beta": torch.empty(B, T, Hv, dtype=beta_dtype, device="cuda"),
             "initial_state": torch.empty(state, dtype=torch.float32, device="cuda")}
        if seqlens is not None:
            x["cu_seqlens"] = torch.empty(len(seqlens) + 1, dtype=torch.int32, device="cuda")
            x["cu_seqlens_cpu"] = [sum(seqlens[:i]) for i in range(len(seqlens) + 1)]
        if grad:
            for name in ("q", "k", "v", "g", "beta", "initial_state"):
                x[name].requires_grad_(True)
    x["state_layout"] = layout
    return x


def meta_args(seqlens=(30, 70), Hk=2, Hv=4):
    """The forward op's arguments as meta tensors that require grad.

    The autograd engine needs a real device for CUDA tensors, fake ones included, so backward
    runs here on the meta device, calling the op directly (the binding itself takes CUDA tensors
    only); the op's fake implementation serves meta tensors too.
    """
    T = sum(seqlens)

    def leaf(*shape, dtype=torch.bfloat16):
        return torch.empty(*shape, dtype=dtype, device="meta", requires_grad=True)

    offsets = [sum(seqlens[:i]) for i in range(len(seqlens) + 1)]
    return (leaf(1, T, Hk, 128), leaf(1, T, Hk, 128), leaf(1, T, Hv, 128),
            leaf(1, T, Hv, dtype=torch.float32), leaf(1, T, Hv, dtype=torch.float32),
            leaf(len(seqlens), Hv, 128, 128, dtype=torch.float32),
            torch.empty(len(offsets), dtype=torch.int32, device="meta"), offsets, None, True,
            "kv")


class RegistrationTest(unittest.TestCase):
    def test_ops_exist_after_import(self):
        self.assertIn("chunk_gated_delta_rule_fwd", dir(torch.ops.gdn))
        self.assertIn("chunk_gated_delta_rule_bwd", dir(torch.ops.gdn))

    def test_schemas(self):
        fwd = str(FWD.default._schema)
        self.assertIn("Tensor? initial_state, Tensor? cu_seqlens, SymInt[]? cu_seqlens_cpu, "
                      "float? scale, bool output_final_state, str state_layout, "
                      "bool save_for_backward=False", fwd)
        self.assertTrue(fwd.endswith("-> (Tensor, Tensor, Tensor)"), fwd)
        bwd = str(BWD.default._schema)
        self.assertIn("Tensor d_o, Tensor? dht, float? scale, str state_layout, bool want_dh0, "
                      "Tensor? saved=None", bwd)
        self.assertTrue(bwd.endswith("-> (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor)"), bwd)
        # Functional ops: nothing is mutated or aliased, so AOTAutograd and CUDA graphs may
        # reorder and replay them freely.
        for op in (FWD, BWD):
            self.assertFalse(any(a.alias_info for a in op.default._schema.arguments))


class FakeTensorTest(unittest.TestCase):
    def setUp(self):
        self.mode = FakeTensorMode()

    def test_forward_shapes_and_dtypes(self):
        cases = [({}, (1, 4, 128, 128)),
                 ({"seqlens": [0, 30, 70]}, (3, 4, 128, 128)),
                 ({"B": 3, "T": 64, "Hk": 1, "Hv": 2, "dtype": torch.float16}, (3, 2, 128, 128)),
                 ({"layout": "vk"}, (1, 4, 128, 128))]
        for overrides, state in cases:
            x = fake_inputs(self.mode, **overrides)
            with self.mode:
                o, ht = gdn.chunk_gated_delta_rule(**x, output_final_state=True)
                o2, none = gdn.chunk_gated_delta_rule(**x)
            self.assertEqual((o.shape, o.dtype, o.device.type), (x["v"].shape, x["v"].dtype, "cuda"))
            self.assertEqual((tuple(ht.shape), ht.dtype), (state, torch.float32))
            self.assertEqual(o2.shape, x["v"].shape)
            self.assertIsNone(none)

    def test_backward_shapes_and_dtypes(self):
        x = fake_inputs(self.mode, seqlens=[40, 60], beta_dtype=torch.bfloat16)
        with self.mode:
            d_o = torch.empty_like(x["v"])
            dht = torch.empty_like(x["initial_state"])
            for want_dh0, dh0_shape in [(True, (2, 4, 128, 128)), (False, (0,))]:
                grads = BWD(x["q"], x["k"], x["v"], x["g"], x["beta"], x["initial_state"],
                            x["cu_seqlens"], x["cu_seqlens_cpu"], d_o, dht, 0.1, "kv", want_dh0)
                for grad, name in zip(grads[:5], ("q", "k", "v", "g", "beta")):
                    self.assertEqual((grad.shape, grad.dtype), (x[name].shape, x[name].dtype), name)
                self.assertEqual((tuple(grads[5].shape), grads[5].dtype), (dh0_shape, torch.float32))

    def test_autograd_registered_through_torch_library(self):
        args = meta_args()
        o, ht, _ = FWD(*args)
        (o.float().sum() + ht.sum()).backward()
        for t in args[:6]:
            self.assertEqual((t.grad.shape, t.grad.dtype), (t.shape, t.dtype))
        # An initial state that needs no gradient gets none (dh0 is not computed).
        args = meta_args()
        args[5].requires_grad_(False)
        o, _, _ = FWD(*args)
        o.float().sum().backward()
        self.assertIsNone(args[5].grad)
        self.assertEqual(args[0].grad.shape, args[0].shape)

    def test_argument_errors_before_the_op(self):
        x = fake_inputs(self.mode)
        with self.mode:
            x["g"] = x["g"].to(torch.bfloat16)
            with self.assertRaises(gdn.GdnArgumentError) as cm:
                gdn.chunk_gated_delta_rule(**x)
        self.assertTrue(str(cm.exception).startswith("g: expected dtype float32"))


class L2NormTest(unittest.TestCase):
    """use_qk_l2norm_in_kernel: q and k normalised as FLA's l2norm does, before the op."""

    def test_l2norm_is_flas_formula(self):
        gen = torch.Generator().manual_seed(5)
        for dtype in (torch.bfloat16, torch.float16):
            x = (torch.randn(3, 7, 2, 128, generator=gen) * 3).to(dtype)
            x[0, 0, 0] = 0  # an all-zero row: eps keeps it finite (0)
            y = gdn.l2norm(x)
            xd = x.double()
            want = xd / torch.sqrt((xd * xd).sum(-1, keepdim=True) + 1e-6)
            self.assertEqual(y.dtype, dtype)
            self.assertTrue(torch.equal(y[0, 0, 0], torch.zeros(128, dtype=dtype)))
            # The fp32 result rounded once to the dtype: within one unit of its last place.
            ulp = torch.finfo(dtype).eps
            self.assertLessEqual(((y.double() - want).abs() / want.abs().clamp_min(1e-30))
                                 [want.abs() > 1e-3].max().item(), ulp)
            x.requires_grad_(True)
            gdn.l2norm(x).float().sum().backward()  # the gradient flows through it
            self.assertEqual(x.grad.shape, x.shape)

    def test_the_flag_is_checked_and_normalises_q_and_k_in_the_graph(self):
        mode = FakeTensorMode()
        x = fake_inputs(mode)
        with mode:
            with self.assertRaises(gdn.GdnArgumentError) as cm:
                gdn.chunk_gated_delta_rule(**x, use_qk_l2norm_in_kernel=1)
        self.assertEqual(str(cm.exception), "use_qk_l2norm_in_kernel: expected a bool; got int")

        ops = []

        def compiler(gm, example_inputs):
            ops.extend(str(n.target) for n in gm.graph.nodes if n.op == "call_function")
            return gm.forward

        def layer(q, k, v, g, beta):
            return gdn.chunk_gated_delta_rule(q, k, v, g, beta, use_qk_l2norm_in_kernel=True)[0]

        torch._dynamo.reset()
        fn = torch.compile(layer, fullgraph=True, backend=compiler)
        with mode:
            fn(x["q"], x["k"], x["v"], x["g"], x["beta"])
        gdn_calls = [o for o in ops if o.startswith("gdn.")]
        self.assertEqual(len(gdn_calls), 1, ops)
        sqrt = [i for i, o in enumerate(ops) if "sqrt" in o]
        self.assertEqual(len(sqrt), 2, ops)  # q's and k's norms, both before the op
        self.assertLess(max(sqrt), ops.index(gdn_calls[0]))


class Layer(torch.nn.Module):
    def forward(self, q, k, v, g, beta, initial_state, cu_seqlens, cu_seqlens_cpu):
        o, ht = gdn.chunk_gated_delta_rule(q, k, v, g, beta, initial_state=initial_state,
                                           output_final_state=True, cu_seqlens=cu_seqlens,
                                           cu_seqlens_cpu=cu_seqlens_cpu)
        return torch.nn.functional.silu(o) * 2, ht + 1


def gdn_ops(graph_module):
    return [str(n.target) for n in graph_module.graph.nodes
            if n.op == "call_function" and str(n.target).startswith("gdn.")]


class CompileTest(unittest.TestCase):
    """fullgraph=True raises on any graph break, so a finished trace is the check."""

    def setUp(self):
        torch._dynamo.reset()
        self.mode = FakeTensorMode()
        self.graphs = {"dynamo": [], "forward": [], "backward": []}

    def record(self, kind):
        def compiler(gm, example_inputs):
            self.graphs[kind].append(gm)
            # AOTAutograd calls its compilers' functions with one boxed list of arguments.
            return gm.forward if kind == "dynamo" else make_boxed_func(gm.forward)
        return compiler

    def args(self, **kw):
        x = fake_inputs(self.mode, seqlens=[30, 70], **kw)
        return (x["q"], x["k"], x["v"], x["g"], x["beta"], x["initial_state"], x["cu_seqlens"],
                x["cu_seqlens_cpu"])

    def test_forward_traces_as_one_graph(self):
        layer = torch.compile(Layer(), fullgraph=True, backend=self.record("dynamo"))
        with self.mode:
            o, ht = layer(*self.args())
        self.assertEqual(len(self.graphs["dynamo"]), 1)
        self.assertEqual(gdn_ops(self.graphs["dynamo"][0]), ["gdn.chunk_gated_delta_rule_fwd"])
        self.assertEqual((tuple(o.shape), tuple(ht.shape)), ((1, 100, 4, 128), (2, 4, 128, 128)))

    def test_backward_graph_holds_the_backward_op(self):
        # On meta tensors (see meta_args): AOTAutograd's joint trace runs the autograd engine.
        # In training mode (save_for_backward) the forward's saved block flows from the forward
        # graph into the backward op (empty on meta tensors; its size is decided when the op
        # runs, test_torch_ops_gpu traces that).
        for save in (False, True):
            with self.subTest(save_for_backward=save):
                self.graphs = {"dynamo": [], "forward": [], "backward": []}

                def step(q, k, v, g, beta, initial_state, cu_seqlens):
                    o, ht, _ = FWD(q, k, v, g, beta, initial_state, cu_seqlens, *args[7:], save)
                    return torch.nn.functional.silu(o) * 2, ht + 1

                backend = aot_autograd(fw_compiler=self.record("forward"),
                                       bw_compiler=self.record("backward"))
                args = meta_args()
                o, ht = torch.compile(step, fullgraph=True, backend=backend)(*args[:7])
                (o.float().sum() + ht.sum()).backward()
                self.assertEqual([gdn_ops(g) for g in self.graphs["forward"]],
                                 [["gdn.chunk_gated_delta_rule_fwd.default"]])
                self.assertEqual([gdn_ops(g) for g in self.graphs["backward"]],
                                 [["gdn.chunk_gated_delta_rule_bwd.default"]])
                for t in args[:6]:
                    self.assertEqual(t.grad.shape, t.shape)
                torch._dynamo.reset()

    def test_dynamic_lengths_trace_once(self):
        # Another token count reuses the graph: sizes are not pinned by the binding's checks.
        layer = torch.compile(Layer(), fullgraph=True, dynamic=True, backend=self.record("dynamo"))
        for T in (100, 164):
            x = fake_inputs(self.mode, T=T, seqlens=[30, T - 30])
            with self.mode:
                o, _ = layer(x["q"], x["k"], x["v"], x["g"], x["beta"], x["initial_state"],
                             x["cu_seqlens"], None)
            self.assertEqual(o.shape[1], T)
        self.assertEqual(len(self.graphs["dynamo"]), 1)


if __name__ == "__main__":
    unittest.main()
