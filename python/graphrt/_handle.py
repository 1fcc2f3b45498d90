"""A Python object's native handle as a plain int, and the references Python let go of that the
next call frees.

`Handle._addr` is the handle's address (absent once the object is freed) and `_code` its type
code, so a call writes both into its block with no conversion and no test of the class:
ctypes' c_void_p costs an object per handle made and an attribute call per handle read.
`handle` stays as the c_void_p view others expect (None when freed).

An array or object dropped by Python (its `__del__`) is not freed by a foreign call of its own:
its address waits in DROPPED_ARRAYS / DROPPED_OBJECTS, and the next graphrt_function_call_block
drops it in C before its function runs (graphrt/c_api.h, the block's `num_free`), so a loop of
`out = f(x)` makes one foreign call per call, not two. At most MAX_DROPPED wait (a program that
drops many at once frees the rest at once, as before), `flush()` frees them now, and so does
interpreter exit. Lists are appended and popped under the GIL, so any thread may drop and any
thread's next call frees.
"""
import atexit
import ctypes

_c_void_p = ctypes.c_void_p

# Addresses of arrays (TVMArrayHandle) and objects (TVMObjectHandle) Python dropped, each holding
# the one reference its Python object held.
DROPPED_ARRAYS = []
DROPPED_OBJECTS = []
# Drops that wait at most: they keep their memory until the next call (the VM's pooled storage
# among it), so only the last few results wait.
MAX_DROPPED = 8

_free = []  # [TVMArrayFree, TVMObjectFree] holding the GIL, set by set_free_functions


def set_free_functions(array_free, object_free):
    """The C functions that free now (_lib's GIL-holding TVMArrayFree and TVMObjectFree)."""
    _free[:] = [array_free, object_free]


class Handle:
    """Base of the classes whose objects hold one native handle (NDArray, Object, Function,
    Module). `_code` is the handle's type code (the class's _graphrt_type_code, kept per object
    because a slot read is what the interpreter specialises: a call reads both per argument and
    tells no class)."""

    __slots__ = ("_addr", "_code")

    @property
    def handle(self):
        """The handle as a ctypes.c_void_p, None once freed."""
        try:
            return _c_void_p(self._addr)
        except AttributeError:
            return None

    @handle.setter
    def handle(self, h):
        if h is not None and not isinstance(h, int):
            h = h.value  # a c_void_p
        if h:
            self._addr = h
            code = getattr(type(self), "_graphrt_type_code", None)
            if code is not None:
                self._code = code
        else:
            try:
                del self._addr
            except AttributeError:
                pass


def drop_array(addr):
    """Frees array handle `addr` in the next call, or now when MAX_DROPPED already wait."""
    if len(DROPPED_ARRAYS) < MAX_DROPPED:
        DROPPED_ARRAYS.append(addr)
    elif _free:
        _free[0](addr)


def drop_object(addr):
    """Frees object handle `addr` in the next call, or now when MAX_DROPPED already wait."""
    if len(DROPPED_OBJECTS) < MAX_DROPPED:
        DROPPED_OBJECTS.append(addr)
    elif _free:
        _free[1](addr)


def take_dropped(limit):
    """Up to `limit` waiting drops as (addresses, type codes), removed from the lists, for a
    block's frees (arrays code 13, objects code 8)."""
    values, codes = [], []
    for dropped, code in ((DROPPED_ARRAYS, 13), (DROPPED_OBJECTS, 8)):
        while dropped and len(values) < limit:
            try:
                values.append(dropped.pop())
            except IndexError:  # another thread took the last one
                break
            codes.append(code)
    return values, codes


def flush():
    """Frees every waiting drop now."""
    if not _free:
        return
    for dropped, free in ((DROPPED_ARRAYS, _free[0]), (DROPPED_OBJECTS, _free[1])):
        while dropped:
            try:
                addr = dropped.pop()
            except IndexError:
                break
            free(addr)


atexit.register(flush)
