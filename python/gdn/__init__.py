"""gdn: Python binding of libgdn (Gated DeltaNet chunked prefill for Hopper).

    import gdn
    o, final_state = gdn.chunk_gated_delta_rule(q, k, v, g, beta, initial_state=h0,
                                                output_final_state=True, cu_seqlens=cu)

libgdn.so is loaded over ctypes on first use: from $GDN_LIBRARY when set, else the copy inside
this package (pip install), else <repo>/build/kernels/libgdn.so of a source checkout. Importing
needs neither torch nor a GPU nor the library. Where torch is installed, importing registers the
custom ops torch.ops.gdn.chunk_gated_delta_rule_fwd / _bwd (torch.compile, CUDA graphs), and
where fla-core >= 0.6 is installed too, the 'libgdn' backend of FLA's chunk_gated_delta_rule
(FLA_LIBGDN=0 switches it off; docs/python.md).
"""

import warnings

from ._capi import candidate_paths, library
from ._errors import (GdnArgumentError, GdnCudaError, GdnError, GdnInternalError,
                      GdnInvalidArgumentError, GdnNotAvailableError, GdnUnsupportedError,
                      GdnWorkspaceError)
from ._fla import register_fla_backend
from ._ops import chunk_gated_delta_rule, l2norm

try:
    import torch  # noqa: F401
except ImportError:
    torch = None
if torch is not None:
    from . import _torch_library  # noqa: F401  (registers torch.ops.gdn.*)
    from ._fla import register_on_import as _register_fla_on_import
    try:
        _register_fla_on_import()
    except Exception as e:  # a broken FLA install must not break `import gdn`
        warnings.warn(f"gdn: the FLA backend was not registered: {e}", RuntimeWarning,
                      stacklevel=2)
del torch


def device_available():
    """True when libgdn loads and reports a usable compute-capability-9.0 device."""
    try:
        return library().device_available()
    except GdnNotAvailableError:
        return False


def fwd_variant_name(q, k, v, g, beta, scale=None, initial_state=None, cu_seqlens=None,
                     cu_seqlens_cpu=None, state_layout="kv"):
    """Name of the kernel variant libgdn would run for these forward arguments (no launch)."""
    from ._checks import check_fwd_inputs
    spec = check_fwd_inputs(q, k, v, g, beta, scale=scale, initial_state=initial_state,
                            cu_seqlens=cu_seqlens, cu_seqlens_cpu=cu_seqlens_cpu,
                            state_layout=state_layout)
    return library().fwd_variant_name(spec.to_problem())


def load_dispatch_table(path=None):
    """Dispatches every later call through the dispatch.json that `gdnlab export` wrote at
    `path` (a retune without a rebuild); None restores the table built into libgdn. A file that
    cannot be read or checked raises GdnError naming what is wrong, and the table in force stays."""
    library().load_dispatch_table(None if path is None else str(path))


__all__ = ["chunk_gated_delta_rule", "l2norm", "device_available", "fwd_variant_name", "library",
           "load_dispatch_table",
           "candidate_paths", "register_fla_backend", "GdnError", "GdnArgumentError",
           "GdnInvalidArgumentError", "GdnUnsupportedError", "GdnNotAvailableError",
           "GdnCudaError", "GdnWorkspaceError", "GdnInternalError"]
