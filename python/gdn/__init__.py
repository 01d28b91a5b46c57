"""gdn: Python binding of libgdn (Gated DeltaNet chunked prefill for Hopper) over ctypes.

    import gdn
    o, final_state = gdn.chunk_gated_delta_rule(q, k, v, g, beta, initial_state=h0,
                                                output_final_state=True, cu_seqlens=cu)

Importing needs neither torch nor a GPU nor the library: libgdn.so is loaded on first use from
$GDN_LIBRARY, else <repo>/build/kernels/libgdn.so, else this package's folder.
"""

from ._capi import candidate_paths, library
from ._errors import (GdnArgumentError, GdnCudaError, GdnError, GdnInternalError,
                      GdnInvalidArgumentError, GdnNotAvailableError, GdnUnsupportedError,
                      GdnWorkspaceError)
from ._ops import chunk_gated_delta_rule


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


__all__ = ["chunk_gated_delta_rule", "device_available", "fwd_variant_name", "library",
           "candidate_paths", "GdnError", "GdnArgumentError", "GdnInvalidArgumentError",
           "GdnUnsupportedError", "GdnNotAvailableError", "GdnCudaError", "GdnWorkspaceError",
           "GdnInternalError"]
