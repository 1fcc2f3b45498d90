"""A batchable model heavy enough for dynamic batching to matter, built the way a user has one:
a dense MLP (fp32, relu between layers) whose weights take several MB per layer, exported at
several batch sizes as tvmc packages (batch_<N>.tar: mod.so, mod.json, mod.params), the
version-folder layout graphrt-serve batches. The kernels (bench/heavy_mlp_kernels.c, TVM's
dense_pack weight layout) are packed once by graphrt-pack into the kernels-only mod.so that
every package shares; the graph JSONs differ only in the leading (batch) dimension, the params
are one file. One row reads every weight from memory; a batch of rows reads them once.

    from heavy_mlp import write_heavy_mlp
    files = write_heavy_mlp(apps_dir, folder, batches=(1, 2, 4, 8, 16, 32))  # {"batch_1.tar": path, ...}

Writes params through graphrt's Python package (graphrt.save_param_dict), loading the
libgraphrt.so next to `apps_dir` unless GRAPHRT_LIBRARY_PATH says otherwise."""
import json
import os
import subprocess
import sys
import tarfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
KERNELS = os.path.join(HERE, "heavy_mlp_kernels.c")
# The benchmark's model: 1024 -> 2048 -> 2048 -> 2048 -> 1024 -> 16, 48 MB of weights
# (8, 16, 16, 8 MB and 64 KB per layer).
BENCH_DIMS = (1024, 2048, 2048, 2048, 1024, 16)
BLOCK = 16  # outputs per packed weight block (heavy_mlp_kernels.c)
# -ffp-contract=off: a multiply and an add, never fused, so the vector and scalar code the
# compiler may mix give every row the same bits at every batch size.
CFLAGS = "-O3 -march=native -ffp-contract=off"


def weights(dims, seed):
    """[(w (O, I), bias (O,))] per layer, float32, scaled so activations stay near 1."""
    rng = np.random.RandomState(seed)
    layers = []
    for i, o in zip(dims[:-1], dims[1:]):
        w = rng.standard_normal((o, i)).astype("float32") * np.float32(1.0 / np.sqrt(i))
        b = rng.uniform(-0.1, 0.1, size=o).astype("float32")
        layers.append((w, b))
    return layers


def pack(w):
    """(O, I) -> (O / 16, I, 16): TVM's dense_pack layout."""
    o, i = w.shape
    assert o % BLOCK == 0, "every layer's output size must be a multiple of %d" % BLOCK
    return np.ascontiguousarray(w.reshape(o // BLOCK, BLOCK, i).transpose(0, 2, 1))


def reference(layers, x):
    """The forward pass in float64 (an oracle independent of the kernels)."""
    h = x.astype("float64")
    for k, (w, b) in enumerate(layers):
        h = h @ w.astype("float64").T + b
        if k + 1 < len(layers):
            h = np.maximum(h, 0)
    return h


def graph_json(dims, batch):
    """TVM graph JSON: data, then per layer its weight, its bias and the dense node."""
    nodes = [{"op": "null", "name": "data", "inputs": []}]
    shapes = [[batch, dims[0]]]
    arg_nodes = [0]
    prev = 0
    for k, (i, o) in enumerate(zip(dims[:-1], dims[1:])):
        last = k + 2 == len(dims)
        func = "heavy_dense_pack_bias" if last else "heavy_dense_pack_bias_relu"
        for name, shape in (("p%d" % (2 * k), [o // BLOCK, i, BLOCK]), ("p%d" % (2 * k + 1), [o])):
            arg_nodes.append(len(nodes))
            nodes.append({"op": "null", "name": name, "inputs": []})
            shapes.append(shape)
        nodes.append({"op": "tvm_op", "name": "layer%d" % k, "inputs": [[prev, 0, 0], [len(nodes) - 2, 0, 0],
                                                                         [len(nodes) - 1, 0, 0]],
                      "attrs": {"num_outputs": "1", "num_inputs": "3", "flatten_data": "0", "func_name": func}})
        shapes.append([batch, o])
        prev = len(nodes) - 1
    n = len(nodes)
    return json.dumps({
        "nodes": nodes, "arg_nodes": arg_nodes, "heads": [[prev, 0, 0]],
        "attrs": {"dltype": ["list_str", ["float32"] * n], "device_index": ["list_int", [1] * n],
                  "storage_id": ["list_int", list(range(n))], "shape": ["list_shape", shapes]},
        "node_row_ptr": list(range(n + 1))})


def save_params(layers, path, apps_dir):
    if "GRAPHRT_LIBRARY_PATH" not in os.environ:
        os.environ["GRAPHRT_LIBRARY_PATH"] = os.path.join(os.path.dirname(apps_dir), "libgraphrt.so")
    sys.path.insert(0, os.path.join(REPO, "python"))
    import graphrt
    params = {}
    for k, (w, b) in enumerate(layers):
        params["p%d" % (2 * k)] = pack(w)
        params["p%d" % (2 * k + 1)] = b
    graphrt.save_param_dict_to_file(params, path)


def write_heavy_mlp(apps_dir, folder, batches, dims=BENCH_DIMS, seed=0):
    """Writes batch_<N>.tar for each N in `batches` under `folder` (and the mod.so, mod.params
    they hold); returns ({"batch_<N>.tar": path}, layers) where layers are the weights."""
    os.makedirs(folder, exist_ok=True)
    lib = os.path.join(folder, "mod.so")
    p = subprocess.run([os.path.join(apps_dir, "graphrt-pack"), "-o", lib, "--cflags", CFLAGS, KERNELS],
                       capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise RuntimeError("graphrt-pack failed: " + p.stderr)
    layers = weights(dims, seed)
    params = os.path.join(folder, "mod.params")
    save_params(layers, params, apps_dir)
    files = {}
    for batch in batches:
        graph = os.path.join(folder, "mod.json")
        with open(graph, "w") as f:
            f.write(graph_json(dims, batch))
        path = os.path.join(folder, "batch_%d.tar" % batch)
        with tarfile.open(path, "w") as tar:
            for member in (lib, graph, params):
                tar.add(member, arcname=os.path.basename(member))
        files["batch_%d.tar" % batch] = path
    os.remove(graph)
    return files, layers
