"""REST conformance: every shared CPU graph fixture and every Relax fixture served by one
graphrt-serve, inferred over JSON and over binary tensor data; outputs must be bit-identical
to what graphrt-run writes for the same inputs (and so to TVM's, which its own tests check)."""
import json
import os

import numpy as np
import pytest

from _client import assert_bit_identical, binary_request, decode_response, json_request, reference_outputs
from _server import Server, add_model, fixture_root, fixtures_dir, graph_cases, relax_cases, relax_case_dir, relax_config, \
    require_module


def _graph_ids():
    return [n for n, _ in graph_cases()] or ["no-fixtures"]


def _relax_ids():
    return relax_cases() or ["no-fixtures"]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    require_module("requests")
    root = fixture_root()
    repo = str(tmp_path_factory.mktemp("repo"))
    for name, model in graph_cases():
        add_model(repo, name, {model: os.path.join(root, name, model)})
    mlp = os.path.join(root, "mlp")
    add_model(repo, "mlp_three_file", {f: os.path.join(mlp, f) for f in
                                       ("deploy_lib.so", "deploy_graph.json", "deploy_params.params")})
    add_model(repo, "mlp", {"deploy_factory.so": os.path.join(mlp, "deploy_factory.so")}, version="3")
    for name in relax_cases():
        d = relax_case_dir(name)
        with open(os.path.join(d, "case.json")) as f:
            info = json.load(f)
        add_model(repo, name, {"deploy_relax.so": os.path.join(d, "deploy_relax.so")}, config=relax_config(info))
    add_model(repo, "relax_mlp_bare", {"model": os.path.join(root, "relax", "relax_mlp", "deploy_relax.so")})
    add_model(repo, "relax_dynamic_bare",
              {"model": os.path.join(root, "relax", "relax_dynamic_batch", "deploy_relax.so")})
    server = Server(repo, "--threads", "2")
    yield server
    assert server.stop() == 0, "graphrt-serve did not exit 0 on SIGTERM"
    assert "stopped" in "\n".join(server.stdout_lines)


def _case_inputs(d, info, suffix=""):
    order = info.get("input_order") or list(info["inputs"])
    paths = {k: os.path.join(d, "input_%s%s.npy" % (k, suffix)) for k in order}
    return paths, {k: np.load(p) for k, p in paths.items()}


def _check_both_encodings(served, model, inputs, want):
    import requests
    url = "%s/v2/models/%s/infer" % (served.url, model)
    r = requests.post(url, data=json_request(inputs, id="req-7"), headers={"Content-Type": "application/json"})
    assert r.status_code == 200, r.text
    header, got = decode_response(r)
    assert header["id"] == "req-7" and header["model_name"] == model
    assert list(got) == ["output_%d" % i for i in range(len(want))]
    for i, w in enumerate(want):
        assert_bit_identical(got["output_%d" % i], w, "%s JSON output_%d" % (model, i))
    body, headers = binary_request(inputs)
    r = requests.post(url, data=body, headers=headers)
    assert r.status_code == 200, r.text
    assert "Inference-Header-Content-Length" in r.headers
    _, got = decode_response(r)
    for i, w in enumerate(want):
        assert_bit_identical(got["output_%d" % i], w, "%s binary output_%d" % (model, i))


@pytest.mark.parametrize("name", _graph_ids())
def test_graph_fixture(served, name, tmp_path):
    if name == "no-fixtures":
        fixture_root()
    model = dict(graph_cases())[name]
    d = os.path.join(fixtures_dir(), name)
    with open(os.path.join(d, "case.json")) as f:
        info = json.load(f)
    paths, inputs = _case_inputs(d, info)
    want = reference_outputs(os.path.join(d, model), paths, str(tmp_path))
    assert len(want) == len(info["outputs"])
    if float(info.get("tolerance", 0)) == 0:
        for i, w in enumerate(want):
            assert_bit_identical(w, np.load(os.path.join(d, "output_%d.npy" % i)), "graphrt-run vs TVM")
    _check_both_encodings(served, name, inputs, want)


@pytest.mark.parametrize("name", _relax_ids())
def test_relax_fixture(served, name, tmp_path):
    if name == "no-fixtures":
        fixture_root()
    d = relax_case_dir(name)
    with open(os.path.join(d, "case.json")) as f:
        info = json.load(f)
    suffixes = [s.get("suffix", "") for s in info.get("input_sets", [])] or [""]
    for suffix in suffixes:
        paths, inputs = _case_inputs(d, info, suffix)
        out_dir = tmp_path / ("set" + suffix)
        out_dir.mkdir()
        want = reference_outputs(os.path.join(d, "deploy_relax.so"), paths, str(out_dir), info.get("entry"))
        assert len(want) == len(info["outputs"])
        _check_both_encodings(served, name, inputs, want)


def test_three_file_form_and_versions(served, tmp_path):
    import requests
    d = os.path.join(fixtures_dir(), "mlp")
    paths, inputs = _case_inputs(d, {"inputs": {"data": {}}})
    want = reference_outputs(os.path.join(d, "deploy_factory.so"), paths, str(tmp_path))
    _check_both_encodings(served, "mlp_three_file", inputs, want)
    meta = requests.get(served.url + "/v2/models/mlp").json()
    assert meta["versions"] == ["1", "3"]
    # The highest version serves by default; both answer when named.
    r = requests.post(served.url + "/v2/models/mlp/infer", data=json_request(inputs))
    assert r.json()["model_version"] == "3"
    r = requests.post(served.url + "/v2/models/mlp/versions/1/infer", data=json_request(inputs))
    assert r.status_code == 200 and r.json()["model_version"] == "1"
    r = requests.post(served.url + "/v2/models/mlp/versions/2/infer", data=json_request(inputs))
    assert r.status_code == 404 and "version" in r.json()["error"]


