"""The C API's value accessors (graphrt_value_*, graphrt_runner_get_result: graphrt/value.h) through
ctypes, as Python's Array and ShapeTuple read results: a runner's nested tuple against TVM's own
outputs (relax_tuple_io, both ABIs), a graph's outputs, shapes, and the error paths (wrong kind,
index out of range, NULL) by their error kind."""
import ctypes
import os

import numpy as np
import pytest

import graphrt
from graphrt import _lib
from _cases import case_dir

GRAPHRT_VALUE_NONE, GRAPHRT_VALUE_TENSOR, GRAPHRT_VALUE_TUPLE, GRAPHRT_VALUE_SHAPE, GRAPHRT_VALUE_INT = 0, 1, 2, 3, 4
ERROR_INVALID_ARGUMENT, ERROR_OUT_OF_RANGE, ERROR_TYPE_MISMATCH, ERROR_FAILED_PRECONDITION = 2, 4, 9, 10


def _c(name):
    return getattr(_lib.lib(), name)


def _kind(value, code):
    out = ctypes.c_int(-1)
    assert _c("graphrt_value_kind")(ctypes.byref(value), code, ctypes.byref(out)) == 0
    return out.value


def _fails(kind, rc):
    assert rc == -kind, (rc, _lib.last_error())
    assert _lib.last_error_kind() == kind
    return _lib.last_error()


def _result(runner):
    value, code = _lib.TVMValue(), ctypes.c_int(0)
    assert _c("graphrt_runner_get_result")(runner._handle, ctypes.byref(value), ctypes.byref(code)) == 0, \
        _lib.last_error()
    return value, code.value


def _item(handle, i):
    value, code = _lib.TVMValue(), ctypes.c_int(0)
    assert _c("graphrt_value_tuple_item")(handle, i, ctypes.byref(value), ctypes.byref(code)) == 0, _lib.last_error()
    return value, code.value


def _size(handle):
    n = ctypes.c_int64(-1)
    assert _c("graphrt_value_tuple_size")(handle, ctypes.byref(n)) == 0, _lib.last_error()
    return n.value


def _tensor(value, code):
    assert _kind(value, code) == GRAPHRT_VALUE_TENSOR
    return graphrt.ndarray.NDArray._adopt(value.v_handle).numpy()


@pytest.mark.parametrize("family", ["relax", "relax-ffi"])
def test_runner_result_is_tvms_nested_tuple(lib_ok, family):
    d = case_dir(os.path.join(family, "relax_tuple_io"))
    model = graphrt.Session(graphrt.cpu(0)).load(os.path.join(d, "deploy_relax.so"))
    runner = model.runner()
    _fails(ERROR_FAILED_PRECONDITION, _c("graphrt_runner_get_result")(runner._handle, ctypes.byref(_lib.TVMValue()),
                                                                      ctypes.byref(ctypes.c_int())))
    for name in ("x", "y"):
        runner.set_input(name, np.load(os.path.join(d, "input_%s.npy" % name)))
    runner.run()
    want = [np.load(os.path.join(d, "output_%d.npy" % i)) for i in range(3)]
    value, code = _result(runner)
    assert _kind(value, code) == GRAPHRT_VALUE_TUPLE
    outer = ctypes.c_void_p(value.v_handle)
    try:
        assert _size(outer) == 2
        assert np.array_equal(_tensor(*_item(outer, 0)), want[0])
        inner_value, inner_code = _item(outer, 1)
        assert _kind(inner_value, inner_code) == GRAPHRT_VALUE_TUPLE
        inner = ctypes.c_void_p(inner_value.v_handle)
        assert _size(inner) == 2
        assert np.array_equal(_tensor(*_item(inner, 0)), want[1])
        assert np.array_equal(_tensor(*_item(inner, 1)), want[2])
        _lib.OBJECT_FREE(inner)
        # Out of range both ways, and the wrong kind of object.
        out, out_code = _lib.TVMValue(), ctypes.c_int()
        for bad in (2, -1):
            msg = _fails(ERROR_OUT_OF_RANGE, _c("graphrt_value_tuple_item")(outer, bad, ctypes.byref(out),
                                                                          ctypes.byref(out_code)))
            assert "index %d of a tuple of 2" % bad in msg
        msg = _fails(ERROR_TYPE_MISMATCH, _c("graphrt_value_shape_rank")(outer, ctypes.byref(ctypes.c_int())))
        assert "not a shape" in msg
        # NULL handle and NULL outputs.
        _fails(ERROR_INVALID_ARGUMENT, _c("graphrt_value_tuple_size")(None, ctypes.byref(ctypes.c_int64())))
        _fails(ERROR_INVALID_ARGUMENT, _c("graphrt_value_tuple_size")(outer, None))
        _fails(ERROR_INVALID_ARGUMENT, _c("graphrt_value_tuple_item")(outer, 0, None, ctypes.byref(out_code)))
    finally:
        _lib.OBJECT_FREE(outer)
    # Python's own reader of the same result (graphrt.Runner.result over the same accessors).
    s, (m, r) = runner.result()
    for got, w in zip((s, m, r), want):
        assert np.array_equal(got.numpy(), w)


