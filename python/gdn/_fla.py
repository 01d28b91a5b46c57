"""libgdn as a backend of FLA's chunk_gated_delta_rule (fla-core >= 0.6, `fla.backends`).

FLA routes every call of fla.ops.gated_delta_rule.chunk_gated_delta_rule through the backends
registered for the operation 'gated_delta_rule', in priority order (lower first): the first one
that is available, enabled and whose verifier accepts the call runs it; FLA's own Triton kernels
run when none does. The backend here ('libgdn', priority 2: ahead of FlashQLA's 3) accepts
exactly the calls libgdn computes and declines every other one with the reason, so FLA falls
back there. FLA_LIBGDN=0 switches it off (FLA's convention: FLA_<BACKEND>=0, as FLA_FLASH_QLA).

`import gdn` registers it when fla-core >= 0.6 is importable; gdn.register_fla_backend() does
the same explicitly and raises when it cannot.
"""

from . import _capi
from ._checks import check_bool, check_fwd_inputs, describe_device
from ._errors import GdnError, GdnNotAvailableError

BACKEND_TYPE = "libgdn"
ENV_VAR = "FLA_LIBGDN"
PRIORITY = 2  # lower runs first; FlashQLA is 3, FLA's Triton kernels are the fallback
OPERATION = "gated_delta_rule"
SUPPORTED_CAPABILITY = (9, 0)  # the kernels are sm_90a only

# FLA keyword arguments libgdn has no counterpart for, with the reason a call using one declines.
_DECLINED_FLAGS = {
    "use_beta_sigmoid_in_kernel": "libgdn takes beta after the sigmoid "
                                  "(use_beta_sigmoid_in_kernel)",
    "allow_neg_eigval": "libgdn does not scale beta to [0, 2) (allow_neg_eigval)",
    "use_gate_in_kernel": "libgdn takes g as the log decay, not the raw gate input "
                          "(use_gate_in_kernel)",
}
# Keyword arguments that change nothing libgdn computes: chunk_size is FLA's tiling; A_log and
# dt_bias are read only with use_gate_in_kernel (declined).
_IGNORED_KWARGS = {"chunk_size", "A_log", "dt_bias"}


def _device_capability(device):
    """(major, minor) of a CUDA device; None where torch sees no CUDA device at all."""
    import torch
    if not torch.cuda.is_available():
        return None
    return tuple(torch.cuda.get_device_capability(device))


def verify(q, k, v, g, beta, scale=None, initial_state=None, output_final_state=False,
           use_qk_l2norm_in_kernel=False, use_beta_sigmoid_in_kernel=False,
           allow_neg_eigval=False, state_v_first=False, cu_seqlens=None, cu_seqlens_cpu=None,
           chunk_indices=None, cp_context=None, *, device_capability=_device_capability,
           **kwargs):
    """(True, None) when libgdn computes this FLA call, else (False, reason).

    Takes FLA's chunk_gated_delta_rule arguments, in its positional order. chunk_indices and
    chunk_size describe FLA's own tiling of the same sequences: they change nothing libgdn
    computes. Tensors may have any strides (the backend makes them contiguous, as FLA's own
    kernels do); everything else is what the C library validates (gdn_validate_problem), plus
    the device: a compute-capability-9.0 GPU. device_capability(device) -> (major, minor) is
    torch.cuda.get_device_capability.
    """
    flags = {"use_beta_sigmoid_in_kernel": use_beta_sigmoid_in_kernel,
             "allow_neg_eigval": allow_neg_eigval,
             "use_gate_in_kernel": kwargs.get("use_gate_in_kernel", False)}
    for name, value in flags.items():
        if value:
            return False, _DECLINED_FLAGS[name]
    if cp_context is not None:
        return False, "libgdn does not split sequences across devices (cp_context)"
    try:
        check_bool("use_qk_l2norm_in_kernel", use_qk_l2norm_in_kernel)
    except GdnError as e:
        return False, str(e)
    unknown = sorted(set(kwargs) - _IGNORED_KWARGS - set(flags))
    if unknown:
        return False, f"libgdn has no counterpart for the keyword argument(s) {', '.join(unknown)}"
    if kwargs.get("chunk_size", 64) not in (16, 32, 64):
        return False, f"chunk_size must be 16, 32 or 64; got {kwargs['chunk_size']!r}"
    try:
        spec = check_fwd_inputs(q, k, v, g, beta, scale=scale, initial_state=initial_state,
                                cu_seqlens=cu_seqlens, cu_seqlens_cpu=cu_seqlens_cpu,
                                state_layout="vk" if state_v_first else "kv", contiguous=False)
        _capi.library().validate_problem(spec.to_problem())
    except GdnError as e:
        return False, f"libgdn: {e}"
    capability = device_capability(q.device)
    if capability is None:
        return False, "libgdn runs on compute capability 9.0 (Hopper) GPUs; torch sees no GPU"
    if capability != SUPPORTED_CAPABILITY:
        return False, (f"libgdn runs on compute capability 9.0 (Hopper) GPUs; "
                       f"{describe_device(q.device)} has {capability[0]}.{capability[1]}")
    return True, None


