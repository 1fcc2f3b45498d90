"""TVM v0.26 exports built for Vulkan (fixtures/relax-vulkan) under graphrt's TVM shim, on a real
Vulkan device (lavapipe here and in CI): TVM v0.26 user code unchanged,
relax.VirtualMachine(lib, [tvm.vulkan(), tvm.cpu()]), every case and input set within its tolerance;
graphrt.vulkan() as a device of its own. Skips where no Vulkan device exists (fails in CI)."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import graphrt

PYTHON_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "python")


def _root():
    d = os.environ.get("GRAPHRT_FIXTURES") or os.path.join(os.path.dirname(PYTHON_DIR), "..", "shared", "fixtures")
    return os.path.join(d, "relax-vulkan")


def _cases():
    root = _root()
    return sorted(n for n in os.listdir(root) if n.startswith("relax_")) if os.path.isdir(root) else ["none"]


@pytest.fixture
def vulkan_case(lib_ok, request):
    case_dir = os.path.join(_root(), request.param)
    if not os.path.isdir(case_dir):
        if os.environ.get("GRAPHRT_REQUIRE_FIXTURES") == "1" or os.environ.get("CI") == "true":
            pytest.fail("relax-vulkan fixtures not found")
        pytest.skip("relax-vulkan fixtures not found")
    if not graphrt.vulkan(0).exist:
        if os.environ.get("CI") == "true" or os.environ.get("GRAPHRT_REQUIRE_VULKAN") == "1":
            pytest.fail("no Vulkan device, and CI requires one (scripts/setup.sh --tests installs lavapipe)")
        pytest.skip("no Vulkan device")
    return case_dir


# TVM v0.26 code as its users write it for a Vulkan export, word for word but for the paths.
V026_USER_CODE = """
import json, sys
import numpy as np
import graphrt; graphrt.install_as_tvm()
import tvm
from tvm import relax
case_dir = sys.argv[1]
case = json.load(open(case_dir + "/case.json"))
lib = tvm.runtime.load_module(case_dir + "/deploy_relax.so")
dev = tvm.vulkan(0)
vm = relax.VirtualMachine(lib, [tvm.vulkan(), tvm.cpu()])
for s in case.get("input_sets") or [{"suffix": ""}]:
    suffix = s.get("suffix", "")
    args = [tvm.runtime.tensor(np.load(f"{case_dir}/input_{k}{suffix}.npy"), dev) for k in case["input_order"]]
    out = vm["main"](*args)
    flat, todo = [], [out]
    while todo:
        v = todo.pop(0)
        if isinstance(v, tvm.runtime.Tensor):
            flat.append(v.numpy())
        else:
            todo = list(v) + todo
    assert len(flat) == len(case["outputs"])
    for i, got in enumerate(flat):
        expected = np.load(f"{case_dir}/output_{i}{suffix}.npy")
        assert got.dtype == expected.dtype and got.shape == expected.shape, (suffix, i)
        assert np.abs(got.astype("float64") - expected).max() <= case["tolerance"], (suffix, i)
    print("ok", suffix or "-", len(flat))
"""


@pytest.mark.parametrize("vulkan_case", _cases(), indirect=True)
def test_tvm_v026_user_code_runs_unchanged_and_exits_cleanly(vulkan_case):
    p = subprocess.run([sys.executable, "-c", V026_USER_CODE, vulkan_case], capture_output=True, text=True,
                       timeout=300, env=dict(os.environ, PYTHONPATH=PYTHON_DIR))
    assert p.returncode == 0, p.stderr  # TVM's own Vulkan runtime dies at exit here
    sets = json.load(open(os.path.join(vulkan_case, "case.json"))).get("input_sets") or [None]
    assert p.stdout.count("ok ") == len(sets), p.stdout


@pytest.mark.parametrize("vulkan_case", ["relax_tuple_io_vulkan"], indirect=True)
def test_graphrt_names_tensors_on_the_device(vulkan_case):
    dev = graphrt.vulkan()
    assert (dev.device_type, dev.device_id) == (7, 0)
    assert graphrt.runtime.enabled("vulkan")  # a device is here (the fixture checked)
    assert str(graphrt.device("vulkan:0")) == str(dev)
    x = np.load(os.path.join(vulkan_case, "input_x.npy"))
    on_device = graphrt.nd.array(x, dev)
    assert on_device.device.device_type == 7
    assert on_device.numpy().tobytes() == x.tobytes()
    vm = graphrt.relax.VirtualMachine(graphrt.load_module(os.path.join(vulkan_case, "deploy_relax.so")),
                                      [dev, graphrt.cpu()])
    y = np.load(os.path.join(vulkan_case, "input_y.npy"))
    s, (m, r) = vm["main"](on_device, graphrt.nd.array(y, dev))
    assert s.device.device_type == 7
    assert np.abs(s.numpy() - np.load(os.path.join(vulkan_case, "output_0.npy"))).max() <= 1e-5
    assert m.numpy().tobytes() == np.load(os.path.join(vulkan_case, "output_1.npy")).tobytes()
