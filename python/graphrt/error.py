"""graphrt's exception classes, one per error kind, and the names TVM users catch (tvm.error).

Every error graphrt raises is a GraphrtError (TVMError is the same class, a RuntimeError, as in
TVM). Each kind's class is also the built-in exception a Python user expects, so that
`except FileNotFoundError`, `except KeyError`, `except ValueError` work:

    kind (C code)               class                     also a
    invalid argument (2)        InvalidArgumentError      ValueError
    not found (3)               NameNotFoundError         KeyError (a name: function, input, symbol)
                                MissingFileError          FileNotFoundError (a path given to a load)
    out of range (4)            OutOfRangeError           IndexError
    unsupported (5)             UnsupportedError          NotImplementedError
    resource exhausted (6)      ResourceExhaustedError    MemoryError
    device (7)                  DeviceError               RuntimeError
    interrupted (8)             RunInterruptedError       RuntimeError
    type mismatch (9)           TypeMismatchError         TypeError
    failed precondition (10)    FailedPreconditionError   RuntimeError
    internal (11)               InternalError             RuntimeError

An interrupted run is a RuntimeError, not a KeyboardInterrupt: graphrt.vm.interrupt stops a run
at a program's request, and `except Exception` handlers (servers, test runners) must see it
rather than take it for the user's Ctrl-C.

This module imports nothing of graphrt: _lib and every other module import it.
"""
import errno as _errno
import os as _os

# The C API's kind codes (include/graphrt/c_api.h GRAPHRT_ERROR_*).
INVALID_ARGUMENT = 2
NOT_FOUND = 3
OUT_OF_RANGE = 4
UNSUPPORTED = 5
RESOURCE_EXHAUSTED = 6
DEVICE = 7
INTERRUPTED = 8
TYPE_MISMATCH = 9
FAILED_PRECONDITION = 10
INTERNAL = 11


class GraphrtError(RuntimeError):
    """An error reported by graphrt (its message is TVMGetLastError()) or by these bindings.
    `kind` is the C API's kind code (None when the bindings raised it without one)."""
    kind = None

    def __str__(self):
        # KeyError and OSError would quote or decorate a plain message: graphrt's one line stays as is.
        if len(self.args) == 1 and isinstance(self.args[0], str):
            return self.args[0]
        return super().__str__()


TVMError = GraphrtError


class InvalidArgumentError(GraphrtError, ValueError):
    """Malformed input: a corrupt file, a bad value, a wrong shape."""
    kind = INVALID_ARGUMENT


class NotFoundError(GraphrtError, LookupError):
    """Something that does not exist: the base of NameNotFoundError and MissingFileError."""
    kind = NOT_FOUND


class NameNotFoundError(NotFoundError, KeyError):
    """A function, symbol, input, output or param of that name does not exist."""


class MissingFileError(NotFoundError, FileNotFoundError):
    """A path given to a load does not exist (errno and filename are set)."""


class FunctionNotFoundError(NameNotFoundError, AttributeError):
    """A module (or the registry) has no function of that name."""


class OutOfRangeError(GraphrtError, IndexError):
    """An index past the end of what it indexes."""
    kind = OUT_OF_RANGE


class UnsupportedError(GraphrtError, NotImplementedError):
    """Valid input that graphrt does not implement (a dtype, a device, a format version)."""
    kind = UNSUPPORTED


class ResourceExhaustedError(GraphrtError, MemoryError):
    """Memory, a budget or a limit ran out."""
    kind = RESOURCE_EXHAUSTED


class DeviceError(GraphrtError):
    """A device or its driver failed or is absent."""
    kind = DEVICE


class RunInterruptedError(GraphrtError):
    """A run stopped on request (graphrt.vm.interrupt)."""
    kind = INTERRUPTED


class TypeMismatchError(GraphrtError, TypeError):
    """A value of the wrong type: an argument, a handle."""
    kind = TYPE_MISMATCH


GraphrtTypeError = TypeMismatchError


class FailedPreconditionError(GraphrtError):
    """A call made in the wrong state (an output read before run(), ...)."""
    kind = FAILED_PRECONDITION


class InternalError(GraphrtError):
    """A broken invariant of graphrt itself (TVM's InternalError)."""
    kind = INTERNAL


# The rest of tvm.error, for code that catches them; graphrt raises none of these (it has no
# RPC and no front ends).
class RPCError(TVMError):
    """An error of a remote (RPC) session."""


class RPCSessionTimeoutError(RPCError, TimeoutError):
    """An RPC session that expired."""


class OpError(TVMError):
    """The base of the front ends' operator errors."""


class OpNotImplemented(OpError, NotImplementedError):
    """An operator that is not implemented."""


class OpAttributeRequired(OpError, AttributeError):
    """A required operator attribute is missing."""


class OpAttributeInvalid(OpError, AttributeError):
    """An operator attribute has an invalid value."""


class OpAttributeUnImplemented(OpError, NotImplementedError):
    """An operator attribute that is not supported."""


class DiagnosticError(TVMError):
    """Diagnostics reported by a pass."""


_BY_KIND = {
    INVALID_ARGUMENT: InvalidArgumentError,
    NOT_FOUND: NameNotFoundError,
    OUT_OF_RANGE: OutOfRangeError,
    UNSUPPORTED: UnsupportedError,
    RESOURCE_EXHAUSTED: ResourceExhaustedError,
    DEVICE: DeviceError,
    INTERRUPTED: RunInterruptedError,
    TYPE_MISMATCH: TypeMismatchError,
    FAILED_PRECONDITION: FailedPreconditionError,
    INTERNAL: InternalError,
}


def error_for_kind(kind, message, path=None):
    """The exception for a failure of `kind` (a C API kind code). `path` is the file the failed
    call was given: a not-found failure is a MissingFileError when that path does not exist
    (the thing missing is the file, not a name inside it)."""
    if kind == NOT_FOUND and path is not None and not _os.path.lexists(path):
        e = MissingFileError(message)
        e.errno = _errno.ENOENT
        e.strerror = message
        e.filename = path
        return e
    return _BY_KIND.get(kind, GraphrtError)(message)


__all__ = ["GraphrtError", "TVMError", "InvalidArgumentError", "NotFoundError", "NameNotFoundError",
           "MissingFileError", "FunctionNotFoundError", "OutOfRangeError", "UnsupportedError",
           "ResourceExhaustedError", "DeviceError", "RunInterruptedError", "TypeMismatchError",
           "GraphrtTypeError", "FailedPreconditionError", "InternalError", "RPCError",
           "RPCSessionTimeoutError", "OpError", "OpNotImplemented", "OpAttributeRequired",
           "OpAttributeInvalid", "OpAttributeUnImplemented", "DiagnosticError", "error_for_kind"]
