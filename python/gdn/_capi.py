"""ctypes mirror of kernels/include/gdn/gdn.h and the loader of libgdn.so.

The structures below copy the C header field by field and in order; tests/python compares their
sizes and offsets with a program compiled against the header, so drift is caught. Nothing here
needs torch or a GPU: the library is loaded on first use, not at import.
"""

import ctypes
import os
import threading
from pathlib import Path

from ._errors import GdnNotAvailableError, error_for_status

# enum gdn_status / gdn_dtype / gdn_index_dtype / gdn_state_layout (C enums are int-sized).
GDN_OK = 0
GDN_BF16, GDN_FP16, GDN_FP32 = 0, 1, 2
GDN_INT32, GDN_INT64 = 0, 1
GDN_STATE_KV, GDN_STATE_VK = 0, 1

_c_enum = ctypes.c_int


class GdnProblem(ctypes.Structure):
    _fields_ = [
        ("B", ctypes.c_int64),
        ("T", ctypes.c_int64),
        ("num_seqs", ctypes.c_int64),
        ("cu_seqlens", ctypes.c_void_p),
        ("cu_seqlens_host", ctypes.c_void_p),
        ("cu_seqlens_dtype", _c_enum),
        ("max_seqlen_hint", ctypes.c_int64),
        ("Hk", ctypes.c_int32),
        ("Hv", ctypes.c_int32),
        ("K", ctypes.c_int32),
        ("V", ctypes.c_int32),
        ("qkv_dtype", _c_enum),
        ("beta_dtype", _c_enum),
        ("scale", ctypes.c_float),
        ("state_layout", _c_enum),
    ]


class GdnSaved(ctypes.Structure):
    """gdn_saved: a training forward's saved block (data, bytes, segment_chunks)."""
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("bytes", ctypes.c_size_t),
        ("segment_chunks", ctypes.c_int32),
    ]


class GdnFwdArgs(ctypes.Structure):
    _fields_ = [
        ("q", ctypes.c_void_p),
        ("k", ctypes.c_void_p),
        ("v", ctypes.c_void_p),
        ("g", ctypes.c_void_p),
        ("beta", ctypes.c_void_p),
        ("h0", ctypes.c_void_p),
        ("o", ctypes.c_void_p),
        ("ht", ctypes.c_void_p),
        ("workspace", ctypes.c_void_p),
        ("workspace_bytes", ctypes.c_size_t),
        ("launch", ctypes.c_void_p),  # const gdn_launch_options*: NULL, the dispatched plan
        ("save", ctypes.POINTER(GdnSaved)),  # training mode: NULL for inference
    ]


class GdnBwdArgs(ctypes.Structure):
    _fields_ = [
        ("q", ctypes.c_void_p),
        ("k", ctypes.c_void_p),
        ("v", ctypes.c_void_p),
        ("g", ctypes.c_void_p),
        ("beta", ctypes.c_void_p),
        ("h0", ctypes.c_void_p),
        ("d_o", ctypes.c_void_p),
        ("dht", ctypes.c_void_p),
        ("dq", ctypes.c_void_p),
        ("dk", ctypes.c_void_p),
        ("dv", ctypes.c_void_p),
        ("dg", ctypes.c_void_p),
        ("dbeta", ctypes.c_void_p),
        ("dh0", ctypes.c_void_p),
        ("workspace", ctypes.c_void_p),
        ("workspace_bytes", ctypes.c_size_t),
        ("launch", ctypes.c_void_p),  # const gdn_launch_options*: NULL, the dispatched plan
        ("saved", ctypes.POINTER(GdnSaved)),  # what the training forward saved, or NULL
    ]


class GdnCpRankPlan(ctypes.Structure):
    """gdn_cp_rank_plan of gdn_cp.h: where one rank stands in a split over ranks."""
    _fields_ = [
        ("rank", ctypes.c_int32),
        ("num_ranks", ctypes.c_int32),
        ("token_begin", ctypes.c_int64),
        ("token_end", ctypes.c_int64),
        ("first_seq", ctypes.c_int64),
        ("num_local_seqs", ctypes.c_int64),
        ("head_continues", ctypes.c_int32),
        ("tail_continues", ctypes.c_int32),
        ("fwd_chain_first", ctypes.c_int32),
        ("fwd_chain_count", ctypes.c_int32),
        ("bwd_chain_first", ctypes.c_int32),
        ("bwd_chain_count", ctypes.c_int32),
    ]


