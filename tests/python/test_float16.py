"""float16 / bfloat16 models: kernels compiled here call the compiler's half-precision helpers,
which graphrt must provide (both loaders), bit-exact against numpy; float16/bfloat16 values go
through set_input/get_output, params and numpy. A library importing a symbol nobody defines
fails at load_module, naming it, and the process goes on."""
import os
import subprocess
import sys

import numpy as np
import pytest

import graphrt
from graphrt import graph_executor
from graphrt import params as gparams

import _float16_model as model

COMPILERS = ["clang-14", "gcc"]


@pytest.fixture(scope="module", params=COMPILERS)
def kernel_lib(request, tmp_path_factory):
    cc = request.param
    if not model.compiler_available(cc):
        pytest.skip("%s not installed" % cc)
    path = model.build_library(cc, str(tmp_path_factory.mktemp("f16_" + cc)))
    return cc, path


def test_kernel_library_imports_the_half_helpers(kernel_lib):
    # The point of the test model: the helpers are imports the runtime must satisfy.
    cc, path = kernel_lib
    assert model.undefined_symbols(path) >= model.EXPECTED_IMPORTS[cc]


def _run(lib, params_bytes, inputs):
    gmod = graph_executor.create(model.graph_json(), lib, graphrt.cpu(0))
    gmod.load_params(params_bytes)
    gmod.set_input(**inputs)
    gmod.run()
    return [gmod.get_output(i) for i in range(gmod.get_num_outputs())]


def _params_bytes(params):
    return gparams.save_param_dict({"w": params["w"], "c": graphrt.nd.array(params["c"], dtype="bfloat16")})


@pytest.mark.parametrize("loader", ["dlopen", "elf"])
def test_float16_model_bit_exact(kernel_lib, loader, lib_ok):
    _, path = kernel_lib
    inputs, params, expected = model.make_data()
    outs = _run(graphrt.load_module(path, loader=loader), _params_bytes(params), inputs)
    assert [o.dtype for o in outs] == ["float16", "float16", "bfloat16"]
    got = [o.numpy() for o in outs]
    assert got[0].dtype == np.float16 and got[2].dtype == np.uint16  # bfloat16 as bits, as TVM gives them
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g.view(np.uint16), e.view(np.uint16))


def test_float16_params_round_trip(lib_ok):
    inputs, params, _ = model.make_data(seed=3)
    data = _params_bytes(params)
    back = gparams.load_param_dict(data)
    assert back["w"].dtype == "float16" and back["c"].dtype == "bfloat16"
    np.testing.assert_array_equal(back["w"].numpy().view(np.uint16), params["w"].view(np.uint16))
    np.testing.assert_array_equal(back["c"].numpy(), params["c"])


def test_bfloat16_from_floats_rounds_to_nearest_even(lib_ok):
    values = np.array([1.0, 1.00390625, 1.01171875, -2.5e38, 3.4e38, np.inf, -0.0], dtype=np.float32)
    arr = graphrt.nd.array(values, dtype="bfloat16")
    assert arr.dtype == "bfloat16"
    # 1 + 2^-8 is a tie (rounds down to even), 1 + 3*2^-8 a tie rounding up; 3.4e38 overflows.
    np.testing.assert_array_equal(arr.numpy(), [0x3F80, 0x3F80, 0x3F82, 0xFF3C, 0x7F80, 0x7F80, 0x8000])
    assert np.isnan(model.bfloat16_values(graphrt.nd.array(np.float32([np.nan]), dtype="bfloat16").numpy()))[0]


def test_set_input_casts_to_bfloat16_and_float16(kernel_lib, lib_ok):
    _, path = kernel_lib
    inputs, params, expected = model.make_data(seed=5)
    gmod = graph_executor.create(model.graph_json(), graphrt.load_module(path), graphrt.cpu(0))
    gmod.load_params(_params_bytes(params))
    # float32 values: float16 inputs are cast as numpy casts, bfloat16 ones rounded to nearest even
    gmod.set_input("x", inputs["x"].astype(np.float32))
    gmod.set_input("b", model.bfloat16_values(inputs["b"]))
    gmod.run()
    for i, e in enumerate(expected):
        np.testing.assert_array_equal(gmod.get_output(i).numpy().view(np.uint16), e.view(np.uint16))
    assert gmod.get_input("b").dtype == "bfloat16"
    np.testing.assert_array_equal(gmod.get_input("b").numpy(), inputs["b"])


def test_missing_symbol_fails_at_load_naming_every_symbol(tmp_path, lib_ok, mlp):
    if not model.compiler_available("gcc"):
        pytest.skip("gcc not installed")
    path = model.build_library("gcc", str(tmp_path), source="missing_symbols.c", nostdlib=False)
    for loader in ["dlopen", "elf"]:
        with pytest.raises(graphrt.GraphrtError) as e:
            graphrt.load_module(path, loader=loader)
        msg = str(e.value)
        assert "\n" not in msg, msg
        assert "graphrt_test_undefined_alpha" in msg and "graphrt_test_undefined_beta" in msg, msg
    # The process lives on and still runs models.
    lib = graphrt.load_module(mlp.path("deploy_factory.so"))
    gmod = graph_executor.GraphModule(lib["default"](graphrt.cpu(0)))
    gmod.set_input(**mlp.inputs())
    gmod.run()
    mlp.check(gmod.get_output(0).numpy(), 0)


def test_missing_symbol_does_not_kill_a_fresh_process(tmp_path, lib_ok):
    # The failure mode being fixed was exit 127 from the lazy binder: check it in a clean process.
    if not model.compiler_available("gcc"):
        pytest.skip("gcc not installed")
    path = model.build_library("gcc", str(tmp_path), source="missing_symbols.c", nostdlib=False)
    code = ("import graphrt\n"
            "try:\n    graphrt.load_module(%r)\nexcept graphrt.GraphrtError as e:\n    print('refused:', e)\n" % path)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("refused:") and "graphrt_test_undefined_alpha" in r.stdout, r.stdout
