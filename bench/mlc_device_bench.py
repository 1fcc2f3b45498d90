#!/usr/bin/env python3
"""An MLC-LLM package's library for a GPU API (mlc/tiny_gpt2_chat: tiny_gpt2_chat-opencl.so), weights
and KV cache on the device: graphrt::LanguageModel (build/bench/mlc_device_step_bench) against TVM
v0.26's own runtime driving the same library from Python as MLC's engine does, and the same Python
through graphrt's TVM face; fresh processes, engines alternating, medians over the rounds.

Measured per engine: load to ready (nothing loaded -> the host logits of a first one-token step:
library, VM, weights onto the device, KV cache, one prefill), the decode step of one sequence
(`decode`) and of a batch of 4 (`batch_decode`): embed on the device, begin_forward, the forward
function, end_forward, the logits read to the host, a greedy pick there; and, with
build/tests/backends/opencl/libopencl_transfer_counter.so
(tests/backends/opencl/opencl_transfer_counter.c) preloaded into every process, the host<->device
transfers and kernel launches of one decode step (count and bytes).

usage: mlc_device_bench.py [--device opencl] [--steps 40] [--rounds 3] [PACKAGE_DIR]
Environment: TVM_PEER (TVM v0.26 with lib-<device>/, default /work/peer26), GRAPHRT_BUILD (the build
folder, default build/ beside this script), GRAPHRT_PY (python/ beside it)."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

# TVM's names, as MLC's engine calls them (the embeddings stay on the device: a view, no copy).
CHILD = r"""
import ctypes, json, os, statistics, sys, time
import numpy as np
d, api, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
batches = [int(b) for b in sys.argv[4].split(",")]
counter = ctypes.CDLL(os.environ["COUNTER"]) if os.environ.get("COUNTER") else None
def counts():
    if not counter:
        return None
    a = (ctypes.c_uint64 * 8)()
    counter.opencl_transfer_counts(a)
    return list(a)
if os.environ["ENGINE"] == "graphrt-tvm-face":
    import graphrt; graphrt.install_as_tvm()
else:
    ctypes.CDLL(os.path.join(os.environ["TVM_LIBRARY_PATH"], "libtvm_runtime_%s.so" % api), ctypes.RTLD_GLOBAL)
import tvm
from tvm.runtime.vm import VirtualMachine
case = json.load(open(os.path.join(d, "case.json")))
hidden = json.load(open(os.path.join(d, "mlc-chat-config.json")))["model_config"]["hidden_size"]
f, S = tvm.get_global_func, tvm.runtime.ShapeTuple
t0 = time.perf_counter()
dev = tvm.device(api, 0)
vm = VirtualMachine(tvm.runtime.load_module(os.path.join(d, case["device_libraries"][api]["library"])), [dev, tvm.cpu()])
f("vm.builtin.tensor_cache.load")(d, dev.dlpack_device_type(), 0)
params = f("vm.builtin.param_array_from_cache_by_name")([p["name"] for p in json.loads(str(vm["_metadata"]()))["params"]])
f("vm.builtin.tensor_cache.clear")()
kv = vm["create_tir_paged_kv_cache"](*[S([int(v)]) for v in case["cache_config"].values()])
add, remove = f("vm.builtin.kv_state_add_sequence"), f("vm.builtin.kv_state_remove_sequence")
begin, end = f("vm.builtin.kv_state_begin_forward"), f("vm.builtin.kv_state_end_forward")
T = lambda a: tvm.runtime.tensor(np.ascontiguousarray(a), dev)
def step(fn, seqs, ids, lengths, extra=()):
    global kv
    x = vm["embed"](T(np.array(ids, "int32")), params)
    x = x._create_view((1, len(ids), hidden) if fn != "batch_decode" else (len(ids), 1, hidden))
    begin(kv, S(seqs), S(lengths))
    r = vm[fn](x, *extra, kv, params)
    end(kv)
    kv = r[1]
    return r[0].numpy()
add(kv, 0)
first = int(np.argmax(step("prefill", [0], [464], [1]).reshape(-1)))
print(json.dumps({"measure": "load_to_ready", "ms": (time.perf_counter() - t0) * 1e3, "first_token": first}))
remove(kv, 0)
for batch in batches:
    seqs = list(range(batch))
    for s in seqs:
        add(kv, s)
    prompt = [11, 22, 33, 44]
    if batch == 1:
        l = step("prefill", seqs, prompt, [4]).reshape(1, -1)
    else:
        l = step("batch_prefill", seqs, prompt * batch, [4] * batch,
                 (T(np.array([4 * (i + 1) - 1 for i in seqs], "int32")),)).reshape(batch, -1)
    times = []
    c0 = counts()
    for _ in range(steps):
        tokens = [int(np.argmax(l[i])) for i in seqs]
        a = time.perf_counter()
        l = step("decode" if batch == 1 else "batch_decode", seqs, tokens, [1] * batch).reshape(batch, -1)
        times.append((time.perf_counter() - a) * 1e3)
    c1 = counts()
    out = {"measure": "decode", "batch": batch, "steps": steps, "step_ms": statistics.median(times),
           "tokens": [int(np.argmax(l[i])) for i in seqs]}
    if c0 is not None:
        names = ["writes", "write_bytes", "reads", "read_bytes", "copies", "copy_bytes", "launches", "finishes"]
        out["per_step"] = {n: (c1[k] - c0[k]) / steps for k, n in enumerate(names)}
    print(json.dumps(out))
    for s in seqs:
        remove(kv, s)
