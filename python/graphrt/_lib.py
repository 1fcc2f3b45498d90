"""Loading libgraphrt and the ctypes declarations of its C API (include/graphrt/c_api.h)."""
import ctypes
import ctypes.util
import os
import threading

from . import _handle
from . import _raised
from .error import GraphrtError, GraphrtTypeError, FunctionNotFoundError, error_for_kind  # noqa: F401  (re-exported)


# ---- C structures (tvm_abi.h / dlpack.h) ----
class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    pass


DLManagedTensor._fields_ = [
    ("dl_tensor", DLTensor),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))),
]


class TVMValue(ctypes.Union):
    _fields_ = [
        ("v_int64", ctypes.c_int64),
        ("v_float64", ctypes.c_double),
        ("v_handle", ctypes.c_void_p),
        ("v_str", ctypes.c_char_p),
        ("v_type", DLDataType),
        ("v_device", DLDevice),
    ]


class TVMByteArray(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("size", ctypes.c_size_t)]


class ModelOptions(ctypes.Structure):  # graphrt_model_options
    _fields_ = [
        ("graph_json_path", ctypes.c_char_p),
        ("params_path", ctypes.c_char_p),
        ("loader", ctypes.c_char_p),
        ("trust_exports", ctypes.c_int),
        ("device_type", ctypes.c_int),
        ("device_id", ctypes.c_int),
        ("memory_plan", ctypes.c_char_p),
    ]


class TensorInfoC(ctypes.Structure):  # graphrt_tensor_info
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("known", ctypes.c_int),
        ("dtype", DLDataType),
        ("ndim", ctypes.c_int),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("symbols", ctypes.POINTER(ctypes.c_int64)),
    ]


class CallBlockC(ctypes.Structure):  # graphrt_call_block
    _fields_ = [
        ("function", ctypes.c_void_p),
        ("num_args", ctypes.c_int),
        ("num_free", ctypes.c_int),
        ("ret_value", TVMValue),
        ("ret_type_code", ctypes.c_int),
        ("ret_type_index", ctypes.c_uint32),
        ("elapsed_ns", ctypes.c_int64),
        ("args", ctypes.c_void_p),
        ("type_codes", ctypes.c_void_p),
    ]


# ctypes takes tens of microseconds to make an array type the first time a length is
# used: calls with few arguments and tensors of few dimensions use these, made at import.
_SHORT = 8
_ShortValues = TVMValue * _SHORT
_ShortCodes = ctypes.c_int * _SHORT
_ShortShape = ctypes.c_int64 * _SHORT


def arg_arrays(n):
    """(values, codes) arrays for a call with n arguments."""
    if n <= _SHORT:
        return _ShortValues(), _ShortCodes()
    return (TVMValue * n)(), (ctypes.c_int * n)()


def shape_array(shape):
    """A C int64 array holding `shape` (at least one element, as C callers may read one)."""
    if len(shape) <= _SHORT:
        return _ShortShape(*shape)
    return (ctypes.c_int64 * len(shape))(*shape)


# Type codes (TVMArgTypeCode).
kInt = 0
kUInt = 1
kFloat = 2
kHandle = 3
kNull = 4
kDataType = 5
kDevice = 6
kDLTensorHandle = 7
kObjectHandle = 8
kModuleHandle = 9
kFuncHandle = 10
kStr = 11
kBytes = 12
kNDArrayHandle = 13
kBool = 15

_vp = ctypes.c_void_p
_int = ctypes.c_int
_cp = ctypes.c_char_p
_p = ctypes.POINTER

# graphrt_text_callback: (piece, size, user_data) -> non-zero stops the generation.
TextCallback = ctypes.CFUNCTYPE(_int, _vp, ctypes.c_size_t, _vp)

