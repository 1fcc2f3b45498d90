"""graphrt-serve with config.json "device": "vulkan": the relax-vulkan fixtures (TVM v0.26) served on
[vulkan(0), cpu], each answer within the case's tolerance of TVM's outputs, and the server stops
with exit 0. Skips without a Vulkan device (fails in CI, where scripts/setup.sh installs lavapipe)."""
import json
import os

import numpy as np
import pytest

from _server import Server, add_model, fixtures_dir, relax_config, require_module

CASES = ["relax_mlp_vulkan", "relax_tuple_io_vulkan", "relax_dynamic_batch_vulkan"]


def _case(name):
    d = os.path.join(fixtures_dir() or "", "relax-vulkan", name)
    if not os.path.isfile(os.path.join(d, "case.json")):
        pytest.skip("Vulkan fixture %s not found" % name)
    with open(os.path.join(d, "case.json")) as f:
        return d, json.load(f)


def test_vulkan_models_answer_within_tolerance(tmp_path):
    require_module("requests")
    import requests
    repo = str(tmp_path / "repo")
    cases = {}
    for name in CASES:
        d, info = _case(name)
        config = dict(relax_config(info), device="vulkan")
        add_model(repo, name, {"deploy_relax.so": os.path.join(d, "deploy_relax.so")}, config=config)
        cases[name] = (d, info)
    with Server(repo) as s:
        index = {m["name"]: m for m in requests.post(s.url + "/v2/repository/index", timeout=60).json()}
        for name in CASES:
            if index[name]["state"] != "READY" and "which this host cannot use" in index[name]["reason"]:
                if os.environ.get("CI", "").lower() == "true" or os.environ.get("GRAPHRT_REQUIRE_VULKAN") == "1":
                    pytest.fail("no usable Vulkan device, and CI requires one: " + index[name]["reason"])
                pytest.skip("no usable Vulkan device: " + index[name]["reason"])
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
