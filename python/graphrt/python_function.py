"""Python functions as packed functions (TVM's tvm.register_func / convert_to_tvm_func): graphrt
can call them as it calls kernels, e.g. a global a model looks up by name, or the instrument a
Relax VM calls around each call it makes.

    @graphrt.register_func("my.add_one")
    def add_one(x):
        return x + 1

Arguments arrive as Python values (NDArray, int, float, str, Module, Function, Array ...); the
return value goes back through the same conversion as a call's arguments. An exception raised
inside the function fails the packed call with its type and message; where that call came from
Python on the same thread, the caller gets the exception itself back (as TVM re-raises it), with
graphrt's message as a note.
"""
import ctypes
import threading

from . import _lib
from ._lib import TVMValue

__all__ = ["register_func", "function_from_python"]

_PackedCFunc = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(TVMValue), ctypes.POINTER(ctypes.c_int), ctypes.c_int,
                                ctypes.c_void_p, ctypes.c_void_p)
_Finalizer = ctypes.CFUNCTYPE(None, ctypes.c_void_p)

# The Python functions graphrt holds, by the token passed as the resource handle; the finalizer
# drops a token when graphrt drops its function.
_LIVE = {}
_LIVE_LOCK = threading.Lock()
_NEXT_TOKEN = [1]
# The last exception a Python function raised on this thread, with the message graphrt got.
_RAISED = threading.local()
# Codes whose handle the callee borrows: TVMCbArgToReturn gives Python its own reference.
_REFERENCE_CODES = (_lib.kObjectHandle, _lib.kModuleHandle, _lib.kFuncHandle, _lib.kNDArrayHandle)


def _argument(values, codes, i):
    from .module import _return_value
    from .ndarray import NDArray
    code = codes[i]
    value = TVMValue()
    ctypes.memmove(ctypes.byref(value), ctypes.byref(values[i]), ctypes.sizeof(TVMValue))
    if code == _lib.kDLTensorHandle:  # borrowed for the call: a view, as TVM gives one
        return NDArray(ctypes.c_void_p(value.v_handle), owned=False)
    if code in _REFERENCE_CODES:
        c = ctypes.c_int(code)
        _lib.check(_lib.lib().TVMCbArgToReturn(ctypes.byref(value), ctypes.byref(c)))
        code = c.value
    return _return_value(value, code)


def _set_return(result, ret):
    from .module import _put_arg
    values, codes = _lib.arg_arrays(1)
    keep = []
    _put_arg(result, values, codes, 0, keep)
    _lib.check(_lib.lib().TVMCFuncSetReturn(ret, values, codes, 1))


@_PackedCFunc
def _call(values, codes, n, ret, token):
    try:
        f = _LIVE[token]
        result = f(*[_argument(values, codes, i) for i in range(n)])
        if result is not None:
            _set_return(result, ret)
        return 0
    except BaseException as e:  # noqa: B902: every failure becomes the packed call's error
        text = "%s: %s" % (type(e).__name__, e)
        _RAISED.pending = (e, text)
        _lib.lib().TVMAPISetLastError(text.encode("utf-8", "replace"))
        return -1


def _take_raised(message):
    """The exception behind a failed call's `message`, when a Python function raised it on this
    thread; the graphrt message becomes a note on it. Forgotten once asked for."""
    pending = getattr(_RAISED, "pending", None)
    _RAISED.pending = None
    if pending is None or pending[1] not in message:
        return None
    e = pending[0]
    if message != pending[1] and hasattr(e, "add_note"):
        e.add_note("graphrt: " + message)
    return e


_lib.raised_in_python = _take_raised


@_Finalizer
def _release(token):
    with _LIVE_LOCK:
        _LIVE.pop(token, None)


_CALL_ADDRESS = ctypes.cast(_call, ctypes.c_void_p)
_RELEASE_ADDRESS = ctypes.cast(_release, ctypes.c_void_p)


def function_from_python(f, name=None):
    """A graphrt Function that calls Python callable `f`."""
    from .module import Function
    if not callable(f):
        raise _lib.GraphrtTypeError("a packed function needs a callable, not %s" % type(f).__name__)
    with _LIVE_LOCK:
        token = _NEXT_TOKEN[0]
        _NEXT_TOKEN[0] += 1
        _LIVE[token] = f
    out = ctypes.c_void_p()
    rc = _lib.lib().TVMFuncCreateFromCFunc(_CALL_ADDRESS, ctypes.c_void_p(token), _RELEASE_ADDRESS, ctypes.byref(out))
    if rc != 0:
        with _LIVE_LOCK:
            _LIVE.pop(token, None)
        raise _lib.last_exception()
    return Function(out, name or getattr(f, "__name__", None))


def register_func(func_name, f=None, override=False):
    """Registers Python callable `f` as global function `func_name` (TVM's tvm.register_func);
    without `f`, a decorator. With a callable as the first argument, registers it under its
    __name__. Returns `f`."""
    if callable(func_name) and f is None:
        f, func_name = func_name, func_name.__name__
    if not isinstance(func_name, str):
        raise _lib.GraphrtTypeError("register_func needs a name (str), not %s" % type(func_name).__name__)

    def register(func):
        packed = function_from_python(func, func_name)
        _lib.call("TVMFuncRegisterGlobal", _lib.c_str(func_name), packed._h(), int(bool(override)))
        return func

    return register(f) if f is not None else register