# name: (restype, [argtypes])
_SIGNATURES = {
    "TVMGetLastError": (_cp, []),
    "graphrt_last_error_kind": (_int, []),
    "TVMAPISetLastError": (None, [_cp]),
    "TVMModLoadFromFile": (_int, [_cp, _cp, _p(_vp)]),
    "TVMModImport": (_int, [_vp, _vp]),
    "TVMModGetFunction": (_int, [_vp, _cp, _int, _p(_vp)]),
    "TVMModFree": (_int, [_vp]),
    "graphrt_module_load": (_int, [_cp, _cp, _p(_vp)]),
    "graphrt_module_load_with_flags": (_int, [_cp, _cp, _int, _p(_vp)]),
    "graphrt_module_load_from_memory": (_int, [_vp, ctypes.c_size_t, _cp, _p(_vp)]),
    "graphrt_module_type_key": (_int, [_vp, _p(_cp)]),
    "graphrt_module_num_imports": (_int, [_vp, _p(_int)]),
    "graphrt_module_get_import": (_int, [_vp, _int, _p(_vp)]),
    "graphrt_module_function_names": (_int, [_vp, _p(_cp)]),
    "graphrt_module_usage_hint": (_int, [_vp, _p(_cp)]),
    "graphrt_module_describe": (_int, [_vp, _p(_cp)]),
    "graphrt_load_plugin": (_int, [_cp]),
    "TVMFuncCall": (_int, [_vp, _p(TVMValue), _p(_int), _int, _p(TVMValue), _p(_int)]),
    "graphrt_function_call_block": (_int, [_p(CallBlockC)]),
    "TVMFuncCreateFromCFunc": (_int, [_vp, _vp, _vp, _p(_vp)]),
    "TVMFuncRegisterGlobal": (_int, [_cp, _vp, _int]),
    "TVMCFuncSetReturn": (_int, [_vp, _p(TVMValue), _p(_int), _int]),
    "TVMCbArgToReturn": (_int, [_p(TVMValue), _p(_int)]),
    "TVMFuncFree": (_int, [_vp]),
    "TVMFuncGetGlobal": (_int, [_cp, _p(_vp)]),
    "TVMFuncListGlobalNames": (_int, [_p(_int), _p(_p(_cp))]),
    "TVMObjectFree": (_int, [_vp]),
    "TVMObjectGetTypeIndex": (_int, [_vp, _p(ctypes.c_uint)]),
    "TVMObjectTypeIndex2Key": (_int, [ctypes.c_uint, _p(_cp)]),
    "TVMArrayAlloc": (_int, [_p(ctypes.c_int64), _int, _int, _int, _int, _int, _int, _p(_vp)]),
    "TVMArrayFree": (_int, [_vp]),
    "TVMArrayCopyFromBytes": (_int, [_vp, _vp, ctypes.c_size_t]),
    "TVMArrayCopyToBytes": (_int, [_vp, _vp, ctypes.c_size_t]),
    "TVMArrayCopyFromTo": (_int, [_vp, _vp, _vp]),
    "TVMArrayFromDLPack": (_int, [_vp, _p(_vp)]),
    "TVMArrayToDLPack": (_int, [_vp, _p(_vp)]),
    "TVMDLManagedTensorCallDeleter": (None, [_vp]),
    "graphrt_array_view": (_int, [_vp, _p(ctypes.c_int64), _int, _int, _int, _int, _p(_vp)]),
    "graphrt_array_view_at": (_int, [_vp, _p(ctypes.c_int64), _int, _int, _int, _int, ctypes.c_uint64, _p(_vp)]),
    "TVMSynchronize": (_int, [_int, _int, _vp]),
    "TVMStreamStreamSynchronize": (_int, [_int, _int, _vp, _vp]),
    "graphrt_device_available": (_int, [_int, _int, _p(_int), _p(_cp)]),
    "graphrt_set_num_threads": (_int, [_int]),
    "graphrt_get_num_threads": (_int, [_p(_int)]),
    "graphrt_params_load": (_int, [_vp, ctypes.c_size_t, _p(_int), _p(_cp), _p(_p(_vp))]),
    "graphrt_free_handle_array": (None, [_p(_vp)]),
    "graphrt_params_save": (_int, [_int, _p(_cp), _p(_vp), _p(_vp), _p(ctypes.c_size_t)]),
    "graphrt_model_load": (_int, [_cp, _p(ModelOptions), _p(_vp)]),
    "graphrt_model_free": (None, [_vp]),
    "graphrt_model_kind": (_int, [_vp, _p(_int)]),
    "graphrt_model_num_functions": (_int, [_vp, _p(_int)]),
    "graphrt_model_function_name": (_int, [_vp, _int, _p(_cp)]),
    "graphrt_model_num_inputs": (_int, [_vp, _cp, _p(_int)]),
    "graphrt_model_input_info": (_int, [_vp, _cp, _int, _p(TensorInfoC)]),
    "graphrt_model_num_outputs": (_int, [_vp, _cp, _p(_int)]),
    "graphrt_model_output_info": (_int, [_vp, _cp, _int, _p(TensorInfoC)]),
    "graphrt_model_param_names": (_int, [_vp, _p(_cp)]),
    "graphrt_runner_create": (_int, [_vp, _cp, _p(_vp)]),
    "graphrt_runner_free": (None, [_vp]),
    "graphrt_runner_set_input": (_int, [_vp, _cp, _vp]),
    "graphrt_runner_set_input_zero_copy": (_int, [_vp, _cp, _vp]),
    "graphrt_runner_run": (_int, [_vp]),
    "graphrt_runner_num_outputs": (_int, [_vp, _p(_int)]),
    "graphrt_runner_get_output": (_int, [_vp, _int, _p(_vp)]),
    "graphrt_runner_get_result": (_int, [_vp, _p(TVMValue), _p(_int)]),
    "graphrt_value_kind": (_int, [_p(TVMValue), _int, _p(_int)]),
    "graphrt_value_tuple_size": (_int, [_vp, _p(ctypes.c_int64)]),
    "graphrt_value_tuple_item": (_int, [_vp, ctypes.c_int64, _p(TVMValue), _p(_int)]),
    "graphrt_value_shape_rank": (_int, [_vp, _p(_int)]),
    "graphrt_value_shape_dims": (_int, [_vp, _p(_p(ctypes.c_int64))]),
    "graphrt_lm_open": (_int, [_cp, _cp, _int, _int, _p(_vp)]),
    "graphrt_lm_free": (None, [_vp]),
    "graphrt_lm_tokenize": (_int, [_vp, _cp, _p(_p(ctypes.c_int32)), _p(ctypes.c_size_t)]),
    "graphrt_lm_detokenize": (_int, [_vp, _p(ctypes.c_int32), ctypes.c_size_t, _p(_cp)]),
    "graphrt_lm_generate": (_int, [_vp, _cp, _cp, TextCallback, _vp, _p(_cp), _p(_cp)]),
    "graphrt_lm_chat": (_int, [_vp, _cp, _cp, TextCallback, _vp, _p(_cp), _p(_cp)]),
    "graphrt_lm_default_config": (_int, [_vp, _p(_cp)]),
    "graphrt_lm_open_library": (_int, [_cp, ctypes.c_int64, ctypes.c_int64, _int, _int, _p(_vp)]),
    "graphrt_lm_add_sequence": (_int, [_vp, ctypes.c_int64]),
    "graphrt_lm_remove_sequence": (_int, [_vp, ctypes.c_int64]),
    "graphrt_lm_vocab_size": (_int, [_vp, _p(ctypes.c_int64)]),
    "graphrt_lm_step": (_int, [_vp, ctypes.c_size_t, _p(ctypes.c_int64), _p(ctypes.c_int32), _p(ctypes.c_int64),
                               _p(_p(ctypes.c_float))]),
    "graphrt_version": (_cp, []),
    "graphrt_init": (_int, []),
}

