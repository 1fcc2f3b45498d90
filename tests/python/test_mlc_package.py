"""An MLC-LLM model folder (fixtures/mlc/tiny_gpt2_chat, made by TVM v0.26) driven by hand through graphrt's
TVM face, as TVM v0.26 code drives it: the weights from vm.builtin.tensor_cache.load and
param_array_from_cache_by_name, the paged KV cache's kv_state_* builtins, the library's embed / batch_prefill /
batch_decode / prefill / decode / softmax_with_temperature. Every logit is compared with TVM's expected_*.npy
(case.json's tolerance, 1e-5)."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from _cases import case_dir, fixtures_dir, skip_without_fixtures

PYTHON_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "python")
PACKAGE = "mlc/tiny_gpt2_chat"


def run_as_tvm(code, *args):
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-c", code] + list(args), capture_output=True, env=env, timeout=300,
                          text=True)


# The replay of the package's scenario under TVM v0.26's names that ships beside the fixtures
# (tools/mlc_scenario.py): run unchanged, after install_as_tvm().
REPLAY_CODE = """
import runpy, sys
import graphrt; graphrt.install_as_tvm()
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def test_tvm_v026_scenario_replay_passes_every_check(lib_ok):
    d = case_dir(PACKAGE)
    tool = os.path.join(os.path.dirname(fixtures_dir()), "tools", "mlc_scenario.py")
    if not os.path.isfile(tool):
        skip_without_fixtures("tools/mlc_scenario.py beside the fixtures")
    p = run_as_tvm(REPLAY_CODE, tool, d)
    assert p.returncode == 0, p.stdout + p.stderr
    last = p.stdout.strip().splitlines()[-1]
    n = len([s for s in json.load(open(os.path.join(d, "case.json")))["scenario"]
             if "expect_logits" in s or "expect_int" in s or "expect_probs" in s])
    assert last == "%d passed, 0 failed" % (n + 1), p.stdout  # + the _metadata params check


# TVM v0.26 user code of our own (nothing graphrt-specific but the first line): the first batch_prefill of the
# scenario and softmax_with_temperature, with the device named as v0.22+ names it.
BY_HAND_CODE = """
import json, os, sys
import numpy as np
import graphrt; graphrt.install_as_tvm()
import tvm
from tvm.runtime.vm import VirtualMachine
d = sys.argv[1]
case = json.load(open(os.path.join(d, "case.json")))
dev = tvm.cpu()
assert dev.dlpack_device_type() == 1 and dev.index == 0 and dev.type == "cpu"
vm = VirtualMachine(tvm.runtime.load_module(os.path.join(d, case["library"])), dev)
g = tvm.get_global_func
g("vm.builtin.tensor_cache.load")(d, dev.dlpack_device_type(), 0)
names = [p["name"] for p in json.loads(str(vm["_metadata"]()))["params"]]
params = g("vm.builtin.param_array_from_cache_by_name")(names)
g("vm.builtin.tensor_cache.clear")()
S = tvm.runtime.ShapeTuple
kv = vm["create_tir_paged_kv_cache"](*[S([int(v)]) for v in case["cache_config"].values()])
step = case["scenario"][1]
assert step["op"] == "batch_prefill"
for s in step["seq_ids"]:
    g("vm.builtin.kv_state_add_sequence")(kv, s)
ids = sum(step["input_ids"], [])
x = vm["embed"](tvm.runtime.tensor(np.array(ids, "int32"), dev), params).numpy().reshape(1, len(ids), -1)
g("vm.builtin.kv_state_begin_forward")(kv, S(step["seq_ids"]), S([len(t) for t in step["input_ids"]]))
r = vm["batch_prefill"](tvm.runtime.tensor(x, dev), tvm.runtime.tensor(np.array(step["logit_positions"], "int32"), dev),
                        kv, params)
g("vm.builtin.kv_state_end_forward")(kv)
got = r[0].numpy()
assert int(g("vm.builtin.attention_kv_cache_get_total_sequence_length")(r[1])) == len(ids)
want = np.load(os.path.join(d, step["expect_logits"]))
print("batch_prefill", float(np.max(np.abs(got - want))))
probs = vm["softmax_with_temperature"](tvm.runtime.tensor(np.repeat(got[:, :1], 1, axis=0).reshape(1, 1, -1), dev),
                                       tvm.runtime.tensor(np.array([0.7], "float32"), dev)).numpy()
z = want[0, 0].astype("float64") / np.float64(np.float32(0.7))
ref = np.exp(z - z.max()); ref /= ref.sum()
print("softmax", float(np.max(np.abs(probs[0, 0] - ref))))
"""


def test_tvm_v026_code_drives_the_library_by_hand(lib_ok):
    d = case_dir(PACKAGE)
    p = run_as_tvm(BY_HAND_CODE, d)
    assert p.returncode == 0, p.stdout + p.stderr
    errors = dict(line.split() for line in p.stdout.strip().splitlines())
    assert float(errors["batch_prefill"]) <= 1e-5, p.stdout
    assert float(errors["softmax"]) <= 1e-6, p.stdout


def test_a_device_names_its_dlpack_type_as_tvm_ffi_does(lib_ok):
    import graphrt
    for dev, code, name in ((graphrt.cpu(3), 1, "cpu"), (graphrt.device("opencl", 1), 4, "opencl"),
                            (graphrt.device("vulkan"), 7, "vulkan")):
        assert dev.dlpack_device_type() == code and dev.type == name
    assert graphrt.cpu(3).index == 3
