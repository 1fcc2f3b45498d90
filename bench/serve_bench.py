#!/usr/bin/env python3
"""graphrt-serve's throughput and latency against the same model run in-process (the limit).

For each model: requests/s and p50/p99 latency at concurrency 1, 8 and 32 over REST JSON and
REST binary (wrk, a C client, with --latency) and gRPC (serve_grpc_load, a C++ client built
into BUILD/bench, one connection per client; grpcio from Python threads when it is not built),
and graphrt-run --repeat on the same model in-process. With --batching: dynamic batching
against the same model unbatched, REST binary, one-row requests at concurrency 8 and 32, on
relax_dynamic_batch (a symbolic batch) and on the demo MLP packed at batch 1, 4, 8, 16, 32
(batch_<N>.so) against its batch-1 export alone, for each max_queue_delay_us of --delays-us;
rows/execution: the model's inferences over its executions during the point (metrics page).

Every point is measured --repeat times; the table holds the medians and the 1-minute load
average (/proc/loadavg) seen at the start of the runs (the machine may be shared: note it).
Loopback only, bounded in time (--seconds per run). A benchmark, not a test: it prints tables.

Usage: serve_bench.py --build BUILD [--fixtures DIR] [--seconds 3] [--repeat 3]
                      [--models mlp squeezenet1.1] [--batching [--delays-us 0 500]]
(--models with no names: the batching comparison alone)
"""
import argparse
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


def load_average():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def wrk_point(wrk, url, script, conc, seconds):
    p = subprocess.run([wrk, "-t%d" % min(conc, 2), "-c%d" % conc, "-d%ds" % seconds, "--timeout", "10s", "--latency",
                        "-s", script, url], capture_output=True, text=True, timeout=seconds + 60)
    out = p.stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))

    def pct(q):
        m = re.search(r"^\s+%s%%\s+([\d.]+)(us|ms|s)" % q, out, re.M)
        v, unit = float(m.group(1)), m.group(2)
        return v * {"us": 1, "ms": 1e3, "s": 1e6}[unit]
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    assert not errors, out
    return rps, pct(50), pct(99)


def grpc_cpp_point(client, target, request_path, conc, seconds):
    p = subprocess.run([client, target, request_path, str(conc), str(seconds)], capture_output=True, text=True,
                       timeout=seconds + 60)
    assert p.returncode == 0, p.stdout + p.stderr
    m = re.search(r"rps ([\d.]+) p50_us ([\d.]+) p99_us ([\d.]+)", p.stdout)
    return float(m.group(1)), float(m.group(2)), float(m.group(3))


def grpc_python_point(stub, request, conc, seconds):
    lat, lock = [], threading.Lock()
    stop = time.time() + seconds

    def worker():
        mine = []
        while time.time() < stop:
            t0 = time.perf_counter()
            stub.ModelInfer(request)
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


def repeated(n, point):
    """Runs point() n times: (median rps, median p50, median p99, loads at each start)."""
    runs, loads = [], []
    for _ in range(n):
        loads.append(load_average())
        runs.append(point())
    med = [statistics.median(r[i] for r in runs) for i in range(3)]
    return med[0], med[1], med[2], loads


