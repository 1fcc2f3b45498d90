"""graphrt-run --device opencl[:N] and graphrt-inspect on the OpenCL exports (fixtures/relax-opencl,
TVM v0.26): every case and input set within the case's tolerance, exit 0 (no crash at exit); the
opencl module's kernels listed; a missing device or libOpenCL.so.1 is one error line. Skips
without an OpenCL device (fails in CI, where scripts/setup.sh installs PoCL)."""
import json
import os

import numpy as np
import pytest

from _apps import app, one_line_error, run
from _cases import fixtures_dir, skip_without_fixtures


def _case_names():
    d = fixtures_dir()
    root = os.path.join(d, "relax-opencl") if d else None
    if not root or not os.path.isdir(root):
        return ["relax_opencl_fixtures_missing"]
    return sorted(n for n in os.listdir(root) if os.path.isfile(os.path.join(root, n, "case.json")))


def _case(name):
    d = fixtures_dir()
    path = os.path.join(d, "relax-opencl", name) if d else None
    if not path or not os.path.isfile(os.path.join(path, "case.json")):
        skip_without_fixtures("OpenCL fixture %s" % name)
    with open(os.path.join(path, "case.json")) as f:
        return path, json.load(f)


def _require_opencl(p):
    """Skips (fails in CI) when graphrt-run said the OpenCL device is unavailable."""
    if p.returncode != 0 and "opencl(0) is unavailable" in p.stderr:
        if os.environ.get("CI", "").lower() == "true" or os.environ.get("GRAPHRT_REQUIRE_OPENCL") == "1":
            pytest.fail("no usable OpenCL device, and CI requires one: " + p.stderr, pytrace=False)
        pytest.skip("no usable OpenCL device: " + p.stderr.strip())


@pytest.mark.parametrize("device", ["opencl", "opencl:0"])
@pytest.mark.parametrize("name", _case_names())
def test_run_on_opencl_within_tolerance(name, device, tmp_path):
    d, info = _case(name)
    order = info.get("input_order") or list(info["inputs"])
    for s in info.get("input_sets") or [{"suffix": ""}]:
        suffix = s.get("suffix", "")
        out_dir = tmp_path / ("out" + suffix)
        args = [app("graphrt-run"), os.path.join(d, "deploy_relax.so"), "--device", device, "--output-dir", str(out_dir)]
        for k in order:
            args += ["--input", "%s=%s" % (k, os.path.join(d, "input_%s%s.npy" % (k, suffix)))]
        p = run(args)
        _require_opencl(p)
        assert p.returncode == 0, p.stderr
        for i in range(len(info["outputs"])):
            got = np.load(str(out_dir / ("output_%d.npy" % i)))
            expected = np.load(os.path.join(d, "output_%d%s.npy" % (i, suffix)))
            assert got.dtype == expected.dtype and got.shape == expected.shape
            assert np.abs(got.astype("float64") - expected).max() <= info["tolerance"], (name, suffix, i)


def test_inspect_lists_the_opencl_modules_kernels():
    d, _ = _case("relax_tuple_io_opencl")
    p = run([app("graphrt-inspect"), os.path.join(d, "deploy_relax.so")])
    assert p.returncode == 0, p.stderr
    assert "- opencl (3 functions, 0 imports)" in p.stdout, p.stdout
    for kernel in ("fused_cast_add_kernel", "multiply_kernel", "sum_kernel"):
        assert "        %s\n" % kernel in p.stdout, p.stdout


def _mlp_args(d, device):
    return [app("graphrt-run"), os.path.join(d, "deploy_relax.so"), "--device", device,
            "--input", "x=%s" % os.path.join(d, "input_x.npy")]


def test_no_such_opencl_device_is_one_error_line():
    d, _ = _case("relax_mlp_opencl")
    _require_opencl(run(_mlp_args(d, "opencl")))
    line = one_line_error(run(_mlp_args(d, "opencl:31")), "graphrt-run")
    assert "device opencl(31) is unavailable: no OpenCL device 31 (" in line, line


def test_without_libopencl_one_error_line():
    d, _ = _case("relax_mlp_opencl")
    p = run(_mlp_args(d, "opencl"), env=dict(os.environ, GRAPHRT_OPENCL_LIBRARY="/nonexistent/libOpenCL.so.1"))
    line = one_line_error(p, "graphrt-run")
    assert "device opencl(0) is unavailable: libOpenCL.so.1 not found" in line, line


def test_bad_opencl_device_text_is_a_usage_error():
    d, _ = _case("relax_mlp_opencl")
    p = run(_mlp_args(d, "opencl:x"))
    assert p.returncode == 2, p.stderr
    assert "bad device 'opencl:x' (use cpu, cuda or cuda:N, vulkan or vulkan:N, opencl or opencl:N)" in p.stderr, p.stderr
