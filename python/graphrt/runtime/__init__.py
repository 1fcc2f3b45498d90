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
from ..params import save_param_dict, load_param_dict, save_param_dict_to_file, load_param_dict_from_file
from .. import ndarray, module, params, relax_vm

PackedFunc = Function
# TVM v0.22+ names: Tensor is the array type, tvm.runtime.vm the Relax VM module.
Tensor = NDArray
vm = relax_vm


def tensor(source, device=None, dtype=None):
    """A new tensor holding a copy of `source` (numpy array, list, Tensor) on `device` (the CPU when
    None): TVM v0.22+'s tvm.runtime.tensor, what tvm.nd.array was."""
    return ndarray.array(source, device, dtype)


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
           "load_param_dict_from_file", "ndarray", "module", "params", "relax_vm", "vm", "Tensor", "tensor"]