_P = ctypes.POINTER
# name -> (restype, argtypes)
_PROTOTYPES = {
    "gdn_problem_init": (None, [_P(GdnProblem), ctypes.c_int64, ctypes.c_int64, ctypes.c_int32,
                                ctypes.c_int32, ctypes.c_int32, ctypes.c_int32]),
    "gdn_validate_problem": (ctypes.c_int, [_P(GdnProblem)]),
    "gdn_validate_fwd": (ctypes.c_int, [_P(GdnProblem), _P(GdnFwdArgs)]),
    "gdn_validate_bwd": (ctypes.c_int, [_P(GdnProblem), _P(GdnBwdArgs)]),
    "gdn_fwd_workspace_size": (ctypes.c_size_t, [_P(GdnProblem)]),
    "gdn_saved_init": (ctypes.c_int, [_P(GdnProblem), _P(GdnSaved)]),
    "gdn_saved_size": (ctypes.c_size_t, [_P(GdnProblem), ctypes.c_int32]),
    "gdn_bwd_workspace_size": (ctypes.c_size_t, [_P(GdnProblem)]),
    "gdn_fwd": (ctypes.c_int, [_P(GdnProblem), _P(GdnFwdArgs), ctypes.c_void_p]),
    "gdn_bwd": (ctypes.c_int, [_P(GdnProblem), _P(GdnBwdArgs), ctypes.c_void_p]),
    "gdn_fwd_variant_name": (ctypes.c_char_p, [_P(GdnProblem)]),
    "gdn_bwd_variant_name": (ctypes.c_char_p, [_P(GdnProblem)]),
    "gdn_load_dispatch_table": (ctypes.c_int, [ctypes.c_char_p]),
    "gdn_status_string": (ctypes.c_char_p, [ctypes.c_int]),
    "gdn_last_error": (ctypes.c_char_p, []),
    "gdn_device_available": (ctypes.c_int, []),
    "gdn_version": (ctypes.c_char_p, []),
}

# gdn_cp.h (context parallelism across ranks): bound on first use, so that a libgdn without it
# still serves everything else.
_c_float_p = ctypes.c_void_p  # device pointers travel as plain addresses
_CP_PROTOTYPES = {
    "gdn_cp_plan": (ctypes.c_int, [_P(ctypes.c_int64), ctypes.c_int64, _P(ctypes.c_int64),
                                   ctypes.c_int32, ctypes.c_int32, _P(GdnCpRankPlan),
                                   _P(ctypes.c_int64), ctypes.c_int64]),
    "gdn_cp_fwd_carry_bytes": (ctypes.c_size_t, [_P(GdnProblem)]),
    "gdn_cp_bwd_carry_bytes": (ctypes.c_size_t, [_P(GdnProblem)]),
    "gdn_cp_fwd_begin": (ctypes.c_int, [_P(GdnProblem), _P(GdnCpRankPlan), _P(GdnFwdArgs),
                                        _c_float_p, ctypes.c_void_p]),
    "gdn_cp_fwd_chain": (ctypes.c_int, [_P(GdnProblem), _c_float_p, ctypes.c_int32, _c_float_p,
                                        ctypes.c_void_p]),
    "gdn_cp_fwd_end": (ctypes.c_int, [_P(GdnProblem), _P(GdnCpRankPlan), _P(GdnFwdArgs),
                                      _c_float_p, ctypes.c_void_p]),
    "gdn_cp_bwd_begin": (ctypes.c_int, [_P(GdnProblem), _P(GdnCpRankPlan), _P(GdnBwdArgs),
                                        _c_float_p, _c_float_p, ctypes.c_void_p]),
    "gdn_cp_bwd_chain": (ctypes.c_int, [_P(GdnProblem), _c_float_p, _c_float_p, ctypes.c_int32,
                                        _c_float_p, ctypes.c_void_p]),
    "gdn_cp_bwd_end": (ctypes.c_int, [_P(GdnProblem), _P(GdnCpRankPlan), _P(GdnBwdArgs),
                                      _c_float_p, _c_float_p, ctypes.c_void_p]),
}

_PACKAGE_DIR = Path(__file__).resolve().parent
_REPO_ROOT = _PACKAGE_DIR.parent.parent


def candidate_paths():
    """Where libgdn.so is looked for, in order.

    $GDN_LIBRARY alone when it is set (an explicit choice: a missing file is an error, never a
    silent fallback); else the library installed inside this package (pip install), then the
    build folder of the source checkout this package lives in (<repo>/build/kernels).
    """
    env = os.environ.get("GDN_LIBRARY")
    if env:
        return [Path(env)]
    return [_PACKAGE_DIR / "libgdn.so", _REPO_ROOT / "build" / "kernels" / "libgdn.so"]


