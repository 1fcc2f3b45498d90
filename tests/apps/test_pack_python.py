"""The graphrt-pack demo library through the Python API, including the kernels' argument checks."""
import os
import sys

import numpy as np
import pytest

import graphrt
from graphrt import graph_executor
from test_cli import _demo_reference


@pytest.fixture
def lib_ok():
    try:
        graphrt.version()
    except graphrt.GraphrtError as e:
        pytest.skip("libgraphrt not available: %s" % e)


def test_demo_python(demo, lib_ok):
    lib = graphrt.load_module(os.path.join(demo, "demo_mlp.so"))
    assert lib.type_key == "GraphExecutorFactory"
    assert [m.type_key for m in lib.imported_modules] == ["library"]
    gmod = graph_executor.GraphModule(lib["default"](graphrt.cpu(0)))
    gmod.run(data=np.load(os.path.join(demo, "input.npy")))
    np.testing.assert_allclose(gmod.get_output(0).numpy(), _demo_reference(demo), rtol=1e-5, atol=1e-6)


def test_demo_kernel_checks_arguments(demo, lib_ok):
    lib = graphrt.load_module(os.path.join(demo, "demo_mlp.so"))
    relu = lib.get_function("demo_dense_bias_relu", query_imports=True)
    x = graphrt.nd.array(np.ones((1, 64), "float32"))
    w = graphrt.nd.array(np.ones((32, 64), "float32"))
    b = graphrt.nd.array(np.zeros((32,), "float32"))
    out = graphrt.nd.empty((1, 32))
    relu(x, w, b, out)
    assert np.all(out.numpy() == 64.0)
    with pytest.raises(graphrt.GraphrtError, match="expected 4 arguments"):
        relu(x, w, b)
    with pytest.raises(graphrt.GraphrtError, match="float32"):
        relu(x, w, graphrt.nd.array(np.zeros((32,), "int32")), out)
    with pytest.raises(graphrt.GraphrtError, match="shape"):
        relu(x, w, b, graphrt.nd.empty((1, 31)))
    with pytest.raises(graphrt.GraphrtError, match="tensor"):
        relu(x, w, 3, out)
