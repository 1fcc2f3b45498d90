#!/usr/bin/env python3
"""graphrt-serve's generate endpoint against the same model run in-process (relax_tiny_llm_gqa).

usage: serve_generate_bench.py [--build build] [--tokens 200] [--rounds 5] [--concurrency 1,4,8] [--threads 1]
  In-process: build/bench/generate_step_bench (the server's own KV-cache model code, no server): the
  p50 decode step. Server: one generate_stream request at a time, read from a raw socket, each event
  stamped as it arrives; the p50 gap between consecutive tokens minus the in-process p50 step is the
  server's added latency per streamed token. Then N concurrent generate requests of --tokens tokens
  each: aggregate tokens/s (wall time of the N). Kernels on --threads threads in both.
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
CASE = os.path.join(REPO, "..", "shared", "fixtures", "relax-ffi", "relax_tiny_llm_gqa")


def start_server(build, repo, threads):
    p = subprocess.Popen([os.path.join(build, "apps", "graphrt-serve"), "--model-repository", repo, "--host",
                          "127.0.0.1", "--http-port", "0", "--grpc-port", "-1", "--metrics-port", "-1", "--threads",
                          str(threads)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = p.stdout.readline()
    return p, int(line.split()[line.split().index("http") + 1])


def post(port, path, body):
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    data = json.dumps(body).encode()
    s.sendall(b"POST %s HTTP/1.1\r\nHost: b\r\nContent-Length: %d\r\n\r\n%s" % (path.encode(), len(data), data))
    return s


def stream_times(port, tokens):
    """Arrival time of each event of one generate_stream request."""
    s = post(port, "/v2/models/llm/generate_stream", {"input_ids": [24, 3, 56, 72, 0], "max_tokens": tokens})
    buf, times, seen = b"", [], 0
    while len(times) < tokens:
        chunk = s.recv(65536)
        if not chunk:
            break
        now = time.perf_counter()
        buf += chunk
        n = buf.count(b"data: ")
        times += [now] * (n - seen)
        seen = n
    s.close()
    return times


def generate(port, tokens, prompt):
    s = post(port, "/v2/models/llm/generate", {"input_ids": prompt, "max_tokens": tokens})
    buf = b""
    while b'"finish_reason"' not in buf:
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
    s.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--tokens", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--concurrency", default="1,4,8")
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    so = os.path.join(CASE, "deploy_relax.so")
    env = dict(os.environ, TVM_NUM_THREADS=str(a.threads))
    steps = [json.loads(subprocess.check_output([os.path.join(a.build, "bench", "generate_step_bench"), so,
                                                 str(a.tokens)], env=env)) for _ in range(a.rounds)]
    step_p50 = statistics.median(s["decode_p50_us"] for s in steps)
    conc = [int(c) for c in a.concurrency.split(",")]
    with tempfile.TemporaryDirectory() as repo:
        os.makedirs(os.path.join(repo, "llm", "1"))
        os.symlink(so, os.path.join(repo, "llm", "1", "deploy_relax.so"))
        with open(os.path.join(repo, "llm", "config.json"), "w") as f:
            json.dump({"generation": {"max_batch_size": max(conc), "max_total_seq_len": 4096}}, f)
        p, port = start_server(a.build, repo, a.threads)
        try:
            stream_times(port, 20)  # warm-up
            gaps = []
            for _ in range(a.rounds):
                t = stream_times(port, a.tokens)
                gaps += [(t[i] - t[i - 1]) * 1e6 for i in range(1, len(t))]
            gap_p50 = statistics.median(gaps)
            rates = {}
            for n in conc:
                prompts = [[(i * 7 + k) % 96 for k in range(5)] for i in range(n)]
                best = 0
                for _ in range(a.rounds):
                    threads = [threading.Thread(target=generate, args=(port, a.tokens, pr)) for pr in prompts]
                    t0 = time.perf_counter()
                    for t in threads:
                        t.start()
                    for t in threads:
                        t.join()
                    best = max(best, n * a.tokens / (time.perf_counter() - t0))
                rates[n] = best
        finally:
            p.terminate()
            p.wait()
    print("in-process decode step p50: %.1f us (median of %d runs of %d tokens)" % (step_p50, a.rounds, a.tokens))
    print("streamed token gap p50:     %.1f us -> server's added latency per token: %.1f us" %
          (gap_p50, gap_p50 - step_p50))
    for n, r in rates.items():
        print("%d concurrent sequences: %.0f tokens/s aggregate (best of %d)" % (n, r, a.rounds))


if __name__ == "__main__":
    sys.exit(main())
