"""TVM's ShapeTuple (tvm.runtime.ShapeTuple): the shape value a Relax function takes or returns
(R.Shape), a sequence of ints, read through the C API's graphrt_value_shape_* (graphrt/value.h)."""
import ctypes

from . import _lib
from .module import Object, get_global_func, register_object_converter

__all__ = ["ShapeTuple"]

_TYPE_KEY = "runtime.ShapeTuple"


class ShapeTuple(Object):
    """A shape: ShapeTuple([1, 784]); len, indexing, iteration, and == with a list or tuple."""

    __slots__ = ()
    _make = None

    def __init__(self, shape):
        if ShapeTuple._make is None:
            ShapeTuple._make = get_global_func("runtime.ShapeTuple")  # TVM's constructor
        made = ShapeTuple._make(*[int(d) for d in shape])
        super().__init__(None)
        self.handle, made.handle = made.handle, None

    def _dims(self):
        rank, dims = ctypes.c_int(0), ctypes.POINTER(ctypes.c_int64)()
        h = self._h()
        _lib.call("graphrt_value_shape_rank", h, ctypes.byref(rank))
        _lib.call("graphrt_value_shape_dims", h, ctypes.byref(dims))
        return [dims[k] for k in range(rank.value)]

    @classmethod
    def _adopt(cls, obj):
        s = cls.__new__(cls)
        s.handle, obj.handle = obj.handle, None
        return s

    def __len__(self):
        rank = ctypes.c_int(0)
        _lib.call("graphrt_value_shape_rank", self._h(), ctypes.byref(rank))
        return rank.value

    def __getitem__(self, i):
        dims = self._dims()
        if isinstance(i, slice):
            return dims[i]
        n = len(dims)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("ShapeTuple index %d out of range (length %d)" % (i, n))
        return dims[i]

    def __iter__(self):
        return iter(self._dims())

    def __eq__(self, other):
        if isinstance(other, (ShapeTuple, list, tuple)):
            return list(self) == list(other)
        return NotImplemented

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = None

    def __repr__(self):
        return "ShapeTuple(%s)" % list(self)


register_object_converter(_TYPE_KEY, ShapeTuple._adopt)
