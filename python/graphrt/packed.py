"""TVM's calling convention in Python: Python values to and from TVMValue and type codes, the
handles that cross it (Function, Module, Object, Array), global functions, and Python callables
as packed functions (graphrt calls back into them). Every layer of the package that calls into
libgraphrt stands on this one; it imports none of them.
"""
import ctypes
import operator
import struct
import threading
import time

from . import _lib
from . import _call_block
from . import _handle
from . import _raised
from ._lib import GraphrtError, GraphrtTypeError, FunctionNotFoundError, TVMValue
from .benchmark import BenchmarkResult
from .device import Device
from .ndarray import NDArray, dtype_to_str
from . import ndarray as nd
from . import error as _error

try:
    import numpy as np
except ImportError:
    np = None

_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


_DROPPED_OBJECTS = _handle.DROPPED_OBJECTS
_DROPPED_ARRAYS = _handle.DROPPED_ARRAYS
_MAX_DROPPED = _handle.MAX_DROPPED


class Object(_handle.Handle):
    """An opaque graphrt object returned by a function (freed with TVMObjectFree)."""

    __slots__ = ()
    _graphrt_type_code = _lib.kObjectHandle  # how Function.__call__ passes it

    def __init__(self, handle):
        self.handle = handle  # an int, a c_void_p or None: kept as the int _addr (_handle.Handle)

    def __del__(self):
        # Freed by the next call's block (_handle), as NDArray's; drop_object inlined.
        try:
            if len(_DROPPED_OBJECTS) < _MAX_DROPPED:
                _DROPPED_OBJECTS.append(self._addr)
            else:
                _lib.OBJECT_FREE(self._addr)
        except Exception:  # freed or handed over already (no _addr), or interpreter shutdown
            pass

    def _h(self):
        try:
            return ctypes.c_void_p(self._addr)
        except AttributeError:
            raise _error.FailedPreconditionError("object has been freed") from None

    @property
    def type_key(self):
        """The object's type key ("graphrt.vm.List", ...)."""
        index = ctypes.c_uint(0)
        _lib.call("TVMObjectGetTypeIndex", self._h(), ctypes.byref(index))
        key = ctypes.c_char_p()
        _lib.call("TVMObjectTypeIndex2Key", index, ctypes.byref(key))
        return _lib.py_str(key.value)


# Returned objects of a type key that a layer above this one gives a Python type of its own
# (graphrt.vm: "graphrt.vm.List" -> List, "graphrt.vm.Results" -> a tuple). The layer registers
# its converter when it is imported; this module imports no such layer.
_object_converters = {}


def register_object_converter(type_key, convert):
    """Makes functions return `convert(obj)` for an Object of `type_key`; `convert` takes over the
    object's reference (or leaves it to the Object)."""
    _object_converters[type_key] = convert


def _convert_object(obj):
    convert = _object_converters.get(obj.type_key) if _object_converters else None
    return convert(obj) if convert is not None else obj


class Array(Object):
    """TVM's runtime Array, what a Relax function returns for a tuple: a sequence (len, indexing,
    iteration) whose items (NDArrays, nested Arrays, ...) are read when asked for, as TVM's are,
    through the C API's graphrt_value_tuple_* (graphrt/value.h)."""

    __slots__ = ()
    _type_index = None
    _get_type_index = None

    @classmethod
    def _setup(cls):
        """Array's type index and the functions its methods call (once)."""
        if cls._type_index is None:
            index = ctypes.c_uint(0)
            _lib.call("TVMObjectTypeKey2Index", _lib.c_str("Array"), ctypes.byref(index))
            cls._get_type_index = _lib.OBJECT_TYPE_INDEX
            cls._type_index = index.value
        return cls._type_index

    @classmethod
    def _is_array(cls, handle):
        cls._setup()
        index = ctypes.c_uint(0)
        _lib.check(cls._get_type_index(ctypes.c_void_p(handle), ctypes.byref(index)))
        return index.value == cls._type_index

    def __len__(self):
        return tuple_size(self._h())

    def __getitem__(self, i):
        n = len(self)
        if isinstance(i, slice):
            return tuple(self[k] for k in range(*i.indices(n)))
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("Array index %d out of range (length %d)" % (i, n))
        return tuple_item(self._h(), i)

    def __iter__(self):
        # One size query, then the items (a VM result unpacked as `logits, cache = vm["decode"](...)`).
        h = self._h()
        for i in range(tuple_size(h)):
            yield tuple_item(h, i)

    def __repr__(self):
        return "Array(%s)" % ", ".join(repr(x) for x in self)


