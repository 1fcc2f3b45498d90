"""graphrt-run on a float16/bfloat16 model built in the test (tests/python/_float16_model.py):
float16 .npy in and out, bfloat16 as uint16 bits (TVM's numpy convention), bit-exact against
numpy; and a library importing undefined symbols fails at load with one line naming them."""

import numpy as np
import pytest

from _apps import app, run
import _float16_model as model


def _model_files(tmp_path, cc):
    import graphrt
    from graphrt import params as gparams

    if not model.compiler_available(cc):
        pytest.skip("%s not installed" % cc)
    lib = model.build_library(cc, str(tmp_path))
    inputs, params, expected = model.make_data(seed=11)
    graph = tmp_path / "graph.json"
    graph.write_text(model.graph_json())
    params_path = tmp_path / "model.params"
    params_path.write_bytes(gparams.save_param_dict(
        {"w": params["w"], "c": graphrt.nd.array(params["c"], dtype="bfloat16")}))
    args = [lib, "--graph", str(graph), "--params", str(params_path)]
    for name, value in inputs.items():
        np.save(str(tmp_path / ("%s.npy" % name)), value)
        args += ["--input", "%s=%s" % (name, tmp_path / ("%s.npy" % name))]
    return args, expected


@pytest.mark.parametrize("cc", ["clang-14", "gcc"])
@pytest.mark.parametrize("loader", ["dlopen", "elf"])
def test_run_float16_model_bit_exact(tmp_path, cc, loader):
    args, expected = _model_files(tmp_path, cc)
    out = tmp_path / "out"
    p = run([app("graphrt-run")] + args + ["--loader", loader, "--output-dir", str(out)])
    assert p.returncode == 0, p.stderr
    assert "float16 [" in p.stdout and "?" not in p.stdout, p.stdout  # values previewed, not "?"
    got = [np.load(str(out / ("output_%d.npy" % i))) for i in range(3)]
    assert [g.dtype for g in got] == [np.float16, np.float16, np.uint16]
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g.view(np.uint16), e.view(np.uint16))


def test_run_float16_model_random_inputs(tmp_path):
    args, _ = _model_files(tmp_path, "gcc")
    p = run([app("graphrt-run")] + [a for a in args if "=" not in a and a != "--input"] + ["--random-inputs", "3"])
    assert p.returncode == 0, p.stderr
    assert "input x: random (64,) float16" in p.stdout and "input b: random (64,) bfloat16" in p.stdout, p.stdout


def test_run_bfloat16_input_rejects_float_npy(tmp_path):
    args, _ = _model_files(tmp_path, "gcc")
    bad = tmp_path / "b_float.npy"
    np.save(str(bad), np.zeros(model.N, dtype=np.float32))
    args = [a if not a.startswith("b=") else "b=%s" % bad for a in args]
    p = run([app("graphrt-run")] + args)
    assert p.returncode == 1
    assert "float32" in p.stderr and "bfloat16" in p.stderr, p.stderr


@pytest.mark.parametrize("loader", ["dlopen", "elf"])
def test_run_library_with_undefined_symbols_fails_at_load(tmp_path, loader):
    if not model.compiler_available("gcc"):
        pytest.skip("gcc not installed")
    lib = model.build_library("gcc", str(tmp_path), source="missing_symbols.c", nostdlib=False)
    p = run([app("graphrt-run"), lib, "--loader", loader, "--random-inputs", "1"])
    assert p.returncode == 1, (p.returncode, p.stderr)  # an error, not the dynamic linker's exit 127
    lines = [line for line in p.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("graphrt-run: error:"), p.stderr
    assert "graphrt_test_undefined_alpha" in lines[0] and "graphrt_test_undefined_beta" in lines[0], lines[0]
