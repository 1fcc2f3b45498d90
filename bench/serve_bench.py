#!/usr/bin/env python3
"""graphrt-serve's throughput and latency against the same model run in-process (the limit).

For each model: requests/s and p50/p99 latency at concurrency 1, 8 and 32 over REST JSON and
REST binary (wrk, a C client, with --latency) and gRPC (grpcio from Python, threads; its client
costs are in its figures), and graphrt-run --repeat on the same model in-process. Loopback
only, bounded in time (--seconds per point). A benchmark, not a test: it prints a table.

Usage: serve_bench.py --build BUILD [--fixtures DIR] [--seconds 5] [--models mlp squeezenet1.1]
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "serve"))


def wrk_point(wrk, url, script, conc, seconds):
    p = subprocess.run([wrk, "-t%d" % min(conc, 2), "-c%d" % conc, "-d%ds" % seconds, "--latency", "-s", script, url],
                       capture_output=True, text=True, timeout=seconds + 60)
    out = p.stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))

    def pct(q):
        m = re.search(r"^\s+%s%%\s+([\d.]+)(us|ms|s)" % q, out, re.M)
        v, unit = float(m.group(1)), m.group(2)
        return v * {"us": 1, "ms": 1e3, "s": 1e6}[unit]
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    assert not errors, out
    return rps, pct(50), pct(99)


def grpc_point(stub, make_request, conc, seconds):
    lat, lock = [], threading.Lock()
    stop = time.time() + seconds

    def worker():
        mine = []
        req = make_request()
        while time.time() < stop:
            t0 = time.perf_counter()
            stub.ModelInfer(req)
            mine.append((time.perf_counter() - t0) * 1e6)
        with lock:
            lat.extend(mine)
    threads = [threading.Thread(target=worker) for _ in range(conc)]
    t0 = time.time()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lat.sort()
    return len(lat) / (time.time() - t0), lat[len(lat) // 2], lat[int(len(lat) * 0.99)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--fixtures", default=os.path.join(os.path.dirname(REPO), "shared", "fixtures"))
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--models", nargs="+", default=["mlp", "squeezenet1.1"])
    ap.add_argument("--threads", type=int, default=0, help="graphrt-serve --threads")
    args = ap.parse_args()
    os.environ["GRAPHRT_SERVE"] = os.path.join(args.build, "apps", "serve", "graphrt-serve")
    os.environ["GRAPHRT_FIXTURES"] = args.fixtures
    import numpy as np
    import grpc
    from _client import binary_request, json_request
    from _grpc_stubs import stubs
    from _server import Server, add_model
    wrk = shutil.which("wrk")
    tmp = tempfile.mkdtemp()
    pb = stubs(os.path.join(tmp, "stubs"))
    repo = os.path.join(tmp, "repo")
    for m in args.models:
        add_model(repo, m, {"deploy_factory.so": os.path.join(args.fixtures, m, "deploy_factory.so")},
                  config={"instance_count": 2, "max_queue_size": 256})
    extra = ["--threads", str(args.threads)] if args.threads else []
    server = Server(repo, *extra)
    rows = []
    try:
        channel = grpc.insecure_channel("127.0.0.1:%d" % server.grpc_port)
        stub = pb[1].GRPCInferenceServiceStub(channel)
        for m in args.models:
            x = np.load(os.path.join(args.fixtures, m, "input_data.npy"))
            # In-process: the same model file, graphrt-run's own timing loop.
            p = subprocess.run([os.path.join(args.build, "apps", "graphrt-run"),
                                os.path.join(args.fixtures, m, "deploy_factory.so"), "--input",
                                "data=" + os.path.join(args.fixtures, m, "input_data.npy"), "--repeat", "200",
                                "--quiet"] + (["--threads", str(args.threads)] if args.threads else []),
                               capture_output=True, text=True, timeout=600)
            p50 = float(re.search(r"p50 ([\d.]+) ms", p.stdout).group(1)) * 1e3
            rows.append((m, "in-process", 1, 1e6 / p50, p50, float("nan")))
            jpath = os.path.join(tmp, m + ".json")
            with open(jpath, "wb") as f:
                f.write(json_request({"data": x}))
            body, headers = binary_request({"data": x})
            bpath = os.path.join(tmp, m + ".bin")
            with open(bpath, "wb") as f:
                f.write(body)
            scripts = {}
            for kind, path, hdrs in (("REST JSON", jpath, {"Content-Type": "application/json"}),
                                     ("REST binary", bpath, headers)):
                lua = os.path.join(tmp, "%s_%s.lua" % (m, kind.split()[1]))
                with open(lua, "w") as f:
                    f.write('wrk.method = "POST"\n')
                    for k, v in hdrs.items():
                        f.write('wrk.headers["%s"] = "%s"\n' % (k, v))
                    f.write('local f = io.open("%s", "rb")\nwrk.body = f:read("*a")\nf:close()\n' % path)
                scripts[kind] = lua

            def make_request():
                req = pb[0].ModelInferRequest(model_name=m)
                req.inputs.add(name="data", datatype="FP32", shape=list(x.shape))
                req.raw_input_contents.append(x.tobytes())
                return req
            for conc in (1, 8, 32):
                for kind, lua in scripts.items():
                    rps, p50, p99 = wrk_point(wrk, "%s/v2/models/%s/infer" % (server.url, m), lua, conc, args.seconds)
                    rows.append((m, kind, conc, rps, p50, p99))
                rps, p50, p99 = grpc_point(stub, make_request, conc, args.seconds)
                rows.append((m, "gRPC (Python client)", conc, rps, p50, p99))
                sys.stderr.write("%s c=%d done\n" % (m, conc))
        channel.close()
    finally:
        server.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    print("| model | transport | concurrency | requests/s | p50 us | p99 us |")
    print("|---|---|---|---|---|---|")
    for m, kind, conc, rps, p50, p99 in rows:
        print("| %s | %s | %d | %.0f | %.0f | %s |" % (m, kind, conc, rps, p50, "-" if p99 != p99 else "%.0f" % p99))


if __name__ == "__main__":
    main()
