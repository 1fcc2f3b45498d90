"""TVM v0.18 deploy code, written as TVM's tutorials write it, runs with `import graphrt as tvm`
on the fixtures and gives TVM's outputs."""
import json
import os
import warnings

import numpy as np
import pytest

import graphrt as tvm
from graphrt.contrib import graph_executor
from graphrt.contrib.debugger import debug_executor


def _three_file(case):
    """The case's three-file export (graph JSON, kernels, params); skips cases shipped as .tar only."""
    if not os.path.isfile(case.path("deploy_graph.json")):
        pytest.skip("%s has no three-file export" % case.name)
    return case.path("deploy_graph.json"), case.path("deploy_lib.so"), case.path("deploy_params.params")


def _check_outputs(module, case):
    n = len(case.info["outputs"])
    assert module.get_num_outputs() == n
    for i in range(n):
        case.check(module.get_output(i).numpy(), i)


def test_relay_quick_start_deploy(case):
    # relay_quick_start.py, "Save and Load Compiled Module": dev = tvm.device(str(target), 0)
    dev = tvm.device("llvm -keys=cpu -mcpu=core-avx2", 0)
    loaded_lib = tvm.runtime.load_module(case.path("deploy_factory.so"))
    module = graph_executor.GraphModule(loaded_lib["default"](dev))
    inputs = {k: tvm.nd.array(v) for k, v in case.inputs().items()}
    module.run(**inputs)
    _check_outputs(module, case)
    # ... and the set_input / run / get_output(i, out) spelling of the same
    module.set_input(**case.inputs())
    module.run()
    for i, spec in enumerate(case.info["outputs"]):
        out = tvm.nd.empty(spec["shape"], spec["dtype"])
        case.check(module.get_output(i, out).numpy(), i)


def test_classic_three_file_deploy(case):
    dev = tvm.cpu()
    path_graph, path_lib, path_params = _three_file(case)
    loaded_json = open(path_graph).read()
    loaded_lib = tvm.runtime.load_module(path_lib)
    loaded_params = bytearray(open(path_params, "rb").read())
    module = graph_executor.create(loaded_json, loaded_lib, dev)
    module.load_params(loaded_params)
    for name, value in case.inputs().items():
        module.set_input(name, tvm.nd.array(value))
    module.run()
    _check_outputs(module, case)


def test_set_input_of_all_params_like_tvm(case):
    # relay.build's params handed to set_input(**params), the pre-factory deploy style.
    dev = tvm.cpu(0)
    path_graph, path_lib, path_params = _three_file(case)
    lib = tvm.runtime.load_module(path_lib)
    module = graph_executor.create(open(path_graph).read(), lib, dev)
    params = tvm.runtime.load_param_dict(open(path_params, "rb").read())
    module.set_input(**params)
    module.run(**case.inputs())
    _check_outputs(module, case)


@pytest.fixture
def mlp_module(mlp):
    dev = tvm.device("llvm -mcpu=core-avx2")
    lib = tvm.runtime.load_module(mlp.path("deploy_factory.so"))
    module = graph_executor.GraphModule(lib["default"](dev))
    return module, dev


def test_tune_network_x86_benchmark(mlp, mlp_module):
    module, dev = mlp_module
    data_tvm = tvm.nd.array(mlp.inputs()["data"])
    module.set_input("data", data_tvm)
    result = module.benchmark(dev, number=10, repeat=3)
    assert len(result.results) == 3 and all(r > 0 for r in result.results)
    assert result.min <= result.median <= result.max and result.min <= result.mean <= result.max
    assert result.std >= 0 and "mean (ms)" in str(result)
    # the older spelling of the same tutorial
    ftimer = module.module.time_evaluator("run", dev, number=5, repeat=4, min_repeat_ms=5)
    prof_res = np.array(ftimer().results) * 1e3
    assert prof_res.shape == (4,) and (prof_res > 0).all()
    _check_outputs(module, mlp)


