"""tvm.contrib.sort.sort / argsort / topk (what TVM kernels of topi's sort, argsort and topk call by
name) against numpy's stable sorts: random data full of ties, every axis, both directions."""
import numpy as np
import pytest

import graphrt

DTYPES = ["float32", "float64", "float16", "int32", "int64"]


def _data(rng, dtype, shape):
    return rng.integers(-3, 4, size=shape).astype(dtype)  # few distinct values: many ties


def _stable_order(x, axis, ascending):
    # Descending and stable (ties by lower index first): ascending stable sort of the negated keys.
    keys = x.astype("float64") if x.dtype == np.float16 else x
    return np.argsort(keys if ascending else -keys.astype("float64"), axis=axis, kind="stable")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ascending", [True, False])
def test_sort_and_argsort_match_numpy_stable_sort(lib_ok, dtype, ascending):
    rng = np.random.default_rng(7)
    argsort = graphrt.get_global_func("tvm.contrib.sort.argsort")
    sort = graphrt.get_global_func("tvm.contrib.sort.sort")
    for shape in [(9,), (4, 7), (3, 5, 6)]:
        x = _data(rng, dtype, shape)
        for axis in range(-len(shape), len(shape)):
            want = _stable_order(x, axis, ascending)
            for index_dtype in ["int32", "int64", "float32"]:
                out = graphrt.nd.empty(shape, index_dtype)
                argsort(graphrt.nd.array(x), out, axis, ascending)
                np.testing.assert_array_equal(out.numpy(), want.astype(index_dtype))
            values = graphrt.nd.empty(shape, dtype)
            sort(graphrt.nd.array(x), values, axis, ascending)
            assert values.numpy().tobytes() == np.take_along_axis(x, want, axis).tobytes()


@pytest.mark.parametrize("dtype", DTYPES + ["int8", "uint8"])
def test_topk_is_the_first_k_of_the_stable_order(lib_ok, dtype):
    rng = np.random.default_rng(11)
    topk = graphrt.get_global_func("tvm.contrib.sort.topk")
    x = _data(rng, dtype, (5, 8)) if dtype != "uint8" else rng.integers(0, 4, size=(5, 8)).astype(dtype)
    for axis, k, ascending in [(1, 3, False), (0, 2, True), (-1, 8, True), (1, 1, False), (1, 0, False)]:
        extent = x.shape[axis]
        kk = extent if k < 1 else k
        order = np.take(_stable_order(x, axis, ascending), range(kk), axis=axis)
        shape = list(x.shape)
        shape[axis] = kk
        values, indices = graphrt.nd.empty(shape, dtype), graphrt.nd.empty(shape, "int64")
        topk(graphrt.nd.array(x), values, indices, k, axis, "both", ascending)
        np.testing.assert_array_equal(indices.numpy(), order)
        assert values.numpy().tobytes() == np.take_along_axis(x, order, axis).tobytes()
        only = graphrt.nd.empty(shape, "int32")
        topk(graphrt.nd.array(x), only, k, axis, "indices", ascending)
        np.testing.assert_array_equal(only.numpy(), order)


def test_errors_name_the_function_and_the_tensor(lib_ok):
    x = graphrt.nd.array(np.zeros((2, 3), "float32"))
    with pytest.raises(graphrt.GraphrtError, match=r"tvm.contrib.sort.topk: the values tensor has shape \[2, 2\]"):
        graphrt.get_global_func("tvm.contrib.sort.topk")(x, graphrt.nd.empty((2, 2), "float32"), 3, 1, "values", 0)
    with pytest.raises(graphrt.GraphrtError, match="tvm.contrib.sort.sort: .*arguments given"):
        graphrt.get_global_func("tvm.contrib.sort.sort")(x)


@pytest.mark.parametrize("ascending", [True, False])
def test_argsort_nms_sorts_each_lines_valid_prefix(lib_ok, ascending):
    rng = np.random.default_rng(3)
    x = _data(rng, "float32", (3, 6))
    counts = np.array([6, 0, 4], "int32")
    out = graphrt.nd.empty((3, 6), "int32")
    graphrt.get_global_func("tvm.contrib.sort.argsort_nms")(graphrt.nd.array(x), graphrt.nd.array(counts), out, 1,
                                                           ascending)
    for row, n in enumerate(counts):
        want = list(_stable_order(x[row, :n], 0, ascending)) + list(range(n, 6))
        assert out.numpy()[row].tolist() == want
    with pytest.raises(graphrt.GraphrtError, match="sort_num 7 outside 0..6"):
        graphrt.get_global_func("tvm.contrib.sort.argsort_nms")(
            graphrt.nd.array(x), graphrt.nd.array(np.array([7, 0, 0], "int32")), out, 1, ascending)
