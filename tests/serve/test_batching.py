"""Dynamic batching: requests to a Relax executable with a symbolic batch are gathered for up
to max_queue_delay_us, run as one execution and split back; every answer must be
bit-identical to the same request served unbatched, and the metrics must show fewer
executions than inferences."""
import os
import threading

import numpy as np
import pytest

from _client import assert_bit_identical, counters, infer_json, json_request
from _server import Server, add_model, fixture_root, relax_dynamic_batch, require_module


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    require_module("requests")
    root = fixture_root()
    model, config, d = relax_dynamic_batch()
    repo = str(tmp_path_factory.mktemp("repo"))
    add_model(repo, "plain", model, config=config)
    add_model(repo, "batched", model, config=dict(config, max_batch_size=8, max_queue_delay_us=300000))
    add_model(repo, "graph_batched", {"deploy_factory.so": os.path.join(root, "mlp", "deploy_factory.so")},
              config={"max_batch_size": 4})
    server = Server(repo)
    yield server, np.load(os.path.join(d, "input_x.npy"))
    assert server.stop() == 0


def infer(server, model, x):
    return infer_json(server, model, {"x": x})


def test_batched_answers_equal_unbatched(served):
    server, x = served
    rows = [x[i:i + 1] for i in range(x.shape[0])] + [x[1:4]]  # five single rows and one of three
    want = [infer(server, "plain", r) for r in rows]
    got = [None] * len(rows)
    barrier = threading.Barrier(len(rows))

    def client(i):
        barrier.wait()
        got[i] = infer(server, "batched", rows[i])

    threads = [threading.Thread(target=client, args=(i,)) for i in range(len(rows))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g is not None, "request %d got no answer" % i
        assert_bit_identical(g, w, "batched request %d" % i)
    c = counters(server, "batched")
    assert c["graphrt_inference_request_success_total"] == len(rows)
    assert c["graphrt_inference_count_total"] == 8  # rows, not requests
    assert c["graphrt_inference_exec_count_total"] < len(rows), c  # requests shared executions


def test_batch_limits_and_models_that_cannot_batch(served):
    import requests
    server, x = served
    big = np.concatenate([x, x])  # 10 rows > max_batch_size 8
    r = requests.post(server.url + "/v2/models/batched/infer", data=json_request({"x": big}))
    assert r.status_code == 400 and "field: shape" in r.json()["error"], r.text
    index = {e["name"]: e for e in requests.post(server.url + "/v2/repository/index").json()}
    assert index["graph_batched"]["state"] == "UNAVAILABLE"
    assert "dynamic batching" in index["graph_batched"]["reason"]
