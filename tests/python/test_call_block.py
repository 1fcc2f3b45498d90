"""graphrt_function_call_block (include/graphrt/c_api.h), called through ctypes as the package
calls it: a VM function's result and its type index in the block, TVM's outputs bit for bit, and
its error paths (a null block or function, a negative or unbacked argument count, a wrong
argument count and dtype) as error codes with graphrt's last error. Then Function.__call__,
which stands on it, with every kind of argument it writes into a block."""
import ctypes

import numpy as np
import pytest

import graphrt
from graphrt import _call_block, _lib
from _relax_cases import RelaxCase

KIND = {"invalid": -2, "type": -9}


def _vm_function(case, name=None):
    vm = graphrt.relax.VirtualMachine(graphrt.load_module(case.path("deploy_relax.so")), graphrt.cpu())
    return vm, vm[name or case.entry]


def _call(block_entry):
    rc = _lib.lib().graphrt_function_call_block(ctypes.cast(block_entry[1], ctypes.POINTER(_lib.CallBlockC)))
    return rc


def _block_for(function, arrays):
    entry = _call_block.new()
    block = entry[0]
    for i, a in enumerate(arrays):
        block.values[i].v_handle = a.handle.value
        block.codes[i] = _lib.kNDArrayHandle
    block.c.function = function.handle.value
    block.c.num_args = len(arrays)
    return entry


def _inputs(case, suffix=""):
    _, inputs, outputs = case.input_sets()[0]
    return [graphrt.nd.array(np.load(inputs[k])) for k in case.input_order], outputs


def test_a_tensor_result_is_the_callers_and_matches_tvm(lib_ok):
    case = RelaxCase("ffi_relax_control_flow")
    vm, fn = _vm_function(case)
    args, outputs = _inputs(case)
    entry = _block_for(fn, args)
    block = entry[0]
    assert _call(entry) == 0
    assert block.c.ret_type_code == _lib.kNDArrayHandle
    assert block.c.ret_type_index == 0 and block.c.elapsed_ns > 0
    out = graphrt.NDArray._adopt(block.c.ret_value.v_handle)
    assert out.numpy().tobytes() == np.load(outputs[0]).tobytes()


def test_a_tuple_result_carries_its_type_index(lib_ok):
    case = RelaxCase("ffi_relax_tuple_io")
    vm, fn = _vm_function(case)
    args, outputs = _inputs(case)
    entry = _block_for(fn, args)
    block = entry[0]
    assert _call(entry) == 0
    assert block.c.ret_type_code == _lib.kObjectHandle
    index = ctypes.c_uint(0)
    _lib.check(_lib.lib().TVMObjectGetTypeIndex(ctypes.c_void_p(block.c.ret_value.v_handle), ctypes.byref(index)))
    assert block.c.ret_type_index == index.value
    key = ctypes.c_char_p()
    _lib.check(_lib.lib().TVMObjectTypeIndex2Key(index, ctypes.byref(key)))
    assert key.value == b"Array"
    result = graphrt.Array(block.c.ret_value.v_handle)
    flat = [result[0].numpy(), result[1][0].numpy(), result[1][1].numpy()]
    assert [f.tobytes() for f in flat] == [np.load(p).tobytes() for p in outputs]


def test_null_block_and_null_function_are_type_errors(lib_ok):
    f = _lib.lib().graphrt_function_call_block
    assert f(None) == KIND["type"]
    assert "null block" in _lib.last_error() and _lib.last_error_kind() == 9
    entry = _call_block.new()
    assert _call(entry) == KIND["type"]
    assert "null function handle" in _lib.last_error()


def test_bad_argument_counts_are_invalid_arguments(lib_ok):
    case = RelaxCase("ffi_relax_control_flow")
    vm, fn = _vm_function(case)
    args, _ = _inputs(case)
    entry = _block_for(fn, args)
    entry[0].c.num_args = -1
    assert _call(entry) == KIND["invalid"]
    assert "negative argument count -1" in _lib.last_error()
    entry[0].c.num_args = 1
    entry[0].c.args = None
    assert _call(entry) == KIND["invalid"]
    assert "1 arguments but no argument or type-code array" in _lib.last_error()


def test_wrong_argument_count_and_dtype_fail_with_the_functions_error(lib_ok):
    case = RelaxCase("ffi_relax_tuple_io")
    vm, fn = _vm_function(case)
    args, _ = _inputs(case)
    entry = _block_for(fn, args[:1])  # main(x, y) given x only
    assert _call(entry) != 0
    assert "main" in _lib.last_error()
    assert entry[0].c.ret_type_code == _lib.kNull
    swapped = _block_for(fn, [args[1], args[0]])  # int32 where float32 is expected
    assert _call(swapped) != 0
    assert "float32" in _lib.last_error() or "dtype" in _lib.last_error()
    # The same through Function.__call__: the error's class, and the block back in the free list.
    free = len(_call_block.FREE)
    with pytest.raises(graphrt.GraphrtError, match="main"):
        fn(args[0])
    with pytest.raises(graphrt.GraphrtError):
        fn(args[1], args[0])
    assert len(_call_block.FREE) == free


def test_function_calls_with_every_kind_of_argument(lib_ok):
    # NDArrays (1, 2, 3 and more: their own writers), objects, functions, ints, strings and
    # numpy arrays (the general conversion), a freed array (its error), a long call.
    make_tuple = graphrt.get_global_func("runtime.Array")
    size = graphrt.get_global_func("runtime.ArraySize")
    a = [graphrt.nd.array(np.arange(k + 1, dtype="float32")) for k in range(10)]
    for n in range(0, 10):
        t = make_tuple(*a[:n])
        assert size(t) == n
        assert [t[i].numpy().tolist() for i in range(n)] == [list(range(k + 1)) for k in range(n)]
    mixed = make_tuple(a[0], make_tuple(a[1]), size, 7, "s", np.zeros(2, "int32"))
    assert size(mixed) == 6 and size(mixed[1]) == 1
    assert mixed[3] == 7 and mixed[4] == "s" and mixed[5].numpy().tolist() == [0, 0]
    freed = graphrt.nd.array(np.zeros(1, "float32"))
    freed.free()
    with pytest.raises(graphrt.GraphrtError, match="freed"):
        make_tuple(a[0], freed)


def test_int_only_calls_and_shape_results(lib_ok):
    # ints only take their own writer (int64, negative ones too); an int64 overflow is the
    # general path's error; a ShapeTuple result converts by its type index, every time.
    shape = graphrt.ShapeTuple([4, -1, 0, (1 << 63) - 1])
    assert list(shape) == [4, -1, 0, (1 << 63) - 1]
    assert isinstance(graphrt.ShapeTuple([2, 3]), graphrt.ShapeTuple)
    with pytest.raises(graphrt.GraphrtError, match="int64"):
        graphrt.ShapeTuple([1 << 63])
    make = graphrt.get_global_func("runtime.ShapeTuple")
    for _ in range(3):
        s = make(5, 6)
        assert isinstance(s, graphrt.ShapeTuple) and s == [5, 6]
