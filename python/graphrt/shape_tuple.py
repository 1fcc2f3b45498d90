"""TVM's ShapeTuple (tvm.runtime.ShapeTuple): the shape value a Relax function takes or returns
(R.Shape), a sequence of ints."""
from .module import Object, get_global_func, register_object_converter

__all__ = ["ShapeTuple"]

_TYPE_KEY = "runtime.ShapeTuple"


class ShapeTuple(Object):
    """A shape: ShapeTuple([1, 784]); len, indexing, iteration, and == with a list or tuple."""

    __slots__ = ()
    _functions = None

    def __init__(self, shape):
        made = self._calls()[0](*[int(d) for d in shape])
        super().__init__(None)
        self.handle, made.handle = made.handle, None

    @classmethod
    def _calls(cls):
        if cls._functions is None:
            cls._functions = tuple(get_global_func(n) for n in
                                   ("runtime.ShapeTuple", "runtime.GetShapeTupleSize", "runtime.GetShapeTupleElem"))
        return cls._functions

    @classmethod
    def _adopt(cls, obj):
        s = cls.__new__(cls)
        s.handle, obj.handle = obj.handle, None
        return s

    def __len__(self):
        return self._calls()[1](self)

    def __getitem__(self, i):
        n = len(self)
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(n))]
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("ShapeTuple index %d out of range (length %d)" % (i, n))
        return self._calls()[2](self, i)

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

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
