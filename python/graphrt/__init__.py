"""graphrt: run Apache TVM-exported models (graph executor flow) without TVM.

A pure-Python (ctypes) binding of libgraphrt. TVM deploy code runs with `import graphrt as tvm`
(tvm.runtime, tvm.nd, tvm.device, tvm.contrib.graph_executor, tvm.contrib.debugger); graphrt's
own names:

    import graphrt
    from graphrt import graph_executor
    lib = graphrt.load_module("deploy_factory.so")
    gmod = graph_executor.GraphModule(lib["default"](graphrt.cpu(0)))
    gmod.set_input("data", x)
    gmod.run()
    y = gmod.get_output(0).numpy()
"""
from .error import (GraphrtError, GraphrtTypeError, FunctionNotFoundError, InvalidArgumentError, NotFoundError,
                    NameNotFoundError, MissingFileError, OutOfRangeError, UnsupportedError, ResourceExhaustedError,
                    DeviceError, RunInterruptedError, TypeMismatchError, FailedPreconditionError, InternalError)
from . import error
from ._lib import find_library, library_path
from .device import Device, cpu, cuda, gpu, device, opencl, cl, vulkan, metal, mtl, vpi, rocm, ext_dev
from .module import (Module, Function, Object, Array, load_module, load_module_from_memory, get_global_func,
                     list_global_func_names, load_plugin, BenchmarkResult)
from .ndarray import NDArray, from_dlpack
from .session import Session, Model, Runner, TensorInfo
from .language_model import LanguageModel
from .python_function import register_func, function_from_python
from .shape_tuple import ShapeTuple
from . import ndarray as nd
from . import graph_executor
from . import vm
from . import relax_vm
from . import relax
from . import tvm_ffi
from . import runtime
from . import contrib
from .params import save_param_dict, load_param_dict, save_param_dict_to_file, load_param_dict_from_file

__version__ = "0.1.0"

from . import _not_a_compiler
_not_a_compiler.install(__name__)


def __getattr__(name):
    # `import graphrt as tvm; tvm.relay.build(...)`: say why there is no relay.
    if name in _not_a_compiler.COMPILER_PACKAGES:
        raise AttributeError(_not_a_compiler.message("tvm." + name))
    raise AttributeError("module %r has no attribute %r" % (__name__, name))

# Load and initialise libgraphrt at import, as `import tvm` loads its runtime,
# so the first model load does not pay for either. A missing library is
# reported by the first call that needs it.
try:
    from . import _lib as _lib_at_import
    if hasattr(_lib_at_import.lib(), "graphrt_init"):
        _lib_at_import.lib().graphrt_init()
    # ctypes and numpy pay tens of microseconds the first time a structure field, a
    # pointer field or an array interface is used: one packed call with a device and
    # one host tensor made here take that out of the first model load and set_input.
    get_global_func("__tvm_set_device")(1, 0)
    graph_executor._warm_up()
except GraphrtError:
    pass

TVMError = GraphrtError  # for code written against tvm (tvm.TVMError, tvm.error.*: see error.py)
PackedFunc = Function


def install_as_tvm():
    """Makes `import tvm` (and `from tvm.contrib import graph_executor`, `tvm.runtime.ndarray`, ...)
    give graphrt's modules in this process, so TVM deploy code runs with no line changed after
    this call. Raises if a real TVM is already imported."""
    import importlib
    import sys
    current = sys.modules.get("tvm")
    if current is not None and current is not sys.modules[__name__]:
        raise GraphrtError("a module named 'tvm' is already imported (%s); install_as_tvm would shadow it"
                           % getattr(current, "__file__", "?"))
    for sub in ("contrib.graph_executor", "contrib.debugger.debug_executor", "contrib.debugger.debug_result"):
        importlib.import_module(__name__ + "." + sub)
    for name, mod in list(sys.modules.items()):
        if name == __name__ or name.startswith(__name__ + "."):
            sys.modules["tvm" + name[len(__name__):]] = mod
    # TVM v0.22+ code also imports the tvm_ffi package its runtime stands on.
    if "tvm_ffi" not in sys.modules:
        sys.modules["tvm_ffi"] = sys.modules[__name__ + ".tvm_ffi"]


def version():
    """graphrt's version string (from the loaded library)."""
    from . import _lib
    v = _lib.lib().graphrt_version()
    return _lib.py_str(v)


def set_num_threads(n):
    """Thread-pool size for parallel kernels (n <= 0: TVM_NUM_THREADS / cores)."""
    from . import _lib
    _lib.call("graphrt_set_num_threads", int(n))


def get_num_threads():
    import ctypes
    from . import _lib
    out = ctypes.c_int(0)
    _lib.call("graphrt_get_num_threads", ctypes.byref(out))
    return out.value


__all__ = ["GraphrtError", "GraphrtTypeError", "FunctionNotFoundError", "InvalidArgumentError", "NotFoundError",
           "NameNotFoundError", "MissingFileError", "OutOfRangeError", "UnsupportedError", "ResourceExhaustedError",
           "DeviceError", "RunInterruptedError", "TypeMismatchError", "FailedPreconditionError", "InternalError",
           "error", "Device", "cpu", "cuda", "gpu", "device",
           "Module", "Function", "NDArray", "nd", "from_dlpack", "load_module", "load_module_from_memory", "get_global_func",
           "list_global_func_names", "graph_executor", "save_param_dict", "load_param_dict", "version",
           "set_num_threads", "get_num_threads", "find_library", "library_path", "runtime", "contrib", "TVMError",
           "PackedFunc", "BenchmarkResult", "install_as_tvm", "LanguageModel"]
