#!/usr/bin/env python3
"""The decode step of an MLC package's library, in fresh processes, alternating, four ways:

  tvm          TVM v0.26's own runtime from Python, driven as MLC's engine drives it (embed,
               kv_state_begin_forward, batch_decode / decode, end_forward, the logits' numpy());
  graphrt      the same Python code on graphrt's TVM face (graphrt.install_as_tvm());
  graphrt-lm   graphrt.LanguageModel.step from Python: one foreign call per step (graphrt_lm_step),
               the logits copied into numpy as tvm's numpy() does;
  graphrt-cpp  graphrt::LanguageModel::step in-process (build/bench/mlc_decode_step_bench).

Each child: sequences 0..B-1, the prompt [11, 22, 33, 44] each in one batch_prefill, then STEPS
decode steps, each token the argmax of the step before (outside the timing); its figure is the
median step. Per engine the median over rounds and the spread (lowest-highest round).

usage: mlc_decode_step_bench.py PACKAGE_DIR [--steps 60] [--rounds 3] [--batches 1,4]
                                [--engines tvm,graphrt,graphrt-lm,graphrt-cpp]
Environment as perf_compare.py: TVM_PEER (a TVM v0.26 runtime folder with python/ and lib/),
GRAPHRT_PY (graphrt's python/ folder), GRAPHRT_LIBRARY_PATH (libgraphrt.so), GRAPHRT_BENCH_BIN
(the in-process program; default build/bench/mlc_decode_step_bench). One thread each
(TVM_NUM_THREADS=1) unless TVM_NUM_THREADS is set."""
import argparse
import json
import os
import statistics
import subprocess
import sys

LM_CHILD = r"""
import json, statistics, sys, time
import numpy as np
import graphrt
d, steps, batch = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
lm = graphrt.LanguageModel(d)
seqs = list(range(batch))
for s in seqs:
    lm.add_sequence(s)
logits = lm.step(seqs, [[11, 22, 33, 44]] * batch)
tokens = [int(np.argmax(logits[i])) for i in seqs]
times = []
for _ in range(steps):
    t0 = time.perf_counter()
    logits = lm.step(seqs, tokens)
    times.append(time.perf_counter() - t0)
    tokens = [int(np.argmax(logits[i])) for i in seqs]
print(json.dumps({"step_ms": statistics.median(times) * 1e3, "tokens": tokens}))
"""

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
    env.setdefault("TVM_NUM_THREADS", "1")
    if engine == "tvm":
        peer = os.environ["TVM_PEER"]
        env.update(PYTHONPATH=os.path.join(peer, "python"), TVM_LIBRARY_PATH=os.path.join(peer, "lib"),
                   TVM_USE_RUNTIME_LIB="1")
        cmd = [sys.executable, "-c", CHILD, d, str(steps), str(batch)]
    elif engine == "graphrt-cpp":
        here = os.path.dirname(os.path.abspath(__file__))
        program = os.environ.get("GRAPHRT_BENCH_BIN", os.path.join(here, "..", "build", "bench", "mlc_decode_step_bench"))
        cmd = [program, d, str(steps), str(batch)]
    else:
        env["PYTHONPATH"] = os.environ["GRAPHRT_PY"]
        cmd = [sys.executable, "-c", LM_CHILD if engine == "graphrt-lm" else CHILD, d, str(steps), str(batch)]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise RuntimeError("%s: %s" % (engine, p.stderr.strip().splitlines()[-3:]))
    return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    a = argparse.ArgumentParser()
    a.add_argument("package")
    a.add_argument("--steps", type=int, default=60)
    a.add_argument("--rounds", type=int, default=3)
    a.add_argument("--batches", default="1,4")
    a.add_argument("--engines", default="tvm,graphrt,graphrt-lm,graphrt-cpp")
    a.add_argument("--json")
    args = a.parse_args()
    engines = args.engines.split(",")
    report = []
    for batch in [int(b) for b in args.batches.split(",")]:
        res = {e: [] for e in engines}
        tokens = {}
        for _ in range(args.rounds):
            for e in engines:
                r = run(e, args.package, args.steps, batch)
                res[e].append(r["step_ms"])
                tokens[e] = r["tokens"]
        med = {e: statistics.median(res[e]) for e in engines}
        line = "batch %d, %d steps:" % (batch, args.steps)
        for e in engines:
            line += "  %s %.3f ms [%.2f-%.2f]" % (e, med[e], min(res[e]), max(res[e]))
        if "tvm" in med:
            line += "  | vs tvm: " + ", ".join("%s %.3f" % (e, med[e] / med["tvm"]) for e in engines if e != "tvm")
            same = all(tokens[e] == tokens["tvm"] for e in engines)
            line += "  [%s]" % ("same tokens" if same else "TOKENS DIFFER: %s" % tokens)
        print(line, flush=True)
        report.append({"batch": batch, "steps": args.steps, "rounds": res, "medians": med, "tokens": tokens})
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
