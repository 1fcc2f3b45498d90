"""Hostile and mistaken REST requests: each gets its 4xx with one {"error": ...} line naming the
model, tensor and field at fault, and the server keeps answering well-formed requests."""
import json
import os
import re
import socket
import time

import numpy as np
import pytest

from _client import binary_request, decode_response, json_request
from _server import Server, add_model, fixture_root, require_module

MAX_BYTES = 1 << 20
READ_TIMEOUT_MS = 700


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    require_module("requests")
    root = fixture_root()
    repo = str(tmp_path_factory.mktemp("repo"))
    add_model(repo, "mlp", {"deploy_factory.so": os.path.join(root, "mlp", "deploy_factory.so")})
    add_model(repo, "multi_io", {"deploy_factory.so": os.path.join(root, "multi_io", "deploy_factory.so")})
    server = Server(repo, "--max-request-bytes", str(MAX_BYTES), "--read-timeout-ms", str(READ_TIMEOUT_MS),
                    "--http-threads", "8")
    yield server
    assert server.stop() == 0


@pytest.fixture(scope="module")
def mlp_input():
    return np.load(os.path.join(fixture_root(), "mlp", "input_data.npy"))


def post(served, body, model="mlp", headers=None, path="infer"):
    import requests
    if isinstance(body, (dict, list)):
        body = json.dumps(body)
    return requests.post("%s/v2/models/%s/%s" % (served.url, model, path), data=body, headers=headers or {},
                         timeout=30)


def error_of(r, status):
    assert r.status_code == status, (r.status_code, r.text)
    body = r.json()
    assert list(body) == ["error"], body
    assert "\n" not in body["error"]
    return body["error"]


def still_serves(served, mlp_input):
    r = post(served, json_request({"data": mlp_input}))
    assert r.status_code == 200, r.text


def one_input(data, shape=(1, 1, 28, 28), datatype="FP32", name="data", **extra):
    t = {"name": name, "shape": list(shape), "datatype": datatype, "data": data}
    t.update(extra)
    return {"inputs": [t]}


@pytest.mark.parametrize("body,field", [
    (b"{not json", "body"),
    (b"", "body"),
    (b"[1, 2]", "body"),
    (b'{"inputs": {}}', "inputs"),
    (b'{"inputs": [{"name": "data"}]}', "datatype"),
    (b'{"inputs": [{"name": "data", "datatype": "FP33", "shape": [1], "data": [1]}]}', "datatype"),
    (b'{"inputs": [{"name": "data", "datatype": "FP32", "shape": "x", "data": [1]}]}', "shape"),
    (b'{"inputs": [{"name": "data", "datatype": "FP32", "shape": [-1], "data": [1]}]}', "shape"),
    (b'{"inputs": [{"name": "data", "datatype": "FP32", "shape": [1.5], "data": [1]}]}', "shape"),
    (b'{"id": 5, "inputs": []}', "id"),
    (b'{"inputs": [], "parameters": []}', "parameters"),
    (b'{"inputs": [], "parameters": {"timeout": -1}}', "parameters"),
    (b'{"inputs": [], "outputs": [{"nome": "x"}]}', "outputs"),
])
def test_malformed_requests(served, mlp_input, body, field):
    msg = error_of(post(served, body), 400)
    assert "field: %s" % field in msg, msg
    still_serves(served, mlp_input)


def test_wrong_datatype_and_shape(served, mlp_input):
    flat = mlp_input.flatten().tolist()
    msg = error_of(post(served, one_input([int(v > 0) for v in flat], datatype="INT32")), 400)
    assert "tensor: data" in msg and "field: datatype" in msg and "model: mlp" in msg, msg
    msg = error_of(post(served, one_input(flat, shape=(1, 784))), 400)
    assert "tensor: data" in msg and "field: shape" in msg and "model: mlp" in msg, msg
    msg = error_of(post(served, one_input(flat, name="nope")), 400)
    assert "tensor: nope" in msg and "data" in msg, msg
    msg = error_of(post(served, {"inputs": []}), 400)
    assert "input 'data' missing" in msg, msg
    msg = error_of(post(served, one_input(["a"] * 784, datatype="BYTES")), 400)
    assert "field: datatype" in msg, msg
    msg = error_of(post(served, dict(one_input(flat), outputs=[{"name": "output_9"}])), 400)
    assert "tensor: output_9" in msg and "field: outputs" in msg, msg
    # Elements of the wrong JSON type or out of the datatype's range.
    msg = error_of(post(served, one_input(["x"] * 784)), 400)
    assert "field: data" in msg, msg
    msg = error_of(post(served, one_input([300], shape=(1,), datatype="UINT8", name="data")), 400)
    assert "out of range" in msg, msg
    still_serves(served, mlp_input)


