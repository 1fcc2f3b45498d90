"""NDArray, DLPack, packed calls, devices and error handling of the Python API."""
import gc
import os

import numpy as np
import pytest

import graphrt
from graphrt import graph_executor


def test_version_and_devices(lib_ok):
    assert "graphrt" in graphrt.version()
    assert graphrt.cpu(0).exist
    assert graphrt.cpu(0) == graphrt.device("cpu:0") and graphrt.cuda(1) == graphrt.device("cuda", 1)
    assert repr(graphrt.cuda(0)) == "cuda(0)"
    cuda = graphrt.cuda(0)
    assert cuda.exist in (True, False)
    if not cuda.exist:
        assert cuda.unavailable_reason


def test_ndarray_roundtrip(lib_ok):
    for dtype in ["float32", "float64", "int32", "int64", "uint8", "int8", "float16"]:
        x = (np.arange(24).reshape(2, 3, 4) % 7).astype(dtype)
        a = graphrt.nd.array(x)
        assert a.shape == (2, 3, 4) and a.dtype == dtype and a.device == graphrt.cpu(0)
        np.testing.assert_array_equal(a.numpy(), x)
    e = graphrt.nd.empty((3,), "int32")
    e.copyfrom(np.array([1, 2, 3]))
    np.testing.assert_array_equal(e.numpy(), [1, 2, 3])
    f = graphrt.nd.empty((3,), "int32").copyfrom(e)
    np.testing.assert_array_equal(np.asarray(f), [1, 2, 3])
    v = e.view((1, 3))
    assert v.shape == (1, 3)
    scalar = graphrt.nd.array(np.float32(2.5))
    assert scalar.shape == () and scalar.numpy() == np.float32(2.5)


def test_copyfrom_shape_mismatch(lib_ok):
    a = graphrt.nd.empty((2, 2))
    with pytest.raises(graphrt.GraphrtError, match="shape"):
        a.copyfrom(np.zeros((3,), "float32"))


def test_dlpack_to_numpy_shares_memory(lib_ok):
    a = graphrt.nd.array(np.arange(6, dtype="float32").reshape(2, 3))
    view = np.from_dlpack(a)
    assert view.shape == (2, 3) and view.dtype == np.float32
    if view.flags.writeable:  # numpy < 2 marks DLPack imports read-only
        view[0, 0] = 42.0  # numpy side -> graphrt side
        assert a.numpy()[0, 0] == 42.0
    assert view.ctypes.data == a._t.data  # same memory
    a.copyfrom(np.full((2, 3), 7.0, "float32"))  # graphrt side -> numpy side
    assert np.all(view == 7.0)
    # the numpy view keeps the memory alive after the graphrt array is gone
    del a
    gc.collect()
    assert np.all(view == 7.0)


def test_dlpack_from_numpy_shares_memory(lib_ok):
    x = np.arange(12, dtype="int32").reshape(3, 4)
    a = graphrt.nd.from_dlpack(x)
    assert a.shape == (3, 4) and a.dtype == "int32"
    x[1, 1] = -5  # numpy side -> graphrt side
    assert a.numpy()[1, 1] == -5
    a.copyfrom(np.zeros((3, 4), "int32"))  # graphrt side -> numpy side
    assert np.all(x == 0)
    # graphrt's reference keeps numpy's buffer alive
    del x
    gc.collect()
    assert a.numpy().sum() == 0


def test_dlpack_capsule_and_roundtrip(lib_ok):
    a = graphrt.nd.array(np.ones((4,), "float64"))
    capsule = a.__dlpack__()
    b = graphrt.nd.from_dlpack(capsule)
    with pytest.raises(graphrt.GraphrtError, match="consumed"):
        graphrt.nd.from_dlpack(capsule)
    b.copyfrom(np.array([1, 2, 3, 4], "float64"))
    np.testing.assert_array_equal(a.numpy(), [1, 2, 3, 4])
    assert a.__dlpack_device__() == (1, 0)
    # an unconsumed capsule is released without leaks or crashes
    unused = a.__dlpack__()
    del unused
    gc.collect()


