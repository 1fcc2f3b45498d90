#!/usr/bin/env python3
"""Health and inference on one model while event streams run on another.

Starts graphrt-serve (--http-threads T) over relax_tiny_llm_gqa ("llm": 4 sequences, 4096 tokens,
a queue of 1024) and mlp, opens --streams generate_stream requests on llm, --stuck of them from
clients that never read (a 4 KiB receive buffer, --stuck-tokens tokens each), the others reading
--tokens tokens each, and while they run times GET /v2/health/live and a JSON inference on mlp,
one after the other on one keep-alive connection, for --seconds (a probe not answered within
--give-up seconds counts as that long). Reports each probe's p50, p99 and worst, the server's
peak RSS (VmRSS, sampled with each probe) against its RSS before, how many readers got their
whole stream, and how long until the never-reading clients were closed.

A benchmark, not a test (tests/serve/test_event_streams.py checks the bounds).
Usage: serve_stream_bench.py --serve PATH/graphrt-serve [--threads 64] [--streams 256] [--stuck 64]
"""
import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
FIXTURES = os.environ.get("GRAPHRT_FIXTURES", os.path.join(os.path.dirname(REPO), "shared", "fixtures"))


def rss_mb(pid):
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1)) / 1024.0


def repo(root):
    llm = os.path.join(root, "llm")
    os.makedirs(os.path.join(llm, "1"))
    os.symlink(os.path.join(FIXTURES, "relax-ffi", "relax_tiny_llm_gqa", "deploy_relax.so"),
               os.path.join(llm, "1", "deploy_relax.so"))
    with open(os.path.join(llm, "config.json"), "w") as f:
        json.dump({"generation": {"max_batch_size": 4, "max_total_seq_len": 4096, "prefill_chunk_size": 16,
                                  "page_size": 16}, "max_queue_size": 1024}, f)
    os.makedirs(os.path.join(root, "mlp", "1"))
    os.symlink(os.path.join(FIXTURES, "mlp", "deploy_factory.so"), os.path.join(root, "mlp", "1", "deploy_factory.so"))


def stream(port, tokens, i, rcvbuf=None):
    s = socket.socket()
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.connect(("127.0.0.1", port))
    body = json.dumps({"input_ids": [1 + i % 50, 7], "max_tokens": tokens}).encode()
    s.sendall(b"POST /v2/models/llm/generate_stream HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body)
              + body)
    return s


def read_stream(s, timeout):
    """True when the chunked body ended with its last chunk."""
    s.settimeout(timeout)
    data = b""
    try:
        while not data.endswith(b"\r\n0\r\n\r\n"):
            got = s.recv(65536)
            if not got:
                break
            data += got
    except OSError:
        pass
    s.close()
    return data.endswith(b"\r\n0\r\n\r\n")


def probe(conn, request, give_up):
    t0 = time.monotonic()
    try:
        conn.settimeout(give_up)
        conn.sendall(request)
        data = b""
        while b"\r\n\r\n" not in data:
            got = conn.recv(65536)
            if not got:
                return give_up, False
            data += got
        head, rest = data.split(b"\r\n\r\n", 1)
        length = int(re.search(rb"Content-Length: (\d+)", head, re.I).group(1))
        while len(rest) < length:
            got = conn.recv(65536)
            if not got:
                return give_up, False
            rest += got
        ok = head.startswith(b"HTTP/1.1 200")
    except (OSError, AttributeError):
        return give_up, False
    return time.monotonic() - t0, ok