sys.stdout.flush()
# TVM v0.26's OpenCL runtime crashes in its exit-time destructors on PoCL (CL_INVALID_PLATFORM)
os._exit(0)
"""


def run(engine, args):
    build = os.environ.get("GRAPHRT_BUILD", os.path.join(REPO, "build"))
    counter = os.path.join(build, "tests", "backends", "opencl", "libopencl_transfer_counter.so")
    env = dict(os.environ)
    if os.path.exists(counter) and args.device == "opencl":
        env.update(LD_PRELOAD=counter, COUNTER=counter, GRAPHRT_OPENCL_LIBRARY=counter)
    batches = ",".join(str(b) for b in args.batches)
    if engine == "graphrt":
        cmd = [os.path.join(build, "bench", "mlc_device_step_bench"), args.package, args.device, str(args.steps),
               batches]
    else:
        cmd = [sys.executable, "-c", CHILD, args.package, args.device, str(args.steps), batches]
        env["ENGINE"] = engine
        if engine == "tvm":
            peer = os.environ.get("TVM_PEER", "/work/peer26")
            lib = os.path.join(peer, "lib-" + args.device)
            env.update(PYTHONPATH=os.path.join(peer, "python"), TVM_LIBRARY_PATH=lib, TVM_USE_RUNTIME_LIB="1",
                       LD_LIBRARY_PATH=lib + os.pathsep + env.get("LD_LIBRARY_PATH", ""))
            if "COUNTER" in env:
                # TVM's OpenCL runtime opens the API itself, dlopen("libOpenCL.so") through the
                # library path, and takes every entry point from that handle: hand it the counter.
                shim = tempfile.mkdtemp(prefix="tvm_opencl_counter_")
                os.symlink(counter, os.path.join(shim, "libOpenCL.so"))
                env["LD_LIBRARY_PATH"] = shim + os.pathsep + env["LD_LIBRARY_PATH"]
        else:
            env["PYTHONPATH"] = os.environ.get("GRAPHRT_PY", os.path.join(REPO, "python"))
            env.setdefault("GRAPHRT_LIBRARY_PATH", os.path.join(build, "libgraphrt.so.0.1.0"))
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    if p.returncode != 0:
        raise RuntimeError("%s: %s" % (engine, (p.stderr or p.stdout).strip().splitlines()[-3:]))
    return [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]


def main():
    a = argparse.ArgumentParser()
    a.add_argument("package", nargs="?", default="/work/shared/fixtures/mlc/tiny_gpt2_chat")
    a.add_argument("--device", default="opencl")
    a.add_argument("--steps", type=int, default=40)
    a.add_argument("--rounds", type=int, default=3)
    a.add_argument("--batches", type=lambda s: [int(b) for b in s.split(",")], default=[1, 4])
    a.add_argument("--engines", default="tvm,graphrt,graphrt-tvm-face")
    args = a.parse_args()
    engines = args.engines.split(",")
    results = {e: [] for e in engines}
    for _ in range(args.rounds):
        for e in engines:
            results[e].append(run(e, args))

    def figures(e, key):
        rows = [[r for r in run_ if (r["measure"], r.get("batch")) == key] for run_ in results[e]]
        return [r[0] for r in rows if r]

    keys = [("load_to_ready", None)] + [("decode", b) for b in args.batches]
    for key in keys:
        label = "load to ready" if key[0] == "load_to_ready" else "decode step, batch %d" % key[1]
        meds = {}
        for e in engines:
            rs = figures(e, key)
            field = "ms" if key[0] == "load_to_ready" else "step_ms"
            meds[e] = statistics.median(r[field] for r in rs)
            line = "  %-17s %9.3f ms  (%s)" % (e, meds[e], ", ".join("%.2f" % r[field] for r in rs))
            if key[0] == "decode":
                line += "  tokens %s" % rs[-1]["tokens"]
                if "per_step" in rs[-1]:
                    p = rs[-1]["per_step"]
                    line += ("  per step: %g writes / %g B, %g reads / %g B, %g copies, %g launches" %
                             (p["writes"], p["write_bytes"], p["reads"], p["read_bytes"], p["copies"], p["launches"]))
            print(("%s:\n" % label if e == engines[0] else "") + line)
        if "tvm" in meds:
            for e in engines:
                if e != "tvm":
                    print("  %s/tvm %.3f" % (e, meds[e] / meds["tvm"]))


if __name__ == "__main__":
    main()
