"""Slow, idle and flooding HTTP clients (raw sockets): a legitimate request is answered within
1 s while they hold 4x --http-threads connections; request heads are bounded (431), a request
must arrive within its deadline (408), idle keep-alive connections close, open connections are
bounded (503); bodyless POSTs and Expect: 100-continue are framed correctly."""
import os
import socket
import threading
import time
import weakref

import pytest

from _client import json_request
from _server import Server, add_model, fixture_root, require_module

HTTP_THREADS = 2


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


@pytest.fixture(scope="module")
def mlp_repo(tmp_path_factory):
    root = fixture_root()
    repo = str(tmp_path_factory.mktemp("repo"))
    add_model(repo, "mlp", {"deploy_factory.so": os.path.join(root, "mlp", "deploy_factory.so")})
    return repo


@pytest.fixture(scope="module")
def body():
    import numpy as np
    x = np.load(os.path.join(fixture_root(), "mlp", "input_data.npy"))
    b = json_request({"data": x})
    return b.encode() if isinstance(b, str) else b


_leftover = weakref.WeakKeyDictionary()  # bytes read past a response, per socket (pipelined answers)


def read_response(sock, timeout=10):
    """(status, headers, body) of one response; (None, {}, b"") when the server closed first."""
    sock.settimeout(timeout)
    data = _leftover.pop(sock, b"")
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return None, {}, data
        data += chunk
    head, rest = data.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, v in (l.split(":", 1) for l in lines[1:])}
    n = int(headers.get("content-length", "0"))
    while len(rest) < n:
        chunk = sock.recv(65536)
        if not chunk:
            break
        rest += chunk
    if len(rest) > n:
        _leftover[sock] = rest[n:]
    return status, headers, rest[:n]


