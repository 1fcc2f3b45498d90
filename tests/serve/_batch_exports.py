"""The demo MLP (examples/demo_mlp: data [B, 64] -> dense+relu 32 -> dense+softmax 10, C kernels
that compute each row on its own) exported at several batch sizes with the same weights, as
graphrt-serve's batch_<N>.so files: the demo's graph JSON with its batch dimension set to N,
packed by graphrt-pack with the demo's params and kernels. Shared by the batching tests and
bench/serve_bench.py."""
import json
import os
import struct
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
KERNELS = os.path.join(REPO, "examples", "demo_mlp", "kernels.c")
# Graph nodes whose first dimension is the batch: data, the hidden activation, the output.
BATCHED_NODES = (0, 3, 6)


def demo_files(apps_dir):
    """(graphrt-pack, demo graph JSON, demo params); skips when the build lacks them."""
    pack = os.path.join(apps_dir, "graphrt-pack")
    demo = os.environ.get("GRAPHRT_DEMO_DIR") or os.path.join(os.path.dirname(apps_dir), "examples", "demo_mlp")
    graph, params = os.path.join(demo, "demo_mlp_graph.json"), os.path.join(demo, "demo_mlp.params")
    for path in (pack, graph, params):
        if not os.path.isfile(path):
            pytest.skip("%s not built (the demo_mlp and graphrt_pack targets)" % path)
    return pack, graph, params


def write_export(apps_dir, out_path, batch, input_name="data", other_weights=False):
    """The demo MLP at `batch` rows as a one-file export at `out_path`. `other_weights`: the
    last output bias changed (the same signature, other answers: tells exports apart)."""
    pack, graph_path, params = demo_files(apps_dir)
    with open(graph_path) as f:
        graph = json.load(f)
    shapes = graph["attrs"]["shape"][1]
    for node in BATCHED_NODES:
        assert shapes[node][0] == 1, "the demo graph changed: node %d is not batch 1" % node
        shapes[node][0] = batch
    graph["nodes"][0]["name"] = input_name
    graph_out = out_path + ".graph.json"
    with open(graph_out, "w") as f:
        json.dump(graph, f)
    if other_weights:
        with open(params, "rb") as f:
            data = f.read()
        # save_param_dict ends with the last array's data: the demo's p3, the output bias.
        params = out_path + ".params"
        with open(params, "wb") as f:
            f.write(data[:-4] + struct.pack("<f", 5.0))
    p = subprocess.run([pack, "-o", out_path, "--graph", graph_out, "--params", params, KERNELS],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    os.remove(graph_out)
    if other_weights:
        os.remove(params)
    return out_path


def write_batch_set(apps_dir, folder, batches):
    """{batch_<N>.so: path} for each N in `batches`, written under `folder`."""
    os.makedirs(folder, exist_ok=True)
    return {"batch_%d.so" % b: write_export(apps_dir, os.path.join(folder, "batch_%d.so" % b), b) for b in batches}