def test_metadata(served):
    import requests
    meta = requests.get(served.url + "/v2/models/mlp").json()
    assert meta["name"] == "mlp" and meta["platform"] == "tvm_graph"
    assert meta["inputs"] == [{"name": "data", "datatype": "FP32", "shape": [1, 1, 28, 28]}]
    assert meta["outputs"] == [{"name": "output_0", "datatype": "FP32", "shape": [1, 10]}]
    meta = requests.get(served.url + "/v2/models/multi_io/versions/1").json()
    assert [t["datatype"] for t in meta["inputs"]] == ["FP32", "INT32"]
    assert [t["name"] for t in meta["outputs"]] == ["output_0", "output_1", "output_2"]
    meta = requests.get(served.url + "/v2/models/relax_tuple_io").json()
    assert meta["platform"] == "tvm_relax"
    assert meta["inputs"] == [{"name": "x", "datatype": "FP32", "shape": [2, 3]},
                              {"name": "y", "datatype": "INT32", "shape": [2, 3]}]
    # Without config.json a Relax executable's parameters are what its code checks (dtype and
    # shape); its outputs are known only after a run.
    meta = requests.get(served.url + "/v2/models/relax_mlp_bare").json()
    assert meta["inputs"] == [{"name": "x", "datatype": "FP32", "shape": [1, 784]}] and meta["outputs"] == []
    meta = requests.get(served.url + "/v2/models/relax_dynamic_bare").json()  # a symbolic batch: -1
    assert [(t["datatype"], t["shape"][0]) for t in meta["inputs"]] == [("FP32", -1)], meta
    server = requests.get(served.url + "/v2").json()
    assert server["name"] == "graphrt-serve" and "binary_tensor_data" in server["extensions"]
    assert requests.get(served.url + "/v2/health/live").json() == {"live": True}
    assert requests.get(served.url + "/v2/health/ready").json() == {"ready": True}
    r = requests.get(served.url + "/v2/models/mlp/ready")
    assert r.status_code == 200 and r.json() == {"name": "mlp", "ready": True}
    assert requests.get(served.url + "/v2/models/nope/ready").status_code == 404


def test_relax_without_config_runs(served, tmp_path):
    import requests
    d = os.path.join(fixtures_dir(), "relax", "relax_mlp")
    x = np.load(os.path.join(d, "input_x.npy"))
    want = np.load(os.path.join(d, "output_0.npy"))
    r = requests.post(served.url + "/v2/models/relax_mlp_bare/infer", data=json_request({"x": x}))
    assert r.status_code == 200, r.text
    _, got = decode_response(r)
    assert_bit_identical(got["output_0"], want, "relax_mlp without config")


@pytest.mark.parametrize("content_type", ["application/x-www-form-urlencoded", "text/plain", None])
def test_a_json_body_is_json_whatever_the_client_calls_it(served, content_type):
    # `curl -d @body.json` and Python's urllib call any body a form: a 16 KB JSON request (over
    # the HTTP library's 8 KiB form limit) is still answered, as Triton answers it.
    import requests
    d = os.path.join(fixtures_dir(), "relax", "relax_mlp")
    x = np.load(os.path.join(d, "input_x.npy"))
    body = json_request({"x": x})
    assert len(body) > 8192
    headers = {"Content-Type": content_type} if content_type else {}
    r = requests.post(served.url + "/v2/models/relax_mlp_bare/infer", data=body, headers=headers)
    assert r.status_code == 200, r.text
    assert_bit_identical(decode_response(r)[1]["output_0"], np.load(os.path.join(d, "output_0.npy")), content_type)


def test_requested_outputs_and_mixed_encodings(served):
    import requests
    d = os.path.join(fixtures_dir(), "multi_io")
    with open(os.path.join(d, "case.json")) as f:
        info = json.load(f)
    _, inputs = _case_inputs(d, info)
    want = [np.load(os.path.join(d, "output_%d.npy" % i)) for i in range(3)]
    body, headers = binary_request(inputs, binary_outputs=False,
                                   outputs=[{"name": "output_2", "parameters": {"binary_data": True}},
                                            {"name": "output_0"}])
    r = requests.post(served.url + "/v2/models/multi_io/infer", data=body, headers=headers)
    assert r.status_code == 200, r.text
    header, got = decode_response(r)
    assert [o["name"] for o in header["outputs"]] == ["output_2", "output_0"]
    assert "data" in header["outputs"][1] and "data" not in header["outputs"][0]
    assert_bit_identical(got["output_2"], want[2], "output_2")
    assert_bit_identical(got["output_0"], want[0], "output_0")


def test_nested_data_and_parameters(served):
    import requests
    d = os.path.join(fixtures_dir(), "mlp")
    x = np.load(os.path.join(d, "input_data.npy"))
    body = {"id": "nested", "parameters": {"custom": "ignored", "n": 3, "flag": True},
            "inputs": [{"name": "data", "shape": [1, 1, 28, 28], "datatype": "FP32", "data": x.tolist(),
                        "parameters": {"note": "x"}}],
            "outputs": [{"name": "output_0", "parameters": {"binary_data": False}}]}
    r = requests.post(served.url + "/v2/models/mlp/infer", data=json.dumps(body))
    assert r.status_code == 200, r.text
    header, got = decode_response(r)
    assert header["id"] == "nested"
    assert_bit_identical(got["output_0"], np.load(os.path.join(d, "output_0.npy")), "nested input")
