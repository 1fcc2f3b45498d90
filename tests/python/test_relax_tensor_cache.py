"""Weights outside the executable as MLC-LLM ships them (tensor-cache.json + params_shard_*.bin): a folder
written here with numpy and json (bfloat16 halves made with numpy's own bit operations), loaded and looked
up by TVM v0.26 user code under TVM's names, every tensor compared byte for byte; a corrupt folder ends in
one error naming the file and the field."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import graphrt

PYTHON_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "python")

WEIGHT = np.arange(12, dtype="float32").reshape(3, 4) * 0.5 - 2.0
BIAS = np.array([1, -2, 3], dtype="int64")
# Exactly representable in bfloat16: the upper halves are the values.
EMBED = np.array([[1.0, -2.5], [0.15625, 65536.0]], dtype="float32")


def write_cache(d):
    halves = (EMBED.view("uint32") >> 16).astype("uint16")
    shard0 = WEIGHT.tobytes() + BIAS.tobytes()
    shard1 = halves.tobytes()
    open(os.path.join(d, "params_shard_0.bin"), "wb").write(shard0)
    open(os.path.join(d, "params_shard_1.bin"), "wb").write(shard1)
    rec = lambda name, a, fmt, nbytes, off: {"name": name, "shape": list(a.shape), "dtype": str(a.dtype),
                                             "format": fmt, "nbytes": nbytes, "byteOffset": off}
    manifest = {"metadata": {"ParamSize": 3}, "records": [
        {"dataPath": "params_shard_0.bin", "format": "raw-shard", "nbytes": len(shard0), "md5sum": "",
         "records": [rec("param_0", WEIGHT, "raw", WEIGHT.nbytes, 0),
                     rec("param_1", BIAS, "raw", BIAS.nbytes, WEIGHT.nbytes)]},
        {"dataPath": "params_shard_1.bin", "format": "raw-shard", "nbytes": len(shard1), "md5sum": "",
         "records": [rec("embed", EMBED, "f32-to-bf16", halves.nbytes, 0)]}]}
    json.dump(manifest, open(os.path.join(d, "tensor-cache.json"), "w"), indent=2)
    return manifest


# A TVM v0.26 user's code (MLC's engine loading its weights): nothing graphrt-specific but the first line.
V026_LOAD_CODE = """
import sys
import numpy as np
import graphrt; graphrt.install_as_tvm()
import tvm
d = sys.argv[1]
g = tvm.get_global_func
g("vm.builtin.tensor_cache.load")(d, tvm.cpu().device_type, 0)
params = g("vm.builtin.param_array_from_cache")("param", -1)
embed = g("vm.builtin.param_array_from_cache_by_name_unpacked")("embed")[0]
for a in list(params) + [embed]:
    np.save(sys.stdout.buffer, a.numpy())
assert g("vm.builtin.tensor_cache.get")("absent") is None
"""


def test_tvm_v026_user_code_loads_the_weights_byte_for_byte(lib_ok, tmp_path):
    write_cache(str(tmp_path))
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-c", V026_LOAD_CODE, str(tmp_path)], capture_output=True, env=env,
                       timeout=120)
    assert p.returncode == 0, p.stderr.decode()
    import io
    out = io.BytesIO(p.stdout)
    got = [np.load(out) for _ in range(3)]
    for want, have in zip((WEIGHT, BIAS, EMBED), got):
        assert have.dtype == want.dtype and have.shape == want.shape
        assert have.tobytes() == want.tobytes()


def test_a_cut_short_shard_names_its_file_and_field(lib_ok, tmp_path):
    write_cache(str(tmp_path))
    with open(os.path.join(str(tmp_path), "params_shard_0.bin"), "r+b") as f:
        f.truncate(10)
    with pytest.raises(graphrt.GraphrtError) as e:
        graphrt.get_global_func("vm.builtin.tensor_cache.load")(str(tmp_path), 1, 0)
    text = str(e.value)
    assert "params_shard_0.bin" in text and "nbytes" in text and "vm.builtin.tensor_cache.load" in text, text


def test_a_record_past_its_shard_names_the_manifest_record_and_field(lib_ok, tmp_path):
    m = write_cache(str(tmp_path))
    m["records"][0]["records"][1]["byteOffset"] = 60
    json.dump(m, open(os.path.join(str(tmp_path), "tensor-cache.json"), "w"))
    with pytest.raises(graphrt.GraphrtError) as e:
        graphrt.get_global_func("vm.builtin.ndarray_cache.load")(str(tmp_path), 1, 0)
    text = str(e.value)
    assert "tensor-cache.json" in text and "byteOffset" in text and "param_1" in text, text