def test_dlpack_executor_output_zero_copy(mlp):
    lib = graphrt.load_module(mlp.path("deploy_factory.so"))
    gmod = graph_executor.GraphModule(lib["default"](graphrt.cpu(0)))
    gmod.run(**mlp.inputs())
    out = np.from_dlpack(gmod.get_output(0))
    mlp.check(out.copy(), 0)


def test_module_tree(mlp):
    lib = graphrt.load_module(mlp.path("deploy_factory.so"))
    assert lib.type_key == "GraphExecutorFactory"
    imports = lib.imported_modules
    assert len(imports) == 1 and imports[0].type_key == "library"
    assert "default" in lib.function_names()
    assert "GraphExecutorFactory" in lib.describe()
    f = lib.get_function("tvmgen_default_fused_nn_softmax", query_imports=True)
    assert isinstance(f, graphrt.Function)
    with pytest.raises(graphrt.FunctionNotFoundError):
        lib.get_function("tvmgen_default_fused_nn_softmax")  # not on the root itself


def test_call_kernel_directly(mlp):
    lib = graphrt.load_module(mlp.path("deploy_lib.so"))
    softmax = lib["tvmgen_default_fused_nn_softmax"]
    x = np.random.RandomState(0).randn(1, 10).astype("float32")
    out = graphrt.nd.empty((1, 10), "float32")
    softmax(graphrt.nd.array(x), out)
    e = np.exp(x - x.max())
    np.testing.assert_allclose(out.numpy(), e / e.sum(), rtol=1e-5)
    with pytest.raises(graphrt.GraphrtError):
        softmax(graphrt.nd.array(x))  # wrong number of arguments: the kernel says so


def test_registry(lib_ok):
    names = graphrt.list_global_func_names()
    assert "tvm.graph_executor.create" in names
    assert graphrt.get_global_func("no.such.function", allow_missing=True) is None
    with pytest.raises(graphrt.GraphrtError, match="no.such.function"):
        graphrt.get_global_func("no.such.function")


def test_error_missing_file(lib_ok, tmp_path):
    missing = str(tmp_path / "nope.so")
    with pytest.raises(graphrt.GraphrtError) as e:
        graphrt.load_module(missing)
    assert "nope.so" in str(e.value)
    bad = tmp_path / "bad.so"
    bad.write_bytes(b"not an elf file")
    with pytest.raises(graphrt.GraphrtError):
        graphrt.load_module(str(bad))
    with pytest.raises(graphrt.GraphrtTypeError):
        graphrt.load_module(42)


def test_error_bad_function(mlp):
    lib = graphrt.load_module(mlp.path("deploy_factory.so"))
    with pytest.raises(graphrt.GraphrtError, match="no_such_fn"):
        lib["no_such_fn"]
    with pytest.raises(AttributeError):
        lib["no_such_fn"]


def test_error_unknown_input_and_wrong_shape(mlp):
    lib = graphrt.load_module(mlp.path("deploy_factory.so"))
    gmod = graph_executor.GraphModule(lib["default"](graphrt.cpu(0)))
    with pytest.raises(graphrt.GraphrtError, match="nonexistent"):
        gmod.set_input("nonexistent", np.zeros((1, 1, 28, 28), "float32"))
    with pytest.raises(graphrt.GraphrtError, match="shape"):
        gmod.set_input("data", np.zeros((1, 784 + 1), "float32"))
    with pytest.raises(graphrt.GraphrtError, match="shape"):
        gmod.set_input("data", graphrt.nd.empty((2, 2)))
    with pytest.raises(graphrt.GraphrtError):
        gmod.get_output(99)
    with pytest.raises(graphrt.GraphrtError):
        gmod.load_params(b"garbage params")
    with pytest.raises(graphrt.GraphrtTypeError):
        gmod.set_input("data", object())
    # float64 data is converted to the input's dtype
    gmod.set_input("data", mlp.inputs()["data"].astype("float64"))
    gmod.run()
    mlp.check(gmod.get_output(0).numpy(), 0)


