"""The OpenCL back end from Python (fixtures/relax-opencl, TVM v0.26 exports; PoCL here and in CI):
TVM v0.26 user code runs unchanged on [tvm.opencl(), tvm.cpu()], every input set within the case's
tolerance, and the process exits cleanly; crafted copies of an export end in one error naming the
module, function and field; without libOpenCL.so.1 one clear refusal. Skips without an OpenCL
device (fails in CI, where scripts/setup.sh installs PoCL)."""
import json
import os
import subprocess
import sys

import pytest

import graphrt
from _cases import fixtures_dir, skip_without_fixtures

PYTHON_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "python")


def _case_names():
    d = fixtures_dir()
    root = os.path.join(d, "relax-opencl") if d else None
    if not root or not os.path.isdir(root):
        return ["relax_opencl_fixtures_missing"]
    return sorted(n for n in os.listdir(root) if os.path.isfile(os.path.join(root, n, "case.json")))


def _case_dir(name):
    d = fixtures_dir()
    path = os.path.join(d, "relax-opencl", name) if d else None
    if not path or not os.path.isfile(os.path.join(path, "case.json")):
        skip_without_fixtures("OpenCL fixture %s" % name)
    return path


@pytest.fixture
def opencl_ok(lib_ok):
    if not graphrt.opencl(0).exist:
        why = "no usable OpenCL device (install pocl-opencl-icd: scripts/setup.sh --tests)"
        if os.environ.get("CI", "").lower() == "true" or os.environ.get("GRAPHRT_REQUIRE_OPENCL") == "1":
            pytest.fail(why + "; CI requires one", pytrace=False)
        pytest.skip(why)
    return True


def _run(code, *args, env=None):
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR, **(env or {}))
    return subprocess.run([sys.executable, "-c", code] + list(args), capture_output=True, text=True, timeout=300,
                          env=env)


# What a TVM v0.26 user writes for an OpenCL export, word for word but for the paths.
V026_OPENCL_CODE = """
import json, sys
import numpy as np
import graphrt; graphrt.install_as_tvm()
import tvm
from tvm import relax
case_dir = sys.argv[1]
case = json.load(open(case_dir + "/case.json"))
order = case.get("input_order") or list(case["inputs"])
dev = tvm.opencl(0)
vm = relax.VirtualMachine(tvm.runtime.load_module(case_dir + "/deploy_relax.so"), [dev, tvm.cpu()])
suffixes = [s.get("suffix", "") for s in case.get("input_sets", [])] or [""]
for suffix in suffixes:
    out = vm[case.get("entry", "main")](*[tvm.runtime.tensor(np.load(f"{case_dir}/input_{k}{suffix}.npy"), dev)
                                         for k in order])
    flat, todo = [], [out]
    while todo:
        v = todo.pop(0)
        if isinstance(v, tvm.runtime.Tensor):
            flat.append(v)
        else:
            todo = list(v) + todo
    for i, got in enumerate(flat):
        assert got.device == dev, got.device
        expected = np.load(f"{case_dir}/output_{i}{suffix}.npy")
        got = got.numpy()
        assert got.dtype == expected.dtype and got.shape == expected.shape, (suffix, i)
        assert np.abs(got.astype("float64") - expected).max() <= case["tolerance"], (suffix, i)
    print("ok", suffix or "-", len(flat))
print("enabled", tvm.runtime.enabled("opencl"))
"""


@pytest.mark.parametrize("name", _case_names())
def test_tvm_v026_user_code_runs_unchanged_on_opencl(opencl_ok, name):
    d = _case_dir(name)
    with open(os.path.join(d, "case.json")) as f:
        sets = len(json.load(f).get("input_sets", [])) or 1
    p = _run(V026_OPENCL_CODE, d)
    assert p.returncode == 0, p.stderr  # also: no crash in exit-time destructors
    assert p.stdout.count("ok ") == sets and "enabled True" in p.stdout, p.stdout


def _patched(tmp_path, name, old, new):
    """A copy of the case's export with `old` (once in the file) replaced by `new` of the same length."""
    assert len(old) == len(new)
    data = open(os.path.join(_case_dir(name), "deploy_relax.so"), "rb").read()
    assert data.count(old) >= 1, old
    path = tmp_path / "deploy_relax.so"
    path.write_bytes(data.replace(old, new, 1))
    return str(path)


CALL_TUPLE_IO = """
import sys
import numpy as np
import graphrt
dev = graphrt.opencl(0)
vm = graphrt.relax.VirtualMachine(graphrt.load_module(sys.argv[1]), [dev, graphrt.cpu()])
try:
    vm["main"](graphrt.nd.array(np.ones((2, 3), "float32"), dev), graphrt.nd.array(np.ones((2, 3), "int32"), dev))
except graphrt.GraphrtError as e:
    print("error:", str(e).replace(chr(10), " | "))
"""


def test_opencl_source_that_does_not_build_names_module_function_and_field(opencl_ok, tmp_path):
    path = _patched(tmp_path, "relax_tuple_io_opencl", b"* 2);", b"* q);")
    p = _run(CALL_TUPLE_IO, path)
    assert p.returncode == 0, p.stderr
    line = p.stdout.strip()
    assert line.startswith("error: in Relax function 'main' calling 'multiply': clBuildProgram of opencl kernel "
                           "'multiply_kernel' on opencl:0"), line
    assert "CL_BUILD_PROGRAM_FAILURE (-11); build log:" in line and "'q'" in line, line
    assert "module: opencl" in line and "function: 'multiply_kernel'" in line and "field: code" in line, line


