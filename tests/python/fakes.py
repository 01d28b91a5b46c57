"""Tensor-like fakes for testing the binding's argument checks without torch or a GPU."""

from dataclasses import dataclass
from types import SimpleNamespace


def device(kind="cuda", index=0):
    return SimpleNamespace(type=kind, index=index if kind == "cuda" else None)


@dataclass
class FakeTensor:
    shape: tuple
    dtype: str = "torch.bfloat16"
    dev: object = None
    contiguous: bool = True
    ptr: int = 0x10000
    values: list = None  # for host copies of cu_seqlens

    @property
    def device(self):
        return self.dev if self.dev is not None else device()

    def is_contiguous(self):
        return self.contiguous

    def data_ptr(self):
        return self.ptr

    def tolist(self):
        return list(self.values)


def fwd_inputs(B=1, T=100, Hk=2, Hv=4, K=128, V=128, seqlens=None):
    """A consistent set of forward arguments (dict of fakes) for chunk_gated_delta_rule."""
    args = {
        "q": FakeTensor((B, T, Hk, K), ptr=0x1000),
        "k": FakeTensor((B, T, Hk, K), ptr=0x2000),
        "v": FakeTensor((B, T, Hv, V), ptr=0x3000),
        "g": FakeTensor((B, T, Hv), "torch.float32", ptr=0x4000),
        "beta": FakeTensor((B, T, Hv), "torch.float32", ptr=0x5000),
    }
    if seqlens is not None:
        offsets = [0]
        for n in seqlens:
            offsets.append(offsets[-1] + n)
        args["cu_seqlens"] = FakeTensor((len(offsets),), "torch.int32", ptr=0x6000)
        args["cu_seqlens_cpu"] = offsets
    return args
