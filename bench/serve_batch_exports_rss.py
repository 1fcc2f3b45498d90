#!/usr/bin/env python3
"""What graphrt-serve holds in anonymous memory for a version folder of batch exports.

Writes the batching benchmark's model (bench/heavy_mlp.py: 48 MB of weights) as tvmc packages
at batch 1, 2, 4, 8, 16, 32, then starts graphrt-serve (one instance, --threads 1) on a
repository holding that folder, on one holding batch_1.tar alone, and on an empty one, sends
each model one request, and reads RssAnon and VmRSS from /proc/PID/status. A benchmark, not a
test: it prints a table.

Usage: serve_batch_exports_rss.py --build BUILD [--pack-build BUILD | --exports DIR]
(graphrt-pack from --pack-build/apps, default BUILD; or the packages already in DIR)
"""
import argparse
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "serve"))
sys.path.insert(0, HERE)


def status(pid):
    out = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3 and parts[2] == "kB":
                out[parts[0].rstrip(":")] = int(parts[1])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--pack-build")
    ap.add_argument("--exports", help="a folder already holding batch_<N>.tar from bench/heavy_mlp.py")
    args = ap.parse_args()
    os.environ["GRAPHRT_SERVE"] = os.path.join(os.path.abspath(args.build), "apps", "graphrt-serve")
    import numpy as np
    import requests
    from _client import binary_request
    from _server import Server
    from heavy_mlp import BENCH_DIMS, write_heavy_mlp

    work = tempfile.mkdtemp(prefix="serve_batch_rss_")
    try:
        folder = os.path.join(work, "all", "heavy", "1")
        if args.exports:
            exports = {n: os.path.join(os.path.abspath(args.exports), n) for n in os.listdir(args.exports)
                       if n.startswith("batch_")}
        else:
            exports = write_heavy_mlp(os.path.join(os.path.abspath(args.pack_build or args.build), "apps"),
                                      os.path.join(work, "exports"), (1, 2, 4, 8, 16, 32))[0]
        os.makedirs(folder)
        one = os.path.join(work, "one", "heavy", "1")
        os.makedirs(one)
        for name, path in exports.items():
            os.symlink(path, os.path.join(folder, name))
        os.symlink(exports["batch_1.tar"], os.path.join(one, "batch_1.tar"))
        empty = os.path.join(work, "empty")
        os.makedirs(empty)
        x = np.random.RandomState(0).standard_normal((1, BENCH_DIMS[0])).astype("float32")
        print("| repository | RssAnon, kB | VmRSS, kB |")
        print("|---|---|---|")
        for label, repo in (("empty", empty), ("batch_1.tar alone", os.path.dirname(os.path.dirname(one))),
                            ("batch_1..32.tar (six exports)", os.path.dirname(os.path.dirname(folder)))):
            with Server(repo, "--threads", "1") as s:
                if repo != empty:
                    meta = requests.get(s.url + "/v2/models/heavy", timeout=60).json()
                    body, headers = binary_request({meta["inputs"][0]["name"]: x})
                    r = requests.post(s.url + "/v2/models/heavy/infer", data=body, headers=headers, timeout=300)
                    assert r.status_code == 200, r.text
                st = status(s.proc.pid)
                print("| %s | %d | %d |" % (label, st.get("RssAnon", 0), st.get("VmRSS", 0)))
                s.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