_TUPLE_CALLS = []  # graphrt_value_tuple_size, _item: looked up once (a result is unpacked item by item)


def _tuple_calls():
    if not _TUPLE_CALLS:
        lib = _lib.lib()
        _TUPLE_CALLS.extend((lib.graphrt_value_tuple_size, lib.graphrt_value_tuple_item))
    return _TUPLE_CALLS


def tuple_size(handle):
    """The item count of a tuple (an Array) object handle."""
    n = ctypes.c_int64(0)
    _lib.check(_tuple_calls()[0](handle, _byref(n)))
    return n.value


def tuple_item(handle, i):
    """Item `i` of a tuple object handle, as a Python value (its reference passes to Python)."""
    value, code = TVMValue(), ctypes.c_int(0)
    _lib.check(_tuple_calls()[1](handle, i, _byref(value), _byref(code)))
    return _return_value(value, code.value)


def _handle_putter(code):
    def put(value, values, codes, i, keep):
        values[i].v_handle = value._h()
        codes[i] = code
    return put


def _put_int(value, values, codes, i, keep):
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise GraphrtError("integer argument %d does not fit in int64" % value)
    values[i].v_int64 = value
    codes[i] = _lib.kInt


def _put_float(value, values, codes, i, keep):
    values[i].v_float64 = value
    codes[i] = _lib.kFloat


# The converter of each exact class seen before (handles, ints, floats): a call such as a KV-cache
# step (an object and two shapes) converts without walking the isinstance chain below.
_PUT_BY_CLASS = {int: _put_int, float: _put_float}


def _put_arg(value, values, codes, i, keep):
    """Converts one Python value into values[i]/codes[i]; `keep` holds temporaries alive."""
    put = _PUT_BY_CLASS.get(value.__class__)
    if put is not None:
        return put(value, values, codes, i, keep)
    if value is None:
        values[i].v_handle = None
        codes[i] = _lib.kNull
    elif isinstance(value, bool):
        values[i].v_int64 = int(value)
        codes[i] = _lib.kInt
    elif isinstance(value, int):
        if not _INT64_MIN <= value <= _INT64_MAX:
            raise GraphrtError("integer argument %d does not fit in int64" % value)
        values[i].v_int64 = value
        codes[i] = _lib.kInt
    elif isinstance(value, float):
        values[i].v_float64 = value
        codes[i] = _lib.kFloat
    elif isinstance(value, str):
        b = value.encode("utf-8")
        keep.append(b)
        values[i].v_str = b
        codes[i] = _lib.kStr
    elif isinstance(value, (bytes, bytearray, memoryview)):
        b = bytes(value)
        buf = ctypes.create_string_buffer(b, len(b))
        arr = _lib.TVMByteArray(ctypes.cast(buf, ctypes.c_void_p), len(b))
        keep.extend([buf, arr])
        values[i].v_handle = ctypes.cast(ctypes.pointer(arr), ctypes.c_void_p)
        codes[i] = _lib.kBytes
    elif isinstance(value, NDArray):
        values[i].v_handle = value._h()
        codes[i] = _lib.kNDArrayHandle
        _PUT_BY_CLASS[value.__class__] = _handle_putter(_lib.kNDArrayHandle)
    elif isinstance(value, _lib.DLTensor):
        values[i].v_handle = ctypes.addressof(value)
        codes[i] = _lib.kDLTensorHandle
    elif isinstance(value, Module):
        values[i].v_handle = value._h()
        codes[i] = _lib.kModuleHandle
        _PUT_BY_CLASS[value.__class__] = _handle_putter(_lib.kModuleHandle)
    elif isinstance(value, Function):
        values[i].v_handle = value._h()
        codes[i] = _lib.kFuncHandle
        _PUT_BY_CLASS[value.__class__] = _handle_putter(_lib.kFuncHandle)
    elif isinstance(value, Device):
        values[i].v_device = value._as_c()
        codes[i] = _lib.kDevice
    elif isinstance(value, Object):
        values[i].v_handle = value._h()
        codes[i] = _lib.kObjectHandle
        _PUT_BY_CLASS[value.__class__] = _handle_putter(_lib.kObjectHandle)
    elif np is not None and isinstance(value, np.ndarray):
        tmp = nd.array(value)
        keep.append(tmp)
        values[i].v_handle = tmp._h()
        codes[i] = _lib.kNDArrayHandle
    elif np is not None and isinstance(value, np.integer):
        _put_arg(int(value), values, codes, i, keep)
    elif np is not None and isinstance(value, np.floating):
        _put_arg(float(value), values, codes, i, keep)
    elif isinstance(value, (list, tuple)):  # TVM's Array, as TVM's front end converts them
        array = get_global_func("runtime.Array")(*value)
        keep.append(array)
        values[i].v_handle = array._h()
        codes[i] = _lib.kObjectHandle
    elif callable(value):  # a Python function: graphrt calls back into it
        f = function_from_python(value)
        keep.append(f)
        values[i].v_handle = f._h()
        codes[i] = _lib.kFuncHandle
    else:
        raise GraphrtTypeError("cannot pass a %s to a graphrt function (argument %d)" % (type(value).__name__, i))


