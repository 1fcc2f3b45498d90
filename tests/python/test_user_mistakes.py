"""What a new user meets in Python: paths as written in README, and errors (not garbage) when a
step is missing."""
import os

import numpy as np
import pytest

import graphrt
from graphrt import graph_executor
from _cases import case_dir


@pytest.fixture
def in_mlp_dir(mlp, monkeypatch):
    monkeypatch.chdir(mlp.dir)
    return mlp


# ---- item 1 ----
def test_load_module_bare_relative_path(in_mlp_dir):
    lib = graphrt.load_module("deploy_factory.so")
    gmod = graph_executor.GraphModule(lib["default"](graphrt.cpu(0)))
    gmod.set_input("data", np.load("input_data.npy"))
    gmod.run()
    in_mlp_dir.check(gmod.get_output(0).numpy(), 0)


def test_load_module_bare_relative_path_elf_loader(in_mlp_dir):
    lib = graphrt.load_module("deploy_lib.so", loader="elf")
    assert lib.type_key == "library"


# ---- item 3 ----
def test_cuda_model_on_cpu_is_refused_at_create(lib_ok):
    lib = graphrt.load_module(os.path.join(case_dir("mlp_cuda"), "deploy_factory.so"))
    with pytest.raises(graphrt.GraphrtError, match=r"wants a CUDA device .*device_index.*graphrt\.cuda\(0\)"):
        lib["default"](graphrt.cpu(0))


# ---- item 4 ----
def test_run_without_load_params_raises_naming_the_params(mlp):
    lib = graphrt.load_module(mlp.path("deploy_lib.so"))
    with open(mlp.path("deploy_graph.json")) as f:
        gmod = graph_executor.create(f.read(), lib, graphrt.cpu(0))
    gmod.set_input("data", np.load(mlp.path("input_data.npy")))
    with pytest.raises(graphrt.GraphrtError, match=r"params not loaded: p0, p1, p2, p3, p4, p5; load them with load_params"):
        gmod.run()
    with open(mlp.path("deploy_params.params"), "rb") as f:
        gmod.load_params(f.read())
    gmod.run()
    mlp.check(gmod.get_output(0).numpy(), 0)


# ---- item 5 ----
def test_run_before_inputs_are_set_raises(mlp):
    gmod = graph_executor.GraphModule(graphrt.load_module(mlp.path("deploy_factory.so"))["default"](graphrt.cpu(0)))
    with pytest.raises(graphrt.GraphrtError, match=r"inputs not set: data; set them with set_input"):
        gmod.run()


def test_get_output_before_run_raises(mlp):
    gmod = graph_executor.GraphModule(graphrt.load_module(mlp.path("deploy_factory.so"))["default"](graphrt.cpu(0)))
    with pytest.raises(graphrt.GraphrtError, match=r"output 0 read before run\(\)"):
        gmod.get_output(0)
    gmod.set_input("data", np.load(mlp.path("input_data.npy")))
    gmod.run()
    mlp.check(gmod.get_output(0).numpy(), 0)


# ---- item 8: zero-copy from Python, graphrt.from_dlpack ----
def test_set_input_zero_copy_wrapper_and_alignment_rule(mlp):
    gmod = graph_executor.GraphModule(graphrt.load_module(mlp.path("deploy_factory.so"))["default"](graphrt.cpu(0)))
    x = graphrt.nd.array(np.load(mlp.path("input_data.npy")))
    gmod.set_input_zero_copy("data", x)
    out = graphrt.nd.empty((1, 10), "float32")
    gmod.set_output_zero_copy(0, out)
    gmod.run()
    mlp.check(out.numpy(), 0)
    with pytest.raises(graphrt.GraphrtTypeError, match="graphrt NDArray"):
        gmod.set_input_zero_copy("data", np.zeros((1, 1, 28, 28), "float32"))
    # a view 4 bytes into a buffer breaks the 64-byte alignment rule
    big = np.zeros(1 + 28 * 28, "float32")
    shifted = graphrt.from_dlpack(big[1:].reshape(1, 1, 28, 28))
    with pytest.raises(graphrt.GraphrtError, match="64-byte aligned"):
        gmod.set_input_zero_copy("data", shifted)


def test_from_dlpack_at_top_level(lib_ok):
    a = np.arange(6, dtype="float32")
    g = graphrt.from_dlpack(a)
    assert g.shape == (6,)
    a[0] = 42
    assert g.numpy()[0] == 42


# ---- item 6: a library that is not a TVM module is refused at load; trust_exports opts in ----
def test_libm_is_refused_at_load(lib_ok):
    from _not_tvm import libm_path
    libm = libm_path()
    with pytest.raises(graphrt.GraphrtError) as e:
        graphrt.load_module(libm)
    msg = str(e.value)
    assert "not a TVM module" in msg and libm in msg, msg
    # trust_exports cannot make a system library's functions packed functions: not offered.
    assert "looks like a system library, not a model" in msg and "trust_exports" not in msg, msg
    assert "\n" not in msg.strip(), msg


@pytest.mark.parametrize("loader", ["dlopen", "elf"])
def test_hand_written_kernels_run_with_trust_exports(lib_ok, tmp_path, loader):
    from _not_tvm import add_one_graph, build_add_one
    path = build_add_one(tmp_path)
    with pytest.raises(graphrt.GraphrtError, match="not a TVM module.*trust_exports"):
        graphrt.load_module(path, loader=loader)
    lib = graphrt.load_module(path, loader=loader, trust_exports=True)
    gmod = graph_executor.create(add_one_graph(4), lib, graphrt.cpu(0))
    x = np.array([-1.5, 0.0, 2.25, 7.0], dtype=np.float32)
    gmod.set_input("x", x)
    gmod.run()
    np.testing.assert_array_equal(gmod.get_output(0).numpy(), x + 1)


def test_data_symbols_of_a_tvm_library_are_not_functions(mlp):
    lib = graphrt.load_module(mlp.path("deploy_lib.so"))
    assert lib.implements_function("tvmgen_default_fused_nn_softmax")
    for name in ("__TVMAPISetLastError", "__TVMBackendParallelLaunch"):
        assert not lib.implements_function(name), name


# ---- the library's one diagnosis: Python says what graphrt-run says ----
def test_load_module_of_a_params_file_says_what_it_is(mlp):
    with pytest.raises(graphrt.GraphrtError) as info:
        graphrt.load_module(mlp.path("deploy_params.params"))
    msg = str(info.value)
    assert "is a params file (TVM's save_param_dict format), not a model library" in msg, msg
    assert "bad magic" not in msg and "option: params" in msg, msg


def test_load_module_of_a_graph_json_says_what_it_is(mlp):
    with pytest.raises(graphrt.GraphrtError, match="is a graph JSON .* not a model library"):
        graphrt.load_module(mlp.path("deploy_graph.json"), loader="elf")


def test_default_of_a_relax_executable_says_use_a_relax_vm():
    from _relax_cases import RelaxCase
    lib = graphrt.load_module(RelaxCase("relax_mlp").path("deploy_relax.so"))
    with pytest.raises(graphrt.FunctionNotFoundError) as info:
        lib["default"]
    msg = str(info.value)
    assert "has no function 'default'" in msg and "this is a Relax executable" in msg, msg
    assert "relax.VirtualMachine(lib, dev)" in msg, msg