def test_graph_result_is_a_tuple_of_its_outputs(lib_ok):
    d = case_dir("multi_io")
    model = graphrt.Session(graphrt.cpu(0)).load(os.path.join(d, "deploy_factory.so"))
    runner = model.runner()
    for info in model.inputs():
        runner.set_input(info.name, np.load(os.path.join(d, "input_%s.npy" % info.name)))
    runner.run()
    got = runner.result()
    assert isinstance(got, graphrt.packed.Array) and len(got) == 3
    for i, y in enumerate(got):
        assert np.array_equal(y.numpy(), np.load(os.path.join(d, "output_%d.npy" % i)))


def test_shapes_and_kinds(lib_ok):
    s = graphrt.ShapeTuple([1, 784, 3])
    h = s._h()
    rank, dims = ctypes.c_int(), ctypes.POINTER(ctypes.c_int64)()
    assert _c("graphrt_value_shape_rank")(h, ctypes.byref(rank)) == 0 and rank.value == 3
    assert _c("graphrt_value_shape_dims")(h, ctypes.byref(dims)) == 0
    assert [dims[i] for i in range(3)] == [1, 784, 3]
    assert list(s) == [1, 784, 3] and s[-1] == 3 and s[0:2] == [1, 784] and len(s) == 3
    with pytest.raises(IndexError):
        s[3]
    v = _lib.TVMValue()
    v.v_handle = h.value
    assert _kind(v, _lib.kObjectHandle) == GRAPHRT_VALUE_SHAPE
    msg = _fails(ERROR_TYPE_MISMATCH, _c("graphrt_value_tuple_size")(h, ctypes.byref(ctypes.c_int64())))
    assert "runtime.ShapeTuple, not a tuple" in msg
    _fails(ERROR_INVALID_ARGUMENT, _c("graphrt_value_shape_dims")(None, ctypes.byref(dims)))
    v.v_int64 = 7
    assert _kind(v, _lib.kInt) == GRAPHRT_VALUE_INT
    v.v_handle = None
    assert _kind(v, _lib.kNull) == GRAPHRT_VALUE_NONE
    _fails(ERROR_TYPE_MISMATCH, _c("graphrt_value_kind")(ctypes.byref(v), _lib.kDevice, ctypes.byref(ctypes.c_int())))
    _fails(ERROR_INVALID_ARGUMENT, _c("graphrt_value_kind")(None, _lib.kInt, ctypes.byref(ctypes.c_int())))
    # A tuple passed in from Python (TVM's Array constructor) reads back item by item.
    a = graphrt.get_global_func("runtime.Array")(s, 5, 0.5)
    assert len(a) == 3 and list(a[0]) == [1, 784, 3] and a[1] == 5 and a[2] == 0.5
