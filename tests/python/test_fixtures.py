"""Every CPU fixture runs through the Python API and matches TVM's outputs, in both forms."""
import json
import numpy as np
import pytest

import graphrt
from graphrt import graph_executor


def _run(gmod, case):
    gmod.set_input(**case.inputs())
    gmod.run()
    n = len(case.info["outputs"])
    assert gmod.get_num_outputs() == n
    for i in range(n):
        case.check(gmod.get_output(i).numpy(), i)


def test_one_file_factory(case):
    lib = graphrt.load_module(case.path("deploy_factory.so"))
    assert lib.type_key == "GraphExecutorFactory"
    gmod = graph_executor.GraphModule(lib["default"](graphrt.cpu(0)))
    _run(gmod, case)
    # run twice: same result (no state leaks between runs)
    _run(gmod, case)


def test_three_file(case):
    lib = graphrt.load_module(case.path("deploy_lib.so"))
    with open(case.path("deploy_graph.json")) as f:
        graph_json = f.read()
    with open(case.path("deploy_params.params"), "rb") as f:
        params = f.read()
    gmod = graph_executor.create(graph_json, lib, graphrt.cpu(0))
    gmod.load_params(params)
    _run(gmod, case)


@pytest.mark.parametrize("plan", ["tvm", "liveness"])
def test_memory_plans(case, plan):
    lib = graphrt.load_module(case.path("deploy_factory.so"))
    gmod = graph_executor.from_factory(lib, graphrt.cpu(0), memory_plan=plan)
    _run(gmod, case)
    report = gmod.memory_report()
    assert report["active"] == plan
    with open(case.path("deploy_graph.json")) as f:
        concats = sum(1 for n in json.load(f)["nodes"] if "concatenate" in n.get("attrs", {}).get("func_name", ""))
    assert report["liveness_concatenations_in_place"] == concats  # squeezenet1.1: all 8, under either plan


def test_three_file_with_options(case):
    lib = graphrt.load_module(case.path("deploy_lib.so"))
    with open(case.path("deploy_graph.json")) as f:
        graph_json = f.read()
    gmod = graph_executor.create(graph_json, lib, graphrt.cpu(0), memory_plan="liveness", device_graph=False)
    with open(case.path("deploy_params.params"), "rb") as f:
        gmod.load_params(f.read())
    _run(gmod, case)


def test_input_info(case):
    lib = graphrt.load_module(case.path("deploy_factory.so"))
    gmod = graph_executor.GraphModule(lib["default"](graphrt.cpu(0)))
    info = gmod.get_input_info()
    for name, spec in case.info["inputs"].items():
        assert info["shape"][name] == tuple(spec["shape"])
        assert info["dtype"][name] == spec["dtype"]
        idx = gmod.get_input_index(name)
        assert idx >= 0 and gmod.get_input_name(idx) == name
        assert gmod.get_input(name).shape == tuple(spec["shape"])
    assert gmod.get_input_index("definitely_not_an_input") == -1
    assert gmod.get_num_inputs() >= len(case.info["inputs"])


def test_params_roundtrip_byte_identical(case):
    with open(case.path("deploy_params.params"), "rb") as f:
        blob = f.read()
    params = graphrt.load_param_dict(blob)
    assert graphrt.save_param_dict(params) == blob
    # numpy values give the same bytes too
    again = graphrt.save_param_dict({k: v.numpy() for k, v in params.items()})
    assert again == blob


def test_factory_params_match_file(case):
    lib = graphrt.load_module(case.path("deploy_factory.so"))
    from_factory = graphrt.load_param_dict(lib["get_params_bytes"]())
    with open(case.path("deploy_params.params"), "rb") as f:
        from_file = graphrt.load_param_dict(f.read())
    assert set(from_factory) == set(from_file)
    for k in from_file:
        assert np.array_equal(from_factory[k].numpy(), from_file[k].numpy())
    assert lib["get_graph_json"]().startswith("{")


def test_share_params(case):
    lib = graphrt.load_module(case.path("deploy_lib.so"))
    with open(case.path("deploy_graph.json")) as f:
        graph_json = f.read()
    with open(case.path("deploy_params.params"), "rb") as f:
        params = f.read()
    a = graph_executor.create(graph_json, lib, graphrt.cpu(0))
    a.load_params(params)
    b = graph_executor.create(graph_json, lib, graphrt.cpu(0))
    b.share_params(a, params)
    _run(b, case)


def test_benchmark_and_profile(mlp):
    lib = graphrt.load_module(mlp.path("deploy_factory.so"))
    gmod = graph_executor.GraphModule(lib["default"](graphrt.cpu(0)))
    gmod.set_input(**mlp.inputs())
    r = gmod.benchmark(repeat=3, number=2)
    assert len(r.results) == 3 and r.min <= r.median <= r.max and r.mean > 0 and r.std >= 0
    assert "mean (ms)" in str(r)
    table = gmod.profile()
    assert "tvmgen_default_fused_nn_softmax" in table


def test_profile_trace(mlp, tmp_path):
    import json
    lib = graphrt.load_module(mlp.path("deploy_factory.so"))
    gmod = graph_executor.GraphModule(lib["default"](graphrt.cpu(0)))
    gmod.set_input(**mlp.inputs())
    path = tmp_path / "trace.json"
    gmod.profile_trace(str(path), runs=2)
    json.loads(path.read_text())


def test_get_output_into_out(mlp):
    lib = graphrt.load_module(mlp.path("deploy_factory.so"))
    gmod = graph_executor.GraphModule(lib["default"](graphrt.cpu(0)))
    gmod.run(**mlp.inputs())
    out = graphrt.nd.empty((1, 10), "float32")
    assert gmod.get_output(0, out) is out
    mlp.check(out.numpy(), 0)


def test_missing_fixtures_fail_in_ci_and_skip_elsewhere(monkeypatch):
    from _cases import skip_without_fixtures
    monkeypatch.delenv("GRAPHRT_REQUIRE_FIXTURES", raising=False)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="required in CI"):
        skip_without_fixtures("mlp fixture")
    monkeypatch.delenv("CI")
    monkeypatch.setenv("GRAPHRT_REQUIRE_FIXTURES", "1")
    with pytest.raises(pytest.fail.Exception, match="required in CI"):
        skip_without_fixtures("mlp fixture")
    monkeypatch.setenv("GRAPHRT_REQUIRE_FIXTURES", "0")
    with pytest.raises(pytest.skip.Exception, match="mlp fixture not found"):
        skip_without_fixtures("mlp fixture")


def test_executors_run_from_several_threads_match_tvm(case):
    """Four executors, each run from its own Python thread (run() releases the GIL), as
    perf_compare's throughput runs do: every run gives TVM's outputs."""
    import threading
    lib = graphrt.load_module(case.path("deploy_factory.so"))
    inputs = case.inputs()
    expected = case.expected()
    errors = []

    def work(gmod):
        try:
            for _ in range(10):
                gmod.run()
                for i in range(len(expected)):
                    case.check(gmod.get_output(i).numpy(), i)
        except Exception as e:  # reported by the main thread
            errors.append(e)

    mods = []
    for _ in range(4):
        gmod = graph_executor.GraphModule(lib["default"](graphrt.cpu(0)))
        gmod.set_input(**inputs)
        mods.append(gmod)
    threads = [threading.Thread(target=work, args=(m,)) for m in mods]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
