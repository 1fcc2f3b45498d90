"""graphrt's IREE-style VM from Python, through the C API's global functions.

    import graphrt
    m = graphrt.vm.load("prog.vmasm")            # or .vmbc; more modules may follow
    m["add"](1, 2)                                # -> 3
    image = graphrt.vm.assemble(text)             # .vmasm text -> verified .vmbc bytes
    graphrt.vm.disassemble(image)                 # -> text; graphrt.vm.verify(image) checks only
    c = graphrt.vm.link("lib.so@create", "prog.vmbc")  # modules of any kind in one context
    c["sample.scaled_add"](1, 2); graphrt.vm.signature(c, "add")  # -> "0ii_i"
    m["split"]([1, 2, 3])                         # a list in; several results come back as a tuple
    graphrt.vm.interrupt(m)                       # from another thread: stops the running call
    graphrt.vm.set_instruction_budget(10**6)      # for modules loaded afterwards

Arguments are converted by the function's signature (int -> i32/i64, float or int -> f32/f64,
NDArray / numpy array -> tensor, bytes -> buffer, List / list / tuple -> vm.list, None -> null).
A function returns None, its one result (int, float, NDArray copy of a tensor, bytes of a
buffer, List), or a tuple of its results when it has several.

A Python list becomes a vm.list with elements typed i64 (ints), f64 (floats) and refs (the rest,
nested lists included); List(items, types="iIfFr...") picks the element types (one letter per
item, or one letter for all), e.g. List([1, 2], "i") for bytecode that reads with list.get.i32.
"""
import os

from . import error as _error
from .module import Function, Module, Object, get_global_func, register_object_converter

try:
    import numpy as np
except ImportError:
    np = None

_LIST_KEY = "graphrt.vm.List"
_RESULTS_KEY = "graphrt.vm.Results"


def _letter(item):
    if isinstance(item, bool) or isinstance(item, int) or (np is not None and isinstance(item, np.integer)):
        return "I"
    if isinstance(item, float) or (np is not None and isinstance(item, np.floating)):
        return "F"
    return "r"


def _to_vm(value):
    """A Python list/tuple argument as a List; anything else unchanged."""
    if isinstance(value, (list, tuple)):
        return List(value)
    return value


class List(Object):
    """A VM list (vm.list): len(), indexing and iteration give ints, floats, NDArrays (copies),
    bytes, Lists and None; tolist() converts nested lists too. Passed back into a VM function it
    is the same list (the VM may have changed it)."""

    __slots__ = ()

    def __init__(self, items=(), types=None):
        items = [_to_vm(x) for x in items]
        if types is None:
            types = "".join(_letter(x) for x in items)
        elif len(types) == 1:
            types = types * len(items)
        made = get_global_func("graphrt.vm.list")(types, *items)
        super().__init__(None)
        self.handle, made.handle = made.handle, None

    @classmethod
    def _adopt(cls, obj):
        out = cls.__new__(cls)
        Object.__init__(out, None)
        out.handle, obj.handle = obj.handle, None
        return out

    def __len__(self):
        return get_global_func("graphrt.vm.list_size")(self)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        n = len(self)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("vm.list index out of range")
        return get_global_func("graphrt.vm.list_get")(self, index)

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    @property
    def types(self):
        """The elements' cconv letters: i i32, I i64, f f32, F f64, r ref."""
        return get_global_func("graphrt.vm.list_types")(self)

    def tolist(self):
        return [x.tolist() if isinstance(x, List) else x for x in self]

    def __repr__(self):
        if self.handle is None or not self.handle.value:
            return "<graphrt.vm.List (freed)>"
        return "graphrt.vm.List(%r, types=%r)" % (self.tolist(), self.types)


# Every function returns VM lists as Lists and several results as a tuple.
register_object_converter(_LIST_KEY, List._adopt)
register_object_converter(_RESULTS_KEY, lambda obj: tuple(List._adopt(obj)))


class VMFunction(Function):
    """A VM function: Python lists and tuples become Lists. (Every function returns VM lists
    as Lists and several results as tuples.)"""

    __slots__ = ()

    def __call__(self, *args):
        return super().__call__(*[_to_vm(a) for a in args])


class VMModule(Module):
    """A module made by graphrt.vm.load or graphrt.vm.link; its functions are VMFunctions."""

    __slots__ = ()

    def get_function(self, name, query_imports=False):
        f = super().get_function(name, query_imports)
        out = VMFunction(f.handle, name)
        f.handle = None
        return out


def load(path, *modules):
    """Loads a .vmbc or .vmasm file as a module. `modules` ("lib.so@create?k=v", .vmbc, .vmasm)
    are linked before it, in order; dependencies the program declares with a source are
    loaded relative to its directory."""
    paths = [os.fspath(p) for p in (path,) + modules]
    try:
        m = get_global_func("graphrt.vm.load")(*paths)
    except _error.NotFoundError as e:
        # A library module is named "lib.so@create?k=v": its file is the part before '@'.
        missing = [p for p in paths if not os.path.lexists(p.split("@", 1)[0])]
        if missing:
            raise _error.error_for_kind(_error.NOT_FOUND, str(e), missing[0]) from None
        raise
    out = VMModule(m.handle)
    m.handle = None
    return out


def assemble(text):
    """VM assembly text (.vmasm) as a verified .vmbc image (bytes); errors name the line."""
    return get_global_func("graphrt.vm.assemble")(text)


def verify(bytecode):
    """Raises what a load would refuse the .vmbc image `bytecode` for."""
    get_global_func("graphrt.vm.verify")(bytes(bytecode))


def disassemble(bytecode):
    """A verified .vmbc image as text that assembles back to the same bytes."""
    return get_global_func("graphrt.vm.disassemble")(bytes(bytecode))


def link(*modules):
    """Links modules (.vmbc, .vmasm, "lib.so@create?k=v") in order into one context, each after
    the dependencies it declares; functions are any module's by full name ("mod.fn") and the last
    module's by plain name."""
    m = get_global_func("graphrt.vm.link")(*[os.fspath(p) for p in modules])
    out = VMModule(m.handle)
    m.handle = None
    return out


def signature(module, function):
    """The cconv signature `function` (plain or "mod.fn") was declared with, e.g. "0ii_i"."""
    return get_global_func("graphrt.vm.signature")(module, function)


def interrupt(module):
    """Thread-safe: stops the VM calls running now in `module`'s tree (a VM module or a
    library whose graph nodes call VM functions) with "VM invocation interrupted"."""
    get_global_func("graphrt.vm.interrupt")(module)


def set_instruction_budget(n):
    """Branches + calls one VM call may execute, for modules loaded after this (default:
    GRAPHRT_VM_BUDGET or 100000000)."""
    get_global_func("graphrt.vm.set_instruction_budget")(int(n))


__all__ = ["load", "link", "assemble", "verify", "disassemble", "signature", "interrupt", "set_instruction_budget", "List", "VMModule", "VMFunction"]