def in_process_p50(build, model_path, inputs, threads):
    args = [os.path.join(build, "apps", "graphrt-run"), model_path, "--repeat", "200"]  # --quiet hides the latency
    for k, v in inputs.items():
        args += ["--input", "%s=%s" % (k, v)]
    if threads:
        args += ["--threads", str(threads)]
    p = subprocess.run(args, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    return float(re.search(r"p50 ([\d.]+) ms", p.stdout).group(1)) * 1e3


class Bench:
    def __init__(self, args, tmp):
        import grpc
        from _grpc_stubs import stubs
        self.args, self.tmp = args, tmp
        self.wrk = shutil.which("wrk")
        if not self.wrk:
            sys.exit("serve_bench.py: wrk not found (apt-get install wrk)")
        self.pb = stubs(os.path.join(tmp, "stubs"))
        self.grpc_client = os.path.join(args.build, "bench", "serve_grpc_load")
        if not os.path.isfile(self.grpc_client):
            sys.stderr.write("serve_grpc_load not built: gRPC through grpcio from Python threads\n")
            self.grpc_client = None
        self.grpc = grpc
        self.rows = []

    def lua(self, name, body, headers):
        path = os.path.join(self.tmp, name + ".body")
        with open(path, "wb") as f:
            f.write(body)
        lua = os.path.join(self.tmp, name + ".lua")
        with open(lua, "w") as f:
            f.write('wrk.method = "POST"\n')
            for k, v in headers.items():
                f.write('wrk.headers["%s"] = "%s"\n' % (k, v))
            f.write('local f = io.open("%s", "rb")\nwrk.body = f:read("*a")\nf:close()\n' % path)
        return lua

    def rest_point(self, server, model, lua, conc):
        url = "%s/v2/models/%s/infer" % (server.url, model)
        return repeated(self.args.repeat, lambda: wrk_point(self.wrk, url, lua, conc, self.args.seconds))

    def grpc_point(self, server, model, inputs, conc):
        req = self.pb[0].ModelInferRequest(model_name=model)
        for k, v in inputs.items():
            req.inputs.add(name=k, datatype="FP32", shape=list(v.shape))
            req.raw_input_contents.append(v.tobytes())
        target = "127.0.0.1:%d" % server.grpc_port
        if self.grpc_client:
            path = os.path.join(self.tmp, "%s.pb" % model)
            with open(path, "wb") as f:
                f.write(req.SerializeToString())
            return repeated(self.args.repeat,
                            lambda: grpc_cpp_point(self.grpc_client, target, path, conc, self.args.seconds))
        channel = self.grpc.insecure_channel(target)
        stub = self.pb[1].GRPCInferenceServiceStub(channel)
        try:
            return repeated(self.args.repeat, lambda: grpc_python_point(stub, req, conc, self.args.seconds))
        finally:
            channel.close()

    def add(self, table, *row):
        if table == "transports":
            row = row + (None,)
        self.rows.append((table,) + row)
        sys.stderr.write("%s\n" % (row,))

    def transports(self, server, model, model_path, inputs):
        from _client import binary_request, json_request
        paths = {}
        for k, v in inputs.items():
            paths[k] = os.path.join(self.tmp, "%s_%s.npy" % (model, k))
            import numpy as np
            np.save(paths[k], v)
        runs, loads = [], []
        for _ in range(self.args.repeat):
            loads.append(load_average())
            runs.append(in_process_p50(self.args.build, model_path, paths, self.args.threads))
        p50 = statistics.median(runs)
        self.add("transports", model, "in-process", 1, 1e6 / p50, p50, float("nan"), loads)
        body, headers = binary_request(inputs)
        scripts = {"REST JSON": self.lua(model + "_json", json_request(inputs), {"Content-Type": "application/json"}),
                   "REST binary": self.lua(model + "_bin", body, headers)}
        grpc_name = "gRPC" if self.grpc_client else "gRPC (Python client)"
        for conc in (1, 8, 32):
            for kind, lua in scripts.items():
                self.add("transports", model, kind, conc, *self.rest_point(server, model, lua, conc))
            self.add("transports", model, grpc_name, conc, *self.grpc_point(server, model, inputs, conc))

    def batching(self, server, pairs):
        from _client import binary_request
        for label, unbatched, batched, inputs in pairs:
            body, headers = binary_request(inputs)
            lua = self.lua(unbatched + "_bin", body, headers)
            for conc in (8, 32):
                for model in [unbatched] + batched:
                    kind = "unbatched" if model == unbatched else "batched, delay %s us" % model.rsplit("_", 1)[1]
                    before = self.counts(server, model)
                    point = self.rest_point(server, model, lua, conc)
                    after = self.counts(server, model)
                    rows = (after[0] - before[0]) / max(after[1] - before[1], 1)
                    self.add("batching", label, kind, conc, *point, rows)

    def counts(self, server, model):
        """(inferences, executions) so far, from the metrics page."""
        import requests
        text = requests.get("http://127.0.0.1:%d/metrics" % server.metrics_port).text
        got = {}
        for name in ("inference_count", "inference_exec_count"):
            m = re.search(r'^graphrt_%s_total\{model="%s",version="1"\} (\S+)$' % (name, model), text, re.M)
            got[name] = float(m.group(1))
        return got["inference_count"], got["inference_exec_count"]

    def print_tables(self):
        def loads_text(loads):
            return "%.1f-%.1f" % (min(loads), max(loads))
        print("| model | transport | concurrency | requests/s | p50 us | p99 us | load |")
        print("|---|---|---|---|---|---|---|")
        for table, m, kind, conc, rps, p50, p99, loads, _ in self.rows:
            if table == "transports":
                print("| %s | %s | %d | %.0f | %.0f | %s | %s |" % (m, kind, conc, rps, p50,
                                                                  "-" if p99 != p99 else "%.0f" % p99,
                                                                  loads_text(loads)))
        batch_rows = [r for r in self.rows if r[0] == "batching"]
        if batch_rows:
            print()
            print("| model | serving | concurrency | requests/s | p50 us | p99 us | rows/execution | load |")
            print("|---|---|---|---|---|---|---|---|")
            for table, m, kind, conc, rps, p50, p99, loads, rows in batch_rows:
                print("| %s | %s | %d | %.0f | %.0f | %.0f | %.1f | %s |" % (m, kind, conc, rps, p50, p99, rows,
                                                                          loads_text(loads)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--fixtures", default=os.path.join(os.path.dirname(REPO), "shared", "fixtures"))
    ap.add_argument("--seconds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=3, help="runs per point (the table holds medians)")
    ap.add_argument("--models", nargs="*", default=["mlp", "squeezenet1.1"])
    ap.add_argument("--batching", action="store_true", help="also batched against unbatched")
    ap.add_argument("--delays-us", type=int, nargs="+", default=[0, 500],
                    help="max_queue_delay_us of the batched models (one model each)")
    ap.add_argument("--threads", type=int, default=0, help="graphrt-serve --threads")
    args = ap.parse_args()
    args.build = os.path.abspath(args.build)
    os.environ["GRAPHRT_SERVE"] = os.path.join(args.build, "apps", "graphrt-serve")
    os.environ["GRAPHRT_FIXTURES"] = args.fixtures
    import json
    import numpy as np
    from _server import Server, add_model, relax_config
    tmp = tempfile.mkdtemp()
    bench = Bench(args, tmp)
    repo = os.path.join(tmp, "repo")
    plain = {"instance_count": 2, "max_queue_size": 256}
    for m in args.models:
        add_model(repo, m, {"deploy_factory.so": os.path.join(args.fixtures, m, "deploy_factory.so")}, config=plain)
    pairs = []
    if args.batching:
        from _batch_exports import write_batch_set
        d = os.path.join(args.fixtures, "relax", "relax_dynamic_batch")
        with open(os.path.join(d, "case.json")) as f:
            info = json.load(f)
        model = {"deploy_relax.so": os.path.join(d, "deploy_relax.so")}
        exports = write_batch_set(os.path.join(args.build, "apps"), os.path.join(tmp, "exports"), (1, 4, 8, 16, 32))
        add_model(repo, "relax_plain", model, config=dict(relax_config(info), **plain))
        add_model(repo, "demo_plain", {"demo.so": exports["batch_1.so"]}, config=plain)
        x = np.random.RandomState(0).uniform(-1, 1, size=(1, 64)).astype("float32")
        for delay in args.delays_us:
            batched = dict(plain, max_batch_size=32, max_queue_delay_us=delay)
            add_model(repo, "relax_batched_%d" % delay, model, config=dict(relax_config(info), **batched))
            add_model(repo, "demo_batched_%d" % delay, exports, config=batched)
        pairs.append(("relax_dynamic_batch", "relax_plain", ["relax_batched_%d" % d for d in args.delays_us],
                      {"x": np.load(os.path.join(d, "input_x_n1.npy"))}))
        pairs.append(("demo MLP (batch_<N>.so)", "demo_plain", ["demo_batched_%d" % d for d in args.delays_us],
                      {"data": x}))
    extra = ["--threads", str(args.threads)] if args.threads else []
    server = Server(repo, *extra)
    try:
        for m in args.models:
            path = os.path.join(args.fixtures, m, "deploy_factory.so")
            bench.transports(server, m, path, {"data": np.load(os.path.join(args.fixtures, m, "input_data.npy"))})
        bench.batching(server, pairs)
    finally:
        server.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    bench.print_tables()


if __name__ == "__main__":
    main()
