"""graphrt-run / graphrt-inspect / graphrt-pack from the command line."""
import json
import os
import subprocess

import numpy as np
import pytest

from _apps import app, one_line_error, run
import blobparse



def input_args(case):
    out = []
    for name in case.info["inputs"]:
        out += ["--input", "%s=%s" % (name, case.path("input_%s.npy" % name))]
    return out


def check_outputs(case, out_dir):
    for i in range(len(case.info["outputs"])):
        case.check(np.load(os.path.join(out_dir, "output_%d.npy" % i)), i)


# ---- graphrt-run ----
def test_run_one_file(case, tmp_path):
    p = run([app("graphrt-run"), case.path("deploy_factory.so"), "--output-dir", str(tmp_path)] + input_args(case))
    assert p.returncode == 0, p.stderr
    assert "output 0:" in p.stdout
    check_outputs(case, tmp_path)


def test_run_elf_loader(case, tmp_path):
    # The embedded ELF loader runs every CPU fixture (byoc_ccompiler's C++ too).
    p = run([app("graphrt-run"), case.path("deploy_factory.so"), "--loader", "elf", "--output-dir", str(tmp_path)]
            + input_args(case))
    assert p.returncode == 0, p.stderr
    check_outputs(case, tmp_path)


def _crafted_blob_so(tmp_path):
    # __tvm_dev_mblob whose size prefix and first string length point ~2^48
    # bytes past the image (the ELF loader used to read them unbounded: SIGSEGV).
    src = tmp_path / "crafted.c"
    src.write_text("__attribute__((visibility(\"default\"))) const unsigned char __tvm_dev_mblob[24] = {"
                   "0xf0,0xff,0xff,0xff,0xff,0xff,0,0, 1,0,0,0,0,0,0,0, 0xf0,0xff,0xff,0xff,0xff,0xff,0,0};\n")
    so = tmp_path / "crafted.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(so), str(src)], check=True)
    return str(so)


@pytest.mark.parametrize("loader", ["elf", "dlopen"])
def test_run_crafted_blob_is_an_error(tmp_path, loader):
    p = run([app("graphrt-run"), _crafted_blob_so(tmp_path), "--loader", loader, "--random-inputs", "1"])
    assert "blob size prefix" in one_line_error(p, "graphrt-run")


@pytest.mark.parametrize("shape", [[2**62, 1, 28, 28], [2**32, 2**32, 16]])
def test_run_overflowing_input_shape_names_the_node(mlp, tmp_path, shape):
    graph = json.load(open(mlp.path("deploy_graph.json")))
    graph["attrs"]["shape"][1][0] = shape
    g = tmp_path / "graph.json"
    g.write_text(json.dumps(graph))
    p = run([app("graphrt-run"), mlp.path("deploy_lib.so"), "--graph", str(g), "--params",
             mlp.path("deploy_params.params"), "--random-inputs", "1"])
    line = one_line_error(p, "graphrt-run")
    assert "graph node 0 '%s'" % graph["nodes"][0]["name"] in line and "64 bits" in line, line


def test_run_three_file(case, tmp_path):
    p = run([app("graphrt-run"), case.path("deploy_lib.so"), "--graph", case.path("deploy_graph.json"), "--params",
             case.path("deploy_params.params"), "--output-dir", str(tmp_path), "--memory-plan", "liveness"]
            + input_args(case))
    assert p.returncode == 0, p.stderr
    check_outputs(case, tmp_path)


def test_run_repeat_profile_trace(mlp, tmp_path):
    trace = tmp_path / "trace.json"
    p = run([app("graphrt-run"), mlp.path("deploy_factory.so"), "--random-inputs", "7", "--repeat", "3", "--warmup",
             "1", "--threads", "1", "--profile", "--trace", str(trace)])
    assert p.returncode == 0, p.stderr
    assert "mean" in p.stdout and "p50" in p.stdout and "p90" in p.stdout and "min" in p.stdout
    assert "tvmgen_default_fused_nn_softmax" in p.stdout
    json.loads(trace.read_text())


def test_run_random_inputs_deterministic(mlp, tmp_path):
    outs = []
    for d in ("a", "b"):
        p = run([app("graphrt-run"), mlp.path("deploy_factory.so"), "--random-inputs", "3", "--output-dir",
                 str(tmp_path / d), "--quiet"])
        assert p.returncode == 0, p.stderr
        outs.append(np.load(tmp_path / d / "output_0.npy"))
    assert np.array_equal(outs[0], outs[1])


