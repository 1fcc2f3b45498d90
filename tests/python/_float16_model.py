"""A float16/bfloat16 test model built in the test: tests/kernels/float16_kernels.c compiled by
clang-14 (LLVM 14's half helpers, as in TVM's float16 exports) or gcc (the newer _Float16 ABI),
a graph JSON over its three kernels, params, inputs, and numpy's reference outputs.

Graph: inputs x (float16), b (bfloat16); params w (float16), c (bfloat16);
outputs y = f16(x*w + 0.5) (float32 math), z = f16(x/3 + 1e-7) (float64 math), o = bf16(b*c)."""
import json
import os
import shutil
import subprocess

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS = os.path.join(os.path.dirname(HERE), "kernels")
N = 64

# What each compiler's build must import from the runtime (checked with nm).
EXPECTED_IMPORTS = {
    "clang-14": {"__gnu_h2f_ieee", "__gnu_f2h_ieee", "__truncdfhf2", "__truncsfbf2"},
    "gcc": {"__extendhfsf2", "__truncsfhf2", "__truncdfhf2", "__extendhfdf2", "__truncsfbf2"},
}


def compiler_available(cc):
    return shutil.which(cc) is not None


def undefined_symbols(path):
    out = subprocess.run(["nm", "-D", "--undefined-only", path], check=True, capture_output=True, text=True).stdout
    return {line.split()[-1].split("@")[0] for line in out.splitlines() if line.split()}


def build_library(cc, out_dir, source="float16_kernels.c", nostdlib=True):
    """Compiles tests/kernels/<source> into <out_dir>/<stem>_<cc>.so; returns the path."""
    path = os.path.join(out_dir, "%s_%s.so" % (os.path.splitext(source)[0], cc))
    cmd = [cc, "-O2", "-ffp-contract=off", "-fPIC", "-shared", "-Wall", "-Wextra", "-Werror",
           "-o", path, os.path.join(KERNELS, source)]
    if nostdlib:
        cmd.insert(1, "-nostdlib")
    subprocess.run(cmd, check=True, capture_output=True)
    return path


def bfloat16_bits(values):
    """Round-to-nearest-even float32 -> bfloat16 bits, NaN-free inputs (the reference)."""
    u = np.asarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def bfloat16_values(bits):
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def make_data(seed=0):
    """Inputs, params (bfloat16 as uint16 bits, TVM's convention) and the reference outputs."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(N) * 40).astype(np.float16)
    x[:6] = [0.0, -0.0, 6.1e-5, 65504.0, -3.0e-7, 1.0]  # zero, subnormal, max, tiny
    w = (rng.standard_normal(N) * 4).astype(np.float16)
    w[3] = 2.0  # 65504 * 2 overflows to inf
    b = bfloat16_bits(rng.standard_normal(N) * 1e3)
    c = bfloat16_bits(rng.standard_normal(N) * 1e-2)
    with np.errstate(over="ignore"):  # 65504 * 2 -> inf is meant
        y = (x.astype(np.float32) * w.astype(np.float32) + np.float32(0.5)).astype(np.float16)
    z = (x.astype(np.float64) / 3.0 + 1e-7).astype(np.float16)
    o = bfloat16_bits(bfloat16_values(b) * bfloat16_values(c))
    return {"x": x, "b": b}, {"w": w, "c": c}, [y, z, o]


def graph_json():
    def node(op, name, inputs=(), func=None):
        n = {"op": op, "name": name, "inputs": [[i, 0, 0] for i in inputs]}
        if func:
            n["attrs"] = {"func_name": func, "num_inputs": str(len(inputs)), "num_outputs": "1",
                          "flatten_data": "0"}
        return n

    nodes = [node("null", "x"), node("null", "w"), node("null", "b"), node("null", "c"),
             node("tvm_op", "scale", [0, 1], "fused_scale_f16"),
             node("tvm_op", "third", [0], "fused_third_f16"),
             node("tvm_op", "mul", [2, 3], "fused_mul_bf16")]
    dtypes = ["float16", "float16", "bfloat16", "bfloat16", "float16", "float16", "bfloat16"]
    return json.dumps({
        "nodes": nodes, "arg_nodes": [0, 1, 2, 3], "node_row_ptr": list(range(len(nodes) + 1)),
        "heads": [[4, 0, 0], [5, 0, 0], [6, 0, 0]],
        "attrs": {"dltype": ["list_str", dtypes], "shape": ["list_shape", [[N]] * len(nodes)],
                  "storage_id": ["list_int", list(range(len(nodes)))]},
    })
