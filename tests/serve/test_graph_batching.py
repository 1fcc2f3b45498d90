"""Dynamic batching of graph exports: a version folder holding the demo MLP exported at batch
1, 4 and 8 (batch_<N>.so). Requests gathered together run on the smallest export that holds
their rows, zero-padded; every answer must be bit-identical to what graphrt-run returns for the
batch-1 export and that request's rows one at a time, and the metrics must show fewer
executions than requests. Exports that differ in more than the batch are refused at load."""
import os
import threading

import numpy as np
import pytest

from _batch_exports import write_batch_set, write_export
from _client import assert_bit_identical, counters, infer_json, json_request, reference_outputs
from _server import Server, add_model, fixture_root, require_module, run_binary


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    require_module("requests")
    apps = os.path.dirname(run_binary())
    exports_dir = str(tmp_path_factory.mktemp("exports"))
    exports = write_batch_set(apps, exports_dir, (1, 4, 8))
    repo = str(tmp_path_factory.mktemp("repo"))
    add_model(repo, "mlp_b", exports, config={"max_batch_size": 8, "max_queue_delay_us": 300000})
    # A [1, 4, 8] set whose batch_8 has other weights (the server cannot tell): an answer equal
    # to batch_1's shows that batch_4, the smallest export that fits, ran. max_batch_size 3:
    # three rows flush the batch at once.
    other_8 = write_export(apps, os.path.join(exports_dir, "other_8.so"), 8, other_weights=True)
    add_model(repo, "mlp_pad", dict(exports, **{"batch_8.so": other_8}),
              config={"max_batch_size": 3, "max_queue_delay_us": 10000000})
    add_model(repo, "mlp_default", {"batch_4.so": exports["batch_4.so"]})  # max_batch_size from the export
    # Refused at load:
    add_model(repo, "bad_name_says_4", {"batch_1.so": exports["batch_1.so"], "batch_4.so": exports["batch_1.so"]})
    add_model(repo, "bad_other_model", {"batch_1.so": os.path.join(fixture_root(), "mlp", "deploy_factory.so"),
                                        "batch_4.so": exports["batch_4.so"]})
    renamed = write_export(apps, os.path.join(exports_dir, "renamed_4.so"), 4, input_name="x")
    add_model(repo, "bad_input_name", {"batch_1.so": exports["batch_1.so"], "batch_4.so": renamed})
    add_model(repo, "bad_mixed", {"batch_1.so": exports["batch_1.so"], "model.so": exports["batch_4.so"]})
    add_model(repo, "bad_max_batch", {"batch_4.so": exports["batch_4.so"]}, config={"max_batch_size": 5})
    server = Server(repo)
    rng = np.random.RandomState(7)
    x = rng.uniform(-1, 1, size=(16, 64)).astype("float32")
    # Expected answers: graphrt-run on the batch-1 export, one row at a time.
    rows_dir = str(tmp_path_factory.mktemp("rows"))
    want = []
    for i in range(x.shape[0]):
        path = os.path.join(rows_dir, "row%d.npy" % i)
        np.save(path, x[i:i + 1])
        out_dir = os.path.join(rows_dir, "out%d" % i)
        os.makedirs(out_dir)
        want.append(reference_outputs(exports["batch_1.so"], {"data": path}, out_dir)[0])
    # other_8.so answers differently from the batch-1 export (else the padding test proves nothing).
    np.save(os.path.join(rows_dir, "eight.npy"), x[8:16])
    os.makedirs(os.path.join(rows_dir, "other"))
    other = reference_outputs(other_8, {"data": os.path.join(rows_dir, "eight.npy")}, os.path.join(rows_dir, "other"))
    assert not np.any(other[0] == np.concatenate(want[8:16])), "other_8.so gives the same answers"
    yield server, x, np.concatenate(want)
    assert server.stop() == 0


def infer(server, model, x):
    return infer_json(server, model, {"data": x})