def _object_result(handle):
    """The Python value of a returned object handle (its reference passes to Python)."""
    if Array._is_array(handle):  # a Relax tuple (TVM's Array), read lazily as TVM's is
        return Array(handle)
    return _convert_object(Object(handle))


def _return_value(value, code):
    """Converts a returned TVMValue (ownership of objects passes to Python)."""
    if code in (_lib.kNull,):
        return None
    if code == _lib.kInt:
        return value.v_int64
    if code == _lib.kBool:
        return bool(value.v_int64)
    if code == _lib.kFloat:
        return value.v_float64
    if code == _lib.kStr:
        return _lib.py_str(value.v_str)
    if code == _lib.kBytes:
        if not value.v_handle:
            return b""
        ba = ctypes.cast(value.v_handle, ctypes.POINTER(_lib.TVMByteArray)).contents
        return ctypes.string_at(ba.data, ba.size) if ba.size else b""
    if code == _lib.kNDArrayHandle:
        return NDArray._adopt(value.v_handle) if value.v_handle else NDArray(None)
    if code == _lib.kModuleHandle:
        return Module(ctypes.c_void_p(value.v_handle))
    if code == _lib.kFuncHandle:
        return Function(ctypes.c_void_p(value.v_handle))
    if code == _lib.kDevice:
        return Device(value.v_device.device_type, value.v_device.device_id)
    if code == _lib.kDataType:
        return dtype_to_str(value.v_type)
    if code == _lib.kObjectHandle:
        return _object_result(value.v_handle)
    if code in (_lib.kHandle, _lib.kDLTensorHandle):
        return value.v_handle
    raise _error.UnsupportedError("function returned a value of unsupported type code %d" % code)


class _OwnedHandle(_handle.Handle):
    """A C handle that carries one reference, dropped by free() or at collection (at once: modules
    and functions are not dropped per call)."""

    __slots__ = ("__weakref__",)
    _free_function = None  # name of the C API call that drops the reference

    def __init__(self, handle):
        self.handle = handle  # an int, a c_void_p or None: kept as the int _addr (_handle.Handle)

    def __del__(self):
        try:
            self.free()
        except Exception:
            pass

    def free(self):
        try:
            a = self._addr
        except AttributeError:
            return
        del self._addr
        if _lib._LIB is not None:
            getattr(_lib._LIB, self._free_function)(ctypes.c_void_p(a))

    def _h(self):
        try:
            return ctypes.c_void_p(self._addr)
        except AttributeError:
            raise _error.FailedPreconditionError("%s has been freed" % self._describe()) from None

    def _describe(self):
        return "object"


_SHORT = _lib._SHORT
_byref = ctypes.byref
_now_ns = time.perf_counter_ns
_FUNC_CALL = []

# A function whose last call returned within this time is called with the GIL held, as numpy and
# hashlib keep it for small inputs. Releasing it lets another Python thread run while the call
# runs; with several threads calling microsecond functions (several executors, each run from its
# own thread) each release hands the interpreter to a thread that must first be woken, and the
# handovers cost more than the calls. A held call that takes longer than this releases the GIL
# from the next call on; a released call that returns within it holds it from the next call on
# (the call's own time, measured by graphrt_function_call_block).
HOLD_GIL_BELOW_NS = 20_000

