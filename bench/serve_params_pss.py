#!/usr/bin/env python3
"""What graphrt-serve replicas on one host hold in memory, with and without --params-cache.

Starts 1, then N replicas of graphrt-serve over the same repository (one model, default
squeezenet1.1's one-file export, or a Relax executable such as relax/relax_mlp, whose tensor
constants the cache holds; or an empty repository, the baseline), sends each one inference
(so that every lazy first-run cost is paid), then reads each replica's proportional set size
(Pss, Pss_Anon, Pss_File from /proc/PID/smaps_rollup) and the Pss of the mapping of its cache
file (/proc/PID/smaps). A page shared by k processes counts 1/k in each, so the sums over the
replicas are what the host holds. A benchmark, not a test: it prints a table.

Usage: serve_params_pss.py --build BUILD [--fixtures DIR] [--model squeezenet1.1|relax/relax_mlp] [--replicas 4]
"""
import argparse
import json
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "serve"))


def rollup(pid):
    """{field: kB} of /proc/PID/smaps_rollup."""
    out = {}
    with open("/proc/%d/smaps_rollup" % pid) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3 and parts[2] == "kB":
                out[parts[0].rstrip(":")] = int(parts[1])
    return out


def mapping_pss(pid, path_suffix):
    """Pss (kB) of the mappings of files whose path ends with `path_suffix`."""
    total, inside = 0, False
    with open("/proc/%d/smaps" % pid) as f:
        for line in f:
            head = line.split()
            if head and "-" in head[0] and len(head) >= 5 and ":" not in head[0]:
                inside = len(head) >= 6 and head[-1].endswith(path_suffix)
            elif inside and line.startswith("Pss:"):
                total += int(line.split()[1])
    return total


def measure(Server, repo, n, cache, infer):
    extra = ["--threads", "1"]
    if cache:
        extra += ["--params-cache", cache]
    servers = []
    try:
        for _ in range(n):
            servers.append(Server(repo, *extra))
        for s in servers:
            infer(s)
        rows = []
        for s in servers:
            r = rollup(s.proc.pid)
            rows.append((r["Pss"], r.get("Pss_Anon", 0), r.get("Pss_File", 0),
                         mapping_pss(s.proc.pid, ".params-cache")))
        return [sum(col) for col in zip(*rows)]
    finally:
        for s in servers:
            s.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--fixtures", default=os.path.join(os.path.dirname(REPO), "shared", "fixtures"))
    ap.add_argument("--model", default="squeezenet1.1")
    ap.add_argument("--replicas", type=int, default=4)
    args = ap.parse_args()
    os.environ["GRAPHRT_SERVE"] = os.path.join(args.build, "apps", "graphrt-serve")
    os.environ["GRAPHRT_FIXTURES"] = args.fixtures
    import numpy as np
    import requests
    from _client import binary_request
    from _server import Server, add_model, relax_config

    work = tempfile.mkdtemp(prefix="serve_pss_")
    try:
        empty = os.path.join(work, "empty")
        os.makedirs(empty)
        repo = os.path.join(work, "repo")
        d = os.path.join(args.fixtures, args.model)
        if os.path.isfile(os.path.join(d, "deploy_relax.so")):  # a Relax executable: its constants are cached
            with open(os.path.join(d, "case.json")) as f:
                info = json.load(f)
            model_file = os.path.join(d, "deploy_relax.so")
            add_model(repo, "m", {"deploy_relax.so": model_file}, config=relax_config(info))
            names = info.get("input_order") or list(info["inputs"])
            inputs = {k: np.load(os.path.join(d, "input_%s.npy" % k)) for k in names}
        else:
            model_file = os.path.join(d, "deploy_factory.so")
            add_model(repo, "m", {"deploy_factory.so": model_file})
            inputs = {"data": np.load(os.path.join(d, "input_data.npy"))}
        body, headers = binary_request(inputs)

        def infer(s):
            if s.args[s.args.index("--model-repository") + 1] == empty:
                return
            r = requests.post(s.url + "/v2/models/m/infer", data=body, headers=headers, timeout=300)
            assert r.status_code == 200, r.text

        cache = os.path.join(work, "cache")
        print("model %s (model file %.0f kB); Pss summed over the replicas, kB"
              % (args.model, os.path.getsize(model_file) / 1024))
        print("| repository | params cache | replicas | Pss | Pss_Anon | Pss_File | cache mapping Pss |")
        print("|---|---|---|---|---|---|---|")
        for label, r, c in (("empty", empty, None), (args.model, repo, None), (args.model, repo, cache)):
            if c:
                shutil.rmtree(c, ignore_errors=True)
                measure(Server, r, 1, c, infer)  # writes the cache; the figures below map it
                print("(cache file %.0f kB)" % (sum(os.path.getsize(os.path.join(c, f)) for f in os.listdir(c)) / 1024))
            for n in (1, args.replicas):
                pss, anon, filed, mapped = measure(Server, r, n, c, infer)
                print("| %s | %s | %d | %d | %d | %d | %d |" % (label, "yes" if c else "no", n, pss, anon, filed, mapped))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