def infer_together(server, model, requests_rows):
    """Sends every request at once (one thread each); returns the answers in order."""
    got = [None] * len(requests_rows)
    barrier = threading.Barrier(len(requests_rows))

    def client(i):
        barrier.wait()
        got[i] = infer(server, model, requests_rows[i])

    threads = [threading.Thread(target=client, args=(i,)) for i in range(len(requests_rows))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    for i, g in enumerate(got):
        assert g is not None, "request %d got no answer" % i
    return got


def test_metadata_lists_the_batch_dimension(served):
    import requests
    server, _, _ = served
    meta = requests.get(server.url + "/v2/models/mlp_b").json()
    assert meta["platform"] == "tvm_graph"
    assert meta["inputs"] == [{"name": "data", "datatype": "FP32", "shape": [-1, 64]}]
    assert meta["outputs"] == [{"name": "output_0", "datatype": "FP32", "shape": [-1, 10]}]


def test_batched_answers_equal_unbatched(served):
    server, x, want = served
    # Five one-row requests and one of three: 8 rows, the largest export.
    spans = [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 8)]
    before = counters(server, "mlp_b")
    got = infer_together(server, "mlp_b", [x[a:b] for a, b in spans])
    for (a, b), g in zip(spans, got):
        assert_bit_identical(g, want[a:b], "rows %d:%d" % (a, b))
    c = counters(server, "mlp_b")
    assert c["graphrt_inference_request_success_total"] - before["graphrt_inference_request_success_total"] == 6
    assert c["graphrt_inference_count_total"] - before["graphrt_inference_count_total"] == 8  # rows
    executions = c["graphrt_inference_exec_count_total"] - before["graphrt_inference_exec_count_total"]
    assert 1 <= executions < len(spans), c  # requests shared executions


def test_rows_padded_to_the_smallest_export_that_fits(served):
    server, x, want = served
    # Three one-row requests on the [1, 4, other 8] set with max_batch_size 3: no export has 3
    # rows, so the one execution ran batch_4 (not batch_8: the answers say so) with a zero row
    # whose output was dropped.
    before = counters(server, "mlp_pad")
    got = infer_together(server, "mlp_pad", [x[i:i + 1] for i in range(8, 11)])
    for i, g in enumerate(got):
        assert_bit_identical(g, want[8 + i:9 + i], "padded row %d" % i)
    c = counters(server, "mlp_pad")
    assert c["graphrt_inference_count_total"] - before["graphrt_inference_count_total"] == 3
    assert c["graphrt_inference_exec_count_total"] - before["graphrt_inference_exec_count_total"] == 1
    # One request of 5 rows alone: batch_8 with three zero rows.
    assert_bit_identical(infer(server, "mlp_b", x[11:16]), want[11:16], "five rows on batch_8")
    # A version folder with one batch_4.so: max_batch_size defaults to 4, a single row is padded.
    assert_bit_identical(infer(server, "mlp_default", x[0:1]), want[0:1], "one row on batch_4")
    assert_bit_identical(infer(server, "mlp_default", x[0:4]), want[0:4], "four rows on batch_4")


def test_batch_limits(served):
    import requests
    server, x, _ = served
    r = requests.post(server.url + "/v2/models/mlp_default/infer", data=json_request({"data": x[0:5]}))
    assert r.status_code == 400 and "field: shape" in r.json()["error"], r.text
    r = requests.post(server.url + "/v2/models/mlp_b/infer", data=json_request({"data": x[0:1, :32]}))
    assert r.status_code == 400 and "[-1, 64]" in r.json()["error"], r.text


@pytest.mark.parametrize("model, words", [
    ("bad_name_says_4", ["batch_4.so", "'data'", "[1, 64]", "leading dimension"]),
    ("bad_other_model", ["batch_4.so", "'data'", "[4, 64]", "batch_1.so", "[1, 1, 28, 28]"]),
    ("bad_input_name", ["batch_4.so", "'x'", "'data'", "differ only in the leading"]),
    ("bad_mixed", ["model.so", "batch_<N>.so"]),
    ("bad_max_batch", ["max_batch_size 5", "batch_4.so"]),
])
def test_mismatched_exports_refused_at_load(served, model, words):
    import requests
    server, _, _ = served
    index = {e["name"]: e for e in requests.post(server.url + "/v2/repository/index").json()}
    assert index[model]["state"] == "UNAVAILABLE", index[model]
    reason = index[model]["reason"]
    assert "\n" not in reason
    for w in words:
        assert w in reason, (w, reason)
    r = requests.post("%s/v2/models/%s/infer" % (server.url, model), data=b"{}")
    assert r.status_code == 503, r.text