# What a value passed to a function is, read without a Python loop (operator.attrgetter is C):
# the classes whose instances cross as handles carry their address (_handle.Handle, absent once
# freed) and their type code, and a value without them (an int, a str, a numpy array, ...) takes
# the general conversion.
_ADDR = operator.attrgetter("_addr")
_CODE = operator.attrgetter("_code")
_BLOCKS = _call_block.FREE
_RESULT = _call_block.RESULT.unpack_from
_RESULT_AT = _call_block.RESULT_AT
_CALL_BLOCK = []  # [graphrt_function_call_block releasing the GIL, the same holding it]
_ARRAY_TYPE_INDEX = []


def _new_block():
    if not _CALL_BLOCK:
        _ARRAY_TYPE_INDEX.append(Array._setup())
        _CALL_BLOCK.extend([_lib.unconverted("graphrt_function_call_block"), _lib.CALL_BLOCK_HELD])
    return _call_block.new()


def _block_result(entry, code, value, type_index):
    """The Python value of a call's result other than an array (ownership of objects passes to
    Python); returns the block to the free list."""
    if code == _lib.kObjectHandle:
        _BLOCKS.append(entry)
        if type_index == _ARRAY_TYPE_INDEX[0] and value:  # a Relax tuple (TVM's Array), read lazily as TVM's is
            a = _ARRAY_NEW(Array)
            a._addr = value
            a._code = _K_OBJECT
            return a
        return _convert_by_index(Object(value), type_index)
    if code == _lib.kNull:
        _BLOCKS.append(entry)
        return None
    ret = _call_block.return_value(entry[0])  # copied before another call may take the block
    _BLOCKS.append(entry)
    return _return_value(ret, code)


# type index -> the registered converter of its type key, or None: a returned object's type key is
# asked for once per type (two foreign calls), not per result (a ShapeTuple made per decode step).
_CONVERTER_BY_INDEX = {}


def _convert_by_index(obj, type_index):
    try:
        convert = _CONVERTER_BY_INDEX[type_index]
    except KeyError:
        convert = _object_converters.get(obj.type_key)
        if convert is None:  # a layer may register its converter later: ask again then
            return obj
        _CONVERTER_BY_INDEX[type_index] = convert
    return convert(obj)


def _give_back(values, codes):
    """Drops taken for a block that was not called wait again."""
    for v, c in zip(values, codes):
        (_DROPPED_ARRAYS if c == _K_NDARRAY else _DROPPED_OBJECTS).append(v)


_ND = NDArray
_ND_NEW = NDArray.__new__
_ARRAY_NEW = Array.__new__
_K_NDARRAY = _lib.kNDArrayHandle
_K_OBJECT = _lib.kObjectHandle
_TAKE_DROPPED = _handle.take_dropped
# _PACK[n][m](block, 0, *n argument values, *m handles to free, *n + m type codes, function, n, m)
_PACK = [[p.pack_into for p in row] for row in _call_block.PACK]
_PACK_INTS = [[p.pack_into for p in row] for row in _call_block.PACK_INTS]
_P1, _P2, _P3, _P4, _P5 = _PACK[1], _PACK[2], _PACK[3], _PACK[4], _PACK[5]
_INT_CODES = [(_lib.kInt,) * k for k in range(_SHORT + 1)]


