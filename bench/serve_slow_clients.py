#!/usr/bin/env python3
"""How graphrt-serve answers a legitimate client while hostile ones hold its HTTP port.

Starts graphrt-serve (--http-threads T) over the mlp fixture, then for each scenario opens
N hostile connections and times a legitimate inference request (a fresh connection, JSON
body, --tries one after the other, the worst and the median reported; a request not
answered within --give-up seconds counts as that long):

  trickle    each connection sends a request head one byte every 2 s
  keepalive  each connection sends a whole request every 4 s over one keep-alive connection
  headers    each connection sends header lines as fast as the server takes them
             (the server's RSS is sampled for --flood-seconds; the largest is reported)

A benchmark, not a test (tests/serve/test_rest_slow_clients.py checks the limits): it prints
a table. Usage: serve_slow_clients.py --serve PATH/graphrt-serve [--threads 4] [--clients 16]
"""
import argparse
import json
import os
import socket
import statistics
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "serve"))


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def legit_request(port, body, give_up):
    """Seconds until a fresh connection's inference request is answered (give_up at most)."""
    t0 = time.monotonic()
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=give_up)
        s.settimeout(max(0.01, give_up - (time.monotonic() - t0)))
        s.sendall(b"POST /v2/models/mlp/infer HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                  b"Content-Length: %d\r\n\r\n" % len(body) + body)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        s.close()
        if not data.startswith(b"HTTP/1.1 200"):
            return give_up
    except OSError:
        return give_up
    return min(give_up, time.monotonic() - t0)


class Hostile:
    def __init__(self, port, kind, n):
        self.port, self.kind, self.stop = port, kind, threading.Event()
        self.threads = [threading.Thread(target=self.run, daemon=True) for _ in range(n)]
        for t in self.threads:
            t.start()

    def run(self):
        try:
            s = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        except OSError:
            return
        try:
            if self.kind == "trickle":
                head = b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n" + b"X-Slow: " + b"a" * 1000
                for b in head:
                    if self.stop.wait(2.0):
                        return
                    s.sendall(bytes([b]))
            elif self.kind == "keepalive":
                s.settimeout(30)
                while not self.stop.is_set():
                    s.sendall(b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n")
                    s.recv(65536)
                    if self.stop.wait(4.0):
                        return
            elif self.kind == "headers":
                s.sendall(b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n")
                line = b"X-Flood: " + b"b" * 8000 + b"\r\n"
                while not self.stop.is_set():
                    s.sendall(line)
        except OSError:
            return
        finally:
            s.close()

    def end(self):
        self.stop.set()
        for t in self.threads:
            t.join(10)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--serve", required=True)
    ap.add_argument("--fixtures", default=os.environ.get("GRAPHRT_FIXTURES", os.path.join(REPO, "..", "shared", "fixtures")))
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--give-up", type=float, default=5.0)
    ap.add_argument("--tries", type=int, default=5)
    ap.add_argument("--rss-cap-kb", type=int, default=1000000, help="end a flood once the server holds this much")
    ap.add_argument("--flood-seconds", type=float, default=5.0)
    ap.add_argument("--scenarios", default="trickle,keepalive,headers")
    args = ap.parse_args()
    os.environ["GRAPHRT_SERVE"] = os.path.abspath(args.serve)
    os.environ["GRAPHRT_FIXTURES"] = os.path.abspath(args.fixtures)
    from _server import Server, add_model
    from _client import json_request
    import numpy as np

    repo = tempfile.mkdtemp()
    add_model(repo, "mlp", {"deploy_factory.so": os.path.join(args.fixtures, "mlp", "deploy_factory.so")})
    x = np.load(os.path.join(args.fixtures, "mlp", "input_data.npy"))
    body = json_request({"data": x})
    if isinstance(body, str):
        body = body.encode()
    print("| scenario | hostile connections | --http-threads | legit answer s (median) | worst s | server RSS kB (max) |")
    print("|---|---|---|---|---|---|")
    for scenario in ["none"] + args.scenarios.split(","):
        with Server(repo, "--http-threads", str(args.threads)) as s:
            rss = [rss_kb(s.proc.pid)]
            done = threading.Event()

            def watch():  # samples RSS; a server past the cap is killed (it would take the host down)
                while not done.wait(0.05):
                    try:
                        rss.append(rss_kb(s.proc.pid))
                    except OSError:
                        return
                    if rss[-1] >= args.rss_cap_kb:
                        s.proc.kill()
                        return
            watcher = threading.Thread(target=watch, daemon=True)
            watcher.start()
            hostile = Hostile(s.http_port, scenario, args.clients) if scenario != "none" else None
            time.sleep(1.0)
            times = []
            t_end = time.monotonic() + (args.flood_seconds if scenario == "headers" else 0)
            for _ in range(args.tries):
                times.append(legit_request(s.http_port, body, args.give_up))
            while time.monotonic() < t_end and s.proc.poll() is None:
                time.sleep(0.1)
            done.set()
            watcher.join()
            if hostile:
                hostile.end()
            killed = " (killed at the cap)" if max(rss) >= args.rss_cap_kb else ""
            print("| %s | %d | %d | %.3f | %.3f | %d%s |" % (scenario, args.clients if hostile else 0, args.threads,
                                                          statistics.median(times), max(times), max(rss), killed))
            sys.stdout.flush()
            if s.proc.poll() is None:
                s.proc.kill()


if __name__ == "__main__":
    main()