_LIB = None
_LIB_PATH = None
_LOCK = threading.Lock()


def _candidates():
    """Where libgraphrt may be, in search order (see find_library)."""
    names = ["libgraphrt.so", "libgraphrt.so.0", "libgraphrt.dylib"]
    env = os.environ.get("GRAPHRT_LIBRARY_PATH")
    if env:
        out = []
        for entry in env.split(os.pathsep):
            if not entry:
                continue
            if os.path.isdir(entry):
                out.extend(os.path.join(entry, n) for n in names)
            else:
                out.append(entry)
        return out, True
    pkg = os.path.dirname(os.path.abspath(__file__))
    python_dir = os.path.dirname(pkg)
    repo = os.path.dirname(python_dir)
    dirs = [pkg]
    # An installed package knows where its libgraphrt is: `cmake --install` writes the library
    # folder relative to the package, `pip install ./python` the absolute path it found.
    try:
        from . import _install_location
        dirs.append(os.path.normpath(os.path.join(pkg, _install_location.LIBRARY_DIR)))
    except ImportError:
        pass
    dirs += [os.path.join(python_dir, "build"), os.path.join(repo, "build"), os.path.join(repo, "build", "lib")]
    out = []
    for d in dirs:
        out.extend(os.path.join(d, n) for n in names)
    return out, False


def find_library():
    """Path of libgraphrt: GRAPHRT_LIBRARY_PATH (a file or a directory), else the one the package
    was installed with (cmake --install, pip install ./python), else the build tree
    (<package>/../build, <repo>/build), else whatever the system linker finds."""
    candidates, from_env = _candidates()
    for c in candidates:
        if os.path.isfile(c):
            return c
    if from_env:
        raise GraphrtError(
            "GRAPHRT_LIBRARY_PATH=%s does not name libgraphrt.so (or a directory holding it)"
            % os.environ.get("GRAPHRT_LIBRARY_PATH"))
    found = ctypes.util.find_library("graphrt")
    if found:
        return found
    raise GraphrtError(
        "cannot find libgraphrt.so: build it into <repo>/build, or install graphrt (cmake --install build "
        "--prefix P installs this package with it), or set GRAPHRT_LIBRARY_PATH to the library or its "
        "directory (searched: %s)" % ", ".join(sorted(set(os.path.dirname(c) for c in candidates))))


