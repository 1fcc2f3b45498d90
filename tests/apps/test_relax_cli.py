"""graphrt-run on Relax VM executables (relax.build exports): every shared case, every input set,
bit-exact; a corrupt executable ends in one error line and exit code 1."""
import os
import shutil
import struct

import numpy as np
import pytest

from _apps import app, one_line_error, run
from _relax_cases import RelaxCase, relax_case_names


def _run_args(case, inputs, out_dir):
    args = [app("graphrt-run"), case.path("deploy_relax.so"), "--function", case.entry, "--output-dir", str(out_dir)]
    for name, path in inputs.items():
        args += ["--input", "%s=%s" % (name, path)]
    return args


@pytest.mark.parametrize("name", relax_case_names())
@pytest.mark.parametrize("loader", ["dlopen", "elf"])
def test_run_relax_case_bit_exact(name, loader, tmp_path):
    case = RelaxCase(name)
    for suffix, inputs, outputs in case.input_sets():
        out_dir = tmp_path / ("out" + suffix)
        p = run(_run_args(case, inputs, out_dir) + ["--loader", loader])
        assert p.returncode == 0, p.stderr
        assert "returned %s" % case.info.get("structure", "tensor") in p.stdout, p.stdout
        for i, expected_path in enumerate(outputs):
            got, expected = np.load(str(out_dir / ("output_%d.npy" % i))), np.load(expected_path)
            assert got.dtype == expected.dtype and got.shape == expected.shape
            assert got.tobytes() == expected.tobytes(), "output %d of %s%s differs" % (i, name, suffix)
        assert not (out_dir / ("output_%d.npy" % len(outputs))).exists()


def test_run_relax_picks_main_and_reports_missing_input():
    case = RelaxCase("relax_mlp")
    p = run([app("graphrt-run"), case.path("deploy_relax.so")])
    assert "input 'x' not given" in one_line_error(p, "graphrt-run")
    assert p.returncode == 1


def test_run_relax_unknown_function_lists_the_functions():
    case = RelaxCase("relax_chain")
    p = run([app("graphrt-run"), case.path("deploy_relax.so"), "--function", "main",
             "--input", "x=%s" % case.path("input_x.npy")])
    line = one_line_error(p, "graphrt-run")
    assert "no function 'main'" in line and "forward" in line
    assert p.returncode == 1


def _corrupt_copy(case, tmp_path, patch):
    data = bytearray(open(case.path("deploy_relax.so"), "rb").read())
    magic = struct.pack("<Q", 0xD225DE2F4214151D)
    at = data.find(magic)
    assert at > 0 and data.find(magic, at + 1) < 0
    patch(data, at)
    path = tmp_path / "corrupt_relax.so"
    path.write_bytes(bytes(data))
    return str(path)


@pytest.mark.parametrize("loader", ["dlopen", "elf"])
def test_run_relax_bad_magic_is_one_line_exit_1(tmp_path, loader):
    case = RelaxCase("relax_mlp")

    def flip_magic(data, at):
        data[at] ^= 0xFF

    so = _corrupt_copy(case, tmp_path, flip_magic)
    p = run([app("graphrt-run"), so, "--loader", loader, "--input", "x=%s" % case.path("input_x.npy")])
    line = one_line_error(p, "graphrt-run")
    assert p.returncode == 1
    assert "bad magic" in line and "field: magic" in line, line


def test_run_relax_bad_version_is_one_line_exit_1(tmp_path):
    case = RelaxCase("relax_mlp")

    def bump_version(data, at):
        version = at + 8 + 8  # magic, then the version string's u64 length
        assert bytes(data[version:version + 4]) == b"0.14"
        data[version:version + 4] = b"9.99"

    so = _corrupt_copy(case, tmp_path, bump_version)
    p = run([app("graphrt-run"), so, "--input", "x=%s" % case.path("input_x.npy")])
    line = one_line_error(p, "graphrt-run")
    assert p.returncode == 1
    assert "unsupported Relax executable version '9.99'" in line, line


def test_inspect_lists_constants_functions_and_code():
    case = RelaxCase("relax_dynamic_batch")
    p = run([app("graphrt-inspect"), case.path("deploy_relax.so")])
    assert p.returncode == 0, p.stderr
    assert "relax.VMExecutable" in p.stdout
    assert "float32(64, 32)" in p.stdout, p.stdout  # the first weight, from the constant pool
    assert "@main(x):" in p.stdout
    assert "  main(x: float32[n0, 64])\n" in p.stdout, p.stdout  # the batch is symbolic (shape-heap slot 0)
    assert "call  vm.builtin.make_shape in: %1, i1, i1, i1 dst: %2" in p.stdout
    assert "@shape_func packed_func;" in p.stdout


def test_run_relax_unknown_builtin_is_refused_at_load(tmp_path):
    case = RelaxCase("relax_mlp")
    data = bytearray(open(case.path("deploy_relax.so"), "rb").read())
    name = b"vm.builtin.null_value"
    at = data.find(name)
    assert at > 0 and data.find(name, at + 1) < 0
    data[at:at + len(name)] = b"vm.builtin.null_valuX"
    so = tmp_path / "unknown_builtin.so"
    so.write_bytes(bytes(data))
    # Refused while loading, before any input is read: the input file named here does not exist.
    p = run([app("graphrt-run"), str(so), "--input", "x=%s" % (tmp_path / "absent.npy")])
    line = one_line_error(p, "graphrt-run")
    assert p.returncode == 1
    assert "'vm.builtin.null_valuX'" in line and "function: vm.builtin.null_valuX" in line, line