class Function(_OwnedHandle):
    """A packed function (TVM's PackedFunc), callable with Python values."""

    __slots__ = ("_name", "_hold_gil")
    _free_function = "TVMFuncFree"
    _graphrt_type_code = _lib.kFuncHandle

    def __init__(self, handle, name=None):
        super().__init__(handle)
        self._name = name
        self._hold_gil = False  # whether the last call was short (HOLD_GIL_BELOW_NS)

    def _describe(self):
        return "function '%s'" % self._name if self._name else "function"

    def __call__(self, *args):
        """One foreign call (graphrt_function_call_block) on a block from the free list. The
        arguments, and the arrays and objects Python dropped since the last call (_handle: the
        block frees them), are written into it by one pack_into: a model's call (1-5 NDArrays)
        reads each array's address by a slot read that the interpreter specialises and passes the
        type codes as constants; other handles (objects, functions, modules) and ints are read by
        C-level getters. Any other argument takes _call_converted. An array result is made with
        its address as an int; the block's result is read by one unpack_from."""
        n = len(args)
        if n > _SHORT:
            return self._call_converted(args, n)
        try:
            entry = _BLOCKS.pop()
        except IndexError:
            entry = _new_block()
        block = entry[0]
        # m handles to free: one (f, its code fc: the previous call's result, the usual case)
        # written as positional values, or several (fv, fc) taken by _handle.take_dropped.
        if _DROPPED_ARRAYS:
            if len(_DROPPED_ARRAYS) == 1 and not _DROPPED_OBJECTS:
                m, fc = 1, _K_NDARRAY
                try:
                    f = _DROPPED_ARRAYS.pop()
                except IndexError:  # another thread took it: a NULL, which the block skips
                    f = 0
            else:
                fv, fc = _TAKE_DROPPED(_SHORT - n)
                m = -1
        elif _DROPPED_OBJECTS:
            if len(_DROPPED_OBJECTS) == 1:
                m, fc = 1, _K_OBJECT
                try:
                    f = _DROPPED_OBJECTS.pop()
                except IndexError:
                    f = 0
            else:
                fv, fc = _TAKE_DROPPED(_SHORT - n)
                m = -1
        else:
            m = 0
        try:
            h = self._addr
            written = False
            # handles (any class: _addr and _code are slots of every handle object; anything
            # else, or a freed handle, raises AttributeError), unless the first argument is an int
            if n == 1:
                a, = args
                if type(a) is not int:
                    if m == 0:
                        _P1[0](block, 0, a._addr, a._code, h, 1, 0)
                    elif m == 1:
                        _P1[1](block, 0, a._addr, f, a._code, fc, h, 1, 1)
                    else:
                        _P1[len(fv)](block, 0, a._addr, *fv, a._code, *fc, h, 1, len(fv))
                    written = True
            elif n == 2:
                a, b = args
                if type(a) is not int:
                    if m == 0:
                        _P2[0](block, 0, a._addr, b._addr, a._code, b._code, h, 2, 0)
                    elif m == 1:
                        _P2[1](block, 0, a._addr, b._addr, f, a._code, b._code, fc, h, 2, 1)
                    else:
                        _P2[len(fv)](block, 0, a._addr, b._addr, *fv, a._code, b._code, *fc, h, 2, len(fv))
                    written = True
            elif n == 3:
                a, b, c = args
                if type(a) is not int:
                    if m == 0:
                        _P3[0](block, 0, a._addr, b._addr, c._addr, a._code, b._code, c._code, h, 3, 0)
                    elif m == 1:
                        _P3[1](block, 0, a._addr, b._addr, c._addr, f, a._code, b._code, c._code, fc, h, 3, 1)
                    else:
                        _P3[len(fv)](block, 0, a._addr, b._addr, c._addr, *fv, a._code, b._code, c._code, *fc, h, 3,
                                     len(fv))
                    written = True
            elif n == 4:
                a, b, c, d = args
                if type(a) is not int:
                    if m == 0:
                        _P4[0](block, 0, a._addr, b._addr, c._addr, d._addr, a._code, b._code, c._code, d._code,
                               h, 4, 0)
                    elif m == 1:
                        _P4[1](block, 0, a._addr, b._addr, c._addr, d._addr, f, a._code, b._code, c._code, d._code, fc,
                               h, 4, 1)
                    else:
                        _P4[len(fv)](block, 0, a._addr, b._addr, c._addr, d._addr, *fv, a._code, b._code, c._code,
                                     d._code, *fc, h, 4, len(fv))
                    written = True
            elif n == 5:
                a, b, c, d, e = args
                if type(a) is not int:
                    if m == 0:
                        _P5[0](block, 0, a._addr, b._addr, c._addr, d._addr, e._addr, a._code, b._code, c._code,
                               d._code, e._code, h, 5, 0)
                    elif m == 1:
                        _P5[1](block, 0, a._addr, b._addr, c._addr, d._addr, e._addr, f, a._code, b._code, c._code,
                               d._code, e._code, fc, h, 5, 1)
                    else:
                        _P5[len(fv)](block, 0, a._addr, b._addr, c._addr, d._addr, e._addr, *fv, a._code, b._code,
                                     c._code, d._code, e._code, *fc, h, 5, len(fv))
                    written = True
            if not written:  # not written above: other handles (objects, functions, modules), ints, 0 or 6-8 arguments
                if m == 1:
                    gv, gc = (f,), (fc,)
                elif m == 0:
                    gv = gc = ()
                else:
                    gv, gc = fv, fc
                k = len(gv)
                for a in args:
                    if type(a) is not int:
                        break
                else:  # ints only (a shape made per step): int64 values, out of range -> struct.error
                    _PACK_INTS[n][k](block, 0, *args, *gv, *_INT_CODES[n], *gc, h, n, k)
                    written = True
                if not written:  # handles, by their type codes (AttributeError for anything else)
                    _PACK[n][k](block, 0, *map(_ADDR, args), *gv, *map(_CODE, args), *gc, h, n, k)
        except (AttributeError, struct.error):  # not a handle, or a freed one: the general path says so
            _BLOCKS.append(entry)
            if m == 1:
                fv, fc = (f,), (fc,)
            if m:
                _give_back(fv, fc)
            return self._call_converted(args, len(args))
        # the call, inlined here as in _call_block (a Python frame less on every call)
        if self._hold_gil:
            rc = _CALL_BLOCK[1](entry[1])
        else:
            rc = _CALL_BLOCK[0](entry[1])
        value, code, type_index, elapsed = _RESULT(block, _RESULT_AT)
        self._hold_gil = elapsed < HOLD_GIL_BELOW_NS
        if code == 13 and rc == 0:  # the common result: an array, made as NDArray._adopt makes it
            _BLOCKS.append(entry)
            a = _ND_NEW(_ND)
            a._addr = value
            a._code = 13
            a._owned = True
            a._base = None
            return a
        if rc != 0:
            _BLOCKS.append(entry)
            raise _lib.last_exception()
        return _block_result(entry, code, value, type_index)

    def _call_block(self, entry):
        if self._hold_gil:
            rc = _CALL_BLOCK[1](entry[1])
        else:
            rc = _CALL_BLOCK[0](entry[1])
        value, code, type_index, elapsed = _RESULT(entry[0], _RESULT_AT)
        self._hold_gil = elapsed < HOLD_GIL_BELOW_NS
        if rc != 0:
            _BLOCKS.append(entry)
            raise _lib.last_exception()
        if code == _K_NDARRAY:
            _BLOCKS.append(entry)
            return NDArray._adopt(value)
        return _block_result(entry, code, value, type_index)

    def _call_converted(self, args, n):
        """Any arguments: each converted by _put_arg (into a block's arrays when they fit, the
        waiting drops after them)."""
        keep = []
        if n > _SHORT:
            return self._call_long(args, n, keep)
        try:
            entry = _BLOCKS.pop()
        except IndexError:
            entry = _new_block()
        block = entry[0]
        try:
            values, codes = block.values, block.codes
            for i, a in enumerate(args):
                _put_arg(a, values, codes, i, keep)
            block.c.function = self._h()
        except BaseException:
            _BLOCKS.append(entry)
            raise
        fv, fc = _TAKE_DROPPED(_SHORT - n)
        for i, (v, c) in enumerate(zip(fv, fc), n):
            values[i].v_handle = v
            codes[i] = c
        block.c.num_args = n
        block.c.num_free = len(fv)
        return self._call_block(entry)

    def _call_long(self, args, n, keep):
        values, codes = _lib.arg_arrays(n)
        for i, a in enumerate(args):
            _put_arg(a, values, codes, i, keep)
        ret = TVMValue()
        ret_code = ctypes.c_int(_lib.kNull)
        h = self._h()
        t = _now_ns()
        if not _FUNC_CALL:
            _FUNC_CALL.append(_lib.unconverted("TVMFuncCall"))
        rc = (_lib.FUNC_CALL_HELD if self._hold_gil else _FUNC_CALL[0])(h, values, codes, n, _byref(ret), _byref(ret_code))
        self._hold_gil = _now_ns() - t < HOLD_GIL_BELOW_NS
        if rc != 0:
            raise _lib.last_exception()
        return _return_value(ret, ret_code.value)

    def __repr__(self):
        return "<graphrt.Function %s>" % (self._name or hex(self._addr) if self.handle else "(freed)")


