"""graphrt.nd: NDArray over graphrt's TVM-compatible array handles, with DLPack both ways."""
import ctypes
import re

from . import _handle
from . import _lib
from ._lib import GraphrtError, GraphrtTypeError
from .device import Device, cpu, to_device
from . import error as _error

try:
    import numpy as np
except ImportError:  # numpy is optional for module/function use
    np = None

_CODE_NAMES = {0: "int", 1: "uint", 2: "float", 3: "handle", 4: "bfloat", 5: "complex", 6: "e4m3_float", 7: "e5m2_float"}
_DTYPE_RE = re.compile(r"^(int|uint|float|bfloat|handle|complex)(\d*)(?:x(\d+))?$")


def dtype_to_str(t):
    """DLDataType -> TVM dtype string ("float32", "bool", "float16x4")."""
    code, bits, lanes = t.code, t.bits, t.lanes
    if (code == 1 and bits == 1 or code == 6 and bits == 8) and lanes == 1:
        return "bool"  # code 6: DLPack's kDLBool (TVM v0.22+, PyTorch), one byte per element
    if code == 3 and bits == 0 and lanes == 0:
        return "void"
    if code in (6, 7) and bits == 8:
        s = _CODE_NAMES[code] + "8"
    elif code == 3:
        s = "handle"
    else:
        s = "%s%d" % (_CODE_NAMES.get(code, "custom%d_" % code), bits)
    if lanes != 1:
        s += "x%d" % lanes
    return s


def str_to_dtype(s):
    """TVM dtype string (or numpy dtype) -> DLDataType."""
    if np is not None and not isinstance(s, str):
        try:
            s = np.dtype(s).name
        except TypeError:
            raise GraphrtTypeError("not a dtype: %r" % (s,)) from None
    if not isinstance(s, str):
        raise GraphrtTypeError("not a dtype: %r" % (s,))
    if s == "bool":
        return _lib.DLDataType(1, 1, 1)
    if s in ("e4m3_float8", "e5m2_float8"):
        return _lib.DLDataType(6 if s.startswith("e4m3") else 7, 8, 1)
    m = _DTYPE_RE.match(s)
    if not m:
        raise _error.InvalidArgumentError("unknown dtype '%s'" % s)
    base, bits, lanes = m.group(1), m.group(2), m.group(3)
    code = {"int": 0, "uint": 1, "float": 2, "handle": 3, "bfloat": 4, "complex": 5}[base]
    bits = int(bits) if bits else (64 if base == "handle" else 32)
    if bits <= 0 or bits > 255:
        raise _error.InvalidArgumentError("bad dtype '%s'" % s)
    return _lib.DLDataType(code, bits, int(lanes) if lanes else 1)


def _numpy_dtype(dtype_str):
    if np is None:
        raise GraphrtError("numpy is required for this operation")
    if dtype_str == "bool":
        return np.dtype("bool")
    if dtype_str in ("bfloat16",):
        return np.dtype("uint16")  # raw bits, as TVM's NDArray.numpy() gives them; numpy has no bfloat16
    if dtype_str in ("int1", "int2", "int4"):
        return np.dtype("int8")  # one byte per element, as TVM's tensors hold them
    if dtype_str in ("uint2", "uint4"):
        return np.dtype("uint8")
    try:
        return np.dtype(dtype_str)
    except TypeError:
        raise _error.UnsupportedError("dtype %s has no numpy equivalent" % dtype_str) from None


