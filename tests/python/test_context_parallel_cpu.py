"""gdn.context_parallel without a GPU: the rank plan through the C API (gdn_cp_plan is host
only), the simulated ranks' all-gather and failure handling, argument errors. Needs torch and
libgdn (GDN_LIBRARY, set by ctest)."""

import threading
import unittest

import torch

import gdn
from gdn import context_parallel as cp


class PlanTest(unittest.TestCase):
    def test_contexts_of_a_packed_split(self):
        group = cp.ThreadGroup(3)
        cu = [0, 410, 841, 1135, 2126, 2512, 4096]
        ctxs = [cp.CPContext(group.exchange(r), [0, 1365, 2730, 4096], cu) for r in range(3)]
        self.assertEqual([c.tokens for c in ctxs],
                         [slice(0, 1365), slice(1365, 2730), slice(2730, 4096)])
        self.assertEqual(ctxs[1].sequences, slice(3, 6))
        self.assertEqual(ctxs[1].local_cu_seqlens, [0, 761, 1147, 1365])
        self.assertEqual((ctxs[0].plan.head_continues, ctxs[0].plan.tail_continues), (0, 1))
        self.assertEqual((ctxs[2].plan.fwd_chain_first, ctxs[2].plan.fwd_chain_count), (1, 1))

    def test_even_split_of_one_sequence(self):
        group = cp.ThreadGroup(4)
        ctx = cp.CPContext.even(group.exchange(2), 1000)
        self.assertEqual(ctx.tokens, slice(2000, 3000))
        self.assertEqual(ctx.plan.fwd_chain_count, 2)
        self.assertEqual(ctx.plan.bwd_chain_count, 1)

    def test_bad_split_raises_the_library_message(self):
        with self.assertRaises(gdn.GdnInvalidArgumentError) as cm:
            cp.CPContext(cp.ThreadGroup(2).exchange(0), [0, 10, 10], [0, 10])
        self.assertIn("rank_offsets[2]", str(cm.exception))
        with self.assertRaises(gdn.GdnArgumentError) as cm:
            cp.CPContext(cp.ThreadGroup(2).exchange(0), [0, 10], [0, 10])
        self.assertIn("rank_offsets", str(cm.exception))
        with self.assertRaises(gdn.GdnArgumentError):
            cp.CPContext(object(), [0, 10])

    def test_cp_group_and_cp_context_exclude_each_other(self):
        ctx = cp.CPContext(cp.ThreadGroup(1).exchange(0), [0, 4])
        x = torch.zeros(1, 4, 1, 128)
        with self.assertRaises(gdn.GdnArgumentError):
            gdn.chunk_gated_delta_rule(x, x, x, x[..., 0], x[..., 0], cp_group=object(),
                                       cp_context=ctx)


class ThreadGroupTest(unittest.TestCase):
    def test_all_gather_stacks_every_rank_and_counts_bytes(self):
        group = cp.ThreadGroup(3)

        def body(rank, exchange):
            first = exchange.all_gather(torch.full((4,), float(rank)))
            second = exchange.all_gather(torch.full((2,), 10.0 + rank))
            return first, second, exchange.bytes_gathered

        for first, second, gathered in cp.run_ranks(group, body):
            self.assertEqual(first.tolist(), [[0.0] * 4, [1.0] * 4, [2.0] * 4])
            self.assertEqual(second[:, 0].tolist(), [10.0, 11.0, 12.0])
            self.assertEqual(gathered, 2 * (4 + 2) * 4)

    def test_a_failing_rank_releases_the_others(self):
        group = cp.ThreadGroup(2, timeout_s=30)

        def body(rank, exchange):
            if rank == 1:
                raise ValueError("rank 1 broke")
            exchange.all_gather(torch.zeros(1))

        with self.assertRaises(RuntimeError) as cm:
            cp.run_ranks(group, body)
        self.assertIn("rank 1 broke", str(cm.exception))
        self.assertEqual(threading.active_count(), 1)


if __name__ == "__main__":
    unittest.main(verbosity=2)