def test_wrong_argument_types(mlp):
    lib = graphrt.load_module(mlp.path("deploy_factory.so"))
    with pytest.raises(graphrt.GraphrtError):
        lib["default"]("cpu-as-a-string-is-wrong")
    with pytest.raises(graphrt.GraphrtTypeError):
        lib["default"](object())
    with pytest.raises(graphrt.GraphrtError):
        graph_executor.GraphModule(lib)  # a factory is not an executor
    with pytest.raises(graphrt.GraphrtError, match="memory plan"):
        graph_executor.from_factory(lib, graphrt.cpu(0), memory_plan="bogus")
    with pytest.raises(graphrt.GraphrtError):
        graphrt.nd.empty((2,), "notadtype")


def test_freed_objects_are_safe(mlp):
    lib = graphrt.load_module(mlp.path("deploy_factory.so"))
    f = lib["default"]
    a = graphrt.nd.empty((2,))
    a.free()
    a.free()  # twice is fine
    with pytest.raises(graphrt.GraphrtError, match="freed"):
        a.numpy()
    with pytest.raises(graphrt.GraphrtError, match="freed"):
        f(a)
    lib.free()
    with pytest.raises(graphrt.GraphrtError, match="freed"):
        lib["default"]
    # the function still holds its module: calling it works
    gm = graph_executor.GraphModule(f(graphrt.cpu(0)))
    gm.run(**mlp.inputs())
    f.free()
    with pytest.raises(graphrt.GraphrtError, match="freed"):
        f(graphrt.cpu(0))


def test_params_errors(lib_ok):
    with pytest.raises(graphrt.GraphrtError):
        graphrt.load_param_dict(b"\x00" * 40)
    with pytest.raises(graphrt.GraphrtError, match="magic"):
        graphrt.load_param_dict("not bytes")  # a str is taken as bytes, as TVM code passes them
    with pytest.raises(graphrt.GraphrtTypeError):
        graphrt.load_param_dict(42)
    d = {"w": np.arange(6, dtype="float32").reshape(2, 3), "b": np.array([1, 2], "int64")}
    back = graphrt.load_param_dict(graphrt.save_param_dict(d))
    assert list(back) == ["w", "b"]
    np.testing.assert_array_equal(back["w"].numpy(), d["w"])
    np.testing.assert_array_equal(back["b"].numpy(), d["b"])


def test_library_path_env(lib_ok, tmp_path):
    import subprocess
    import sys
    env = dict(os.environ, GRAPHRT_LIBRARY_PATH=str(tmp_path / "missing.so"))
    code = "import graphrt\ntry:\n graphrt.version()\nexcept graphrt.GraphrtError as e:\n print('ERR', e)\n"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         cwd=os.path.join(os.path.dirname(__file__), "..", "..", "python"))
    assert "ERR" in out.stdout and "GRAPHRT_LIBRARY_PATH" in out.stdout


def test_cuda_if_available(lib_ok):
    from _cases import Case, case_dir
    dev = graphrt.cuda(0)
    if not dev.exist:
        pytest.skip("no CUDA device: %s" % dev.unavailable_reason)
    case_dir("mlp_cuda")
    case = Case("mlp_cuda")
    lib = graphrt.load_module(case.path("deploy_factory.so"))
    gmod = graph_executor.GraphModule(lib["default"](dev))
    gmod.run(**case.inputs())
    case.check(gmod.get_output(0).numpy(), 0)
    a = graphrt.nd.array(np.arange(4, dtype="float32"), dev)
    assert a.device == dev
    np.testing.assert_array_equal(a.numpy(), np.arange(4, dtype="float32"))