def test_benchmark_takes_every_tvm_keyword(mlp, mlp_module):
    module, dev = mlp_module
    x = mlp.inputs()["data"]
    r = module.benchmark(dev, func_name="run", repeat=2, number=2, min_repeat_ms=1, limit_zero_time_iterations=10,
                         end_to_end=False, cooldown_interval_ms=1, repeats_to_cooldown=2, data=x)
    assert len(r.results) == 2
    # end_to_end: each timed run copies the keyword inputs in and the outputs out
    other = (x * 0.5).astype(x.dtype)
    r = module.benchmark(dev, repeat=3, number=2, end_to_end=True, data=other)
    assert len(r.results) == 3 and r.mean > 0
    np.testing.assert_array_equal(module.get_input("data").numpy(), other)
    after_end_to_end = module.get_output(0).numpy()
    module.set_input(data=other)
    module.run()
    np.testing.assert_array_equal(module.get_output(0).numpy(), after_end_to_end)
    with pytest.raises(tvm.TVMError, match="number must be an int >= 1"):
        module.module.time_evaluator("run", dev, number=0)
    with pytest.raises(tvm.TVMError, match="number and repeat must be >= 1"):  # the library's own check
        tvm.get_global_func("runtime.RPCTimeEvaluator")(module.module, "run", 1, 0, 1, 0, 0, 100, 0, 1, 0, "")
    with pytest.raises(tvm.TVMError, match="no_such_function"):
        module.module.time_evaluator("no_such_function", dev)


def test_time_evaluator_calls_with_arguments(mlp, mlp_module):
    module, dev = mlp_module
    # time_evaluator passes its own arguments through: set_input("data", x) timed
    x = tvm.nd.array(mlp.inputs()["data"])
    r = module.module.time_evaluator("set_input", dev, number=3, repeat=2)("data", x)
    assert len(r.results) == 2
    np.testing.assert_array_equal(module.get_input("data").numpy(), x.numpy())


