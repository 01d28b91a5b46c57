"""Context parallelism across ranks (gdn.context_parallel) with simulated ranks: R threads of
one process on one GPU exchanging their carries through memory (ThreadGroup). Outputs, final
states and every gradient must equal the single-GPU gdn.chunk_gated_delta_rule on the whole
problem within the bars of docs/spec.md section 4, and the bytes exchanged must be the carries'
(independent of the tokens). Prints "skipped: ..." and exits 0 without torch or a device."""

import sys
import unittest

from test_binding_gpu import (BAR_FWD, BAR_GATE_GRAD, BAR_GRAD, HAVE_DEVICE, leaves,
                              make_inputs, rel)

if HAVE_DEVICE:
    import torch

import gdn
from gdn import context_parallel as cp

DIFF = ("q", "k", "v", "g", "beta", "initial_state")


def whole_problem(x, layout, with_h0=True):
    """The single-GPU call on the whole problem (leaves to take its gradients)."""
    ins = leaves({n: t for n, t in x.items() if with_h0 or n != "initial_state"}, DIFF)
    o, ht = gdn.chunk_gated_delta_rule(**ins, output_final_state=True, state_layout=layout)
    return ins, o, ht


def split_run(x, rank_offsets, layout, do, dht, with_h0=True):
    """The same problem over len(rank_offsets) - 1 simulated ranks; returns the assembled
    (o, final_state, grads by name) and the bytes each rank gathered."""
    R = len(rank_offsets) - 1
    group = cp.ThreadGroup(R)
    h0 = x["initial_state"] if with_h0 else None

    def rank_body(rank, exchange):
        ctx = cp.CPContext(exchange, rank_offsets, x["cu_seqlens_cpu"])
        t = ctx.tokens
        local = {n: x[n][:, t].contiguous() for n in ("q", "k", "v", "g", "beta")}
        call = cp.RankCall(ctx, **local, initial_state=h0, state_layout=layout)
        o, ht = call.forward(output_final_state=True)
        grads = call.backward(do[:, t].contiguous(), dht[ctx.sequences].contiguous(),
                              want_dh0=with_h0)
        return o, call.to_global(ht), grads, exchange.bytes_gathered, call

    results = cp.run_ranks(group, rank_body)
    o = torch.cat([r[0] for r in results], dim=1)
    final = sum(r[1] for r in results)
    names = ("q", "k", "v", "g", "beta")
    grads = {n: torch.cat([r[2][i] for r in results], dim=1) for i, n in enumerate(names)}
    if with_h0:
        grads["initial_state"] = sum(results[r][4].to_global(results[r][2][5]) for r in range(R))
    return o, final, grads, [r[3] for r in results], results[0][4]


class SimulatedRanksTest(unittest.TestCase):
    def run_case(self, lengths, rank_offsets, Hk=2, Hv=4, layout="kv", seed=0, with_h0=True):
        x = make_inputs(lengths, Hk, Hv, seed=seed, layout=layout)
        ins, o_ref, ht_ref = whole_problem(x, layout, with_h0)
        gen = torch.Generator(device="cuda").manual_seed(seed + 1)
        do = torch.randn(o_ref.shape, generator=gen, device="cuda").to(o_ref.dtype)
        dht = torch.randn(ht_ref.shape, generator=gen, device="cuda")
        ((o_ref.float() * do.float()).sum() + (ht_ref * dht).sum()).backward()

        o, final, grads, gathered, call = split_run(x, rank_offsets, layout, do, dht, with_h0)
        self.assertLessEqual(rel(o, o_ref), BAR_FWD, "o")
        self.assertLessEqual(rel(final, ht_ref), BAR_FWD, "final_state")
        for name in DIFF if with_h0 else DIFF[:-1]:
            bar = BAR_GATE_GRAD if name in ("g", "beta") else BAR_GRAD
            self.assertLessEqual(rel(grads[name], ins[name].grad), bar, f"d{name}")
        # Each rank gathered R - 1 forward and R - 1 backward carries, nothing else.
        R = len(rank_offsets) - 1
        per_rank = (R - 1) * 4 * (call.carry_floats + call.dcarry_floats)
        self.assertEqual(call.carry_floats, Hv * 128 * 256)
        self.assertEqual(call.dcarry_floats, Hv * 128 * 128)
        self.assertEqual(gathered, [per_rank] * R)
        print(f"  R = {R}, T = {sum(lengths)}, Hv = {Hv}: {per_rank} bytes gathered per rank "
              f"per forward + backward")

    def test_one_sequence_over_two_ranks(self):
        self.run_case([1000], [0, 500, 1000])

    def test_one_sequence_over_four_uneven_ranks(self):
        self.run_case([1000], [0, 100, 450, 451, 1000], seed=2)

    def test_one_sequence_over_eight_ranks_without_h0(self):
        self.run_case([2048], list(range(0, 2049, 256)), Hk=1, Hv=2, seed=3, with_h0=False)

    def test_ragged_pack_straddling_three_ranks_gva(self):
        self.run_case([410, 431, 294, 991, 386, 1584], [0, 1365, 2730, 4096], Hk=1, Hv=3,
                      seed=4)

    def test_ragged_pack_over_five_ranks_state_layout_vk(self):
        self.run_case([410, 431, 294, 991, 386, 1584], [0, 900, 1000, 2000, 2200, 4096],
                      layout="vk", seed=5)

    def test_zero_length_and_one_token_sequences_at_boundaries(self):
        self.run_case([0, 300, 0, 200, 1, 0, 499, 0], [0, 300, 501, 750, 1000], Hk=2, Hv=2,
                      seed=6)


