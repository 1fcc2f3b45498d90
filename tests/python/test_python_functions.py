"""Python functions as packed functions (tvm.register_func, a callable passed as an argument):
graphrt calls back into them with converted arguments, takes their results, and fails the call
with their exception's type and message."""
import threading

import numpy as np
import pytest

import graphrt


def test_register_func_as_decorator_and_call_through_the_registry(lib_ok):
    @graphrt.register_func("test.python_functions.scale")
    def scale(x, factor):
        return x.numpy() * factor

    assert "test.python_functions.scale" in graphrt.list_global_func_names()
    f = graphrt.get_global_func("test.python_functions.scale")
    x = np.arange(6, dtype="float32").reshape(2, 3)
    y = f(graphrt.nd.array(x), 2.5)
    assert isinstance(y, graphrt.NDArray)
    assert y.numpy().tobytes() == (x * 2.5).tobytes()


def test_register_func_forms_and_override(lib_ok):
    def answer():
        return 42

    assert graphrt.register_func("test.python_functions.answer", answer) is answer
    assert graphrt.get_global_func("test.python_functions.answer")() == 42
    with pytest.raises(graphrt.GraphrtError, match="already registered"):
        graphrt.register_func("test.python_functions.answer", lambda: 0)
    graphrt.register_func("test.python_functions.answer", lambda: "replaced", override=True)
    assert graphrt.get_global_func("test.python_functions.answer")() == "replaced"

    @graphrt.register_func
    def test_python_functions_by_name(a, b):
        return a + b

    assert graphrt.get_global_func("test_python_functions_by_name")(2, 3) == 5


def test_values_cross_both_ways(lib_ok):
    seen = []

    def echo(*args):
        seen.append(args)
        return args[0]

    f = graphrt.function_from_python(echo)
    for value in (7, -1.5, "text", None):
        assert f(value, 1) == value
    arr = graphrt.nd.array(np.ones((2, 2), dtype="int32"))
    back = f(arr)
    assert isinstance(back, graphrt.NDArray) and back.numpy().tolist() == [[1, 1], [1, 1]]
    assert isinstance(seen[-1][0], graphrt.NDArray)
    inner = graphrt.function_from_python(lambda: "inner")
    assert f(inner)() == "inner"


def test_an_exception_comes_back_to_the_caller_as_itself(lib_ok):
    raised = []

    def fails(x):
        raised.append(KeyError("no such thing: %d" % x))
        raise raised[-1]

    # As TVM does: the exception the Python function raised, not a copy or a wrapper.
    with pytest.raises(KeyError) as info:
        graphrt.function_from_python(fails)(3)
    assert info.value is raised[-1]
    # Through the registry too.
    graphrt.register_func("test.python_functions.fails", fails, override=True)
    with pytest.raises(KeyError) as info:
        graphrt.get_global_func("test.python_functions.fails")(4)
    assert info.value is raised[-1]
    # The failure left no state behind: the next call works, and a later graphrt error is graphrt's.
    assert graphrt.function_from_python(lambda x: x + 1)(3) == 4
    with pytest.raises(graphrt.GraphrtError, match="no global function"):
        graphrt.get_global_func("test.python_functions.no_such_function")


def test_a_function_is_released_when_graphrt_drops_it(lib_ok):
    from graphrt import python_function
    before = len(python_function._LIVE)
    f = graphrt.function_from_python(lambda: 1)
    assert len(python_function._LIVE) == before + 1
    f.free()
    assert len(python_function._LIVE) == before
    assert not callable(graphrt.nd.array(np.zeros(1, dtype="float32")))
    with pytest.raises(graphrt.GraphrtTypeError, match="callable"):
        graphrt.function_from_python(3)


def test_callbacks_from_several_threads(lib_ok):
    counts = [0] * 4
    lock = threading.Lock()

    def bump(i):
        with lock:
            counts[i] += 1
        return i

    f = graphrt.function_from_python(bump)

    def work(i):
        for _ in range(500):
            assert f(i) == i

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads)
    assert counts == [500] * 4


def test_shape_tuple_is_tvms_sequence_of_ints(lib_ok):
    tvm = graphrt
    s = tvm.runtime.ShapeTuple([1, 784])
    assert len(s) == 2 and s[0] == 1 and s[-1] == 784 and list(s) == [1, 784]
    assert s == [1, 784] and s == (1, 784) and s != [784, 1] and repr(s) == "ShapeTuple([1, 784])"
    with pytest.raises(IndexError):
        s[2]
    # Through a packed call and back (a Relax function's R.Shape argument or result crosses so).
    back = graphrt.function_from_python(lambda shape: shape)(s)
    assert isinstance(back, tvm.runtime.ShapeTuple) and back == s
    assert graphrt.get_global_func("runtime.GetShapeTupleElem")(s, 1) == 784
    assert tvm.runtime.ShapeTuple([]) == []


def test_lists_and_tuples_pass_as_tvms_array(lib_ok):
    # TVM's front end turns a list or tuple argument into an Array (a Relax tuple).
    got = graphrt.function_from_python(lambda a: a)([1, 2.5, "s", (3, [4])])
    assert isinstance(got, graphrt.Array) and len(got) == 4
    assert got[0] == 1 and got[1] == 2.5 and got[2] == "s"
    assert isinstance(got[3], graphrt.Array) and got[3][0] == 3 and got[3][1][0] == 4
    assert graphrt.get_global_func("runtime.ArraySize")((1, 2, 3)) == 3
    assert graphrt.get_global_func("runtime.ArraySize")([]) == 0