def legit_seconds(port, body):
    t0 = time.monotonic()
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.sendall(b"POST /v2/models/mlp/infer HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    status, _, payload = read_response(s, timeout=30)
    s.close()
    assert status == 200, payload
    return time.monotonic() - t0


def closed_by_server(sock, within):
    """True when the server closes `sock` within `within` seconds (it sends nothing more)."""
    sock.settimeout(within)
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return True
    except socket.timeout:
        return False
    except ConnectionResetError:
        return True


def test_legit_client_answered_while_slow_and_idle_clients_hold_connections(mlp_repo, body):
    """4x --http-threads connections: half trickle a request head one byte every 2 s, half are
    idle keep-alive connections that sent one request. Thread-per-connection serving (the
    server before the reactor) left the legitimate client unanswered for as long as they stayed."""
    n = 4 * HTTP_THREADS
    with Server(mlp_repo, "--http-threads", str(HTTP_THREADS), "--keep-alive-timeout-ms", "60000") as s:
        stop = threading.Event()
        socks = []

        def trickle(sock):
            head = b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 100
            for byte in head:
                if stop.wait(2.0):
                    return
                try:
                    sock.sendall(bytes([byte]))
                except OSError:
                    return

        threads = []
        for i in range(n):
            sock = socket.create_connection(("127.0.0.1", s.http_port), timeout=30)
            socks.append(sock)
            if i % 2:
                sock.sendall(b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n")
                assert read_response(sock)[0] == 200
            else:
                sock.sendall(b"G")
                t = threading.Thread(target=trickle, args=(sock,), daemon=True)
                t.start()
                threads.append(t)
        time.sleep(0.5)
        try:
            times = [legit_seconds(s.http_port, body) for _ in range(5)]
            assert max(times) < 1.0, times
            # The idle keep-alive connections still serve when they speak again.
            socks[1].sendall(b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n")
            assert read_response(socks[1])[0] == 200
        finally:
            stop.set()
            for t in threads:
                t.join(5)
            for sock in socks:
                sock.close()
        assert s.stop() == 0


def test_request_head_bounded(mlp_repo, body):
    with Server(mlp_repo, "--max-header-bytes", "65536") as s:
        # A head just under the limit is served (cpp-httplib takes header lines of up to 8 KiB).
        lines = b"".join(b"X-Big-%d: %s\r\n" % (i, b"a" * 4000) for i in range(15))
        sock = socket.create_connection(("127.0.0.1", s.http_port), timeout=30)
        sock.sendall(b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n" + lines + b"\r\n")
        assert read_response(sock)[0] == 200
        sock.close()
        # A head past it, and a flood of header lines that never ends: 431, then closed.
        sock = socket.create_connection(("127.0.0.1", s.http_port), timeout=30)
        sock.sendall(b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n" + lines + lines + b"\r\n")
        status, headers, payload = read_response(sock)
        assert status == 431 and b"65536" in payload and headers.get("connection") == "close", payload
        assert closed_by_server(sock, 5)
        sock.close()
        before = rss_kb(s.proc.pid)
        stop = threading.Event()
        statuses = []

        def flood():
            sock = socket.create_connection(("127.0.0.1", s.http_port), timeout=30)
            try:
                sock.sendall(b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n")
                while not stop.is_set():
                    sock.sendall(b"X-Flood: " + b"b" * 4000 + b"\r\n")
            except OSError:
                pass
            try:
                statuses.append(read_response(sock, timeout=5)[0])
            except OSError:
                statuses.append("reset")
            sock.close()

        floods = [threading.Thread(target=flood, daemon=True) for _ in range(6)]
        for t in floods:
            t.start()
        time.sleep(2.0)
        grown = rss_kb(s.proc.pid) - before
        assert legit_seconds(s.http_port, body) < 1.0
        stop.set()
        for t in floods:
            t.join(10)
        # The server before these limits grew past 1 GB in about a second here.
        assert grown < 64 * 1024, "server grew by %d kB under a header flood" % grown
        assert all(st in (431, "reset", None) for st in statuses), statuses
        assert s.stop() == 0


def test_request_deadline_and_idle_keep_alive(mlp_repo):
    with Server(mlp_repo, "--request-read-timeout-ms", "1500", "--read-timeout-ms", "1000",
                "--keep-alive-timeout-ms", "700") as s:
        # One byte every 0.5 s never trips the read timeout, but the whole request must arrive in 1.5 s.
        sock = socket.create_connection(("127.0.0.1", s.http_port), timeout=30)
        t0 = time.monotonic()
        status = None
        for byte in b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n":
            try:
                sock.sendall(bytes([byte]))
            except OSError:
                break
            time.sleep(0.5)
            if time.monotonic() - t0 > 4:
                break
        status, headers, payload = read_response(sock)
        assert status == 408 and b"request timeout" in payload, (status, payload)
        assert 1.4 < time.monotonic() - t0 < 4.0
        sock.close()
        # Silence in the middle of a request: 408 after the read timeout.
        sock = socket.create_connection(("127.0.0.1", s.http_port), timeout=30)
        sock.sendall(b"GET /v2/health/live HTTP/1.1\r\n")
        t0 = time.monotonic()
        status, _, payload = read_response(sock)
        assert status == 408 and b"read timeout" in payload and 0.9 < time.monotonic() - t0 < 3.0, payload
        sock.close()
        # An idle keep-alive connection is closed after its timeout, not before.
        sock = socket.create_connection(("127.0.0.1", s.http_port), timeout=30)
        sock.sendall(b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n")
        assert read_response(sock)[0] == 200
        t0 = time.monotonic()
        assert closed_by_server(sock, 5)
        assert 0.6 < time.monotonic() - t0 < 3.0
        sock.close()
        assert s.stop() == 0


def test_open_connections_bounded(mlp_repo, body):
    with Server(mlp_repo, "--max-connections", "4", "--keep-alive-timeout-ms", "60000") as s:
        held = [socket.create_connection(("127.0.0.1", s.http_port), timeout=30) for _ in range(4)]
        time.sleep(0.3)
        extra = socket.create_connection(("127.0.0.1", s.http_port), timeout=30)
        status, _, payload = read_response(extra)
        assert status == 503 and b"too many open connections (4)" in payload, payload
        extra.close()
        for sock in held:
            sock.close()
        time.sleep(0.3)
        assert legit_seconds(s.http_port, body) < 5
        assert s.stop() == 0


def test_framing_bodyless_post_expect_continue_and_405(mlp_repo, body):
    with Server(mlp_repo, "--model-control-mode", "explicit", "--load-model", "*") as s:
        sock = socket.create_connection(("127.0.0.1", s.http_port), timeout=30)
        # POSTs without a body and without Content-Length (curl -X POST, Triton's docs).
        sock.sendall(b"POST /v2/repository/index HTTP/1.1\r\nHost: x\r\n\r\n")
        status, _, payload = read_response(sock)
        assert status == 200 and b'"mlp"' in payload, payload
        sock.sendall(b"POST /v2/repository/models/mlp/unload HTTP/1.1\r\nHost: x\r\n\r\n"
                     b"POST /v2/repository/models/mlp/load HTTP/1.1\r\nHost: x\r\n\r\n")
        assert read_response(sock)[0] == 200
        assert read_response(sock)[0] == 200
        # Expect: 100-continue: the server asks for the body, then answers.
        sock.sendall(b"POST /v2/models/mlp/infer HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
                     b"Content-Length: %d\r\n\r\n" % len(body))
        sock.settimeout(10)
        assert sock.recv(25).startswith(b"HTTP/1.1 100 Continue")
        sock.sendall(body)
        status, _, payload = read_response(sock)
        assert status == 200, payload  # and no second 100 Continue
        # A GET with a body: the body is skipped by its Content-Length, not read as a request.
        sock.sendall(b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nGET /"
                     b"GET /v2/health/ready HTTP/1.1\r\nHost: x\r\n\r\n")
        assert read_response(sock)[0] == 200
        status, _, payload = read_response(sock)
        assert status == 200 and b"ready" in payload, payload
        sock.close()
        import requests
        for path in ("/v2/models/mlp/infer", "/v2/models/mlp/versions/1/infer", "/v2/repository/index",
                     "/v2/repository/models/mlp/load"):
            r = requests.get(s.url + path, timeout=30)
            assert r.status_code == 405 and r.headers["Allow"] == "POST", (path, r.status_code, r.text)
            assert "takes POST" in r.json()["error"]
        assert s.stop() == 0