def test_short_long_and_overflowing_data(served, mlp_input):
    flat = mlp_input.flatten().tolist()
    msg = error_of(post(served, one_input(flat[:-1])), 400)
    assert "783 elements" in msg and "field: data" in msg, msg
    msg = error_of(post(served, one_input(flat + [1.0])), 400)
    assert "more elements" in msg, msg
    msg = error_of(post(served, one_input([1.0], shape=(2 ** 62, 2 ** 62))), 400)
    assert "overflows" in msg and "field: shape" in msg, msg
    msg = error_of(post(served, one_input([1.0], shape=(2 ** 40, 2 ** 20))), 400)
    assert "field: data" in msg, msg
    msg = error_of(post(served, one_input([1.0], shape=(2 ** 64,))), 400)
    assert "field: shape" in msg, msg
    # Nesting deeper than the rank, and nesting that never ends.
    msg = error_of(post(served, one_input([[[[[[1.0]]]]]], shape=(1, 1))), 400)
    assert "nested deeper" in msg, msg
    deep = b'{"inputs": [{"name": "data", "datatype": "FP32", "shape": [1], "data": ' + b"[" * 100000 + \
        b"1" + b"]" * 100000 + b"}]}"
    error_of(post(served, deep), 400)
    still_serves(served, mlp_input)


def test_binary_lengths_that_lie(served, mlp_input):
    body, headers = binary_request({"data": mlp_input})
    hlen = int(headers["Inference-Header-Content-Length"])
    for bad_hlen, field in ((str(len(body) + 10), "Inference-Header-Content-Length"), ("-5", "Inference-Header"),
                            ("abc", "Inference-Header"), (str(hlen - 3), "body"), ("0", "Inference-Header")):
        h = dict(headers, **{"Inference-Header-Content-Length": bad_hlen})
        msg = error_of(post(served, body, headers=h), 400)
        assert field in msg, (bad_hlen, msg)
    # Binary data shorter or longer than the declared sizes, and sizes that do not fit the shape.
    msg = error_of(post(served, body[:-4], headers=headers), 400)
    assert "binary_data_size" in msg, msg
    msg = error_of(post(served, body + b"\0\0\0\0", headers=headers), 400)
    assert "follow the JSON header" in msg, msg
    header = json.loads(body[:hlen])
    header["inputs"][0]["parameters"]["binary_data_size"] = 3000
    text = json.dumps(header).encode()
    msg = error_of(post(served, text + body[hlen:hlen + 3000],
                        headers=dict(headers, **{"Inference-Header-Content-Length": str(len(text))})), 400)
    assert "3000 bytes of data" in msg and "needs 3136" in msg, msg
    header["inputs"][0]["parameters"]["binary_data_size"] = 2 ** 62
    text = json.dumps(header).encode()
    msg = error_of(post(served, text + body[hlen:],
                        headers=dict(headers, **{"Inference-Header-Content-Length": str(len(text))})), 400)
    assert "binary_data_size" in msg, msg
    # Binary data declared without the header that says where the JSON ends.
    msg = error_of(post(served, body[:hlen]), 400)
    assert "Inference-Header-Content-Length" in msg, msg
    still_serves(served, mlp_input)


def test_unknown_model_version_and_route(served, mlp_input):
    import requests
    msg = error_of(post(served, json_request({"data": mlp_input}), model="nope"), 404)
    assert "model: nope" in msg, msg
    msg = error_of(post(served, json_request({"data": mlp_input}), model="mlp/versions/7"), 404)
    assert "version" in msg, msg
    msg = error_of(post(served, json_request({"data": mlp_input}), model="mlp/versions/x"), 404)
    error_of(requests.get(served.url + "/v2/models/nope"), 404)
    error_of(requests.get(served.url + "/v3/whatever"), 404)
    error_of(requests.post(served.url + "/v2/repository/models/..%2F..%2Fetc/load"), 404)


def test_body_over_limit(served, mlp_input):
    r = post(served, b"{" + b" " * (MAX_BYTES + 10) + b"}")
    assert r.status_code == 413, r.status_code
    still_serves(served, mlp_input)


