"""Event streams hold no HTTP worker: with --http-threads 4, 256 concurrent generate_stream requests
(64 of them from clients that never read) leave health and inference on another model answered within
100 ms and the server's memory bounded; the never-reading clients are closed at the write timeout and
the readers get their whole streams. HTTP/1.0 clients get no chunked encoding on any streamed endpoint
(the body ends with the connection). SIGTERM drains: a stream in flight finishes, a new request on an
open connection gets 503, and streams still running at --exit-timeout-secs end with an error event and
the closing chunk (or, before their first event, a 503), never a truncated body.
Fixtures: relax-ffi/relax_tiny_llm_gqa (token ids), mlp (inference), mlc/tiny_gpt2_chat (text, OpenAI)."""
import json
import os
import re
import signal
import socket
import threading
import time

import pytest

from _client import json_request
from _server import Server, add_model, fixture_root, require_module

requests = require_module("requests")
np = require_module("numpy")

LLM = os.path.join("relax-ffi", "relax_tiny_llm_gqa")
CHAT = os.path.join("mlc", "tiny_gpt2_chat")
BIG = {"max_batch_size": 4, "max_total_seq_len": 4096, "prefill_chunk_size": 16, "page_size": 16}
WRITE_TIMEOUT_MS = 1000  # --read-timeout-ms, which is also the write timeout


def fixture(rel, marker):
    d = os.path.join(fixture_root(), rel)
    if not os.path.isfile(os.path.join(d, marker)):
        pytest.skip("fixture %s missing" % rel)
    return d


def make_repo(root, chat=False):
    llm = fixture(LLM, "deploy_relax.so")
    add_model(root, "llm", {"deploy_relax.so": os.path.join(llm, "deploy_relax.so")},
              config={"generation": BIG, "max_queue_size": 1024})
    add_model(root, "mlp", {"deploy_factory.so": os.path.join(fixture_root(), "mlp", "deploy_factory.so")})
    if chat:
        d = fixture(CHAT, "mlc-chat-config.json")
        add_model(root, "chat", {n: os.path.join(d, n) for n in os.listdir(d)
                                 if not n.startswith("expected_") and n != "case.json"})
    return root


def open_request(port, path, body, version="1.1", rcvbuf=None, headers=""):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.settimeout(30)
    s.connect(("127.0.0.1", port))
    data = json.dumps(body).encode()
    s.sendall(b"POST %s HTTP/%s\r\nHost: x\r\nContent-Type: application/json\r\n%sContent-Length: %d\r\n\r\n"
              % (path.encode(), version.encode(), headers.encode(), len(data)) + data)
    return s


def read_response(s, deadline=30.0):
    """(status, headers {lower: value}, body bytes, complete): the body dechunked when chunked, else read to
    the connection's end; `complete` says the body's framing ended properly (the last chunk, or the close)."""
    buf = bytearray()  # appended in place: a bytes += per read copies the whole body each time
    end = time.monotonic() + deadline
    head = None
    while True:
        if head is None and b"\r\n\r\n" in buf:
            raw, buf = buf.split(b"\r\n\r\n", 1)
            lines = raw.decode("latin-1").split("\r\n")
            status = int(lines[0].split()[1])
            headers = {k.strip().lower(): v.strip() for k, v in (l.split(":", 1) for l in lines[1:])}
            head = (status, headers)
        if head is not None:
            h = head[1]
            if "content-length" in h and len(buf) >= int(h["content-length"]):
                return head[0], h, bytes(buf[:int(h["content-length"])]), True
            # Dechunked only once the last chunk may have come (the server sends no trailers): a
            # dechunk per read made a reader of long streams quadratic, too slow to keep up with them.
            if h.get("transfer-encoding") == "chunked" and buf.endswith(b"0\r\n\r\n"):
                body, done = dechunk(buf)
                if done:
                    return head[0], h, body, True
        s.settimeout(max(0.01, end - time.monotonic()))
        try:
            got = s.recv(65536)
        except (socket.timeout, ConnectionResetError):
            got = None
        if not got:
            if head is None:
                return None, {}, bytes(buf), False
            h = head[1]
            if h.get("transfer-encoding") == "chunked":
                return head[0], h, dechunk(buf)[0], False
            return head[0], h, bytes(buf), got is not None and "content-length" not in h
        buf += got


def dechunk(buf):
    out, at = [], 0
    while True:
        eol = buf.find(b"\r\n", at)
        if eol < 0:
            return b"".join(out), False
        size = int(buf[at:eol], 16)
        if size == 0:
            return b"".join(out), buf[eol + 2:eol + 4] == b"\r\n"
        if len(buf) < eol + 2 + size + 2:
            return b"".join(out), False
        out.append(buf[eol + 2:eol + 2 + size])
        at = eol + 2 + size + 2