class Module(_OwnedHandle):
    """A loaded module (TVM's runtime.Module): functions plus imported modules."""

    __slots__ = ("_entry", "entry_name")
    _free_function = "TVMModFree"
    _graphrt_type_code = _lib.kModuleHandle

    def __init__(self, handle):
        super().__init__(handle)
        self._entry = None
        self.entry_name = "__tvm_main__"

    @property
    def entry_func(self):
        """The module's entry function (`entry_name`, "__tvm_main__" by default)."""
        if self._entry is None:
            self._entry = self.get_function(self.entry_name)
        return self._entry

    def __call__(self, *args):
        return self.entry_func(*args)

    def __eq__(self, other):
        return isinstance(other, Module) and self.handle is not None and other.handle is not None and (
            self.handle.value == other.handle.value)

    def __hash__(self):
        return hash(self.handle.value if self.handle is not None else None)

    def get_source(self, fmt=""):
        """Source text of the module. graphrt runs compiled libraries and keeps no source,
        so this raises, as TVM does for modules without source."""
        raise _error.UnsupportedError("module '%s' does not keep its source (graphrt loads compiled code only)%s" % (
            self.type_key, "" if not fmt else " (format '%s')" % fmt))

    def time_evaluator(self, func_name, dev, number=10, repeat=1, min_repeat_ms=0, limit_zero_time_iterations=100,
                       cooldown_interval_ms=0, repeats_to_cooldown=1, cache_flush_bytes=0, f_preproc=""):
        """A callable that runs self[func_name](*args) 1 + number x repeat times (the first call is a
        discarded warm-up) and returns a BenchmarkResult of `repeat` values in seconds per call.
        number grows until a repeat lasts min_repeat_ms; the rest is as TVM's time_evaluator."""
        from .device import to_device
        dev = to_device(dev)
        for name, v in (("number", number), ("repeat", repeat), ("repeats_to_cooldown", repeats_to_cooldown)):
            if not isinstance(v, int) or v < 1:
                raise _error.InvalidArgumentError("time_evaluator: %s must be an int >= 1, got %r" % (name, v))
        feval = get_global_func("runtime.RPCTimeEvaluator")(
            self, func_name, dev.device_type, dev.device_id, int(number), int(repeat), int(min_repeat_ms),
            int(limit_zero_time_iterations), int(cooldown_interval_ms), int(repeats_to_cooldown),
            int(cache_flush_bytes), f_preproc or "")

        def evaluator(*args):
            blob = feval(*args)
            return BenchmarkResult(struct.unpack("@" + "d" * repeat, blob))

        return evaluator

    def _describe(self):
        return "module"

    @property
    def type_key(self):
        out = ctypes.c_char_p()
        _lib.call("graphrt_module_type_key", self._h(), ctypes.byref(out))
        return _lib.py_str(out.value)

    @property
    def imported_modules(self):
        n = ctypes.c_int(0)
        _lib.call("graphrt_module_num_imports", self._h(), ctypes.byref(n))
        mods = []
        for i in range(n.value):
            out = ctypes.c_void_p()
            _lib.call("graphrt_module_get_import", self._h(), i, ctypes.byref(out))
            mods.append(Module(out))
        return mods

    def function_names(self):
        """Names of this module's own functions (not its imports)."""
        out = ctypes.c_char_p()
        _lib.call("graphrt_module_function_names", self._h(), ctypes.byref(out))
        return [n for n in _lib.py_str(out.value).split("\n") if n]

    def describe(self):
        """Indented text of the module tree."""
        out = ctypes.c_char_p()
        _lib.call("graphrt_module_describe", self._h(), ctypes.byref(out))
        return _lib.py_str(out.value)

    def get_function(self, name, query_imports=False):
        """The function `name`; FunctionNotFoundError (a GraphrtError and AttributeError) if absent."""
        out = ctypes.c_void_p()
        _lib.call("TVMModGetFunction", self._h(), _lib.c_str(name), 1 if query_imports else 0, ctypes.byref(out))
        if not out.value:
            raise FunctionNotFoundError("module '%s' has no function '%s'%s%s" % (
                self.type_key, name, "" if query_imports else " (imports not searched)", self._usage_hint()))
        return Function(out, name)

    def _usage_hint(self):
        """': this is a Relax executable (...)' when the library says what this kind of module is for."""
        out = ctypes.c_char_p()
        _lib.call("graphrt_module_usage_hint", self._h(), ctypes.byref(out))
        hint = _lib.py_str(out.value)
        return ": this is " + hint if hint else ""

    def implements_function(self, name, query_imports=False):
        try:
            self.get_function(name, query_imports)
            return True
        except FunctionNotFoundError:
            return False

    def __getitem__(self, name):
        if not isinstance(name, str):
            raise GraphrtTypeError("module functions are looked up by name (str)")
        return self.get_function(name)

    def import_module(self, other):
        if not isinstance(other, Module):
            raise GraphrtTypeError("import_module takes a Module")
        _lib.call("TVMModImport", self._h(), other._h())

    def __repr__(self):
        if self.handle is None:
            return "<graphrt.Module (freed)>"
        return "<graphrt.Module %s>" % self.type_key


