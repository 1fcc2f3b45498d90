#!/usr/bin/env python3
"""Load-to-ready time of TVM .tar exports beside the .so of the same build.

usage: tar_load_bench.py [--rounds R] [CASE_DIR...]   (default: ../shared/fixtures/{mlp_tar,chain1000_tar})

Each measurement is a fresh child process timing load_module + lib["default"](cpu) + GraphModule
+ set_input, the engines alternating for R rounds; medians are printed:
  graphrt .tar   objects linked in-process by graphrt (no compiler)
  graphrt .so    the deploy_factory.so of the same build (dlopen)
  tvm .so        TVM v0.18's runtime (the peer) on the .so
  tvm .tar       the peer on the .tar: TVM untars it and links it with g++ at load (only when a
                 C++ compiler is on PATH; the figure includes that link)
Environment: GRAPHRT_PY (graphrt's python/ folder), GRAPHRT_LIBRARY_PATH (libgraphrt.so),
TVM_PEER (default ../shared/peer/tvm-0.18-runtime). TVM_NUM_THREADS=1 for all.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
FIXTURES = os.environ.get("GRAPHRT_FIXTURES") or os.path.join(os.path.dirname(REPO), "shared", "fixtures")

CHILD = r'''
import json, os, sys, time
engine, path, d = sys.argv[1], sys.argv[2], sys.argv[3]
import numpy as np
case = json.load(open(os.path.join(d, "case.json")))
inputs = {k: np.load(os.path.join(d, f"input_{k}.npy")) for k in case["inputs"]}
if engine == "tvm":
    import tvm as rt
    from tvm.contrib import graph_executor as ge
    load = rt.runtime.load_module
else:
    import graphrt as rt
    from graphrt import graph_executor as ge
    load = rt.load_module
t0 = time.perf_counter()
lib = load(path)
m = ge.GraphModule(lib["default"](rt.cpu(0)))
for k, v in inputs.items():
    m.set_input(k, v)
t1 = time.perf_counter()
m.run()
out = m.get_output(0).numpy()
ok = bool(np.array_equal(out, np.load(os.path.join(d, "output_0.npy"))))
print(json.dumps({"load_s": t1 - t0, "exact": ok}))
'''


def env_for(engine):
    env = dict(os.environ, TVM_NUM_THREADS="1")
    if engine == "tvm":
        peer = os.environ.get("TVM_PEER") or os.path.join(os.path.dirname(REPO), "shared", "peer", "tvm-0.18-runtime")
        env["PYTHONPATH"] = os.path.join(peer, "python")
        env["TVM_LIBRARY_PATH"] = os.path.join(peer, "lib")
        env["TVM_USE_RUNTIME_LIB"] = "1"
    else:
        env["PYTHONPATH"] = os.environ.get("GRAPHRT_PY") or os.path.join(REPO, "python")
    return env


def child(engine, path, d):
    # TVM writes the linked .so next to the .tar; give it a writable copy.
    with tempfile.TemporaryDirectory() as tmp:
        if engine == "tvm" and path.endswith(".tar"):
            path = shutil.copy(path, os.path.join(tmp, "deploy.tar"))
        p = subprocess.run([sys.executable, "-c", CHILD, engine, path, d], capture_output=True, text=True,
                           env=env_for(engine), timeout=900, cwd=tmp)
    if p.returncode != 0:
        return {"error": (p.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("dirs", nargs="*")
    a = ap.parse_args()
    dirs = a.dirs or [os.path.join(FIXTURES, n) for n in ("mlp_tar", "chain1000_tar")]
    variants = [("graphrt", "deploy.tar"), ("graphrt", "deploy_factory.so"), ("tvm", "deploy_factory.so")]
    compiler = shutil.which("g++") or shutil.which("c++")
    if compiler:
        variants.append(("tvm", "deploy.tar"))
    print("C++ compiler for TVM's .tar load: %s" % (compiler or "none (tvm .tar not measured)"))
    for d in dirs:
        res = {v: [] for v in variants}
        for _ in range(a.rounds):
            for v in variants:
                res[v].append(child(v[0], os.path.join(d, v[1]), d))
        line = "%-15s" % os.path.basename(os.path.normpath(d))
        for v in variants:
            errors = [r["error"] for r in res[v] if "error" in r]
            label = "%s %s" % (v[0], ".tar" if v[1].endswith(".tar") else ".so")
            if errors:
                line += " | %s: failed (%s)" % (label, errors[0])
                continue
            med = statistics.median(r["load_s"] for r in res[v]) * 1e3
            exact = all(r["exact"] for r in res[v])
            line += " | %s %8.1f ms%s" % (label, med, "" if exact else " (OUTPUT DIFFERS)")
        print(line)


if __name__ == "__main__":
    main()