class Library:
    """libgdn.so with typed entry points. Use library() to get the process-wide instance."""

    def __init__(self, path):
        self.path = Path(path)
        try:
            self._dll = ctypes.CDLL(str(self.path))
        except OSError as e:
            raise GdnNotAvailableError(f"cannot load libgdn from {self.path}: {e}") from e
        for name, (restype, argtypes) in _PROTOTYPES.items():
            try:
                fn = getattr(self._dll, name)
            except AttributeError as e:
                raise GdnNotAvailableError(
                    f"{self.path} lacks the C API function {name}: is it an older libgdn?") from e
            fn.restype = restype
            fn.argtypes = argtypes
            setattr(self, name, fn)

    def cp(self, name):
        """A gdn_cp.h function, bound on first use; GdnNotAvailableError if this libgdn lacks it."""
        fn = self.__dict__.get(name)
        if fn is None:
            if name not in _CP_PROTOTYPES:
                raise KeyError(name)
            try:
                fn = getattr(self._dll, name)
            except AttributeError as e:
                raise GdnNotAvailableError(
                    f"{self.path} lacks {name} (context parallelism across ranks, gdn_cp.h): "
                    f"is it an older libgdn?") from e
            fn.restype, fn.argtypes = _CP_PROTOTYPES[name]
            setattr(self, name, fn)
        return fn

    def cp_call(self, name, *args):
        """Calls a status-returning gdn_cp.h function; raises on a non-zero status."""
        self.check(self.cp(name)(*args), name)

    def last_error(self):
        return (self.gdn_last_error() or b"").decode("utf-8", "replace")

    def version(self):
        return (self.gdn_version() or b"").decode()

    def device_available(self):
        return bool(self.gdn_device_available())

    def check(self, status, call):
        """Raises the exception that matches a non-zero gdn_status, with gdn_last_error()."""
        if status != GDN_OK:
            raise error_for_status(status, call, self.last_error())

    def validate_problem(self, problem):
        self.check(self.gdn_validate_problem(ctypes.byref(problem)), "gdn_validate_problem")

    def fwd_workspace_size(self, problem):
        # 0 is also the answer for "invalid problem": validate first so 0 means "none needed".
        self.validate_problem(problem)
        return int(self.gdn_fwd_workspace_size(ctypes.byref(problem)))

    def bwd_workspace_size(self, problem):
        self.validate_problem(problem)
        return int(self.gdn_bwd_workspace_size(ctypes.byref(problem)))

    def saved_init(self, problem):
        """gdn_saved_init: (bytes, segment_chunks) of a training forward's saved block; raises
        GdnUnsupportedError where the dispatched forward keeps nothing (the staged family)."""
        saved = GdnSaved()
        self.check(self.gdn_saved_init(ctypes.byref(problem), ctypes.byref(saved)),
                   "gdn_saved_init")
        return int(saved.bytes), int(saved.segment_chunks)

    def saved_size(self, problem, segment_chunks):
        """gdn_saved_size: the bytes of a saved block with segments of that length (no device
        needed)."""
        self.validate_problem(problem)
        size = int(self.gdn_saved_size(ctypes.byref(problem), segment_chunks))
        if size == 0:
            self.check(1, "gdn_saved_size")  # an invalid segment length; the message says why
        return size

    def fwd(self, problem, args, stream):
        self.check(self.gdn_fwd(ctypes.byref(problem), ctypes.byref(args), stream), "gdn_fwd")

    def bwd(self, problem, args, stream):
        self.check(self.gdn_bwd(ctypes.byref(problem), ctypes.byref(args), stream), "gdn_bwd")

    def fwd_variant_name(self, problem):
        return self._variant_name(self.gdn_fwd_variant_name, "gdn_fwd_variant_name", problem)

    def bwd_variant_name(self, problem):
        return self._variant_name(self.gdn_bwd_variant_name, "gdn_bwd_variant_name", problem)

    def _variant_name(self, fn, call, problem):
        name = fn(ctypes.byref(problem))
        if name is None:
            message = self.last_error()  # set by this call: an invalid problem or no variant
            self.validate_problem(problem)
            # Without a usable device the library answers NOT_AVAILABLE (as gdn_fwd does), not
            # "unsupported": the problem may well be supported on a GPU.
            status = 2 if self.device_available() else 3
            raise error_for_status(status, call, message)
        return name.decode()

    def load_dispatch_table(self, path):
        """gdn_load_dispatch_table: a dispatch.json exported by `gdnlab export` replaces the
        table in force (None: back to the built-in one); a bad file raises and changes nothing."""
        encoded = None if path is None else os.fsencode(path)
        self.check(self.gdn_load_dispatch_table(encoded), "gdn_load_dispatch_table")


_lock = threading.Lock()
_library = None


def library():
    """The loaded libgdn (first of candidate_paths() that exists); GdnNotAvailableError if none."""
    global _library
    with _lock:
        if _library is None:
            explicit = os.environ.get("GDN_LIBRARY")
            if explicit and not Path(explicit).is_file():
                # An explicit choice that cannot be honoured is an error, never a silent
                # fallback to another libgdn (which may be an older build).
                raise GdnNotAvailableError(
                    f"GDN_LIBRARY names {explicit}: no such file (GDN_LIBRARY={explicit} must be "
                    f"the path of a built libgdn.so; unset it to use the library installed with "
                    f"the package)")
            tried = candidate_paths()
            found = next((p for p in tried if p.is_file()), None)
            if found is None:
                listing = ", ".join(str(p) for p in tried)
                raise GdnNotAvailableError(
                    f"libgdn.so not found (tried {listing}); install the package (pip install "
                    f"<gdnlab checkout>), build it (cmake --build build --target gdn) or set "
                    f"GDN_LIBRARY to its path")
            _library = Library(found)
        return _library


def reset_library_for_tests():
    """Forgets the loaded library so a test can point GDN_LIBRARY elsewhere."""
    global _library
    with _lock:
        _library = None