def sse(body):
    """The data of each event: JSON objects, or the string "[DONE]"."""
    out = []
    for block in body.decode().split("\n\n"):
        if not block:
            continue
        assert block.startswith("data: "), block
        data = block[len("data: "):]
        out.append(data if data == "[DONE]" else json.loads(data))
    return out


def rss_mb(pid):
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1)) / 1024.0


def metric(port, name, model):
    text = requests.get("http://127.0.0.1:%d/metrics" % port, timeout=30).text
    m = re.search(r'^%s\{model="%s",version="1"\} (\S+)$' % (name, model), text, re.M)
    return float(m.group(1)) if m else 0.0


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = make_repo(str(tmp_path_factory.mktemp("repo")), chat=True)
    with Server(root, "--http-threads", "4", "--read-timeout-ms", str(WRITE_TIMEOUT_MS)) as s:
        yield s


@pytest.fixture(scope="module")
def mlp_body():
    x = np.load(os.path.join(fixture_root(), "mlp", "input_data.npy"))
    return json_request({"data": x})


def timed(fn):
    t0 = time.monotonic()
    r = fn()
    return time.monotonic() - t0, r


def test_256_streams_64_never_reading_leave_health_and_infer_answered(server, mlp_body):
    session = requests.Session()  # one keep-alive connection, as a load balancer's health check
    infer_url = server.url + "/v2/models/mlp/infer"
    assert session.post(infer_url, data=mlp_body, timeout=30).status_code == 200
    rss_before = rss_mb(server.proc.pid)
    readers, stuck = [], []
    for i in range(256):
        if i % 4 == 3:  # a never-reading client, with a receive window that fills at once
            stuck.append(open_request(server.http_port, "/v2/models/llm/generate_stream",
                                      {"input_ids": [1 + i % 50, 2, 3], "max_tokens": 320}, rcvbuf=4096))
        else:
            readers.append(open_request(server.http_port, "/v2/models/llm/generate_stream",
                                        {"input_ids": [1 + i % 50, 7], "max_tokens": 8}))
    results = [None] * len(readers)

    def read(i):
        results[i] = read_response(readers[i], 60)

    threads = [threading.Thread(target=read, args=(i,)) for i in range(len(readers))]
    for t in threads:
        t.start()
    health, infer, peak = [], [], 0.0
    for _ in range(20):
        took, r = timed(lambda: session.get(server.url + "/v2/health/live", timeout=5))
        assert r.status_code == 200
        health.append(took)
        took, r = timed(lambda: session.post(infer_url, data=mlp_body, timeout=5))
        assert r.status_code == 200, r.text
        infer.append(took)
        peak = max(peak, rss_mb(server.proc.pid))
        time.sleep(0.02)
    for t in threads:
        t.join(60)
    # Every probe within 100 ms but one of each kind (a 2-core machine shared with builds), and none
    # near a timeout: workers held by streams would leave them unanswered.
    assert sorted(health)[-2] < 0.1 and max(health) < 1, health
    assert sorted(infer)[-2] < 0.1 and max(infer) < 1, infer
    for status, headers, body, complete in results:
        assert status == 200 and complete and headers["transfer-encoding"] == "chunked", (status, headers, body[-200:])
        events = sse(body)
        assert len(events) == 8 and events[-1]["finish_reason"] == "length"
        assert all(e["finish_reason"] is None for e in events[:-1])
    # The never-reading clients: closed by the server at the write timeout (a stream's buffers hold a
    # two hundred of their 320 events).
    ends = [None] * len(stuck)

    def drain(i):
        stuck[i].settimeout(20)
        try:
            while stuck[i].recv(1 << 20):
                pass
            ends[i] = "closed"
        except ConnectionResetError:
            ends[i] = "closed"
        except socket.timeout:
            ends[i] = "open"

    threads = [threading.Thread(target=drain, args=(i,)) for i in range(len(stuck))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert ends == ["closed"] * len(stuck), ends
    for s in stuck:
        s.close()
    assert peak - rss_before < 200, (rss_before, peak)
    for s in readers:
        s.close()
    # The server still serves streams afterwards.
    status, _, body, complete = read_response(open_request(server.http_port, "/v2/models/llm/generate_stream",
                                                           {"input_ids": [5], "max_tokens": 3}))
    assert status == 200 and complete and len(sse(body)) == 3


STREAMED = [
    ("/v2/models/llm/generate_stream", {"input_ids": [3, 4], "max_tokens": 5}),
    ("/v2/models/chat/generate_stream", {"text_input": "Hello", "parameters": {"max_tokens": 5, "temperature": 0}}),
    ("/v2/models/chat/generate", {"text_input": "Hello", "stream": True, "max_tokens": 5, "temperature": 0}),
    ("/v1/completions", {"model": "chat", "prompt": "Hello", "max_tokens": 5, "temperature": 0, "stream": True}),
    ("/v1/chat/completions", {"model": "chat", "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 5,
                              "temperature": 0, "stream": True}),
]


@pytest.mark.parametrize("path,body", STREAMED, ids=[p for p, _ in STREAMED])
def test_http10_gets_a_close_delimited_stream(server, path, body):
    status, headers, raw, complete = read_response(open_request(server.http_port, path, body, version="1.0"))
    assert status == 200, raw
    assert "transfer-encoding" not in headers and "content-length" not in headers, headers
    assert headers["connection"] == "close" and headers["content-type"] == "text/event-stream"
    assert complete, raw
    events = sse(raw)
    last = events[-1] if path.startswith("/v2") else events[-2]
    if path.startswith("/v1"):
        assert events[-1] == "[DONE]"
    assert (last["finish_reason"] if path.startswith("/v2") else last["choices"][0]["finish_reason"]) == "length"
    # The same over HTTP/1.1: chunked, the connection kept for the next request.
    s = open_request(server.http_port, path, body)
    status, headers, raw11, complete = read_response(s)
    assert status == 200 and complete and headers["transfer-encoding"] == "chunked"
    assert len(sse(raw11)) == len(events)
    s.sendall(b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n")
    assert read_response(s)[0] == 200
    s.close()


def test_an_error_before_the_first_event_is_the_http_answer(server):
    status, headers, raw, complete = read_response(open_request(
        server.http_port, "/v1/completions", {"model": "chat", "prompt": "Hello " * 3000, "stream": True}))
    assert status == 400 and complete and "error" in json.loads(raw), raw


def test_sigterm_drains_streams_and_cuts_them_at_the_exit_timeout(tmp_path, mlp_body):
    root = make_repo(str(tmp_path / "repo"))
    s = Server(root, "--http-threads", "4", "--exit-timeout-secs", "1")
    try:
        # 12 long streams, 4 decoding at a time: the last ones cannot end within the exit timeout.
        short = open_request(s.http_port, "/v2/models/llm/generate_stream", {"input_ids": [9], "max_tokens": 30})
        time.sleep(0.05)
        streams = [open_request(s.http_port, "/v2/models/llm/generate_stream",
                                {"input_ids": [1 + i, 2], "max_tokens": 4000}) for i in range(12)]
        results = [None] * len(streams)

        def read(i):
            results[i] = read_response(streams[i], 30)

        readers = [threading.Thread(target=read, args=(i,)) for i in range(len(streams))]
        for t in readers:
            t.start()
        time.sleep(0.2)
        s.proc.send_signal(signal.SIGTERM)
        time.sleep(0.1)
        # A new request: refused (the port still takes connections while the server drains), health answered.
        assert requests.get(s.url + "/v2/health/live", timeout=10).status_code == 200
        assert requests.get(s.url + "/v2/health/ready", timeout=10).status_code == 503
        idle = socket.create_connection(("127.0.0.1", s.http_port), timeout=30)
        idle.sendall(b"POST /v2/models/mlp/infer HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(mlp_body)
                     + mlp_body)
        status, _, raw, _ = read_response(idle)
        assert status == 503 and b"stopping" in raw, raw
        # The short stream in flight finishes.
        status, _, raw, complete = read_response(short)
        assert status == 200 and complete and len(sse(raw)) == 30
        for t in readers:
            t.join(30)
        s.proc.wait(30)
    finally:
        if s.proc.poll() is None:
            s.proc.kill()
        s.proc.communicate()
    assert s.proc.returncode == 1
    cut = 0
    for status, headers, raw, complete in results:
        assert complete, (status, headers, raw[-300:])  # never a truncated body
        if status == 503:
            assert "exit-timeout-secs" in json.loads(raw)["error"]
            continue
        assert status == 200
        events = sse(raw)
        if "error" in events[-1]:
            assert "--exit-timeout-secs (1) passed" in events[-1]["error"]
            assert all("output_ids" in e for e in events[:-1])
            cut += 1
        else:
            assert events[-1]["finish_reason"] == "length" and len(events) == 4000
    # Those decoding at the timeout are cut mid-stream; those still queued are refused.
    assert cut >= 1 and sum(r[0] == 503 for r in results) >= 1, [r[0] for r in results]
