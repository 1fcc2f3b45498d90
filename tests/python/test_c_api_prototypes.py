"""The ctypes prototypes of python/graphrt/_lib.py against the C headers they bind: every function
_lib.py declares is declared by include/graphrt/c_api.h or TVM's C ABI header, with as many
parameters, each of the same width and class (32-bit integer, 64-bit integer, pointer, double),
and the same return. A prototype copied by hand drifts silently; a wrong width corrupts the call."""
import ctypes
import os
import re

import pytest

from graphrt import _lib

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HEADERS = [os.path.join(REPO, "include", "graphrt", "c_api.h"),
           os.path.join(REPO, "include", "tvm", "runtime", "c_runtime_api.h")]

_DECL = re.compile(r"(?:GRAPHRT_API|TVM_DLL)\s+([^;(]*?)\b(\w+)\s*\(([^;]*?)\)\s*;", re.S)
_I4 = {"int", "unsigned", "unsigned int", "int32_t", "uint32_t", "DLDeviceType", "TVMArgTypeCode"}
_I8 = {"int64_t", "uint64_t", "size_t", "ssize_t", "long", "unsigned long", "tvm_index_t"}


def _strip_comments(text):
    return re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)


def _pointer_typedefs(text):
    """Names typedef'd to a pointer (TVMModuleHandle, graphrt_model_t, function pointers)."""
    names = set(re.findall(r"typedef\s+[^;{}]*\*\s*(\w+)\s*;", text))
    names |= set(re.findall(r"typedef\s+[^;{}]*\(\s*\*\s*(\w+)\s*\)", text))
    return names


def _c_class(ctype, pointers):
    t = " ".join(ctype.replace("const", " ").split())
    if "*" in t or "[" in t:
        return "p"
    if t in pointers:
        return "p"
    if t in _I4:
        return "i4"
    if t in _I8:
        return "i8"
    if t == "double":
        return "f8"
    if t in ("DLDevice", "DLDataType"):  # structures passed by value
        return "s:" + t
    if t == "void":
        return "void"
    return "?" + t


def _param_type(param):
    """The type of one C parameter ("const int64_t* shape" -> "const int64_t*")."""
    param = param.strip()
    m = re.match(r"(.*?[\s*])(\w+)\s*(\[\s*\])?$", param)
    if not m or m.group(1).strip() in ("", "const"):
        return param  # no name given ("int", "void")
    return m.group(1) + ("*" if m.group(3) else "")


def c_prototypes():
    out, pointers, texts = {}, set(), []
    for path in HEADERS:
        with open(path) as f:
            texts.append(_strip_comments(f.read()))
    for text in texts:
        pointers |= _pointer_typedefs(text)
    for text in texts:
        for ret, name, params in _DECL.findall(text):
            params = [p for p in (x.strip() for x in params.split(",")) if p]
            if params == ["void"]:
                params = []
            out[name] = (_c_class(ret, pointers), [_c_class(_param_type(p), pointers) for p in params])
    return out


def _ctypes_class(t):
    if t is None:
        return "void"
    if t in (ctypes.c_int, ctypes.c_uint, ctypes.c_int32, ctypes.c_uint32):
        return "i4"
    if t in (ctypes.c_int64, ctypes.c_uint64, ctypes.c_size_t, ctypes.c_ssize_t):
        return "i8"
    if t is ctypes.c_double:
        return "f8"
    if isinstance(t, type) and issubclass(t, ctypes.Structure):
        return "s:" + t.__name__
    if t in (ctypes.c_void_p, ctypes.c_char_p) or issubclass(t, (ctypes._Pointer, ctypes._CFuncPtr)):
        return "p"
    return "?" + t.__name__


def test_headers_parse():
    protos = c_prototypes()
    # The parser sees the headers' functions (a regex that matched nothing would pass every check).
    assert protos["graphrt_runner_set_input"] == ("i4", ["p", "p", "p"]), protos.get("graphrt_runner_set_input")
    assert protos["TVMArrayAlloc"] == ("i4", ["p", "i4", "i4", "i4", "i4", "i4", "i4", "p"])
    assert protos["graphrt_version"] == ("p", [])
    assert not [n for n, (r, a) in protos.items() if r.startswith("?") or any(x.startswith("?") for x in a)], \
        {n: v for n, v in protos.items() if "?" in str(v)}


@pytest.mark.parametrize("name", sorted(_lib._SIGNATURES))
def test_python_prototype_matches_header(name):
    protos = c_prototypes()
    assert name in protos, "%s is bound in _lib.py but declared by no header of %s" % (name, HEADERS)
    restype, argtypes = _lib._SIGNATURES[name]
    c_ret, c_args = protos[name]
    got = (_ctypes_class(restype), [_ctypes_class(a) for a in argtypes])
    assert got == (c_ret, c_args), "%s: _lib.py says %s, the header %s" % (name, got, (c_ret, c_args))
