"""Loading modules: TVM-exported libraries from a file or memory, plugins, and the runtime's
global facts (TVM's tvm.runtime.load_module, enabled, num_threads). The calling convention and
the handle types (Module, Function, Object, Array) are in packed.py, re-exported here.
"""
import ctypes
import os

from . import _lib
from ._lib import GraphrtTypeError
from . import error as _error
from .benchmark import BenchmarkResult  # noqa: F401  (re-exported)
from .packed import (Module, Function, Object, Array, get_global_func, register_object_converter)  # noqa: F401


_LOAD_TRUST_EXPORTS = 1  # GRAPHRT_LOAD_TRUST_EXPORTS


def load_module(path, loader="dlopen", trust_exports=False):
    """Loads a TVM-exported library (.so) and returns its root module.
    loader: "dlopen" (the system loader) or "elf" (graphrt's embedded ELF loader); TVM's `fmt`
    argument takes this place: "" or "so" mean the default. A TVM .tar export or a bare .o is
    recognised by its content and linked in-process (no compiler).
    A library with no TVM blob and no TVM-ABI symbol is refused (its functions are not known to
    be packed functions); trust_exports=True loads it anyway, for hand-written packed functions."""
    if loader in ("", "so"):
        loader = "dlopen"
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if not isinstance(path, str):
        raise GraphrtTypeError("load_module takes a path (str), got %s" % type(path).__name__)
    if loader not in (None, "dlopen", "elf") and not isinstance(loader, str):
        raise GraphrtTypeError("loader must be a str")
    out = ctypes.c_void_p()
    flags = _LOAD_TRUST_EXPORTS if trust_exports else 0
    _lib.call("graphrt_module_load_with_flags", _lib.c_str(path), _lib.c_str(loader or "dlopen"), flags,
              ctypes.byref(out), path=path)
    return Module(out)


def load_module_from_memory(data, loader="elf"):
    b = bytes(data)
    buf = ctypes.create_string_buffer(b, len(b))
    out = ctypes.c_void_p()
    _lib.call("graphrt_module_load_from_memory", buf, len(b), _lib.c_str(loader), ctypes.byref(out))
    return Module(out)


def list_global_func_names():
    n = ctypes.c_int(0)
    arr = ctypes.POINTER(ctypes.c_char_p)()
    _lib.call("TVMFuncListGlobalNames", ctypes.byref(n), ctypes.byref(arr))
    return [_lib.py_str(arr[i]) for i in range(n.value)]


def enabled(target):
    """Whether graphrt can run code built for `target` (TVM's tvm.runtime.enabled): "cpu", "c" and
    llvm targets always; "cuda"/"gpu"/"nvptx", "vulkan" and "opencl" when that back end and a device are usable; other
    known device kinds never (graphrt has no back end for them)."""
    if not isinstance(target, str):
        raise GraphrtTypeError("enabled takes a target string")
    name = target.split()[0] if target.split() else ""
    if name in ("cpu", "c", "stackvm") or name.startswith("llvm"):
        return True
    if name in ("cuda", "gpu") or name.startswith("nvptx"):
        from .device import cuda
        return cuda(0).exist
    if name == "vulkan":
        from .device import vulkan
        return vulkan(0).exist
    if name == "opencl":
        from .device import opencl
        return opencl(0).exist
    from .device import _NAME_TYPES
    if name in _NAME_TYPES or name in ("rpc", "tflite") or name.startswith("rocm"):
        return False
    raise _error.InvalidArgumentError("unknown runtime target '%s'" % target)


def num_threads():
    """Threads graphrt's pool runs parallel kernels with (TVM's tvm.runtime.num_threads)."""
    out = ctypes.c_int(0)
    _lib.call("graphrt_get_num_threads", ctypes.byref(out))
    return out.value


def load_plugin(path):
    _lib.call("graphrt_load_plugin", _lib.c_str(os.fspath(path)), path=os.fspath(path))