def _bad_npy(tmp_path):
    path = tmp_path / "bad.npy"
    path.write_bytes(b"this is not numpy")
    return str(path)


@pytest.mark.parametrize("kind", ["missing_model", "missing_npy", "bad_npy", "wrong_shape", "wrong_dtype",
                                  "unknown_input", "bad_flag", "bad_device", "bad_plan", "bad_repeat",
                                  "missing_input", "lib_without_graph", "bad_input_spec", "no_model"])
def test_run_errors(mlp, tmp_path, kind):
    model = mlp.path("deploy_factory.so")
    data = mlp.path("input_data.npy")
    wrong = tmp_path / "wrong.npy"
    np.save(wrong, np.zeros((1, 784), "float32"))
    wrong_dt = tmp_path / "wrong_dt.npy"
    np.save(wrong_dt, np.zeros((1, 1, 28, 28), "int32"))
    cases = {
        "missing_model": ([str(tmp_path / "nope.so")], "nope.so"),
        "missing_npy": ([model, "--input", "data=%s" % (tmp_path / "nope.npy")], "nope.npy"),
        "bad_npy": ([model, "--input", "data=%s" % _bad_npy(tmp_path)], "bad.npy"),
        "wrong_shape": ([model, "--input", "data=%s" % wrong], "shape"),
        "wrong_dtype": ([model, "--input", "data=%s" % wrong_dt], "dtype"),
        "unknown_input": ([model, "--input", "nosuch=%s" % data], "nosuch"),
        "bad_flag": ([model, "--frobnicate"], "--frobnicate"),
        "bad_device": ([model, "--device", "tpu"], "tpu"),
        "bad_plan": ([model, "--memory-plan", "best"], "best"),
        "bad_repeat": ([model, "--repeat", "many"], "--repeat"),
        "missing_input": ([model], "data"),
        "lib_without_graph": ([mlp.path("deploy_lib.so"), "--random-inputs", "1"], "--graph"),
        "bad_input_spec": ([model, "--input", "data"], "NAME=FILE"),
        "no_model": ([], "MODEL"),
    }
    args, needle = cases[kind]
    line = one_line_error(run([app("graphrt-run")] + args), "graphrt-run")
    assert needle in line, line


def test_run_cuda_if_available(tmp_path):
    p = run([app("graphrt-run"), "--help"])
    assert p.returncode == 0 and "usage" in p.stdout


# ---- graphrt-inspect ----
def test_inspect(case, tmp_path):
    dot = tmp_path / "g.dot"
    p = run([app("graphrt-inspect"), case.path("deploy_factory.so"), "--dot", str(dot)])
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert "module tree:" in out and "GraphExecutorFactory" in out and "library" in out
    assert "graph:" in out and "operators by function" in out and "memory plan:" in out
    assert "liveness re-plan" in out
    concats = sum(1 for n in json.load(open(case.path("deploy_graph.json")))["nodes"]
                  if "concatenate" in n.get("attrs", {}).get("func_name", ""))
    if concats:  # squeezenet1.1: every one qualifies
        assert "(%d concatenations done in place)" % concats in out, out
    else:
        assert "done in place" not in out, out
    for name, spec in case.info["inputs"].items():
        assert "  %s: (" % name in out
    graph = json.load(open(case.path("deploy_graph.json")))
    assert "graph: %d nodes" % len(graph["nodes"]) in out
    assert dot.read_text().startswith("digraph")


def test_inspect_three_file(case):
    p = run([app("graphrt-inspect"), case.path("deploy_lib.so"), "--graph", case.path("deploy_graph.json"),
             "--params", case.path("deploy_params.params")])
    assert p.returncode == 0, p.stderr
    assert "library" in p.stdout and "graph:" in p.stdout


def test_inspect_errors(tmp_path, mlp):
    one_line_error(run([app("graphrt-inspect"), str(tmp_path / "missing.so")]), "graphrt-inspect")
    one_line_error(run([app("graphrt-inspect"), mlp.path("deploy_factory.so"), "--what"]), "graphrt-inspect")
    bad = tmp_path / "g.json"
    bad.write_text("{not json")
    one_line_error(run([app("graphrt-inspect"), mlp.path("deploy_lib.so"), "--graph", str(bad)]), "graphrt-inspect")


