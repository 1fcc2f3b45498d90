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
from . import _lib
from .packed import function_from_python, _LIVE  # noqa: F401  (function_from_python re-exported)

__all__ = ["register_func", "function_from_python"]


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