def run(q, k, v, g, beta, scale=None, initial_state=None, output_final_state=False,
        use_qk_l2norm_in_kernel=False, use_beta_sigmoid_in_kernel=False, allow_neg_eigval=False,
        state_v_first=False, cu_seqlens=None, cu_seqlens_cpu=None, chunk_indices=None,
        cp_context=None, **kwargs):
    """FLA's chunk_gated_delta_rule through gdn.chunk_gated_delta_rule (a call verify accepted)."""
    from ._ops import chunk_gated_delta_rule

    def dense(t):
        return None if t is None else t.contiguous()

    return chunk_gated_delta_rule(
        dense(q), dense(k), dense(v), dense(g), dense(beta), scale=scale,
        initial_state=dense(initial_state), output_final_state=bool(output_final_state),
        cu_seqlens=cu_seqlens, cu_seqlens_cpu=cu_seqlens_cpu,
        state_layout="vk" if state_v_first else "kv",
        use_qk_l2norm_in_kernel=use_qk_l2norm_in_kernel)


def library_loads():
    """True when libgdn.so loads (the backend's availability in FLA's sense)."""
    try:
        _capi.library()
    except GdnNotAvailableError:
        return False
    return True


def _backend_class(base):
    class LibgdnBackend(base):
        """libgdn's sm_90a kernels for chunk_gated_delta_rule, forward and backward.

        Disable with ``FLA_LIBGDN=0``.
        """

        backend_type = BACKEND_TYPE
        package_name = None
        env_var = ENV_VAR
        default_enable = True
        priority = PRIORITY

        @classmethod
        def is_available(cls):
            return library_loads()

        def chunk_gated_delta_rule_verifier(self, *args, **kwargs):
            return verify(*args, **kwargs)

        def chunk_gated_delta_rule(self, *args, **kwargs):
            return run(*args, **kwargs)

    return LibgdnBackend


def register_fla_backend():
    """Registers libgdn as FLA's 'gated_delta_rule' backend 'libgdn'; returns its class.

    Idempotent (FLA keeps one backend per type). Raises GdnNotAvailableError when fla-core
    >= 0.6 (fla.backends) is not importable.
    """
    try:
        from fla.backends import BaseBackend, register
    except ImportError as e:
        raise GdnNotAvailableError(
            f"the FLA backend needs fla-core >= 0.6 (its fla.backends registry): {e}") from e
    cls = _backend_class(BaseBackend)
    register(OPERATION)(cls)
    return cls


def register_on_import():
    """What `import gdn` does: register when fla-core >= 0.6 is installed, else nothing.

    Returns why nothing was registered (None when it was): fla missing or older is normal and
    silent; any other failure is reported as a warning by the caller, never raised, so that
    `import gdn` keeps working.
    """
    import importlib.util
    try:
        if importlib.util.find_spec("fla") is None:
            return "fla is not installed"
        if importlib.util.find_spec("fla.backends") is None:
            return "fla is older than 0.6 (no fla.backends)"
    except (ImportError, ValueError) as e:
        return f"fla cannot be located: {e}"
    register_fla_backend()
    return None

