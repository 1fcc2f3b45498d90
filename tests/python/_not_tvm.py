"""Libraries that are not TVM modules, for the tests of the load-time refusal: the libm this
process uses, and tests/kernels/hand_written_add_one.c (packed functions without any TVM marker)
built in the test, with a one-node graph over its add_one kernel."""
import json
import os
import shutil
import subprocess

import pytest

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNELS = os.path.join(TESTS, "kernels")
INCLUDE = os.path.join(os.path.dirname(TESTS), "include")


def libm_path():
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1]
            if os.path.basename(path).startswith("libm.so") or os.path.basename(path).startswith("libm-"):
                return path
    pytest.skip("libm is not mapped in this process")


def build_add_one(out_dir):
    """Compiles the hand-written kernel library into out_dir; returns its path."""
    if shutil.which("cc") is None:
        pytest.skip("no C compiler (cc)")
    path = os.path.join(str(out_dir), "add_one.so")
    subprocess.run(["cc", "-O1", "-fPIC", "-shared", "-I", INCLUDE, "-o", path, os.path.join(KERNELS, "hand_written_add_one.c")],
                   check=True, capture_output=True)
    return path


def add_one_graph(n):
    """Graph JSON: input x (float32[n]) -> add_one -> output."""
    return json.dumps({
        "nodes": [{"op": "null", "name": "x", "inputs": []},
                  {"op": "tvm_op", "name": "add_one", "inputs": [[0, 0, 0]],
                   "attrs": {"func_name": "add_one", "num_inputs": "1", "num_outputs": "1", "flatten_data": "0"}}],
        "arg_nodes": [0], "heads": [[1, 0, 0]], "node_row_ptr": [0, 1, 2],
        "attrs": {"dltype": ["list_str", ["float32", "float32"]], "shape": ["list_shape", [[n], [n]]],
                  "storage_id": ["list_int", [0, 1]]}})
