"""Dynamic batching of tvmc-package batch exports (batch_<N>.tar: mod.so, mod.json, mod.params)
whose kernels keep several rows' accumulators together: the generator and kernels of the
batching benchmark (bench/heavy_mlp.py, TVM's dense_pack weight layout), here with small layers.
Requests gathered into one execution must get the same bits as each request served alone by the
batch-1 export (no batcher), and both must be the MLP (float64 reference, tolerance)."""
import os
import sys

import numpy as np
import pytest

from _client import assert_bit_identical, counters
from _server import REPO, Server, add_model, require_module, run_binary
from test_graph_batching import infer, infer_together

sys.path.insert(0, os.path.join(REPO, "bench"))
from heavy_mlp import reference, write_heavy_mlp  # noqa: E402

DIMS = (64, 128, 96, 16)  # two hidden layers, output sizes multiples of 16


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    require_module("requests")
    apps = os.path.dirname(run_binary())
    if not os.path.isfile(os.path.join(apps, "graphrt-pack")):
        pytest.skip("graphrt-pack not built")
    exports, layers = write_heavy_mlp(apps, str(tmp_path_factory.mktemp("exports")), (1, 2, 4, 8), dims=DIMS,
                                      seed=3)
    repo = str(tmp_path_factory.mktemp("repo"))
    add_model(repo, "alone", {"model.tar": exports["batch_1.tar"]})
    add_model(repo, "batched", exports, config={"max_batch_size": 8, "max_queue_delay_us": 300000})
    server = Server(repo)
    x = np.random.RandomState(5).uniform(-1, 1, size=(11, DIMS[0])).astype("float32")
    yield server, x, layers
    assert server.stop() == 0


def test_batched_answers_equal_unbatched(served):
    server, x, layers = served
    alone = np.concatenate([infer(server, "alone", x[i:i + 1]) for i in range(x.shape[0])])
    np.testing.assert_allclose(alone, reference(layers, x), rtol=1e-4, atol=1e-5)
    # 8 rows in four requests (batch_8), then three rows alone (batch_4, one zero row).
    spans = [(0, 1), (1, 3), (3, 4), (4, 8)]
    before = counters(server, "batched")
    got = infer_together(server, "batched", [x[a:b] for a, b in spans])
    for (a, b), g in zip(spans, got):
        assert_bit_identical(g, alone[a:b], "rows %d:%d" % (a, b))
    c = counters(server, "batched")
    assert c["graphrt_inference_count_total"] - before["graphrt_inference_count_total"] == 8
    assert c["graphrt_inference_exec_count_total"] - before["graphrt_inference_exec_count_total"] < len(spans)
    assert_bit_identical(infer(server, "batched", x[8:11]), alone[8:11], "three rows on batch_4")
