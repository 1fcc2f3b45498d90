"""Request helpers over `requests`: JSON and binary (Triton's extension) inference, decoding
of either response form, and the reference outputs graphrt-run writes for the same inputs."""
import json
import os
import re
import subprocess

import numpy as np

from _server import DTYPES, run_binary

NP_OF = {v: k for k, v in DTYPES.items()}


def datatype_of(arr):
    return DTYPES[str(arr.dtype)]


def json_request(inputs, outputs=None, **extra):
    body = {"inputs": [{"name": k, "shape": list(v.shape), "datatype": datatype_of(v),
                        "data": v.flatten().tolist()} for k, v in inputs.items()]}
    if outputs is not None:
        body["outputs"] = [{"name": n} for n in outputs]
    body.update(extra)
    return json.dumps(body).encode()


def binary_request(inputs, binary_outputs=True, outputs=None):
    """(body, headers) with every input as binary data."""
    header = {"inputs": [{"name": k, "shape": list(v.shape), "datatype": datatype_of(v),
                          "parameters": {"binary_data_size": v.nbytes}} for k, v in inputs.items()],
              "parameters": {"binary_data_output": binary_outputs}}
    if outputs is not None:
        header["outputs"] = outputs
    text = json.dumps(header).encode()
    body = text + b"".join(np.ascontiguousarray(v).tobytes() for v in inputs.values())
    return body, {"Inference-Header-Content-Length": str(len(text)), "Content-Type": "application/octet-stream"}


def decode_response(resp):
    """(response JSON, {output name: numpy array}) from a JSON or binary response."""
    raw = resp.content
    hlen = resp.headers.get("Inference-Header-Content-Length")
    header = json.loads(raw[:int(hlen)] if hlen is not None else raw)
    arrays = {}
    offset = int(hlen) if hlen is not None else len(raw)
    for out in header["outputs"]:
        dtype = np.dtype(NP_OF[out["datatype"]])
        size = out.get("parameters", {}).get("binary_data_size")
        if size is not None:
            arrays[out["name"]] = np.frombuffer(raw[offset:offset + size], dtype=dtype).reshape(out["shape"])
            offset += size
        else:
            arrays[out["name"]] = np.array(out["data"], dtype=dtype).reshape(out["shape"])
    assert offset == len(raw), "binary data left over in the response"
    return header, arrays


def reference_outputs(model_path, input_paths, out_dir, function=None):
    """What graphrt-run writes for these inputs: [numpy array, ...] in output order."""
    args = [run_binary(), model_path, "--output-dir", out_dir, "--quiet"]
    for name, path in input_paths.items():
        args += ["--input", "%s=%s" % (name, path)]
    if function:
        args += ["--function", function]
    p = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    outs = []
    i = 0
    while os.path.isfile(os.path.join(out_dir, "output_%d.npy" % i)):
        outs.append(np.load(os.path.join(out_dir, "output_%d.npy" % i)))
        i += 1
    return outs


def assert_bit_identical(got, want, what):
    assert got.dtype == want.dtype, "%s: dtype %s, want %s" % (what, got.dtype, want.dtype)
    assert list(got.shape) == list(want.shape), "%s: shape %s, want %s" % (what, got.shape, want.shape)
    assert got.tobytes() == want.tobytes(), "%s: values differ from graphrt-run's" % what


def infer_json(server, model, inputs, output="output_0"):
    """One JSON inference over REST that must succeed; the named output as a numpy array."""
    import requests
    r = requests.post("%s/v2/models/%s/infer" % (server.url, model), data=json_request(inputs), timeout=60)
    assert r.status_code == 200, r.text
    return decode_response(r)[1][output]


def counters(server, model, version="1"):
    """The request, inference and execution counters of a model version from the metrics page
    (0 for a series not there yet)."""
    import requests
    text = requests.get("http://127.0.0.1:%d/metrics" % server.metrics_port, timeout=60).text
    out = {}
    for name in ("graphrt_inference_request_success_total", "graphrt_inference_count_total",
                 "graphrt_inference_exec_count_total"):
        m = re.search(r'^%s\{model="%s",version="%s"\} (\S+)$' % (name, model, version), text, re.M)
        out[name] = float(m.group(1)) if m else 0.0
    return out
