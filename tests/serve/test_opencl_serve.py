"""graphrt-serve with config.json "device": "opencl": the relax-opencl fixtures (TVM v0.26) served on
[opencl(0), cpu], each answer within the case's tolerance of TVM's outputs, and the server stops
with exit 0; the MLC package served on the device answers with its texts. Skips without an OpenCL
device (fails in CI, where scripts/setup.sh installs PoCL)."""
import json
import os

import numpy as np
import pytest

from _server import Server, add_model, fixtures_dir, relax_config, require_module

CASES = ["relax_mlp_opencl", "relax_tuple_io_opencl", "relax_dynamic_batch_opencl"]


def _case(name):
    d = os.path.join(fixtures_dir() or "", "relax-opencl", name)
    if not os.path.isfile(os.path.join(d, "case.json")):
        pytest.skip("OpenCL fixture %s not found" % name)
    with open(os.path.join(d, "case.json")) as f:
        return d, json.load(f)


def test_opencl_models_answer_within_tolerance(tmp_path):
    require_module("requests")
    import requests
    repo = str(tmp_path / "repo")
    cases = {}
    for name in CASES:
        d, info = _case(name)
        config = dict(relax_config(info), device="opencl")
        add_model(repo, name, {"deploy_relax.so": os.path.join(d, "deploy_relax.so")}, config=config)
        cases[name] = (d, info)
    with Server(repo) as s:
        index = {m["name"]: m for m in requests.post(s.url + "/v2/repository/index", timeout=60).json()}
        for name in CASES:
            if index[name]["state"] != "READY" and "which this host cannot use" in index[name]["reason"]:
                if os.environ.get("CI", "").lower() == "true" or os.environ.get("GRAPHRT_REQUIRE_OPENCL") == "1":
                    pytest.fail("no usable OpenCL device, and CI requires one: " + index[name]["reason"])
                pytest.skip("no usable OpenCL device: " + index[name]["reason"])
            assert index[name]["state"] == "READY", index[name]
        for name, (d, info) in cases.items():
            order = info.get("input_order") or list(info["inputs"])
            for s_info in info.get("input_sets") or [{"suffix": ""}]:
                suffix = s_info.get("suffix", "")
                arrays = [np.load(os.path.join(d, "input_%s%s.npy" % (k, suffix))) for k in order]
                body = {"inputs": [{"name": k, "shape": list(a.shape),
                                    "datatype": "FP32" if a.dtype == np.float32 else "INT32",
                                    "data": a.flatten().tolist()} for k, a in zip(order, arrays)]}
                r = requests.post(s.url + "/v2/models/%s/infer" % name, json=body, timeout=120)
                assert r.status_code == 200, r.text
                outputs = r.json()["outputs"]
                assert len(outputs) == len(info["outputs"]), outputs
                for i, out in enumerate(outputs):
                    expected = np.load(os.path.join(d, "output_%d%s.npy" % (i, suffix)))
                    got = np.array(out["data"], dtype=expected.dtype).reshape(out["shape"])
                    assert got.shape == expected.shape, (name, suffix, i)
                    assert np.abs(got.astype("float64") - expected).max() <= info["tolerance"], (name, suffix, i)
        assert s.stop() == 0


def test_mlc_package_on_opencl_answers_with_case_json_text(tmp_path):
    """The MLC package (mlc/tiny_gpt2_chat) with config.json "device": "opencl": its
    tiny_gpt2_chat-opencl.so, weights and KV cache on the device, answers /v1/completions with
    case.json's greedy completions (one by one, then all three at once, batched) and
    /v1/chat/completions with the chat answer."""
    require_module("requests")
    import concurrent.futures
    import requests
    d = os.path.join(fixtures_dir() or "", "mlc", "tiny_gpt2_chat")
    if not os.path.isfile(os.path.join(d, "tiny_gpt2_chat-opencl.so")):
        pytest.skip("fixture mlc/tiny_gpt2_chat with tiny_gpt2_chat-opencl.so not found")
    with open(os.path.join(d, "case.json")) as f:
        case = json.load(f)
    repo = str(tmp_path / "repo")
    files = {n: os.path.join(d, n) for n in os.listdir(d) if not n.startswith("expected_") and n != "case.json"}
    add_model(repo, "chat", files, config={"device": "opencl"})
    with Server(repo) as s:
        index = {m["name"]: m for m in requests.post(s.url + "/v2/repository/index", timeout=60).json()}
        if index["chat"]["state"] != "READY" and "which this host cannot use" in index["chat"]["reason"]:
            if os.environ.get("CI", "").lower() == "true" or os.environ.get("GRAPHRT_REQUIRE_OPENCL") == "1":
                pytest.fail("no usable OpenCL device, and CI requires one: " + index["chat"]["reason"])
            pytest.skip("no usable OpenCL device: " + index["chat"]["reason"])
        assert index["chat"]["state"] == "READY", index["chat"]

        def complete(c):
            r = requests.post(s.url + "/v1/completions", json={"model": "chat", "prompt": c["prompt"],
                                                               "max_tokens": c["max_tokens"], "temperature": 0},
                              timeout=120)
            assert r.status_code == 200, r.text
            return r.json()["choices"][0]["text"]

        for c in case["greedy_completions"]:
            assert complete(c) == c["text"], c["prompt"]
        with concurrent.futures.ThreadPoolExecutor(3) as pool:
            texts = list(pool.map(complete, case["greedy_completions"]))
        assert texts == [c["text"] for c in case["greedy_completions"]]
        chat = case["chat"]
        r = requests.post(s.url + "/v1/chat/completions", json={"model": "chat", "messages": chat["messages"],
                                                                "max_tokens": chat["max_tokens"], "temperature": 0},
                          timeout=120)
        assert r.status_code == 200, r.text
        assert r.json()["choices"][0]["message"]["content"] == chat["text"]
        assert s.stop() == 0