# ---- graphrt-pack and the demo model ----
def _demo_reference(d):
    params = dict(blobparse.parse_params(open(os.path.join(d, "demo_mlp.params"), "rb").read()))

    def arr(name):
        rec = params[name]
        assert rec["dtype"] == (2, 32, 1)
        return np.frombuffer(rec["data"], "<f4").reshape(rec["shape"])

    x = np.load(os.path.join(d, "input.npy")).astype(np.float64)
    h = np.maximum(x @ arr("p0").T.astype(np.float64) + arr("p1"), 0)
    z = h @ arr("p2").T.astype(np.float64) + arr("p3")
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_demo_runs_and_matches_numpy(demo, tmp_path):
    p = run([app("graphrt-run"), os.path.join(demo, "demo_mlp.so"), "--input",
             "data=%s" % os.path.join(demo, "input.npy"), "--repeat", "20", "--output-dir", str(tmp_path)])
    assert p.returncode == 0, p.stderr
    assert "latency over 20 runs" in p.stdout
    got = np.load(tmp_path / "output_0.npy")
    assert got.shape == (1, 10) and got.dtype == np.float32
    np.testing.assert_allclose(got, _demo_reference(demo), rtol=1e-5, atol=1e-6)


def test_demo_expected_output_is_the_float64_forward_pass(demo):
    # scripts/run-demo.sh checks the run against this file: it must be the model's true output.
    expected = np.load(os.path.join(demo, "expected_output.npy"))
    assert expected.shape == (1, 10) and expected.dtype == np.float32
    np.testing.assert_allclose(expected, _demo_reference(demo).astype(np.float32), rtol=0, atol=1e-7)


def test_demo_three_file(demo, tmp_path):
    p = run([app("graphrt-run"), os.path.join(demo, "demo_mlp_lib.so"), "--graph",
             os.path.join(demo, "demo_mlp_graph.json"), "--params", os.path.join(demo, "demo_mlp.params"), "--input",
             "data=%s" % os.path.join(demo, "input.npy"), "--output-dir", str(tmp_path)])
    assert p.returncode == 0, p.stderr
    np.testing.assert_allclose(np.load(tmp_path / "output_0.npy"), _demo_reference(demo), rtol=1e-5, atol=1e-6)


def test_demo_blob_parses_per_spec(demo):
    blob = blobparse.elf_symbol_bytes(os.path.join(demo, "demo_mlp.so"), "__tvm_dev_mblob")
    assert blob is not None
    records, row_ptr, children = blobparse.parse_blob(blob)
    assert [r[0] for r in records] == ["GraphExecutorFactory", "_lib"]
    assert row_ptr == [0, 1, 1] and children == [1]  # TVM's import tree of a CPU relay export
    factory = records[0][1]
    assert factory["module_name"] == "default"
    assert factory["graph"] == open(os.path.join(demo, "demo_mlp_graph.json")).read()
    params = blobparse.parse_params(open(os.path.join(demo, "demo_mlp.params"), "rb").read())
    assert [(n, r["raw"]) for n, r in factory["params"]] == [(n, r["raw"]) for n, r in params]
    # the kernels-only library has no blob (TVM emits none without imports)
    assert blobparse.elf_symbol_bytes(os.path.join(demo, "demo_mlp_lib.so"), "__tvm_dev_mblob") is None


def _kernels_c():
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.join(os.path.dirname(os.path.dirname(here)), "examples", "demo_mlp", "kernels.c")


def test_pack_blob_entries(demo, tmp_path):
    payload = tmp_path / "payload.bin"
    payload.write_bytes(b"\x01\x02opaque payload\xff")
    out = tmp_path / "with_entry.so"
    p = run([app("graphrt-pack"), "-o", str(out), "--graph", os.path.join(demo, "demo_mlp_graph.json"), "--params",
             os.path.join(demo, "demo_mlp.params"), "--blob-entry", "graphrt_test=%s" % payload, _kernels_c()])
    assert p.returncode == 0, p.stderr
    blob = blobparse.elf_symbol_bytes(str(out), "__tvm_dev_mblob")
    records, row_ptr, children = blobparse.parse_blob(blob, {"graphrt_test": payload.stat().st_size})
    assert [r[0] for r in records] == ["GraphExecutorFactory", "_lib", "graphrt_test"]
    assert records[2][1] == payload.read_bytes()
    assert row_ptr == [0, 1, 2, 2] and children == [1, 2]  # factory -> lib -> entry (as lib -> cuda)
    # graphrt has no loader for that tkey: a one-line error naming it
    line = one_line_error(run([app("graphrt-inspect"), str(out)]), "graphrt-inspect")
    assert "graphrt_test" in line

    # no graph: _lib is the root and imports the entries
    out2 = tmp_path / "lib_entry.so"
    p = run([app("graphrt-pack"), "-o", str(out2), "--blob-entry", "graphrt_test=%s" % payload, _kernels_c()])
    assert p.returncode == 0, p.stderr
    records, row_ptr, children = blobparse.parse_blob(blobparse.elf_symbol_bytes(str(out2), "__tvm_dev_mblob"),
                                                      {"graphrt_test": payload.stat().st_size})
    assert [r[0] for r in records] == ["_lib", "graphrt_test"] and row_ptr == [0, 1, 1] and children == [1]