def _bfloat16_bits(src):
    """uint16 bfloat16 bit patterns of `src`: uint16 arrays are taken as bits already (TVM's
    convention), ml_dtypes.bfloat16 arrays by their bytes, floats are rounded to nearest even."""
    if src.dtype == np.uint16:
        return src
    if src.dtype.name == "bfloat16":  # ml_dtypes
        return src.view(np.uint16)
    if src.dtype.kind not in "fiub":
        raise GraphrtTypeError("cannot convert %s values to bfloat16" % src.dtype)
    bits = np.ascontiguousarray(src, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(np.asarray(src, dtype=np.float32))
    return np.where(nan, ((bits >> 16) | 0x40).astype(np.uint16), rounded)


# ---- PyCapsule helpers (DLPack exchange) ----
_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetDestructor.restype = ctypes.c_int
_api.PyCapsule_SetDestructor.argtypes = [ctypes.py_object, ctypes.c_void_p]

_DLTENSOR = b"dltensor"
_USED_DLTENSOR = b"used_dltensor"


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _capsule_destructor(capsule_ptr):
    # Runs when a capsule we exported dies. If nobody consumed it (the name is
    # still "dltensor"), its DLManagedTensor is ours to delete.
    capsule = ctypes.cast(capsule_ptr, ctypes.py_object)
    if _api.PyCapsule_IsValid(capsule, _DLTENSOR):
        ptr = _api.PyCapsule_GetPointer(capsule, _DLTENSOR)
        if _lib._LIB is not None:
            _lib._LIB.TVMDLManagedTensorCallDeleter(ptr)
        _api.PyCapsule_SetDestructor(capsule, None)


_CAPSULE_DESTRUCTOR_PTR = ctypes.cast(_capsule_destructor, ctypes.c_void_p).value


_DROPPED = _handle.DROPPED_ARRAYS
_MAX_DROPPED = _handle.MAX_DROPPED


class NDArray(_handle.Handle):
    """An n-dimensional array owned by graphrt (a TVM NDArray handle)."""

    __slots__ = ("_owned", "_base", "__weakref__")
    _graphrt_type_code = _lib.kNDArrayHandle  # how a function call passes it (packed.Function)

    def __init__(self, handle, owned=True, base=None):
        self._owned = owned
        self._base = base  # keeps the owner of a borrowed handle alive
        self.handle = handle  # an int or a c_void_p: kept as the int _addr (_handle.Handle)

    @classmethod
    def _adopt(cls, handle):
        """An array owning `handle` (an int a C call returned with its reference)."""
        a = cls.__new__(cls)
        a._addr = handle
        a._code = 13  # kNDArrayHandle
        a._owned = True
        a._base = None
        return a

    def __del__(self):
        # Not freed here: the next call frees it in its block (_handle), a foreign call less for
        # every array dropped (each result of a call). drop_array inlined: a frame less.
        try:
            if self._owned:
                if len(_DROPPED) < _MAX_DROPPED:
                    _DROPPED.append(self._addr)
                else:
                    _lib.ARRAY_FREE(self._addr)
        except Exception:  # freed already (no _addr), or interpreter shutdown
            pass

    def free(self):
        """Drops this reference now; later use raises GraphrtError."""
        try:
            a = self._addr
        except AttributeError:
            return
        del self._addr
        if self._owned and _lib._LIB is not None:
            _lib.ARRAY_FREE(a)

    def _h(self):
        try:
            return ctypes.c_void_p(self._addr)
        except AttributeError:
            raise _error.FailedPreconditionError("NDArray has been freed") from None

    @property
    def _t(self):
        return ctypes.cast(self._h(), ctypes.POINTER(_lib.DLTensor)).contents

    @property
    def shape(self):
        t = self._t
        return tuple(t.shape[i] for i in range(t.ndim))

    @property
    def ndim(self):
        return self._t.ndim

    @property
    def dtype(self):
        return dtype_to_str(self._t.dtype)

    @property
    def device(self):
        d = self._t.device
        return Device(d.device_type, d.device_id)

    @property
    def size(self):
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def nbytes(self):
        t = self._t.dtype
        return self.size * ((t.bits * t.lanes + 7) // 8)

    def numpy(self):
        """A numpy copy of the contents (copied from the device when needed)."""
        dt = self.dtype
        npdt = _numpy_dtype(dt if self._t.dtype.lanes == 1 else dtype_to_str(
            _lib.DLDataType(self._t.dtype.code, self._t.dtype.bits, 1)))
        shape = self.shape
        if self._t.dtype.lanes != 1:
            shape = shape + (self._t.dtype.lanes,)
        out = np.empty(shape, dtype=npdt)
        _lib.call("TVMArrayCopyToBytes", self._h(), out.ctypes.data_as(ctypes.c_void_p), ctypes.c_size_t(out.nbytes))
        return out

    asnumpy = numpy

    def __array__(self, dtype=None):
        a = self.numpy()
        return a if dtype is None else a.astype(dtype)

    def copyfrom(self, source):
        """Copies `source` (NDArray, numpy array, or anything numpy.asarray takes) into this array.
        Shape must match; numpy sources are cast to this array's dtype."""
        if isinstance(source, NDArray):
            if source.shape != self.shape:
                raise _error.InvalidArgumentError("copyfrom: shape %s does not match %s" % (source.shape, self.shape))
            _lib.call("TVMArrayCopyFromTo", source._h(), self._h(), None)
            return self
        if np is None:
            raise GraphrtTypeError("copyfrom needs an NDArray (numpy is not installed)")
        try:
            src = np.asarray(source)
        except Exception as e:
            raise GraphrtTypeError("copyfrom: cannot convert %s to an array: %s" % (type(source).__name__, e)) from None
        if src.shape != self.shape:
            raise _error.InvalidArgumentError("copyfrom: array shape %s does not match %s" % (src.shape, self.shape))
        if self.dtype == "bfloat16":
            src = _bfloat16_bits(src)
        npdt = _numpy_dtype(self.dtype)
        src = np.ascontiguousarray(src, dtype=npdt)
        _lib.call("TVMArrayCopyFromBytes", self._h(), src.ctypes.data_as(ctypes.c_void_p), ctypes.c_size_t(src.nbytes))
        return self

    def copyto(self, target):
        """Copies into an NDArray, or to a new array on a Device."""
        if isinstance(target, NDArray):
            if target.shape != self.shape:
                raise _error.InvalidArgumentError("copyto: shape %s does not match %s" % (self.shape, target.shape))
            _lib.call("TVMArrayCopyFromTo", self._h(), target._h(), None)
            return target
        dev = to_device(target)
        out = empty(self.shape, self.dtype, dev)
        _lib.call("TVMArrayCopyFromTo", self._h(), out._h(), None)
        return out

    def view(self, shape, dtype=None):
        """A view with another shape/dtype sharing this array's memory."""
        shape = tuple(int(d) for d in shape)
        t = str_to_dtype(dtype if dtype is not None else self.dtype)
        arr = _lib.shape_array(shape)
        out = ctypes.c_void_p()
        _lib.call("graphrt_array_view", self._h(), arr, len(shape), t.code, t.bits, t.lanes, ctypes.byref(out))
        return NDArray(out)

    def _create_view(self, shape, dtype=None, relative_byte_offset=0):
        """TVM's _create_view: a view `relative_byte_offset` bytes into this array's data."""
        shape = tuple(int(d) for d in shape)
        if int(relative_byte_offset) < 0:
            raise _error.InvalidArgumentError("_create_view: relative_byte_offset must be >= 0")
        t = str_to_dtype(dtype if dtype is not None else self.dtype)
        arr = _lib.shape_array(shape)
        out = ctypes.c_void_p()
        _lib.call("graphrt_array_view_at", self._h(), arr, len(shape), t.code, t.bits, t.lanes,
                  int(relative_byte_offset), ctypes.byref(out))
        return NDArray(out)

    def same_as(self, other):
        """True when `other` is this very array handle (TVM's identity test, not a value compare)."""
        return (isinstance(other, NDArray) and getattr(self, "_addr", None) is not None
                and getattr(self, "_addr", None) == getattr(other, "_addr", None))

    def __setitem__(self, in_slice, value):
        """a[:] = x copies x (an NDArray or numpy array/scalar) into the whole array, as in TVM."""
        if not isinstance(in_slice, slice) or in_slice.start is not None or in_slice.stop is not None:
            raise _error.UnsupportedError("NDArray only supports a[:] = value (whole-array assignment)")
        if isinstance(value, NDArray):
            if not self.same_as(value):
                value.copyto(self)
        elif np is not None and isinstance(value, (np.ndarray, np.generic)):
            self.copyfrom(value)
        else:
            raise GraphrtTypeError("a[:] = value takes an NDArray or a numpy array, got %s" % type(value).__name__)

    # ---- DLPack ----
    def __dlpack__(self, stream=None):
        """A PyCapsule "dltensor" sharing this array's memory (keeps it alive).

        `stream` is the consumer's, as the DLPack protocol passes it: for a CUDA
        array the consumer's stream waits (on the device, through an event) for
        the work graphrt queued on its own stream. None, 1: the legacy default
        stream; 2: the per-thread default stream; -1: no ordering wanted."""
        d = self._t.device
        if d.device_type == 2 and stream != -1:
            consumer = None if stream is None else ctypes.c_void_p(stream)
            _lib.call("TVMStreamStreamSynchronize", d.device_type, d.device_id, None, consumer)
        out = ctypes.c_void_p()
        _lib.call("TVMArrayToDLPack", self._h(), ctypes.byref(out))
        return _api.PyCapsule_New(out, _DLTENSOR, _CAPSULE_DESTRUCTOR_PTR)

    def __dlpack_device__(self):
        d = self._t.device
        return (d.device_type, d.device_id)

    to_dlpack = __dlpack__

    def __repr__(self):
        if self.handle is None:
            return "<graphrt.NDArray (freed)>"
        return "<graphrt.NDArray shape=%s, dtype=%s, %r>" % (self.shape, self.dtype, self.device)

    def __str__(self):
        if self.handle is None or np is None:
            return repr(self)
        return str(self.numpy())


def _shape_tuple(shape):
    if isinstance(shape, int):
        shape = (shape,)
    try:
        shape = tuple(int(d) for d in shape)
    except (TypeError, ValueError):
        raise GraphrtTypeError("shape must be a sequence of ints, got %r" % (shape,)) from None
    if any(d < 0 for d in shape):
        raise _error.InvalidArgumentError("negative dimension in shape %s" % (shape,))
    return shape


def empty(shape, dtype="float32", device=None):
    """An uninitialised array on `device` (default cpu(0))."""
    shape = _shape_tuple(shape)
    if _DROPPED or _handle.DROPPED_OBJECTS:  # what Python let go of goes back before more is taken
        _handle.flush()
    dev = cpu(0) if device is None else to_device(device)
    t = str_to_dtype(dtype)
    arr = _lib.shape_array(shape)
    out = ctypes.c_void_p()
    _lib.call("TVMArrayAlloc", arr, len(shape), t.code, t.bits, t.lanes, dev.device_type, dev.device_id,
              ctypes.byref(out))
    return NDArray(out)


def array(source, device=None, dtype=None):
    """A new graphrt array holding a copy of `source` (numpy array, list, NDArray) on `device`."""
    if isinstance(source, NDArray):
        return source.copyto(cpu(0) if device is None else device)
    if np is None:
        raise GraphrtError("graphrt.nd.array needs numpy")
    bfloat16 = dtype == "bfloat16"
    try:
        src = np.asarray(source, dtype=None if bfloat16 else dtype)
    except Exception as e:
        raise GraphrtTypeError("cannot make an array from %s: %s" % (type(source).__name__, e)) from None
    if src.dtype == object:
        raise GraphrtTypeError("cannot make an array from %s (object dtype)" % type(source).__name__)
    bfloat16 = bfloat16 or src.dtype.name == "bfloat16"  # an ml_dtypes array
    out = empty(src.shape, "bfloat16" if bfloat16 else src.dtype.name, device)
    return out.copyfrom(src)


def from_dlpack(obj):
    """Zero-copy import of a DLPack producer (an object with __dlpack__, e.g. a numpy array,
    or a "dltensor" PyCapsule). The result shares memory with `obj`."""
    if hasattr(obj, "__dlpack__"):
        capsule = obj.__dlpack__()
    else:
        capsule = obj
    if type(capsule).__name__ != "PyCapsule":
        raise GraphrtTypeError("from_dlpack expects an object with __dlpack__ or a DLPack PyCapsule, got %s"
                               % type(obj).__name__)
    if not _api.PyCapsule_IsValid(capsule, _DLTENSOR):
        raise _error.FailedPreconditionError("from_dlpack: the capsule is not a 'dltensor' (already consumed?)")
    ptr = _api.PyCapsule_GetPointer(capsule, _DLTENSOR)
    out = ctypes.c_void_p()
    _lib.call("TVMArrayFromDLPack", ctypes.c_void_p(ptr), ctypes.byref(out))
    # graphrt owns the managed tensor now: mark the capsule consumed so its
    # destructor does not delete it a second time.
    _api.PyCapsule_SetName(capsule, _USED_DLTENSOR)
    return NDArray(out)


def is_ndarray(x):
    return isinstance(x, NDArray)
