"""TVM v0.26's tvm.runtime names that deploy code touches (empty, from_dlpack, tensor, DataType,
convert, Shape), a missing one said by name, and the hints a newcomer's mistakes get: a graph
export handed to relax.VirtualMachine, a float64 input to a float32 Relax function."""
import os
import subprocess
import sys

import numpy as np
import pytest

import graphrt
import graphrt.runtime as rt
from _relax_cases import RelaxCase

PYTHON_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "python")


def test_empty_has_shape_dtype_device(lib_ok):
    t = rt.empty((2, 3), "int32", rt.cpu(0))
    assert t.shape == (2, 3) and t.dtype == "int32" and t.device == rt.cpu(0)
    t.copyfrom(np.arange(6, dtype=np.int32).reshape(2, 3))
    assert t.numpy().tolist() == [[0, 1, 2], [3, 4, 5]]
    with pytest.raises(graphrt.InvalidArgumentError, match="memory scope 'global.texture'"):
        rt.empty((1,), "float32", mem_scope="global.texture")


def test_from_dlpack_shares_numpy_memory(lib_ok):
    a = np.arange(4, dtype=np.float32)
    t = rt.from_dlpack(a)
    a[2] = 42.0
    assert t.numpy().tolist() == [0.0, 1.0, 42.0, 3.0]


def test_tensor_copies(lib_ok):
    a = np.ones((2, 2), dtype=np.float16)
    t = rt.tensor(a)
    a[0, 0] = 5
    assert t.dtype == "float16" and t.numpy()[0, 0] == 1


@pytest.mark.parametrize("text,code,bits,lanes,itemsize", [
    ("float32", 2, 32, 1, 4), ("int8", 0, 8, 1, 1), ("uint16", 1, 16, 1, 2), ("float16x4", 2, 16, 4, 8),
    ("bfloat16", 4, 16, 1, 2), ("bool", 1, 1, 1, 1),
])
def test_data_type_fields(lib_ok, text, code, bits, lanes, itemsize):
    d = rt.DataType(text)
    assert d == text and str(d) == text and isinstance(d, str)
    assert (d.type_code, d.bits, d.lanes, d.itemsize) == (code, bits, lanes, itemsize)


def test_data_type_from_numpy_and_lanes(lib_ok):
    assert rt.DataType(np.dtype("float64")) == "float64"
    assert rt.DataType(np.int16) == "int16"
    assert rt.DataType("float32").with_lanes(4) == "float32x4"
    assert rt.DataType("float32x4").with_lanes(1) == "float32"
    with pytest.raises(graphrt.InvalidArgumentError, match="unknown dtype 'flaot32'"):
        rt.DataType("flaot32")


def test_convert(lib_ok):
    arr = rt.convert([1, 2, [3, 4]])
    assert isinstance(arr, graphrt.runtime.Array)
    assert len(arr) == 3 and arr[0] == 1 and arr[1] == 2 and list(arr[2]) == [3, 4]
    t = rt.convert(np.arange(3, dtype=np.int64))
    assert isinstance(t, rt.Tensor) and t.numpy().tolist() == [0, 1, 2]
    assert rt.convert(7) == 7 and rt.convert("x") == "x"
    with pytest.raises(graphrt.GraphrtTypeError, match="maps are not provided"):
        rt.convert({"a": 1})


def test_shape_is_shape_tuple(lib_ok):
    assert rt.Shape is rt.ShapeTuple


def test_missing_name_is_said_by_name(lib_ok):
    with pytest.raises(AttributeError) as e:
        rt.build_module  # noqa: B018 (a compiler-side name)
    msg = str(e.value)
    assert "'build_module'" in msg and "empty" in msg and "from_dlpack" in msg and "load_module" in msg


def test_v026_names_under_import_tvm(lib_ok):
    code = ("import graphrt; graphrt.install_as_tvm()\nimport tvm, numpy as np\n"
            "t = tvm.runtime.empty((3,), 'float32', tvm.cpu()); t.copyfrom(np.ones(3, 'float32'))\n"
            "assert tvm.runtime.DataType('int32').bits == 32\n"
            "assert tvm.runtime.from_dlpack(np.zeros(2, 'int8')).shape == (2,)\n"
            "print(t.numpy().sum())\n")
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "3.0"


def test_graph_export_given_to_relax_vm_says_what_to_use(lib_ok, mlp):
    lib = graphrt.runtime.load_module(mlp.path("deploy_factory.so"))
    with pytest.raises(graphrt.GraphrtError) as e:
        graphrt.relax.VirtualMachine(lib, graphrt.cpu())
    msg = str(e.value)
    assert "graph executor factory" in msg and "GraphModule" in msg and "not relax.VirtualMachine" in msg


def test_relax_input_of_wrong_dtype_names_the_input(lib_ok):
    case = RelaxCase("ffi_relax_mlp")
    lib = graphrt.runtime.load_module(case.path("deploy_relax.so"))
    vm = graphrt.relax.VirtualMachine(lib, graphrt.cpu())
    x = np.load(case.path("input_x.npy")).astype(np.float64)
    with pytest.raises(graphrt.GraphrtError) as e:
        vm["main"](graphrt.runtime.tensor(x))
    msg = str(e.value)
    assert "input 'x' of 'main' has dtype float64, the function expects float32" in msg, msg
    assert "ErrorContext" not in msg
    x32 = np.load(case.path("input_x.npy"))
    with pytest.raises(graphrt.GraphrtError, match="input 'x' of 'main' has 1 dimensions, the function expects 2"):
        vm["main"](graphrt.runtime.tensor(x32.reshape(-1)))
