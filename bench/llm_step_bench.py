#!/usr/bin/env python3
"""Time a TVM-compiled language model's steps (a relax-ffi case with a paged KV cache, such as
relax_tiny_llm_gqa) on graphrt and on TVM v0.26's own runtime, each in fresh processes, alternating.
Engines: tvm and graphrt (the same Python under TVM's names: begin_forward, prefill / decode,
end_forward), graphrt-lm (graphrt.LanguageModel.from_library(...).step: one foreign call a step).

usage: llm_step_bench.py CASE_DIR [--rounds R] [--decodes N] [--peer DIR] [--json OUT]
  --peer: TVM v0.26's runtime folder (python/, lib/); default ../shared/peer/tvm-0.26-runtime.
Per engine and round: load to ready (load_module + VirtualMachine + cache created), the prefill
step (begin_forward + prefill of the case's prompt + end_forward) and the median decode step
(begin_forward + decode of one token + end_forward, N tokens, each the previous argmax). Prints the
medians over rounds and graphrt/TVM ratios (below 1: graphrt is faster). Both engines run on one
thread (TVM_NUM_THREADS=1) unless TVM_NUM_THREADS is set.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

CHILD = r'''
import importlib, json, os, sys, time
import numpy as np
engine, case_dir, decodes = sys.argv[1], sys.argv[2], int(sys.argv[3])
t0 = time.perf_counter()
rt = importlib.import_module("tvm" if engine == "tvm" else "graphrt")
vm_mod = importlib.import_module(rt.__name__ + ".runtime.vm")
vm = vm_mod.VirtualMachine(rt.runtime.load_module(os.path.join(case_dir, "deploy_relax.so")), rt.cpu())
S = rt.runtime.ShapeTuple
f = rt.get_global_func
add, begin, end = f("vm.builtin.kv_state_add_sequence"), f("vm.builtin.kv_state_begin_forward"), f("vm.builtin.kv_state_end_forward")
cache = vm["create_tir_paged_kv_cache"](S([1]), S([1024]), S([256]), S([16]), S([0]))
add(cache, 0)
t1 = time.perf_counter()
ids = np.load(os.path.join(case_dir, "input_ids_prefill.npy"))
tensor = rt.runtime.tensor
t = time.perf_counter()
begin(cache, S([0]), S([ids.shape[-1]]))
logits, cache = vm["prefill"](tensor(ids), cache)
end(cache)
prefill = time.perf_counter() - t
tok = int(np.argmax(logits.numpy().reshape(-1, logits.shape[-1])[-1]))
steps = []
for _ in range(decodes):
    x = np.array([[tok]], dtype=ids.dtype).reshape(np.load(os.path.join(case_dir, "input_ids_decode0.npy")).shape)
    t = time.perf_counter()
    begin(cache, S([0]), S([1]))
    logits, cache = vm["decode"](tensor(x), cache)
    end(cache)
    steps.append(time.perf_counter() - t)
    tok = int(np.argmax(logits.numpy().reshape(-1)))
print(json.dumps({"load_s": t1 - t0, "prefill_s": prefill, "decode_med_s": sorted(steps)[len(steps) // 2]}))
'''


LM_CHILD = r'''
import json, os, sys, time
import numpy as np
case_dir, decodes = sys.argv[2], int(sys.argv[3])
t0 = time.perf_counter()
import graphrt
lm = graphrt.LanguageModel.from_library(os.path.join(case_dir, "deploy_relax.so"), max_total_seq_len=1024,
                                        prefill_chunk_size=256)
lm.add_sequence(0)
t1 = time.perf_counter()
ids = [int(t) for t in np.load(os.path.join(case_dir, "input_ids_prefill.npy")).ravel()]
t = time.perf_counter()
logits = lm.step([0], [ids], copy=False)
prefill = time.perf_counter() - t
tok = int(np.argmax(logits[0]))
steps = []
for _ in range(decodes):
    t = time.perf_counter()
    logits = lm.step([0], [tok], copy=False)
    steps.append(time.perf_counter() - t)
    tok = int(np.argmax(logits[0]))
print(json.dumps({"load_s": t1 - t0, "prefill_s": prefill, "decode_med_s": sorted(steps)[len(steps) // 2]}))
'''


def child(engine, case, decodes, peer, graphrt_py):
    env = dict(os.environ)
    env.setdefault("TVM_NUM_THREADS", "1")
    if engine == "tvm":
        env.update(PYTHONPATH=os.path.join(peer, "python"), TVM_LIBRARY_PATH=os.path.join(peer, "lib"),
                   TVM_USE_RUNTIME_LIB="1")
    else:
        env["PYTHONPATH"] = graphrt_py
    p = subprocess.run([sys.executable, "-c", LM_CHILD if engine == "graphrt-lm" else CHILD, engine, case, str(decodes)],
                       capture_output=True, text=True,
                       env=env, timeout=600)
    if p.returncode != 0:
        raise RuntimeError("%s: %s" % (engine, p.stderr.strip().splitlines()[-3:]))
    return json.loads(p.stdout.strip().splitlines()[-1])


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("case")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--decodes", type=int, default=40)
    ap.add_argument("--peer", default=os.path.join(here, "..", "..", "shared", "peer", "tvm-0.26-runtime"))
    ap.add_argument("--json")
    a = ap.parse_args()
    graphrt_py = os.environ.get("GRAPHRT_PY", os.path.join(here, "..", "python"))
    res = {"tvm": [], "graphrt": [], "graphrt-lm": []}
    for _ in range(a.rounds):
        for e in ("tvm", "graphrt", "graphrt-lm"):
            res[e].append(child(e, a.case, a.decodes, a.peer, graphrt_py))
    med = {e: {k: statistics.median(r[k] for r in res[e]) for k in res[e][0]} for e in res}
    line = " | ".join("%s: load %.1f ms prefill %.1f us decode %.1f us" % (
        e, med[e]["load_s"] * 1e3, med[e]["prefill_s"] * 1e6, med[e]["decode_med_s"] * 1e6) for e in res)
    ratios = {k: med["graphrt"][k] / med["tvm"][k] for k in med["tvm"]}
    lm_ratios = {k: med["graphrt-lm"][k] / med["tvm"][k] for k in med["tvm"]}
    print(os.path.basename(os.path.normpath(a.case)), "|", line, "| graphrt/tvm: load %.3f prefill %.3f decode %.3f" % (
        ratios["load_s"], ratios["prefill_s"], ratios["decode_med_s"]),
        "| graphrt-lm/tvm: prefill %.3f decode %.3f" % (lm_ratios["prefill_s"], lm_ratios["decode_med_s"]),
        "| decode spread (us): " + ", ".join("%s %.1f-%.1f" % (e, min(r["decode_med_s"] for r in res[e]) * 1e6,
                                                             max(r["decode_med_s"] for r in res[e]) * 1e6) for e in res))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"medians": med, "ratios": ratios, "runs": res}, f, indent=1)


if __name__ == "__main__":
    main()