@pytest.mark.parametrize("old,new,message,field", [
    (b"// Function: sum_kernel\n", b"// Function: sum_kernex\n",
     "opencl kernel 'sum_kernel' of the function table has no \"// Function: \" section", "code"),
    (b"threadIdx.x", b"threadIdx.w", "launch tag 'threadIdx.w' is not one OpenCL launches with", "launch_param_tags"),
])
def test_a_crafted_opencl_module_fails_the_load_in_one_error(lib_ok, tmp_path, old, new, message, field):
    path = _patched(tmp_path, "relax_tuple_io_opencl", old, new)
    with pytest.raises(graphrt.GraphrtError) as e:
        graphrt.load_module(path)
    text = str(e.value)
    assert message in text and "module: opencl" in text and ("field: " + field) in text, text
    assert "function: '" in text, text


def test_without_libopencl_one_clear_refusal(lib_ok):
    d = _case_dir("relax_mlp_opencl")
    code = ("import sys, graphrt\n"
            "print('exist', graphrt.opencl(0).exist)\n"
            "lib = graphrt.load_module(sys.argv[1] + '/deploy_relax.so')\n"
            "try:\n"
            "    graphrt.relax.VirtualMachine(lib, [graphrt.opencl(0), graphrt.cpu()])\n"
            "except graphrt.GraphrtError as e:\n"
            "    print('error:', e)\n")
    p = _run(code, d, env={"GRAPHRT_OPENCL_LIBRARY": "/nonexistent/libOpenCL.so.1"})
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0] == "exist False", p.stdout
    assert len(lines) == 2 and "libOpenCL.so.1 not found" in lines[1], p.stdout


def test_mlc_language_model_scenario_on_opencl(opencl_ok):
    """MLC-LLM's model library for OpenCL (mlc/tiny_gpt2_chat, its paged KV cache's GPU attention
    kernels), driven as MLC's engine drives it by the shared scenario tool under graphrt's TVM face:
    every logit within 1e-5 of the CPU build's. About a minute where PoCL has not compiled the
    kernels before (its on-disk cache), seconds after."""
    d = fixtures_dir()
    package = os.path.join(d, "mlc", "tiny_gpt2_chat") if d else None
    tool = os.path.join(os.path.dirname(d), "tools", "mlc_scenario.py") if d else None
    if not package or not os.path.isfile(os.path.join(package, "tiny_gpt2_chat-opencl.so")) or not os.path.isfile(tool):
        skip_without_fixtures("mlc/tiny_gpt2_chat-opencl.so and tools/mlc_scenario.py")
    code = ("import runpy, sys\n"
            "import graphrt; graphrt.install_as_tvm()\n"
            "tool, sys.argv = sys.argv[1], ['mlc_scenario.py', '--device', 'opencl', sys.argv[2]]\n"
            "runpy.run_path(tool, run_name='__main__')\n")
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
    p = subprocess.run([sys.executable, "-c", code, tool, package], capture_output=True, text=True, timeout=600,
                       env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.strip().splitlines()[-1] == "11 passed, 0 failed", p.stdout


def _mlc_package():
    d = fixtures_dir()
    package = os.path.join(d, "mlc", "tiny_gpt2_chat") if d else None
    if not package or not os.path.isfile(os.path.join(package, "tiny_gpt2_chat-opencl.so")):
        skip_without_fixtures("mlc/tiny_gpt2_chat-opencl.so")
    with open(os.path.join(package, "case.json")) as f:
        return package, json.load(f)


def test_language_model_on_opencl_gives_case_json_text(opencl_ok):
    """graphrt.LanguageModel(folder, device="opencl"): the package's OpenCL library with its weights
    and KV cache on the device gives case.json's greedy completions and chat answer as text, and a
    stream's pieces join to the same text."""
    package, case = _mlc_package()
    lm = graphrt.LanguageModel(package, device="opencl")
    assert (lm.device.device_type, lm.device.device_id) == (4, 0)
    for c in case["greedy_completions"]:
        assert lm.generate(c["prompt"], max_tokens=c["max_tokens"], temperature=0) == c["text"], c["prompt"]
    chat = case["chat"]
    assert lm.chat(chat["messages"], max_tokens=chat["max_tokens"], temperature=0) == chat["text"]
    c = case["greedy_completions"][1]
    assert "".join(lm.stream(c["prompt"], max_tokens=c["max_tokens"], temperature=0)) == c["text"]


def test_language_model_without_the_opencl_library_names_the_file(lib_ok, tmp_path):
    package, case = _mlc_package()
    copy = tmp_path / "tiny_copy"
    copy.mkdir()
    for name in case["files"]:
        if not name.endswith("-opencl.so"):
            os.symlink(os.path.join(package, name), str(copy / name))
    with pytest.raises(graphrt.GraphrtError) as e:
        graphrt.LanguageModel(str(copy), device="opencl")
    assert isinstance(e.value, LookupError), type(e.value)  # not found
    assert str(copy / "tiny_copy-opencl.so") in str(e.value), str(e.value)
    missing = str(tmp_path / "elsewhere-opencl.so")
    with pytest.raises(graphrt.GraphrtError) as e:
        graphrt.LanguageModel(package, device="opencl", model_lib=missing)
    assert missing in str(e.value), str(e.value)
