"""graphrt_function_call_block (include/graphrt/c_api.h), called through ctypes as the package
calls it: a VM function's result and its type index in the block, TVM's outputs bit for bit, and
its error paths (a null block or function, a negative or unbacked argument count, a wrong
argument count and dtype) as error codes with graphrt's last error. Then Function.__call__,
which stands on it, with every kind of argument it writes into a block."""
import ctypes

import numpy as np
import pytest

import graphrt
from graphrt import _call_block, _handle, _lib
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
    assert "1 arguments and 0 frees but no argument or type-code array" in _lib.last_error()
    entry = _block_for(fn, args)
    entry[0].c.num_free = -1
    assert _call(entry) == KIND["invalid"]
    assert "negative free count -1" in _lib.last_error()
    entry[0].c.num_free = 1  # values[1]: not an array or object handle to free
    entry[0].codes[1] = _lib.kInt
    assert _call(entry) == KIND["invalid"]
    assert "value 1 to free has type code 0" in _lib.last_error()


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
    # 1-5 handles of any class take the positional writers (each object's _addr and _code)
    handles = make_tuple(size, mixed, a[2], graphrt.ShapeTuple([3]))
    assert size(handles) == 4 and size(handles[1]) == 6 and handles[2].numpy().tolist() == [0, 1, 2]
    assert handles[3] == [3] and isinstance(handles[0], graphrt.Function) and handles[0](handles) == 4
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


# ---- the references Python drops, freed by the next call's block (python/graphrt/_handle.py) ----

def _drained():
    """Frees whatever earlier tests left waiting, so each test starts with empty lists."""
    _handle.flush()
    assert not _handle.DROPPED_ARRAYS and not _handle.DROPPED_OBJECTS


def test_handles_are_ints_and_freed_ones_have_none(lib_ok):
    a = graphrt.nd.array(np.arange(3, dtype="float32"))
    assert type(a._addr) is int and a._addr
    assert isinstance(a.handle, ctypes.c_void_p) and a.handle.value == a._addr
    a.free()  # at once, not through the lists
    assert a.handle is None and not hasattr(a, "_addr")
    with pytest.raises(graphrt.GraphrtError, match="freed"):
        a.numpy()


def test_a_dropped_result_is_freed_by_the_next_call(lib_ok):
    case = RelaxCase("ffi_relax_control_flow")
    vm, fn = _vm_function(case)
    args, outputs = _inputs(case)
    want = np.load(outputs[0])
    _drained()
    out = fn(*args)
    addr = out._addr
    del out
    assert _handle.DROPPED_ARRAYS == [addr]
    out = fn(*args)  # its block frees the first result before the VM runs
    assert _handle.DROPPED_ARRAYS == []
    assert out.numpy().tobytes() == want.tobytes()
    for _ in range(50):  # a loop of calls: each frees the result before last, the last one waits
        out = fn(*args)
        assert len(_handle.DROPPED_ARRAYS) == 1
        assert out.numpy().tobytes() == want.tobytes()


def test_a_dropped_tuple_is_freed_by_the_next_call(lib_ok):
    case = RelaxCase("ffi_relax_tuple_io")
    vm, fn = _vm_function(case)
    args, outputs = _inputs(case)
    _drained()
    out = fn(*args)
    assert isinstance(out, graphrt.Array)
    addr = out._addr
    del out
    assert _handle.DROPPED_OBJECTS == [addr]
    out = fn(*args)
    assert _handle.DROPPED_OBJECTS == []
    flat = [out[0].numpy(), out[1][0].numpy(), out[1][1].numpy()]
    assert [f.tobytes() for f in flat] == [np.load(p).tobytes() for p in outputs]


def test_at_most_max_dropped_wait_and_several_go_in_one_block(lib_ok):
    make = graphrt.get_global_func("runtime.Array")
    size = graphrt.get_global_func("runtime.ArraySize")
    _drained()
    arrays = [graphrt.nd.array(np.full(2, k, "float32")) for k in range(_handle.MAX_DROPPED + 5)]
    tuples = [make(arrays[0]) for _ in range(3)]
    del arrays[1:]  # the ones beyond MAX_DROPPED are freed at once
    assert len(_handle.DROPPED_ARRAYS) == _handle.MAX_DROPPED
    del tuples
    assert len(_handle.DROPPED_OBJECTS) == 3
    t = make(arrays[0], arrays[0])  # a call of two arguments frees up to 6 waiting handles
    assert len(_handle.DROPPED_ARRAYS) + len(_handle.DROPPED_OBJECTS) == _handle.MAX_DROPPED + 3 - 6
    assert size(t) == 2  # one of one argument up to 7: the rest
    assert not _handle.DROPPED_ARRAYS and not _handle.DROPPED_OBJECTS
    assert arrays[0].numpy().tolist() == [0, 0]


def test_drops_are_freed_by_failing_and_general_calls_and_kept_by_refused_ones(lib_ok):
    case = RelaxCase("ffi_relax_tuple_io")
    vm, fn = _vm_function(case)
    args, _ = _inputs(case)
    _drained()
    graphrt.nd.array(np.zeros(2, "float32"))  # dropped at once: waits
    assert len(_handle.DROPPED_ARRAYS) == 1
    with pytest.raises(graphrt.GraphrtError):
        fn(args[1], args[0])  # the VM refuses the dtypes; the block freed the drop first
    assert not _handle.DROPPED_ARRAYS
    freed = graphrt.nd.array(np.zeros(1, "float32"))
    freed.free()
    graphrt.nd.array(np.zeros(2, "float32"))
    assert len(_handle.DROPPED_ARRAYS) == 1
    with pytest.raises(graphrt.GraphrtError, match="freed"):
        fn(args[0], freed)  # refused in Python before any block: the drop still waits
    assert len(_handle.DROPPED_ARRAYS) == 1
    make = graphrt.get_global_func("runtime.Array")
    t = make("s", 7, args[0])  # the general conversion takes the drops too
    assert not _handle.DROPPED_ARRAYS
    assert t[0] == "s" and t[1] == 7


def test_flush_and_empty_free_the_drops_now(lib_ok):
    _drained()
    graphrt.ShapeTuple([1, 2])
    assert len(_handle.DROPPED_OBJECTS) == 1
    _handle.flush()
    assert not _handle.DROPPED_OBJECTS
    graphrt.nd.array(np.zeros(2, "float32"))
    assert len(_handle.DROPPED_ARRAYS) == 1
    _handle.flush()
    assert not _handle.DROPPED_ARRAYS
    graphrt.nd.array(np.zeros(2, "float32"))
    kept = graphrt.nd.empty((4,))  # an allocation frees what waits first
    assert not _handle.DROPPED_ARRAYS and kept.shape == (4,)


def test_calls_and_drops_from_several_threads(lib_ok):
    # One VM per thread (a VM is not for concurrent calls, as in TVM); each thread's calls free
    # whatever any thread dropped, its own results and the others'.
    import threading
    case = RelaxCase("ffi_relax_control_flow")
    functions = [_vm_function(case) for _ in range(4)]
    args, outputs = _inputs(case)
    want = np.load(outputs[0]).tobytes()
    bad = []

    def work(fn):
        for _ in range(200):
            out = fn(*args)
            if out.numpy().tobytes() != want:
                bad.append(1)

    threads = [threading.Thread(target=work, args=(fn,)) for _, fn in functions]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not bad
    assert len(_handle.DROPPED_ARRAYS) <= _handle.MAX_DROPPED
