#!/usr/bin/env python3
"""The decode step of an MLC package's library, driven from Python under TVM v0.26's names as
MLC's engine drives it (embed, kv_state_begin_forward, batch_decode / decode, end_forward), with
TVM v0.26's own runtime and with graphrt's TVM face, in fresh processes, alternating.

usage: mlc_decode_step_bench.py PACKAGE_DIR [--steps 60] [--rounds 3]
Environment as perf_compare.py: TVM_PEER (a TVM v0.26 runtime folder with python/ and lib/),
GRAPHRT_PY (graphrt's python/ folder), GRAPHRT_LIBRARY_PATH (libgraphrt.so).
Prints per engine and batch size the median step in ms over the rounds, and graphrt/TVM."""
import argparse
import json
import os
import statistics
import subprocess
import sys

CHILD = r"""
import json, os, statistics, sys, time
import numpy as np
if os.environ.get("ENGINE") == "graphrt":
    import graphrt; graphrt.install_as_tvm()
import tvm
from tvm.runtime.vm import VirtualMachine
d, steps, batch = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
case = json.load(open(os.path.join(d, "case.json")))
hidden = json.load(open(os.path.join(d, "mlc-chat-config.json")))["model_config"]["hidden_size"]
f, dev, S = tvm.get_global_func, tvm.cpu(), tvm.runtime.ShapeTuple
vm = VirtualMachine(tvm.runtime.load_module(os.path.join(d, case["library"])), dev)
f("vm.builtin.tensor_cache.load")(d, dev.dlpack_device_type(), 0)
params = f("vm.builtin.param_array_from_cache_by_name")([p["name"] for p in json.loads(str(vm["_metadata"]()))["params"]])
T = lambda a: tvm.runtime.tensor(np.ascontiguousarray(a), dev)
kv = vm["create_tir_paged_kv_cache"](*[S([int(v)]) for v in case["cache_config"].values()])
begin, end = f("vm.builtin.kv_state_begin_forward"), f("vm.builtin.kv_state_end_forward")
seqs = list(range(batch))
for s in seqs:
    f("vm.builtin.kv_state_add_sequence")(kv, s)
prompt = [11, 22, 33, 44]
x = vm["embed"](T(np.array(prompt * batch, "int32")), params).numpy().reshape(1, len(prompt) * batch, hidden)
begin(kv, S(seqs), S([len(prompt)] * batch))
r = vm["batch_prefill"](T(x), T(np.array([len(prompt) * (i + 1) - 1 for i in seqs], "int32")), kv, params)
end(kv)
kv = r[1]
tokens = [int(np.argmax(r[0].numpy()[0, i])) for i in seqs]
fn = vm["batch_decode"]
times = []
for _ in range(steps):
    t0 = time.perf_counter()
    x = vm["embed"](T(np.array(tokens, "int32")), params).numpy().reshape(batch, 1, hidden)
    begin(kv, S(seqs), S([1] * batch))
    r = fn(T(x), kv, params)
    end(kv)
    kv = r[1]
    logits = r[0].numpy()
    times.append(time.perf_counter() - t0)
    tokens = [int(np.argmax(logits[i, 0])) for i in seqs]
print(json.dumps({"step_ms": statistics.median(times) * 1e3, "tokens": tokens}))
"""


def run(engine, d, steps, batch):
    env = dict(os.environ, ENGINE=engine)
    if engine == "tvm":
        peer = os.environ["TVM_PEER"]
        env.update(PYTHONPATH=os.path.join(peer, "python"), TVM_LIBRARY_PATH=os.path.join(peer, "lib"),
                   TVM_USE_RUNTIME_LIB="1")
    else:
        env["PYTHONPATH"] = os.environ["GRAPHRT_PY"]
    p = subprocess.run([sys.executable, "-c", CHILD, d, str(steps), str(batch)], env=env, capture_output=True,
                       text=True, timeout=600)
    if p.returncode != 0:
        raise RuntimeError("%s: %s" % (engine, p.stderr.strip().splitlines()[-3:]))
    return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    a = argparse.ArgumentParser()
    a.add_argument("package")
    a.add_argument("--steps", type=int, default=60)
    a.add_argument("--rounds", type=int, default=3)
    a.add_argument("--batches", default="1,4")
    args = a.parse_args()
    for batch in [int(b) for b in args.batches.split(",")]:
        res = {"tvm": [], "graphrt": []}
        tokens = {}
        for _ in range(args.rounds):
            for e in ("tvm", "graphrt"):
                r = run(e, args.package, args.steps, batch)
                res[e].append(r["step_ms"])
                tokens[e] = r["tokens"]
        t, g = statistics.median(res["tvm"]), statistics.median(res["graphrt"])
        same = "same tokens" if tokens["tvm"] == tokens["graphrt"] else "TOKENS DIFFER"
        print("batch %d, %d steps: tvm %.3f ms (%s)  graphrt %.3f ms (%s)  graphrt/tvm %.3f  [%s]" % (
            batch, args.steps, t, ", ".join("%.2f" % x for x in res["tvm"]), g,
            ", ".join("%.2f" % x for x in res["graphrt"]), g / t, same))


if __name__ == "__main__":
    main()