def get_global_func(name, allow_missing=False):
    """A function from graphrt's global registry (e.g. "tvm.graph_executor.create")."""
    out = ctypes.c_void_p()
    _lib.call("TVMFuncGetGlobal", _lib.c_str(name), ctypes.byref(out))
    if not out.value:
        if allow_missing:
            return None
        raise FunctionNotFoundError("no global function '%s' is registered" % name)
    return Function(out, name)



# Python callables as packed functions (TVM's convert_to_tvm_func).

_PackedCFunc = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(TVMValue), ctypes.POINTER(ctypes.c_int), ctypes.c_int,
                                ctypes.c_void_p, ctypes.c_void_p)
_Finalizer = ctypes.CFUNCTYPE(None, ctypes.c_void_p)

# The Python functions graphrt holds, by the token passed as the resource handle; the finalizer
# drops a token when graphrt drops its function.
_LIVE = {}
_LIVE_LOCK = threading.Lock()
_NEXT_TOKEN = [1]
# Codes whose handle the callee borrows: TVMCbArgToReturn gives Python its own reference.
_REFERENCE_CODES = (_lib.kObjectHandle, _lib.kModuleHandle, _lib.kFuncHandle, _lib.kNDArrayHandle)


def _argument(values, codes, i):
    code = codes[i]
    value = TVMValue()
    ctypes.memmove(ctypes.byref(value), ctypes.byref(values[i]), ctypes.sizeof(TVMValue))
    if code == _lib.kDLTensorHandle:  # borrowed for the call: a view, as TVM gives one
        return NDArray(ctypes.c_void_p(value.v_handle), owned=False)
    if code in _REFERENCE_CODES:
        c = ctypes.c_int(code)
        _lib.check(_lib.lib().TVMCbArgToReturn(ctypes.byref(value), ctypes.byref(c)))
        code = c.value
    return _return_value(value, code)