def lib():
    """The loaded libgraphrt (loaded once, RTLD_GLOBAL so C-codegen TVM libraries resolve
    TVMAPISetLastError etc. through the global namespace)."""
    global _LIB, _LIB_PATH
    if _LIB is not None:
        return _LIB
    with _LOCK:
        if _LIB is None:
            path = find_library()
            try:
                handle = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
            except OSError as e:
                raise GraphrtError("cannot load libgraphrt from %s: %s" % (path, e)) from None
            for name, (restype, argtypes) in _SIGNATURES.items():
                try:
                    f = getattr(handle, name)
                except AttributeError:
                    continue  # older library: the binding raises when used
                f.restype = restype
                f.argtypes = argtypes
            _load_gil_held(path)
            _LIB_PATH = path
            _LIB = handle
    return _LIB


# Calls made without releasing the GIL (ctypes.PyDLL). Reference drops and type queries always,
# as TVM's Cython binding makes them: each takes well under a microsecond, and releasing the GIL
# around it would hand the interpreter to another thread at every freed result or returned tuple
# (each run of a model while several executors run). FUNC_CALL_HELD: TVMFuncCall with no argument
# types, for functions whose calls have been short (module.Function decides); OBJECT_TYPE_INDEX
# also has none: its callers pass a c_void_p and a byref.
# CALL_BLOCK_HELD: graphrt_function_call_block likewise (no argument types: its caller passes the
# block's address as a c_void_p).
ARRAY_FREE = OBJECT_FREE = OBJECT_TYPE_INDEX = FUNC_CALL_HELD = CALL_BLOCK_HELD = None


def _load_gil_held(path):
    global ARRAY_FREE, OBJECT_FREE, OBJECT_TYPE_INDEX, FUNC_CALL_HELD, CALL_BLOCK_HELD
    held = ctypes.PyDLL(path, mode=ctypes.RTLD_GLOBAL)
    ARRAY_FREE, OBJECT_FREE = held.TVMArrayFree, held.TVMObjectFree
    for f in (ARRAY_FREE, OBJECT_FREE):
        f.restype = ctypes.c_int
        f.argtypes = [ctypes.c_void_p]
    OBJECT_TYPE_INDEX = held.TVMObjectGetTypeIndex
    OBJECT_TYPE_INDEX.restype = ctypes.c_int
    FUNC_CALL_HELD = held.TVMFuncCall
    FUNC_CALL_HELD.restype = ctypes.c_int
    CALL_BLOCK_HELD = getattr(held, "graphrt_function_call_block", None)  # None: a library before it
    if CALL_BLOCK_HELD is not None:
        CALL_BLOCK_HELD.restype = ctypes.c_int
    _handle.set_free_functions(ARRAY_FREE, OBJECT_FREE)


def library_path():
    lib()
    return _LIB_PATH


def unconverted(name):
    """A second handle on C function `name` returning int, with no argument types: ctypes
    then passes the caller's ctypes objects, None and ints as they are, with no conversion
    per call. For hot calls whose arguments are made once with the right types."""
    f = lib()[name]
    f.restype = ctypes.c_int
    return f


def last_error():
    msg = lib().TVMGetLastError()
    return msg.decode("utf-8", "replace") if msg else "unknown graphrt error"


def last_error_kind():
    """The kind code of the calling thread's last failure (0 from a library without kinds)."""
    f = getattr(lib(), "graphrt_last_error_kind", None)
    return f() if f is not None else 0


def last_exception(path=None):
    """The exception for the C call that just failed: its class from graphrt_last_error_kind()
    (see error.py), its message from TVMGetLastError(). `path`: the file the call was given.
    When the failure was an exception raised by a Python function graphrt called, that exception
    itself, as TVM re-raises it, with graphrt's message (where it was called from) as a note."""
    message = last_error()
    original = _raised.take(message)
    if original is not None:
        return original
    return error_for_kind(last_error_kind(), message, path)


def check(rc, path=None):
    """Raise graphrt's last error, as the class of its kind, when a C API call failed."""
    if rc != 0:
        raise last_exception(path)


def call(name, *args, path=None):
    """Calls C function `name`; raises its error when it fails. `path`: the file it is given."""
    f = getattr(lib(), name, None)
    if f is None:
        raise GraphrtError("this libgraphrt (%s) has no C function %s" % (_LIB_PATH, name))
    check(f(*args), path)


def c_str(s):
    if isinstance(s, bytes):
        return s
    if not isinstance(s, str):
        raise GraphrtTypeError("expected a str, got %s" % type(s).__name__)
    return s.encode("utf-8")


def py_str(b):
    return b.decode("utf-8", "replace") if b is not None else ""