def test_compressed_and_chunked_bodies(served, mlp_input):
    import gzip
    import requests
    # A gzip bomb: 300 KB that would inflate to 300 MB, past --max-request-bytes.
    bomb = gzip.compress(b"[" + b"0," * (150 * 1024 * 1024) + b"0]", compresslevel=9)
    t0 = time.time()
    r = post(served, bomb, headers={"Content-Encoding": "gzip"})
    assert r.status_code == 415 and "Content-Encoding" in r.json()["error"], r.text
    assert time.time() - t0 < 10
    with open("/proc/%d/status" % served.proc.pid) as f:
        rss_kb = int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))
    assert rss_kb < 300 * 1024, "the server inflated the bomb: %d kB resident" % rss_kb
    # Chunked bodies are refused before reading (the HTTP library would not bound them).
    s = _raw(served)
    s.sendall(b"POST /v2/models/mlp/infer HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" +
              b"10000\r\n" + b" " * 0x10000 + b"\r\n")
    status, headers, payload, _ = _read_response(s)
    assert status == 411 and "Content-Length" in json.loads(payload)["error"], payload
    assert headers.get("connection") == "close"
    try:
        for _ in range(200):  # 13 MB more: the server must not be reading it
            s.sendall(b"10000\r\n" + b" " * 0x10000 + b"\r\n")
    except OSError:
        pass
    s.close()
    with open("/proc/%d/status" % served.proc.pid) as f:
        rss_kb = int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))
    assert rss_kb < 300 * 1024, "the server read the chunked body: %d kB resident" % rss_kb
    still_serves(served, mlp_input)


def _raw(served):
    s = socket.create_connection(("127.0.0.1", served.http_port), timeout=10)
    return s


def _read_response(sock):
    """One HTTP response (status, headers, body) from a socket with Content-Length framing."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    head, rest = data.split(b"\r\n\r\n", 1)
    lines = head.decode().split("\r\n")
    headers = {k.lower(): v.strip() for k, v in (l.split(":", 1) for l in lines[1:])}
    n = int(headers.get("content-length", "0"))
    while len(rest) < n:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed mid-body")
        rest += chunk
    return int(lines[0].split()[1]), headers, rest[:n], rest[n:]


def test_slow_client_is_dropped(served, mlp_input):
    body = json_request({"data": mlp_input})
    s = _raw(served)
    s.sendall(b"POST /v2/models/mlp/infer HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body))
    s.sendall(body[:100])
    t0 = time.time()
    s.settimeout(READ_TIMEOUT_MS / 1000.0 * 10)
    # Meanwhile other clients are served.
    still_serves(served, mlp_input)
    data = b""
    try:
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    except socket.timeout:
        pytest.fail("the server kept a stalled client for more than 10x the read timeout")
    waited = time.time() - t0
    assert waited < READ_TIMEOUT_MS / 1000.0 * 10
    assert not data.startswith(b"HTTP/1.1 200"), data[:100]
    s.close()
    # A client that never finishes its headers is dropped too.
    s = _raw(served)
    s.sendall(b"GET /v2/health/live HTTP/1.1\r\nHost")
    s.settimeout(READ_TIMEOUT_MS / 1000.0 * 10)
    try:
        data = s.recv(4096)
    except socket.timeout:
        pytest.fail("the server kept a client stalled in its headers for more than 10x the read timeout")
    assert not data.startswith(b"HTTP/1.1 200"), data[:100]
    s.close()
    still_serves(served, mlp_input)


def test_keep_alive_and_pipelining(served, mlp_input):
    body = json_request({"data": mlp_input}, id="p")
    req = b"POST /v2/models/mlp/infer HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
    live = b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n"
    s = _raw(served)
    s.sendall(req + live + req)  # three requests before reading any answer
    rest = b""
    answers = []
    for _ in range(3):
        sock_data = rest
        # Feed what is left over from the previous response back in.
        class Buffered:
            def __init__(self, first):
                self.first = first

            def recv(self, n):
                if self.first:
                    out, self.first = self.first, b""
                    return out
                return s.recv(n)
        status, headers, payload, rest = _read_response(Buffered(sock_data))
        answers.append((status, payload))
    assert [a[0] for a in answers] == [200, 200, 200]
    assert json.loads(answers[0][1])["id"] == "p" and json.loads(answers[1][1]) == {"live": True}
    # The same connection still takes requests afterwards.
    s.sendall(live)
    status, _, payload, _ = _read_response(s)
    assert status == 200
    s.close()
