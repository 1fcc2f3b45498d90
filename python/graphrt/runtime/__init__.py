"""graphrt.runtime: the names of tvm.runtime that deploy code uses, so `import graphrt as tvm`
serves `tvm.runtime.load_module(...)`, `tvm.runtime.save_param_dict(...)` and the like."""
import sys

from .._lib import GraphrtError as TVMError
from ..device import Device, device, cpu, cuda, gpu, opencl, cl, vulkan, metal, mtl, vpi, rocm, ext_dev
from ..module import (Module, Function, Object, Array, BenchmarkResult, load_module, enabled, num_threads,
                      get_global_func)
from ..ndarray import NDArray
from ..shape_tuple import ShapeTuple
from ..executable import Executable
from ..data_type import DataType
from ..error import InvalidArgumentError
from .._lib import GraphrtTypeError
from ..params import save_param_dict, load_param_dict, save_param_dict_to_file, load_param_dict_from_file
from .. import ndarray, module, params, relax_vm

PackedFunc = Function
Shape = ShapeTuple  # TVM v0.22+'s name
# TVM v0.22+ names: Tensor is the array type, tvm.runtime.vm the Relax VM module.
Tensor = NDArray
vm = relax_vm


def tensor(source, device=None, dtype=None):
    """A new tensor holding a copy of `source` (numpy array, list, Tensor) on `device` (the CPU when
    None): TVM v0.22+'s tvm.runtime.tensor, what tvm.nd.array was."""
    return ndarray.array(source, device, dtype)


def empty(shape, dtype="float32", device=None, mem_scope=None):
    """An uninitialised tensor (TVM v0.22+'s tvm.runtime.empty). Only the global memory scope exists
    here: another `mem_scope` ("global.texture", ...) is refused by name."""
    if mem_scope not in (None, "global"):
        raise InvalidArgumentError("tvm.runtime.empty: memory scope '%s' is not supported by graphrt (only 'global')"
                                   % mem_scope)
    return ndarray.empty(shape, dtype, device)


def from_dlpack(ext_tensor, require_alignment=0, require_contiguous=True):
    """A tensor sharing memory with a DLPack producer (numpy, PyTorch, a capsule): TVM v0.22+'s
    tvm.runtime.from_dlpack. graphrt's kernels need compact rows: a strided producer is refused."""
    del require_alignment, require_contiguous  # graphrt always checks both when a kernel reads it
    return ndarray.from_dlpack(ext_tensor)


def convert(value):
    """Python values as the runtime's (TVM's tvm.runtime.convert): a list or tuple becomes an Array
    (items converted in turn), a numpy array a tensor; ints, floats, strings, tensors and runtime
    objects pass as they are (graphrt's calls take them directly)."""
    if isinstance(value, (list, tuple)):
        return get_global_func("runtime.Array")(*[convert(v) for v in value])
    if type(value).__module__ == "numpy" and hasattr(value, "shape") and value.shape != ():
        return tensor(value)
    if isinstance(value, dict):
        raise GraphrtTypeError("tvm.runtime.convert: maps are not provided by graphrt's runtime; pass the values "
                               "as separate arguments or an Array")
    return value


def system_lib(symbol_prefix=""):
    """The module of kernels linked into the running program (TVM's runtime.system_lib)."""
    return get_global_func("runtime.SystemLib")(symbol_prefix)


# `import tvm.runtime.ndarray` and friends name the same modules as the attributes.
for _name, _mod in (("ndarray", ndarray), ("module", module), ("params", params), ("relax_vm", relax_vm),
                    ("vm", relax_vm)):
    sys.modules.setdefault(__name__ + "." + _name, _mod)
del _name, _mod

__all__ = ["TVMError", "Device", "device", "cpu", "cuda", "gpu", "opencl", "cl", "vulkan", "metal", "mtl", "vpi",
           "rocm", "ext_dev", "Module", "PackedFunc", "Object", "Array", "BenchmarkResult", "NDArray", "ShapeTuple", "Executable", "load_module",
           "enabled", "num_threads", "system_lib", "save_param_dict", "load_param_dict", "save_param_dict_to_file",
           "load_param_dict_from_file", "ndarray", "module", "params", "relax_vm", "vm", "Tensor", "tensor", "empty",
           "from_dlpack", "convert", "DataType", "Shape"]


def __getattr__(name):
    # A TVM name graphrt does not provide: say so by name, and what is here instead.
    if name.startswith("__"):
        raise AttributeError(name)
    raise AttributeError("module 'tvm.runtime' (graphrt) has no attribute '%s': graphrt provides the deploy-time "
                         "names of tvm.runtime (%s); compiler-side APIs are TVM's own" % (name, ", ".join(sorted(__all__))))
