#!/usr/bin/env python3
"""Load to ready of an MLC-LLM model folder: from nothing loaded to the logits of a first one-token prefill.

Three ways, each in fresh processes (import time excluded, the folder's files in the page cache after a first
run): TVM v0.26's own runtime driving the library as MLC's engine does (load_module, VirtualMachine,
vm.builtin.tensor_cache.load + param_array_from_cache_by_name, create_tir_paged_kv_cache, embed + prefill); the
same Python code through graphrt's TVM face (install_as_tvm); graphrt::LanguageModel(session, folder) in C++
(build/bench/mlc_load_bench). Prints the median of each over RUNS processes.

usage: mlc_load_bench.py [--runs N] [--peer DIR] [--bench BIN] FOLDER
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

CODE = r"""
import json, sys, time
if sys.argv[2] == "graphrt":
    import graphrt; graphrt.install_as_tvm()
import numpy as np
import tvm
from tvm.runtime.vm import VirtualMachine
d = sys.argv[1]
cfg = json.load(open(d + "/mlc-chat-config.json"))
t0 = time.perf_counter()
dev = tvm.cpu()
vm = VirtualMachine(tvm.runtime.load_module(d + "/" + d.rstrip("/").split("/")[-1] + "-cpu.so"), dev)
g = tvm.get_global_func
g("vm.builtin.tensor_cache.load")(d, dev.dlpack_device_type(), 0)
params = g("vm.builtin.param_array_from_cache_by_name")([p["name"] for p in json.loads(str(vm["_metadata"]()))["params"]])
g("vm.builtin.tensor_cache.clear")()
S = tvm.runtime.ShapeTuple
kv = vm["create_tir_paged_kv_cache"](S([16]), S([cfg["context_window_size"]]), S([cfg["prefill_chunk_size"]]), S([16]), S([0]))
g("vm.builtin.kv_state_add_sequence")(kv, 0)
x = vm["embed"](tvm.runtime.tensor(np.array([464], "int32"), dev), params)
g("vm.builtin.kv_state_begin_forward")(kv, S([0]), S([1]))
r = vm["prefill"](tvm.runtime.tensor(x.numpy().reshape(1, 1, -1), dev), kv, params)
g("vm.builtin.kv_state_end_forward")(kv)
r[0].numpy()
print(json.dumps({"ms": (time.perf_counter() - t0) * 1e3}))
"""


def one(cmd, env):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    if p.returncode != 0:
        raise SystemExit("failed: %s\n%s" % (" ".join(cmd[:3]), p.stderr[-2000:]))
    return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("folder")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--peer", default=os.path.join(REPO, "..", "shared", "peer", "tvm-0.26-runtime"))
    ap.add_argument("--bench", default=os.path.join(REPO, "build", "bench", "mlc_load_bench"))
    a = ap.parse_args()
    folder = os.path.abspath(a.folder)
    tvm_env = dict(os.environ, PYTHONPATH=os.path.join(a.peer, "python"), TVM_LIBRARY_PATH=os.path.join(a.peer, "lib"),
                   TVM_USE_RUNTIME_LIB="1",
                   LD_LIBRARY_PATH=os.path.join(a.peer, "lib") + os.pathsep + os.environ.get("LD_LIBRARY_PATH", ""))
    graphrt_env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"))
    rows = {}
    for name, cmd, env, key in (
            ("TVM v0.26 (Python, tensor_cache.load + param_array)", [sys.executable, "-c", CODE, folder, "tvm"], tvm_env, "ms"),
            ("graphrt, the same Python through its TVM face", [sys.executable, "-c", CODE, folder, "graphrt"], graphrt_env, "ms"),
            ("graphrt::LanguageModel(session, folder), C++", [a.bench, folder, "1"], os.environ, "first_ms")):
        if name.startswith("graphrt::") and not os.path.exists(a.bench):
            continue
        one(cmd, env)  # the folder's files into the page cache
        rows[name] = statistics.median(one(cmd, env)[key] for _ in range(a.runs))
    for name, ms in rows.items():
        print("%-58s %8.2f ms" % (name, ms))


if __name__ == "__main__":
    main()
