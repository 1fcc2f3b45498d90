"""What a TVM user's code meets: get_output_info / get_output_index as TVM's, tvm.error's classes,
`from tvm import relay` saying that TVM compiles and graphrt runs, versions, and kernels called
straight from Python (NDArray type code; a failure without a message, reported once per call)."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import graphrt
from graphrt.contrib import graph_executor

PYTHON_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "python")


def test_output_info_and_index_as_tvm(mlp):
    with open(mlp.path("deploy_graph.json")) as f:
        graph = json.load(f)
    head = graph["heads"][0][0]
    name = graph["nodes"][head]["name"]
    gmod = graph_executor.GraphModule(graphrt.load_module(mlp.path("deploy_factory.so"))["default"](graphrt.cpu()))
    shapes, dtypes = gmod.get_output_info()
    assert shapes == {name: (1, 10)} and dtypes == {name: "float32"}
    assert gmod.get_output_info()["shape"] == shapes
    assert gmod.get_output_index(name) == 0
    assert gmod.get_output_index(name + ":0") == 0
    assert gmod.get_output_index("no_such_output") == -1


def run_python(code):
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)


def test_relay_under_install_as_tvm_says_tvm_compiles(lib_ok):
    p = run_python("import graphrt; graphrt.install_as_tvm()\n"
                   "import tvm\n"
                   "try:\n"
                   "    from tvm import relay\n"
                   "except ImportError as e:\n"
                   "    print('ImportError:', e)\n"
                   "try:\n"
                   "    import tvm.te\n"
                   "except ImportError as e:\n"
                   "    print('ImportError:', e)\n"
                   "print(hasattr(tvm, 'relay'))\n")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    for line, package in zip(lines, ("tvm.relay", "tvm.te")):
        assert line == ("ImportError: %s is part of TVM's compiler, which graphrt does not include: graphrt runs the "
                        "models TVM exports (export_library's deploy.so / .tar), and TVM compiles them. Build and "
                        "export the model with TVM, then load the export with tvm.runtime.load_module "
                        "(graphrt.load_module)" % package), line
    assert lines[2] == "False"
    # The runtime's own subpackages still import.
    p = run_python("import graphrt; graphrt.install_as_tvm()\n"
                   "from tvm.contrib import graph_executor\nfrom tvm import runtime, relax\nprint('ok')\n")
    assert p.returncode == 0 and p.stdout == "ok\n", p.stderr


def test_tvm_error_classes_catch_graphrt_errors(lib_ok, tmp_path):
    import graphrt as tvm
    assert tvm.error.TVMError is tvm.TVMError is graphrt.GraphrtError
    for name in ("InternalError", "RPCError", "RPCSessionTimeoutError", "OpError", "OpNotImplemented",
                 "OpAttributeRequired", "OpAttributeInvalid", "OpAttributeUnImplemented", "DiagnosticError"):
        assert issubclass(getattr(tvm.error, name), tvm.error.TVMError), name
    with pytest.raises(tvm.error.TVMError) as e:
        tvm.runtime.load_module(str(tmp_path / "missing.so"))
    assert isinstance(e.value, FileNotFoundError) and "missing.so" in str(e.value)


def test_versions(lib_ok):
    assert graphrt.version().startswith("graphrt %s " % graphrt.__version__), graphrt.version()
    import ctypes
    c = ctypes.CDLL(graphrt.library_path())
    c.graphrt_version.restype = ctypes.c_char_p
    assert c.graphrt_version().decode() == graphrt.version()


def test_kernel_called_from_python_with_ndarrays(lib_ok, tmp_path):
    from _not_tvm import build_add_one
    lib = graphrt.load_module(build_add_one(tmp_path), trust_exports=True)
    x = graphrt.nd.array(np.array([1, 2, 3], dtype="float32"))
    y = graphrt.nd.empty((3,), "float32")
    lib["add_one"](x, y)  # NDArrays: TVM's NDArray type code
    assert y.numpy().tolist() == [2, 3, 4]


def test_kernel_failing_without_a_message(lib_ok, tmp_path):
    from _not_tvm import build_add_one
    lib = graphrt.load_module(build_add_one(tmp_path), trust_exports=True)
    x = graphrt.nd.array(np.array([1, 2, 3], dtype="float32"))
    f = lib["add_one"]
    for _ in range(3):  # the same message each time: nothing carried over from the call before
        with pytest.raises(graphrt.GraphrtError) as e:
            f(x)  # one argument: the kernel returns -1 without TVMAPISetLastError
        assert str(e.value) == ("kernel 'add_one' failed without a message (it returned non-zero without calling "
                                "TVMAPISetLastError)"), str(e.value)
    # A failure after an unrelated error does not pick that error up either.
    with pytest.raises(KeyError):
        lib["no_such_function"]
    with pytest.raises(graphrt.GraphrtError, match=r"^kernel 'add_one' failed without a message"):
        f(x)