def test_set_input_skips_unknown_keys_like_tvm(mlp, mlp_module):
    module, _ = mlp_module
    x = mlp.inputs()["data"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module.set_input(data=x, not_an_input=x)
    assert [str(w.message) for w in caught if issubclass(w.category, graph_executor.UnusedInputWarning)] == [
        "set_input: skipped 1 key(s) that are no graph input: not_an_input (set_input_strict raises)"]
    module.run()
    _check_outputs(module, mlp)
    with pytest.raises(tvm.TVMError, match="not_an_input"):
        module.set_input_strict(data=x, not_an_input=x)
    with pytest.raises(tvm.TVMError):
        module.set_input("not_an_input", x)  # a named key stays an error, as in TVM
    # graphrt's own GraphModule stays strict
    strict = tvm.graph_executor.GraphModule(module.module)
    with pytest.raises(tvm.TVMError, match="not_an_input"):
        strict.set_input(not_an_input=x)


def test_get_input_info_is_a_pair(mlp, mlp_module):
    module, _ = mlp_module
    shape_dict, dtype_dict = module.get_input_info()
    spec = mlp.info["inputs"]["data"]
    assert shape_dict == {"data": tuple(spec["shape"])} and dtype_dict == {"data": spec["dtype"]}
    info = module.get_input_info()
    assert info["shape"] is info[0] and info["dtype"] is info[1]


def test_devices_from_target_strings(lib_ok):
    assert tvm.device("llvm -mcpu=core-avx2") == tvm.cpu(0)
    assert tvm.device("llvm -keys=cpu -mtriple=x86_64-linux-gnu", 0) == tvm.cpu(0)
    assert tvm.device("c") == tvm.cpu(0) and tvm.device("cpu", 0) == tvm.cpu(0)
    assert tvm.device("cuda -arch=sm_90", 1) == tvm.cuda(1)
    assert tvm.device("nvptx") == tvm.cuda(0) and tvm.device("cuda:2") == tvm.cuda(2)
    assert tvm.device(2, 0) == tvm.cuda(0) and tvm.device(tvm.cpu(3)) == tvm.cpu(3)
    assert tvm.runtime.device("vulkan").device_type == tvm.Device.kDLVulkan
    with pytest.raises(tvm.TVMError, match="unknown device"):
        tvm.device("tpu")
    with pytest.raises(tvm.TVMError, match="bad device"):
        tvm.device("cuda:x")


def test_runtime_namespace(lib_ok, mlp):
    assert tvm.runtime.enabled("llvm") and tvm.runtime.enabled("cpu")
    assert tvm.runtime.enabled("cuda") == tvm.cuda(0).exist
    assert tvm.runtime.enabled("opencl") == tvm.opencl(0).exist
    assert tvm.runtime.enabled("metal") is False
    with pytest.raises(tvm.TVMError, match="unknown runtime target"):
        tvm.runtime.enabled("no_such_target")
    assert tvm.runtime.num_threads() >= 1
    assert isinstance(tvm.runtime.load_module(mlp.path("deploy_lib.so")), tvm.runtime.Module)
    import graphrt.runtime.ndarray as rt_nd
    assert rt_nd.array is tvm.nd.array and tvm.runtime.ndarray is tvm.nd


def test_param_dict_of_bytes_bytearray_and_str(mlp):
    blob = open(mlp.path("deploy_params.params"), "rb").read()
    ref = tvm.runtime.load_param_dict(blob)
    for form in (bytearray(blob), blob.decode("latin-1")):
        got = tvm.runtime.load_param_dict(form)
        assert list(got) == list(ref)
        for k in ref:
            np.testing.assert_array_equal(got[k].numpy(), ref[k].numpy())
    assert tvm.runtime.save_param_dict(ref) == blob
    with pytest.raises(tvm.TVMError, match="bytes"):
        tvm.runtime.load_param_dict("\u20ac")


def test_ndarray_tvm_methods(lib_ok):
    a = tvm.nd.empty((2, 3), "float32")
    x = np.arange(6, dtype="float32").reshape(2, 3)
    a[:] = x
    np.testing.assert_array_equal(a.numpy(), x)
    b = tvm.nd.empty((2, 3), "float32")
    b[:] = a
    np.testing.assert_array_equal(b.numpy(), x)
    with pytest.raises(tvm.TVMError, match=r"a\[:\]"):
        a[1:] = x
    with pytest.raises(TypeError):
        a[:] = [1, 2, 3]
    # a view 8 bytes (two floats) in, sharing memory
    v = a._create_view((2, 2), relative_byte_offset=8)
    np.testing.assert_array_equal(v.numpy(), x.reshape(-1)[2:6].reshape(2, 2))
    v[:] = np.zeros((2, 2), "float32")
    assert a.numpy().reshape(-1).tolist() == [0, 1, 0, 0, 0, 0]
    assert a._create_view((6,), "int32").dtype == "int32"
    with pytest.raises(tvm.TVMError, match="does not fit"):
        a._create_view((2, 2), relative_byte_offset=12)
    assert a.same_as(a) and not a.same_as(b) and not a.same_as(x)


def test_module_tvm_methods(mlp):
    lib = tvm.runtime.load_module(mlp.path("deploy_factory.so"))
    assert lib == lib and hash(lib) == hash(lib)
    with pytest.raises(AttributeError, match="__tvm_main__"):
        lib.entry_func
    lib.entry_name = "default"
    executor = lib(tvm.cpu(0))  # __call__ goes to the entry function
    assert executor.type_key == "GraphExecutor"
    with pytest.raises(tvm.TVMError, match="source"):
        lib.get_source()


def _heads(graph_json):
    return json.loads(graph_json)["heads"]


def test_debugger_tutorial(case, tmp_path):
    # docs/arch/debugger.rst, "How to use Debugger?"
    dev = tvm.cpu(0)
    path_graph, path_lib, path_params = _three_file(case)
    graph = open(path_graph).read()
    lib = tvm.runtime.load_module(path_lib)
    params = tvm.runtime.load_param_dict(open(path_params, "rb").read())
    dump_root = str(tmp_path / "tvmdbg")
    m = debug_executor.create(graph, lib, dev, dump_root=dump_root)
    for name, value in case.inputs().items():
        m.set_input(name, tvm.nd.array(value))
    m.set_input(**params)
    m.run(number=1, repeat=1, min_repeat_ms=0)
    for i, spec in enumerate(case.info["outputs"]):
        case.check(m.get_output(i, tvm.nd.empty(spec["shape"], spec["dtype"])).numpy(), i)

    dump_path = os.path.join(dump_root, "_tvmdbg_device_CPU_0")
    assert sorted(os.listdir(dump_path)) == ["_tvmdbg_execution_trace.json", "_tvmdbg_graph_dump.json",
                                             "output_tensors.params"]
    nodes = json.load(open(os.path.join(dump_path, "_tvmdbg_graph_dump.json")))["nodes"]
    graph_nodes = json.loads(graph)["nodes"]
    assert [n["name"] for n in nodes] == [n["name"] for n in graph_nodes]
    for n, g in zip(nodes, graph_nodes):
        assert n["op"] == ("param" if g["op"] == "null" else g["attrs"]["func_name"])
        assert n["inputs"] == [graph_nodes[e[0]]["name"] for e in g["inputs"]]
    trace = json.load(open(os.path.join(dump_path, "_tvmdbg_execution_trace.json")))
    assert len(trace["traceEvents"]) == 2 * len(graph_nodes)

    dumped = tvm.runtime.load_param_dict(open(os.path.join(dump_path, "output_tensors.params"), "rb").read())
    # every graph output is the dumped output of its node, bit for bit
    for i, (nid, index, _) in enumerate(_heads(graph)):
        key = "%s____topo-index:%d____output-num:%d" % (graph_nodes[nid]["name"], nid, index)
        case.check(dumped[key].numpy(), i)
    # inputs and params are dumped as given
    for name, value in case.inputs().items():
        nid = [n["name"] for n in graph_nodes].index(name)
        np.testing.assert_array_equal(dumped["%s____topo-index:%d____output-num:0" % (name, nid)].numpy(), value)
    for name, value in params.items():
        if name in [n["name"] for n in graph_nodes]:
            nid = [n["name"] for n in graph_nodes].index(name)
            key = "%s____topo-index:%d____output-num:0" % (name, nid)
            np.testing.assert_array_equal(dumped[key].numpy(), value.numpy())

    # debug_get_output: run up to the node that makes output 0 and read it
    nid, index, _ = _heads(graph)[0]
    if index == 0:
        case.check(m.debug_get_output(nid).numpy(), 0)
        case.check(m.debug_get_output(graph_nodes[nid]["name"]).numpy(), 0)
    with pytest.raises(AttributeError, match="no_such_node"):
        m.debug_get_output("no_such_node")


def test_debug_executor_timing_and_profile(mlp, tmp_path, capsys):
    dev = tvm.cpu(0)
    lib = tvm.runtime.load_module(mlp.path("deploy_factory.so"))
    graph = lib["get_graph_json"]()
    # the factory's debug_create, as debug_executor tutorials use with lib["debug_create"]
    m = debug_executor.GraphModuleDebug(lib["debug_create"]("default", dev), [dev], graph, str(tmp_path))
    m.set_input(**mlp.inputs())
    m.run(number=2, repeat=3, min_repeat_ms=0, sort_by_time=False)
    table = capsys.readouterr().out
    assert table.splitlines()[0].split() == ["Node", "Name", "Ops", "Time(us)", "Time(%)", "Shape", "Inputs",
                                             "Outputs", "Measurements(us)"]
    assert "tvmgen_default_fused_nn_softmax" in table
    _check_outputs(m, mlp)
    times = m.run_individual(number=2, repeat=3)
    nodes = json.loads(graph)["nodes"]
    assert len(times) == len(nodes) and all(len(t) == 3 for t in times)
    for node, t in zip(nodes, times):
        if node["op"] == "null":
            assert t == [0.0, 0.0, 0.0]
    kernel = [i for i, n in enumerate(nodes) if n["op"] == "tvm_op" and n["attrs"]["func_name"] != "__nop"][0]
    r = m.run_individual_node(kernel, number=3, repeat=2)
    assert len(r.results) == 2 and r.mean > 0
    report = m.profile(**mlp.inputs())
    assert "tvmgen_default_fused_nn_softmax" in report and report.table() == str(report)
    with pytest.raises(tvm.TVMError, match="out of range"):
        m.debug_get_output(len(nodes))
    m.exit()
    assert not os.path.exists(str(tmp_path))


def test_debug_executor_default_dump_root(mlp):
    lib = tvm.runtime.load_module(mlp.path("deploy_lib.so"))
    m = debug_executor.create(open(mlp.path("deploy_graph.json")).read(), lib, tvm.cpu(0))
    try:
        assert os.path.basename(m._dump_root).startswith("tvmdbg_")
        assert os.path.isfile(os.path.join(m._dump_root, "_tvmdbg_device_CPU_0", "_tvmdbg_graph_dump.json"))
    finally:
        m.exit()


def test_install_as_tvm_runs_tvm_code_unchanged(mlp, tmp_path):
    # In a fresh interpreter: after graphrt.install_as_tvm(), TVM's own import lines work.
    import subprocess
    import sys
    script = tmp_path / "deploy.py"
    script.write_text("""
import sys
import numpy as np
import graphrt
graphrt.install_as_tvm()
import tvm
import tvm.runtime.ndarray
from tvm.contrib import graph_executor
from tvm.contrib.debugger import debug_executor

dev = tvm.device("llvm -mcpu=core-avx2", 0)
lib = tvm.runtime.load_module(sys.argv[1] + "/deploy_factory.so")
module = graph_executor.GraphModule(lib["default"](dev))
module.run(data=tvm.nd.array(np.load(sys.argv[1] + "/input_data.npy")))
assert np.array_equal(module.get_output(0).numpy(), np.load(sys.argv[1] + "/output_0.npy"))
assert tvm is graphrt and debug_executor.create is graphrt.contrib.debugger.debug_executor.create
print("deployed")
""")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    done = subprocess.run([sys.executable, str(script), mlp.dir], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "deployed", done.stderr


def test_install_as_tvm_refuses_to_shadow_a_real_tvm(lib_ok, monkeypatch):
    import sys
    import types
    monkeypatch.setitem(sys.modules, "tvm", types.ModuleType("tvm"))
    with pytest.raises(tvm.TVMError, match="already imported"):
        tvm.install_as_tvm()