def test_pack_errors(demo, tmp_path):
    pack = app("graphrt-pack")
    graph = os.path.join(demo, "demo_mlp_graph.json")
    one_line_error(run([pack, "-o", str(tmp_path / "x.so"), str(tmp_path / "missing.c")]), "graphrt-pack")
    one_line_error(run([pack, str(tmp_path / "x.so")]), "graphrt-pack")  # no -o
    bad_params = tmp_path / "bad.params"
    bad_params.write_bytes(b"\x00" * 64)
    line = one_line_error(run([pack, "-o", str(tmp_path / "x.so"), "--graph", graph, "--params", str(bad_params),
                               _kernels_c()]), "graphrt-pack")
    assert "params" in line
    bad_graph = tmp_path / "bad.json"
    bad_graph.write_text("[1, 2")
    one_line_error(run([pack, "-o", str(tmp_path / "x.so"), "--graph", str(bad_graph), _kernels_c()]), "graphrt-pack")
    broken = tmp_path / "broken.c"
    broken.write_text("this is not C;\n")
    p = run([pack, "-o", str(tmp_path / "x.so"), str(broken)])
    assert p.returncode != 0
    last = p.stderr.strip().splitlines()[-1]  # the compiler's diagnostics come first
    assert last.startswith("graphrt-pack: error: compiler failed"), last
    one_line_error(run([pack, "-o", str(tmp_path / "x.so"), "--blob-entry", "_lib=%s" % graph, _kernels_c()]),
                   "graphrt-pack")


# ---- TVM .tar exports (objects linked in-process, no compiler) ----
@pytest.mark.parametrize("threads", ["1", "2"])
def test_run_tar_export(tar_case, tmp_path, threads):
    env = dict(os.environ, TVM_NUM_THREADS=threads)
    p = run([app("graphrt-run"), tar_case.path("deploy.tar"), "--output-dir", str(tmp_path)] + input_args(tar_case),
            env=env)
    assert p.returncode == 0, p.stderr
    check_outputs(tar_case, tmp_path)
    so_dir = tmp_path / "so"
    p = run([app("graphrt-run"), tar_case.path("deploy_factory.so"), "--output-dir", str(so_dir)]
            + input_args(tar_case), env=env)
    assert p.returncode == 0, p.stderr
    for i in range(len(tar_case.info["outputs"])):
        name = "output_%d.npy" % i
        assert (tmp_path / name).read_bytes() == (so_dir / name).read_bytes()


def test_run_tar_with_unknown_member_is_one_line(tar_case, tmp_path):
    import io
    import tarfile
    bad = tmp_path / "bad.tar"
    with tarfile.open(tar_case.path("deploy.tar")) as src, tarfile.open(str(bad), "w") as dst:
        for m in src.getmembers():
            dst.addfile(m, src.extractfile(m))
        info = tarfile.TarInfo("README")
        info.size = 3
        dst.addfile(info, io.BytesIO(b"hi\n"))
    p = run([app("graphrt-run"), str(bad)] + input_args(tar_case))
    line = one_line_error(p, "graphrt-run")
    assert "unknown member 'README'" in line, line


def test_output_dir_with_trailing_slash_names_one_path(mlp, tmp_path):
    out = str(tmp_path) + "/"
    p = run([app("graphrt-run"), mlp.path("deploy_factory.so"), "--output-format", "npz", "--output-dir", out]
            + input_args(mlp))
    assert p.returncode == 0, p.stderr
    assert "to %s/outputs.npz" % tmp_path in p.stdout + p.stderr and "//" not in p.stdout + p.stderr, p.stdout
    mlp.check(np.load(os.path.join(str(tmp_path), "outputs.npz"))["output_0"], 0)
