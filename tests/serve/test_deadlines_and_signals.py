"""Deadlines and signals: a request's deadline (its `timeout` parameter, the model's timeout_us, or
--infer-timeout-ms) stops a graph run between nodes and a Relax VM before its next call (REST 503,
gRPC DEADLINE_EXCEEDED); the ports are bound before the models load, which answer live but not
ready meanwhile; SIGTERM during a load (here: a params-cache lock another process holds) ends the
process at once; after SIGTERM, requests in flight get --exit-timeout-secs, then the process exits 1."""
import fcntl
import os
import re
import signal
import subprocess
import threading
import time

import numpy as np
import pytest

from _client import json_request
from _grpc_stubs import stubs
from _server import (Server, add_model, fixture_root, relax_cases, relax_config, require_module,
                     serve_binary)


def rest(url, model, body, timeout=120):
    import requests
    r = requests.post("%s/v2/models/%s/infer" % (url, model), data=body, timeout=timeout)
    return r.status_code, r.json()


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    require_module("requests")
    root = fixture_root()
    repo = str(tmp_path_factory.mktemp("repo"))
    add_model(repo, "squeezenet", {"deploy_factory.so": os.path.join(root, "squeezenet1.1", "deploy_factory.so")})
    d = os.path.join(root, "relax", "relax_mlp")
    if not os.path.isdir(d):
        pytest.skip("relax_mlp fixture missing")
    import json
    with open(os.path.join(d, "case.json")) as f:
        info = json.load(f)
    add_model(repo, "relax_mlp", {"deploy_relax.so": os.path.join(d, "deploy_relax.so")}, config=relax_config(info))
    # The server's default deadline: 1 ms, far below one squeezenet1.1 run on one thread.
    server = Server(repo, "--threads", "1", "--infer-timeout-ms", "1")
    yield server, np.load(os.path.join(root, "squeezenet1.1", "input_data.npy")), \
        np.load(os.path.join(d, "input_x.npy"))
    assert server.stop() == 0


def test_graph_run_stops_at_the_default_deadline(served):
    s, x, _ = served
    status, js = rest(s.url, "squeezenet", json_request({"data": x}))
    assert status == 503 and "run interrupted: its deadline passed before node" in js["error"], js
    assert "field: timeout" in js["error"] and "model: squeezenet" in js["error"], js
    # The request's own timeout overrides the default: a minute is plenty.
    status, js = rest(s.url, "squeezenet", json_request({"data": x}, parameters={"timeout": 60000000}))
    assert status == 200, js


def test_relax_run_stops_at_the_request_deadline(served, tmp_path):
    import grpc
    s, _, rx = served
    ok = json_request({"x": rx}, parameters={"timeout": 60000000})
    assert rest(s.url, "relax_mlp", ok)[0] == 200
    status, js = rest(s.url, "relax_mlp", json_request({"x": rx}, parameters={"timeout": 1}))
    assert status == 503 and "Relax VM run interrupted: its deadline passed before instruction" in js["error"], js
    assert "function: main" in js["error"] and "field: timeout" in js["error"], js
    pb = stubs(str(tmp_path))
    channel = grpc.insecure_channel("127.0.0.1:%d" % s.grpc_port)
    stub = pb[1].GRPCInferenceServiceStub(channel)
    req = pb[0].ModelInferRequest(model_name="relax_mlp")
    req.inputs.add(name="x", datatype="FP32", shape=list(rx.shape))
    req.raw_input_contents.append(rx.astype(np.float32).tobytes())
    req.parameters["timeout"].int64_param = 1
    with pytest.raises(grpc.RpcError) as e:
        stub.ModelInfer(req, timeout=60)
    assert e.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED and "Relax VM run interrupted" in e.value.details()
    channel.close()
    assert rest(s.url, "relax_mlp", ok)[0] == 200


def test_sigterm_while_loading(tmp_path):
    """The params cache's folder locked by another process: the server waits for it after binding
    its ports (live, not ready), and SIGTERM ends it then, at once."""
    import requests
    require_module("requests")
    repo = str(tmp_path / "repo")
    add_model(repo, "squeezenet", {"deploy_factory.so": os.path.join(fixture_root(), "squeezenet1.1",
                                                                      "deploy_factory.so")})
    cache = tmp_path / "cache"
    cache.mkdir()
    fd = os.open(str(cache), os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        p = subprocess.Popen([serve_binary(), "--model-repository", repo, "--host", "127.0.0.1", "--http-port", "0",
                              "--grpc-port", "-1", "--metrics-port", "-1", "--params-cache", str(cache)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = p.stderr.readline()
        m = re.search(r"ports bound: http (\d+)", line)
        assert m, line
        url = "http://127.0.0.1:%s" % m.group(1)
        time.sleep(0.5)
        assert p.poll() is None
        assert requests.get(url + "/v2/health/live", timeout=10).status_code == 200
        assert requests.get(url + "/v2/health/ready", timeout=10).status_code == 503
        t0 = time.monotonic()
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=30)
        assert time.monotonic() - t0 < 5
        assert p.returncode == 0 and "before serving: exiting" in out, (p.returncode, out, err)
    finally:
        os.close(fd)


def test_exit_timeout_ends_a_drain_that_takes_too_long(tmp_path):
    """Requests queued for one instance of squeezenet1.1 on one thread take seconds to answer:
    SIGTERM, then --exit-timeout-secs 1 later the process exits 1 saying why."""
    require_module("requests")
    repo = str(tmp_path / "repo")
    add_model(repo, "squeezenet", {"deploy_factory.so": os.path.join(fixture_root(), "squeezenet1.1",
                                                                      "deploy_factory.so")},
              config={"max_queue_size": 200})
    x = np.load(os.path.join(fixture_root(), "squeezenet1.1", "input_data.npy"))
    body = json_request({"data": x})
    with Server(repo, "--threads", "1", "--http-threads", "160", "--exit-timeout-secs", "1") as s:
        results = []

        def one():
            try:
                results.append(rest(s.url, "squeezenet", body, timeout=60)[0])
            except Exception as e:  # the connection dies with the process
                results.append(type(e).__name__)
        threads = [threading.Thread(target=one, daemon=True) for _ in range(150)]
        for t in threads:
            t.start()
        time.sleep(1.0)
        t0 = time.monotonic()
        s.proc.send_signal(signal.SIGTERM)
        s.proc.wait(30)
        took = time.monotonic() - t0
        assert s.proc.returncode == 1, s.proc.returncode
        assert 0.8 < took < 10, took
        for t in threads:
            t.join(60)
    assert any("--exit-timeout-secs (1) passed with requests in flight" in l for l in s.stderr_text), s.stderr_text
