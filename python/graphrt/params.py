"""TVM's save_param_dict format, through graphrt_params_save / graphrt_params_load."""
import ctypes
import os
import stat

from . import _lib
from ._lib import GraphrtTypeError
from .error import InvalidArgumentError
from .ndarray import NDArray
from . import ndarray as nd


def save_param_dict(params):
    """bytes in TVM's params format of {name: NDArray or numpy array}, in dict order."""
    if not isinstance(params, dict):
        raise GraphrtTypeError("save_param_dict takes a dict {name: array}")
    names, arrays = [], []
    for k, v in params.items():
        if not isinstance(k, str):
            raise GraphrtTypeError("param names must be str, got %s" % type(k).__name__)
        names.append(k.encode("utf-8"))
        arrays.append(v if isinstance(v, NDArray) else nd.array(v))
    n = len(names)
    c_names = (ctypes.c_char_p * max(1, n))(*names)
    c_arrays = (ctypes.c_void_p * max(1, n))(*[a._h().value for a in arrays])
    out = ctypes.c_void_p()
    size = ctypes.c_size_t(0)
    _lib.call("graphrt_params_save", n, c_names, c_arrays, ctypes.byref(out), ctypes.byref(size))
    return ctypes.string_at(out.value, size.value) if size.value else b""


def load_param_dict(param_bytes):
    """{name: NDArray} (CPU arrays, file order) from the bytes of a params file (bytes, bytearray,
    memoryview, or a str holding one byte per character, as Python 2 era code passes them)."""
    if isinstance(param_bytes, str):
        try:
            param_bytes = param_bytes.encode("latin-1")
        except UnicodeEncodeError:
            raise GraphrtTypeError("load_param_dict: a str must hold bytes (characters 0-255); "
                                   "read the params file in binary mode") from None
    if isinstance(param_bytes, (bytearray, memoryview)):
        param_bytes = bytes(param_bytes)
    if not isinstance(param_bytes, bytes):
        raise GraphrtTypeError("load_param_dict takes bytes, got %s" % type(param_bytes).__name__)
    buf = ctypes.create_string_buffer(param_bytes, len(param_bytes))
    count = ctypes.c_int(0)
    names = ctypes.c_char_p()
    arrays = ctypes.POINTER(ctypes.c_void_p)()
    _lib.call("graphrt_params_load", buf, len(param_bytes), ctypes.byref(count), ctypes.byref(names),
              ctypes.byref(arrays))
    name_list = _lib.py_str(names.value).split("\n")
    out = {}
    try:
        handles = [arrays[i] for i in range(count.value)]
    finally:
        _lib.lib().graphrt_free_handle_array(arrays)
    for i, h in enumerate(handles):
        out[name_list[i] if i < len(name_list) else "param%d" % i] = NDArray(ctypes.c_void_p(h))
    if len(out) != count.value:
        raise InvalidArgumentError("params file repeats a name")
    return out


def _read_regular_file(path, what):
    """The bytes of the regular file at `path`: opened without blocking (a FIFO would wait for a
    writer) and refused, naming it, when it is a directory, FIFO, device or socket."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as f:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = "a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else \
                "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode) else \
                "not a regular file"
            raise InvalidArgumentError("%s is %s, not a regular file [file: %s]" % (what, kind, path))
        return f.read()


def load_param_dict_from_file(path):
    return load_param_dict(_read_regular_file(path, "params file"))


def save_param_dict_to_file(params, path):
    with open(path, "wb") as f:
        f.write(save_param_dict(params))