def percentile(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--serve", required=True)
    ap.add_argument("--threads", type=int, default=64)
    ap.add_argument("--streams", type=int, default=256)
    ap.add_argument("--stuck", type=int, default=64)
    ap.add_argument("--tokens", type=int, default=16)
    ap.add_argument("--stuck-tokens", type=int, default=400)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--give-up", type=float, default=2.0)
    ap.add_argument("--write-timeout-ms", type=int, default=2000)
    a = ap.parse_args()
    sys.path.insert(0, os.path.join(REPO, "tests", "serve"))
    import numpy as np
    with tempfile.TemporaryDirectory() as root:
        repo(root)
        p = subprocess.Popen([a.serve, "--model-repository", root, "--host", "127.0.0.1", "--http-port", "0",
                              "--grpc-port", "-1", "--metrics-port", "-1", "--http-threads", str(a.threads),
                              "--read-timeout-ms", str(a.write_timeout_ms), "--max-connections", "2000"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = p.stdout.readline()
        port = int(line.split()[line.split().index("http") + 1])
        x = np.load(os.path.join(FIXTURES, "mlp", "input_data.npy"))
        body = json.dumps({"inputs": [{"name": "data", "shape": list(x.shape), "datatype": "FP32",
                                       "data": x.flatten().tolist()}]}).encode()
        infer = b"POST /v2/models/mlp/infer HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body) + body
        health = b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n"
        conn = socket.create_connection(("127.0.0.1", port))
        probe(conn, infer, a.give_up)
        rss_before = rss_mb(p.pid)
        stuck, readers = [], []
        every = max(1, a.streams // max(1, a.stuck)) if a.stuck else 0
        for i in range(a.streams):
            if a.stuck and i % every == every - 1 and len(stuck) < a.stuck:
                stuck.append(stream(port, a.stuck_tokens, i, rcvbuf=4096))
            else:
                readers.append(stream(port, a.tokens, i))
        done = []
        threads = [threading.Thread(target=lambda s=s: done.append(read_stream(s, 60)), daemon=True) for s in readers]
        for t in threads:
            t.start()
        conn.close()  # idle past the keep-alive timeout while the streams opened, maybe
        conn = socket.create_connection(("127.0.0.1", port))
        times = {"health": [], "infer": []}
        failed = {"health": 0, "infer": 0}
        peak = rss_before
        end = time.monotonic() + a.seconds
        while time.monotonic() < end:
            for name, req in (("health", health), ("infer", infer)):
                took, ok = probe(conn, req, a.give_up)
                times[name].append(took)
                if not ok:
                    failed[name] += 1
                    conn.close()
                    conn = socket.create_connection(("127.0.0.1", port))
            peak = max(peak, rss_mb(p.pid))
        deadline = time.monotonic() + 60
        for t in threads:
            t.join(max(0.0, deadline - time.monotonic()))
        t0 = time.monotonic()
        closed = 0
        for s in stuck:
            s.settimeout(max(0.1, 30 - (time.monotonic() - t0)))
            try:
                while s.recv(1 << 20):
                    pass
                closed += 1
            except ConnectionResetError:
                closed += 1
            except socket.timeout:
                pass
        stuck_closed_after = time.monotonic() - t0
        p.kill()
        p.wait(60)
    sys.stdout.flush()
    print("graphrt-serve %s, --http-threads %d, %d streams (%d never reading, %d tokens; readers %d tokens)"
          % (a.serve, a.threads, a.streams, len(stuck), a.stuck_tokens, a.tokens))
    print("| probe | answered | p50 ms | p99 ms | worst ms |")
    print("|---|---|---|---|---|")
    for name in ("health", "infer"):
        xs = times[name]
        print("| %s | %d/%d | %.2f | %.2f | %.2f |" % (name, len(xs) - failed[name], len(xs),
                                                       1000 * statistics.median(xs), 1000 * percentile(xs, 0.99),
                                                       1000 * max(xs)))
    print("server RSS: %.1f MB before, %.1f MB peak" % (rss_before, peak))
    print("readers with their whole stream: %d/%d" % (sum(done), len(readers)))
    print("never-reading clients closed by the server: %d/%d (%.1f s after the readers ended)"
          % (closed, len(stuck), stuck_closed_after))


if __name__ == "__main__":
    main()