def test_run_relax_profile_lists_kernels_and_builtins():
    case = RelaxCase("relax_cnn")
    p = run([app("graphrt-run"), case.path("deploy_relax.so"), "--input", "x=%s" % case.path("input_x.npy"),
             "--profile", "--quiet"])
    assert p.returncode == 0, p.stderr
    rows = {line.split()[0]: line.split() for line in p.stdout.splitlines() if line.strip()}
    assert rows["fused_conv2d_add_relu"][1] == "kernel" and rows["fused_conv2d_add_relu"][2] == "1"
    assert rows["vm.builtin.alloc_tensor"][1] == "builtin"
    assert int(rows["vm.builtin.null_value"][2]) > 1
    assert "Total" in rows


@pytest.mark.parametrize("loader", ["dlopen", "elf"])
def test_run_pre_v020_executable_record(tmp_path, loader):
    # TVM v0.13 to v0.19 name the record relax.Executable; the rest is the same.
    from _relax_cases import pre_v020_copy
    case = RelaxCase("relax_tuple_io")
    so = pre_v020_copy(case, str(tmp_path / "deploy_v019.so"))
    _, inputs, outputs = case.input_sets()[0]
    p = run([a if a != case.path("deploy_relax.so") else so for a in _run_args(case, inputs, tmp_path)] +
            ["--loader", loader])
    assert p.returncode == 0, p.stderr
    for i, expected_path in enumerate(outputs):
        assert np.load(str(tmp_path / ("output_%d.npy" % i))).tobytes() == np.load(expected_path).tobytes()
    p = run([app("graphrt-inspect"), so])
    assert p.returncode == 0 and "relax.Executable (" in p.stdout, p.stdout


@pytest.mark.parametrize("name", relax_case_names())
def test_run_relax_random_inputs_take_the_checked_shapes(name, tmp_path):
    case = RelaxCase(name)
    p = run([app("graphrt-run"), case.path("deploy_relax.so"), "--function", case.entry, "--random-inputs", "3",
             "--output-dir", str(tmp_path)])
    name = os.path.basename(case.dir)  # the same model in relax/ (TVM v0.20) and relax-ffi/ (v0.26)
    if name == "relax_params_as_args":  # only x is checked: the weights have no shape in the executable
        line = one_line_error(p, "graphrt-run")
        assert p.returncode == 1 and "input 'w1' of main has no dtype and shape" in line, line
        return
    assert p.returncode == 0, p.stderr
    for k in case.input_order:
        info = case.info["inputs"][k]
        if name != "relax_dynamic_batch":
            assert "input %s: random (%s) %s" % (k, ", ".join(map(str, info["shape"])), info["dtype"]) in p.stdout
    if name == "relax_dynamic_batch":  # the batch is symbolic: 1 when no given input fixes it
        assert "input x: random (1, 64) float32 (seed 3; the code checks float32[n0, 64])" in p.stdout, p.stdout
        return
    for i, out in enumerate(case.info["outputs"]):
        got = np.load(str(tmp_path / ("output_%d.npy" % i)))
        assert list(got.shape) == out["shape"] and got.dtype == np.dtype(out["dtype"])


def test_run_relax_random_inputs_fill_what_is_not_given_with_the_given_batch(tmp_path):
    case = RelaxCase("relax_params_as_args")
    given = ["--input", "w1=%s" % case.path("input_w1.npy"), "--input", "b1=%s" % case.path("input_b1.npy"),
             "--input", "w2=%s" % case.path("input_w2.npy"), "--input", "b2=%s" % case.path("input_b2.npy")]
    p = run([app("graphrt-run"), case.path("deploy_relax.so"), "--random-inputs", "5", "--loader", "elf"] + given)
    assert p.returncode == 0, p.stderr
    assert "input x: random (2, 16) float32 (seed 5" in p.stdout and "main returned tensor" in p.stdout


def test_run_relax_trace_and_repeat(tmp_path):
    import json
    case = RelaxCase("relax_chain")
    trace = tmp_path / "trace.json"
    p = run([app("graphrt-run"), case.path("deploy_relax.so"), "--input", "x=%s" % case.path("input_x.npy"),
             "--repeat", "3", "--profile", "--trace", str(trace), "--loader", "elf"])
    assert p.returncode == 0, p.stderr
    assert "latency over 3 runs" in p.stdout and "wrote Chrome trace to" in p.stdout
    events = json.loads(trace.read_text())["traceEvents"]
    assert events[0]["name"] == "forward" and events[0]["cat"] == "vm"
    kernels = [e for e in events if e["cat"] == "kernel"]
    assert len(kernels) >= 200 and all(e["dur"] >= 0 and e["ts"] >= 0 for e in events)
    assert all(e["args"]["depth"] == 1 for e in kernels)
