#!/usr/bin/python3
"""Instructions per call of a Relax VM function from Python, graphrt against TVM's own runtime,
as docs/performance.md ("Calls from Python") measures them: callgrind counts the whole process
(interpreter, binding, runtime, kernels) running N calls and running none, and the difference
divided by N is one call. Counts do not depend on the machine's load, unlike wall-clock times
of a few microseconds.

usage: /usr/bin/python3 relax_call_instructions.py [--engines graphrt,tvm] [--calls N] CASE_DIR...

Each call is `out = vm[entry](*inputs)` with the case's own inputs as the engine's tensors, the
previous result dropped by the assignment, as perf_compare.py's timing loop does. Environment:
GRAPHRT_PY (graphrt's python/ folder) and GRAPHRT_LIBRARY_PATH for graphrt; TVM_PEER (a folder
with python/ and lib/, default /tmp/tvm26) for TVM. TVM_NUM_THREADS=1, PYTHONHASHSEED=0.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

CHILD = r'''
import json, os, sys
engine, d, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
import numpy as np
case = json.load(open(os.path.join(d, "case.json")))
order = case.get("input_order") or list(case["inputs"])
inputs = [np.load(os.path.join(d, "input_%s.npy" % k)) for k in order]
if engine == "tvm":
    import tvm
    from tvm.runtime import vm as vm_mod
    lib = tvm.runtime.load_module(os.path.join(d, "deploy_relax.so"))
    args = [tvm.runtime.tensor(v, tvm.cpu()) for v in inputs]
    vm = vm_mod.VirtualMachine(lib, tvm.cpu())
else:
    import graphrt
    from graphrt.runtime import relax_vm as vm_mod
    lib = graphrt.load_module(os.path.join(d, "deploy_relax.so"))
    args = [graphrt.nd.array(v) for v in inputs]
    vm = vm_mod.VirtualMachine(lib, graphrt.cpu())
fn = vm[case.get("entry", "main")]
out = None
for _ in range(20):  # first uses (caches, specialised bytecode) before the counted calls
    out = fn(*args)
for _ in range(n):
    out = fn(*args)
del out
os._exit(0)
'''


def instructions(engine, d, n):
    env = dict(os.environ, TVM_NUM_THREADS="1", PYTHONHASHSEED="0")
    if engine == "tvm":
        peer = os.environ.get("TVM_PEER", "/tmp/tvm26")
        env.update(PYTHONPATH=os.path.join(peer, "python"), TVM_LIBRARY_PATH=os.path.join(peer, "lib"),
                   TVM_USE_RUNTIME_LIB="1")
    else:
        env["PYTHONPATH"] = os.environ["GRAPHRT_PY"]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        p = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out, sys.executable, "-c", CHILD,
                            engine, d, str(n)], capture_output=True, text=True, env=env, timeout=1800)
        if p.returncode != 0:
            raise RuntimeError("%s on %s: %s" % (engine, d, p.stderr.strip().splitlines()[-3:]))
        m = re.search(r"Collected : (\d+)", p.stderr)
        if m:
            return int(m.group(1))
        with open(out) as f:
            for line in f:
                if line.startswith("summary:") or line.startswith("totals:"):
                    return int(line.split()[1])
    raise RuntimeError("no instruction count from callgrind")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--engines", default="graphrt,tvm")
    ap.add_argument("--calls", type=int, default=3000)
    ap.add_argument("--json", default="")
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    report = {}
    for d in a.dirs:
        name = os.path.basename(os.path.normpath(d))
        row = {}
        for e in a.engines.split(","):
            zero, many = instructions(e, d, 0), instructions(e, d, a.calls)
            row[e] = (many - zero) / a.calls
        report[name] = row
        print("%-24s %s" % (name, "  ".join("%s %9.0f" % (e, v) for e, v in row.items())), flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
