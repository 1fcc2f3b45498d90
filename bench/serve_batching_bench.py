#!/usr/bin/env python3
"""What graphrt-serve's dynamic batching buys on a model where it should: the heavy MLP of
bench/heavy_mlp.py (48 MB of fp32 weights, one row bound by reading them), generated here at
batch 1, 2, 4, 8, 16, 32 (batch_<N>.tar tvmc packages packed by graphrt-pack), served
  unbatched: its batch_1.tar alone as a plain model (no batcher), and
  batched:   the six exports in one version folder, max_batch_size 32, for each
             max_queue_delay_us of --delays-us,
with --instances executor instances each, under closed-loop load of one-row requests at
--concurrency clients (gRPC through bench's serve_grpc_load, a C++ client; REST binary through
wrk with --transport rest). The configurations take turns, --repeat rounds of --seconds each,
so that a change in the machine's load falls on all of them; the table holds each one's median
and range of requests/s, median p50/p99, rows per execution (the metrics page) and the 1-minute
load average seen at the start of its runs. It also prints the in-process cost per row of each
export (graphrt-run --repeat), the limit batching approaches.

Usage: bench/serve_batching_bench.py --build BUILD [--seconds 5] [--repeat 5] [--concurrency 32]
                                     [--delays-us 0 2000] [--instances 2] [--transport grpc|rest]
Loopback only, bounded in time. A benchmark, not a test: it prints tables.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "serve"))
sys.path.insert(0, HERE)

from heavy_mlp import BENCH_DIMS, write_heavy_mlp  # noqa: E402
from serve_bench import grpc_cpp_point, load_average, wrk_point  # noqa: E402

BATCHES = (1, 2, 4, 8, 16, 32)


def in_process_ms(build, path, repeat):
    """(p50, min) ms of graphrt-run --repeat: min is what the export costs when nothing else runs."""
    p = subprocess.run([os.path.join(build, "apps", "graphrt-run"), path, "--random-inputs", "0", "--repeat",
                        str(repeat), "--quiet"], capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise RuntimeError("graphrt-run %s failed: %s" % (path, p.stderr))
    return tuple(float(re.search(r"%s ([\d.]+) ms" % k, p.stdout).group(1)) for k in ("p50", "min"))


def counts(server, model):
    """(inferences, executions) so far, from the metrics page."""
    import requests
    text = requests.get("http://127.0.0.1:%d/metrics" % server.metrics_port).text
    got = []
    for name in ("inference_count", "inference_exec_count"):
        m = re.search(r'^graphrt_%s_total\{model="%s",version="1"\} (\S+)$' % (name, model), text, re.M)
        got.append(float(m.group(1)))
    return got


class Load:
    """One closed-loop run against a model: (requests/s, p50 us, p99 us)."""

    def __init__(self, args, server, tmp, x):
        self.args, self.server, self.tmp, self.x = args, server, tmp, x
        self.grpc_client = os.path.join(args.build, "bench", "serve_grpc_load")
        if args.transport == "grpc" and not os.path.isfile(self.grpc_client):
            sys.exit("%s not built (cmake --build BUILD --target serve_grpc_load), or use --transport rest"
                     % self.grpc_client)
        if args.transport == "rest" and not shutil.which("wrk"):
            sys.exit("wrk not found (apt-get install wrk), or use --transport grpc")
        self.files = {}

    def request_file(self, model):
        if model in self.files:
            return self.files[model]
        if self.args.transport == "grpc":
            from _grpc_stubs import stubs
            pb = stubs(os.path.join(self.tmp, "stubs"))[0]
            req = pb.ModelInferRequest(model_name=model)
            req.inputs.add(name="data", datatype="FP32", shape=list(self.x.shape))
            req.raw_input_contents.append(self.x.tobytes())
            path = os.path.join(self.tmp, model + ".pb")
            with open(path, "wb") as f:
                f.write(req.SerializeToString())
        else:
            from _client import binary_request
            body, headers = binary_request({"data": self.x})
            with open(os.path.join(self.tmp, model + ".body"), "wb") as f:
                f.write(body)
            path = os.path.join(self.tmp, model + ".lua")
            with open(path, "w") as f:
                f.write('wrk.method = "POST"\n')
                for k, v in headers.items():
                    f.write('wrk.headers["%s"] = "%s"\n' % (k, v))
                f.write('local f = io.open("%s", "rb")\nwrk.body = f:read("*a")\nf:close()\n'
                        % os.path.join(self.tmp, model + ".body"))
        self.files[model] = path
        return path

    def run(self, model):
        a = self.args
        path = self.request_file(model)
        if a.transport == "grpc":
            return grpc_cpp_point(self.grpc_client, "127.0.0.1:%d" % self.server.grpc_port, path, a.concurrency,
                                  a.seconds)
        url = "%s/v2/models/%s/infer" % (self.server.url, model)
        return wrk_point(shutil.which("wrk"), url, path, a.concurrency, a.seconds)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=5, help="rounds; each configuration runs once per round")
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--delays-us", type=int, nargs="+", default=[0, 2000],
                    help="max_queue_delay_us of the batched configurations (one each)")
    ap.add_argument("--instances", type=int, default=2, help="instance_count of every configuration")
    ap.add_argument("--transport", choices=("grpc", "rest"), default="grpc")
    ap.add_argument("--threads", type=int, default=0, help="graphrt-serve --threads (default: graphrt's)")
    args = ap.parse_args()
    args.build = os.path.abspath(args.build)
    os.environ["GRAPHRT_SERVE"] = os.path.join(args.build, "apps", "graphrt-serve")
    from _server import Server, add_model

    tmp = tempfile.mkdtemp(prefix="serve_batching_bench.")
    try:
        sys.stderr.write("generating the heavy MLP %s at batch %s...\n" % (list(BENCH_DIMS), list(BATCHES)))
        exports, layers = write_heavy_mlp(os.path.join(args.build, "apps"), os.path.join(tmp, "exports"), BATCHES)
        weight_mb = sum(w.nbytes + b.nbytes for w, b in layers) / 2**20
        in_process = []
        for b in BATCHES:
            p50, low = in_process_ms(args.build, exports["batch_%d.tar" % b], max(20, 160 // b))
            in_process.append((b, p50, low))
            sys.stderr.write("in-process batch %d: p50 %.2f ms, min %.2f ms (%.3f ms/row)\n" % (b, p50, low, low / b))

        repo = os.path.join(tmp, "repo")
        plain = {"instance_count": args.instances, "max_queue_size": 256}
        add_model(repo, "unbatched", {"model.tar": exports["batch_1.tar"]}, config=plain)
        configs = [("unbatched", "unbatched (batch_1.tar alone)")]
        for d in args.delays_us:
            add_model(repo, "batched_%d" % d, exports,
                      config=dict(plain, max_batch_size=BATCHES[-1], max_queue_delay_us=d))
            configs.append(("batched_%d" % d, "batched, max_queue_delay_us %d" % d))
        extra = ["--threads", str(args.threads)] if args.threads else []
        x = np.random.RandomState(1).uniform(-1, 1, size=(1, BENCH_DIMS[0])).astype("float32")
        results = {m: [] for m, _ in configs}
        with Server(repo, *extra, timeout=600) as server:  # seven 50 MB models to load on a busy machine
            load = Load(args, server, tmp, x)
            for r in range(args.repeat):
                for model, _ in configs:
                    before, avg = counts(server, model), load_average()
                    rps, p50, p99 = load.run(model)
                    after = counts(server, model)
                    rows = (after[0] - before[0]) / max(after[1] - before[1], 1)
                    results[model].append((rps, p50, p99, rows, avg))
                    sys.stderr.write("round %d %s: %.0f req/s p50 %.0f us p99 %.0f us, %.1f rows/execution, "
                                     "load %.2f\n" % (r + 1, model, rps, p50, p99, rows, avg))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    print("heavy MLP %s, %.0f MB of weights; in-process (graphrt-run --repeat):" % (list(BENCH_DIMS),
                                                                                       weight_mb))
    print()
    print("| export | p50 ms | min ms | min ms per row |")
    print("|---|---|---|---|")
    for b, p50, low in in_process:
        print("| batch_%d.tar | %.2f | %.2f | %.3f |" % (b, p50, low, low / b))
    print()
    print("%s, concurrency %d, one-row requests, instance_count %d, %d rounds of %d s (medians; range of "
          "requests/s):" % ("gRPC" if args.transport == "grpc" else "REST binary", args.concurrency, args.instances,
                            args.repeat, args.seconds))
    print()
    print("| serving | requests/s | range | vs unbatched | p50 us | p99 us | rows/execution | load |")
    print("|---|---|---|---|---|---|---|---|")
    base = statistics.median(r[0] for r in results["unbatched"])
    for model, label in configs:
        runs = results[model]
        med = [statistics.median(r[i] for r in runs) for i in range(4)]
        loads = [r[4] for r in runs]
        print("| %s | %.0f | %.0f-%.0f | %.2fx | %.0f | %.0f | %.1f | %.1f-%.1f |" % (
            label, med[0], min(r[0] for r in runs), max(r[0] for r in runs), med[0] / base, med[1], med[2], med[3],
            min(loads), max(loads)))


if __name__ == "__main__":
    main()