class AutogradPathTest(unittest.TestCase):
    """gdn.chunk_gated_delta_rule(cp_context=...) through torch.autograd, on one simulated rank
    (the autograd engine runs a device's backward on one thread, so several simulated ranks
    cannot wait for each other there; the two-GPU NCCL test runs it across processes)."""

    def test_single_rank_context_equals_the_plain_call(self):
        x = make_inputs([300, 0, 212], Hk=1, Hv=2, seed=7)
        ins, o_ref, ht_ref = whole_problem(x, "kv")
        (o_ref.float().square().sum() + ht_ref.square().sum()).backward()

        ours = leaves(x, DIFF)
        ctx = cp.CPContext(cp.ThreadGroup(1).exchange(0), [0, 512], x["cu_seqlens_cpu"])
        o, ht = gdn.chunk_gated_delta_rule(ours["q"], ours["k"], ours["v"], ours["g"],
                                           ours["beta"], initial_state=ours["initial_state"],
                                           output_final_state=True, cp_context=ctx)
        (o.float().square().sum() + ht.square().sum()).backward()
        self.assertLessEqual(rel(o, o_ref), BAR_FWD)
        self.assertLessEqual(rel(ht, ht_ref), BAR_FWD)
        for name in DIFF:
            bar = BAR_GATE_GRAD if name in ("g", "beta") else BAR_GRAD
            self.assertLessEqual(rel(ours[name].grad, ins[name].grad), bar, f"d{name}")

    def test_forward_through_the_public_call_on_three_simulated_ranks(self):
        # The forward of the autograd function runs in the calling thread, so simulated ranks
        # can run it side by side; final states sum to the single-GPU ones.
        x = make_inputs([700, 1, 0, 323], Hk=2, Hv=4, seed=8)
        _, o_ref, ht_ref = whole_problem(x, "kv")
        group = cp.ThreadGroup(3)

        def rank_body(rank, exchange):
            ctx = cp.CPContext(exchange, [0, 400, 800, 1024], x["cu_seqlens_cpu"])
            t = ctx.tokens
            with torch.no_grad():
                return gdn.chunk_gated_delta_rule(
                    *(x[n][:, t].contiguous() for n in ("q", "k", "v", "g", "beta")),
                    initial_state=x["initial_state"], output_final_state=True, cp_context=ctx)

        results = cp.run_ranks(group, rank_body)
        self.assertLessEqual(rel(torch.cat([r[0] for r in results], dim=1), o_ref), BAR_FWD)
        self.assertLessEqual(rel(sum(r[1] for r in results), ht_ref), BAR_FWD)


if __name__ == "__main__":
    if not HAVE_DEVICE or not gdn.device_available():
        print("skipped: no CUDA device (torch missing, no GPU, or no compute-capability-9.0 GPU)")
        sys.exit(0)
    unittest.main(verbosity=2)
