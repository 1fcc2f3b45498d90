"""graphrt.tvm_ffi: the names of the tvm_ffi package (TVM v0.22+'s runtime foundation) that deploy
code touches, so `import tvm_ffi` after graphrt.install_as_tvm() (or `from graphrt import tvm_ffi`)
serves `tvm_ffi.from_dlpack(...)`, `tvm_ffi.get_global_func(...)`, `tvm_ffi.register_global_func(...)`."""
from .device import Device, device, cpu, cuda
from .module import Module, Function, Array, load_module, get_global_func
from .ndarray import NDArray as Tensor, from_dlpack
from .python_function import register_func as register_global_func
from .shape_tuple import ShapeTuple as Shape


def tensor(source, device=None, dtype=None):
    """A new tensor holding a copy of `source` (numpy array, list, Tensor) on `device` (CPU when None)."""
    from .ndarray import array
    return array(source, device, dtype)


__all__ = ["Device", "device", "cpu", "cuda", "Module", "Function", "Array", "load_module", "get_global_func",
           "Tensor", "from_dlpack", "register_global_func", "Shape", "tensor"]
