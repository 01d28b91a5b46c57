"""Exceptions raised by the gdn binding.

Argument problems found in Python (before any C call) raise GdnArgumentError, which is both a
ValueError and a TypeError so that callers catching either see it. Statuses returned by libgdn
map to one subclass of GdnError each, carrying the library's own message (gdn_last_error).
"""


class GdnError(RuntimeError):
    """Base class of every error libgdn reports."""

    status = None  # the gdn_status code, for the subclasses that map one


class GdnArgumentError(GdnError, ValueError, TypeError):
    """A Python argument has the wrong type, dtype, device, contiguity or shape."""


class GdnInvalidArgumentError(GdnError, ValueError):
    status = 1


class GdnUnsupportedError(GdnError):
    status = 2


class GdnNotAvailableError(GdnError):
    """No CUDA device, no libgdn.so, or a library built without kernels."""

    status = 3


class GdnCudaError(GdnError):
    status = 4


class GdnWorkspaceError(GdnError):
    status = 5


class GdnInternalError(GdnError):
    status = 6


_BY_STATUS = {cls.status: cls for cls in (GdnInvalidArgumentError, GdnUnsupportedError,
                                           GdnNotAvailableError, GdnCudaError, GdnWorkspaceError,
                                           GdnInternalError)}


def error_for_status(status, call, message):
    """The exception for a non-zero gdn_status returned by `call`."""
    cls = _BY_STATUS.get(status, GdnInternalError)
    text = f"{call} failed with status {status}"
    if message:
        text += f": {message}"
    err = cls(text)
    err.status = status
    return err