def _set_return(result, ret):
    values, codes = _lib.arg_arrays(1)
    keep = []
    _put_arg(result, values, codes, 0, keep)
    _lib.check(_lib.lib().TVMCFuncSetReturn(ret, values, codes, 1))


@_PackedCFunc
def _call(values, codes, n, ret, token):
    try:
        f = _LIVE[token]
        result = f(*[_argument(values, codes, i) for i in range(n)])
        if result is not None:
            _set_return(result, ret)
        return 0
    except BaseException as e:  # noqa: B902: every failure becomes the packed call's error
        text = "%s: %s" % (type(e).__name__, e)
        _raised.remember(e, text)
        _lib.lib().TVMAPISetLastError(text.encode("utf-8", "replace"))
        return -1


@_Finalizer
def _release(token):
    with _LIVE_LOCK:
        _LIVE.pop(token, None)


_CALL_ADDRESS = ctypes.cast(_call, ctypes.c_void_p)
_RELEASE_ADDRESS = ctypes.cast(_release, ctypes.c_void_p)


def function_from_python(f, name=None):
    """A graphrt Function that calls Python callable `f`."""
    if not callable(f):
        raise _lib.GraphrtTypeError("a packed function needs a callable, not %s" % type(f).__name__)
    with _LIVE_LOCK:
        token = _NEXT_TOKEN[0]
        _NEXT_TOKEN[0] += 1
        _LIVE[token] = f
    out = ctypes.c_void_p()
    rc = _lib.lib().TVMFuncCreateFromCFunc(_CALL_ADDRESS, ctypes.c_void_p(token), _RELEASE_ADDRESS, ctypes.byref(out))
    if rc != 0:
        with _LIVE_LOCK:
            _LIVE.pop(token, None)
        raise _lib.last_exception()
    return Function(out, name or getattr(f, "__name__", None))
