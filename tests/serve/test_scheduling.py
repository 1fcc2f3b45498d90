"""Execution: each model's bounded queue (full: 429 / RESOURCE_EXHAUSTED), several instances
running at once, and the per-request timeout on the wait for an instance and on the run, which
stops between nodes (503 / DEADLINE_EXCEEDED). squeezenet1.1 on one kernel thread runs long
enough (tens of ms) for requests sent together to overlap; rounds repeat until they did."""
import json
import os
import threading

import numpy as np
import pytest

from _client import json_request
from _grpc_stubs import stubs
from _server import Server, add_model, fixture_root, require_module


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    require_module("requests")
    root = fixture_root()
    repo = str(tmp_path_factory.mktemp("repo"))
    model = {"deploy_factory.so": os.path.join(root, "squeezenet1.1", "deploy_factory.so")}
    add_model(repo, "q0", model, config={"max_queue_size": 0})
    add_model(repo, "two", model, config={"instance_count": 2, "max_queue_size": 0})
    add_model(repo, "timed", model, config={"max_queue_size": 16, "timeout_us": 0})
    server = Server(repo, "--threads", "1")
    yield server
    assert server.stop() == 0


@pytest.fixture(scope="module")
def body():
    x = np.load(os.path.join(fixture_root(), "squeezenet1.1", "input_data.npy"))
    return json_request({"data": x}), x


def together(n, fn):
    """Runs fn(i) on n threads released at once; returns their results in order."""
    barrier = threading.Barrier(n)
    results = [None] * n

    def run(i):
        barrier.wait()
        results[i] = fn(i)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    return results


def rest(served, model, data):
    import requests
    r = requests.post("%s/v2/models/%s/infer" % (served.url, model), data=data, timeout=120)
    return r.status_code, r.json()


def test_full_queue_is_429(served, body):
    seen = set()
    for _ in range(20):
        results = together(4, lambda i: rest(served, "q0", body[0]))
        for status, js in results:
            seen.add(status)
            assert status in (200, 429), (status, js)
            if status == 429:
                assert "queue is full" in js["error"] and "model: q0" in js["error"], js
        if seen == {200, 429}:
            break
    assert seen == {200, 429}, "4 requests at once never overlapped on a 1-instance, 0-queue model: %s" % seen


def test_two_instances_run_at_once(served, body):
    # Queue 0 and two instances: two requests at once always find an instance each.
    for _ in range(5):
        results = together(2, lambda i: rest(served, "two", body[0]))
        assert [s for s, _ in results] == [200, 200], results


def one_run_us(served, body):
    """A timeout that one run alone meets but four queued ones do not: twice one run's time
    (the server's own figure, graphrt_inference_compute_infer_duration_seconds_total)."""
    import requests

    def infer_seconds():
        page = requests.get("http://127.0.0.1:%d/metrics" % served.metrics_port, timeout=30).text
        for line in page.splitlines():
            if line.startswith('graphrt_inference_compute_infer_duration_seconds_total{model="timed"'):
                return float(line.rsplit(" ", 1)[1])
        return 0.0
    before = infer_seconds()
    assert rest(served, "timed", body[0])[0] == 200
    return max(1000, int(2e6 * (infer_seconds() - before)))


def test_timeout_is_503(served, body):
    # The timeout covers the wait for an instance and the run: four requests at once, the
    # first answers, later ones time out waiting or have their run interrupted.
    x = body[1]
    seen = set()
    for _ in range(20):
        data = json_request({"data": x}, parameters={"timeout": one_run_us(served, body)})
        for status, js in together(4, lambda i: rest(served, "timed", data)):
            seen.add(status)
            assert status in (200, 503), (status, js)
            if status == 503:
                assert "field: timeout" in js["error"], js
                assert "timed out waiting" in js["error"] or "run interrupted" in js["error"], js
        if seen == {200, 503}:
            break
    assert seen == {200, 503}, seen


def test_deadline_interrupts_the_run(served, body):
    # Alone, with a timeout far below one run (tens of ms on one thread): the run stops
    # between nodes, and the next request is served as usual.
    data = json_request({"data": body[1]}, parameters={"timeout": 1000})
    status, js = rest(served, "timed", data)
    assert status == 503, (status, js)
    assert "run interrupted: its deadline passed before node" in js["error"] and "field: timeout" in js["error"], js
    assert rest(served, "timed", body[0])[0] == 200


def test_grpc_codes(served, body, tmp_path_factory):
    import grpc
    pb = stubs(str(tmp_path_factory.mktemp("stubs")))
    channel = grpc.insecure_channel("127.0.0.1:%d" % served.grpc_port)
    stub = pb[1].GRPCInferenceServiceStub(channel)
    x = body[1]

    def call(model, timeout_us=0):
        req = pb[0].ModelInferRequest(model_name=model)
        req.inputs.add(name="data", datatype="FP32", shape=list(x.shape))
        req.raw_input_contents.append(x.tobytes())
        if timeout_us:
            req.parameters["timeout"].int64_param = timeout_us
        try:
            stub.ModelInfer(req, timeout=120)
            return grpc.StatusCode.OK
        except grpc.RpcError as e:
            return e.code()

    for model, timeout_us, code in (("q0", 0, grpc.StatusCode.RESOURCE_EXHAUSTED),
                                    ("timed", -1, grpc.StatusCode.DEADLINE_EXCEEDED)):
        seen = set()
        for _ in range(20):
            if timeout_us < 0 or model == "timed":
                timeout_us = one_run_us(served, body)
            seen.update(together(4, lambda i: call(model, timeout_us)))
            if seen == {grpc.StatusCode.OK, code}:
                break
        assert seen == {grpc.StatusCode.OK, code}, (model, seen)
    channel.close()
