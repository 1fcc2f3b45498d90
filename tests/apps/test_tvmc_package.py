"""tvmc packages (`tvmc compile` output: module.tar holding mod.so, mod.json, mod.params, written as
tvmc writes them: tarfile members added under those names) run through graphrt-run and Python's
load_module, with TVM's own outputs."""
import os
import tarfile

import numpy as np
import pytest

import graphrt
from graphrt import graph_executor
from _apps import app, one_line_error, run


def make_package(mlp, path, members=("mod.so", "mod.json", "mod.params")):
    files = {"mod.so": "deploy_lib.so", "mod.json": "deploy_graph.json", "mod.params": "deploy_params.params"}
    with tarfile.open(path, "w") as tar:  # tvmc: tarfile.open(package_path, "w"), tar.add(file, name)
        for name in members:
            tar.add(mlp.path(files[name]), name)
    return str(path)


def test_graphrt_run_runs_a_tvmc_package(mlp, tmp_path):
    package = make_package(mlp, tmp_path / "module.tar")
    p = run([app("graphrt-run"), package, "--input", "data=" + mlp.path("input_data.npy"),
             "--expected-output", "0=" + mlp.path("output_0.npy")])
    assert p.returncode == 0, p.stderr
    assert "output 0 matches" in p.stdout, p.stdout
    p = run([app("graphrt-inspect"), package])
    assert p.returncode == 0, p.stderr
    assert "GraphExecutorFactory" in p.stdout


@pytest.mark.parametrize("loader", ["dlopen", "elf"])
def test_python_load_module_runs_a_tvmc_package(mlp, tmp_path, loader):
    lib = graphrt.load_module(make_package(mlp, tmp_path / "module.tar"), loader=loader)
    gmod = graph_executor.GraphModule(lib["default"](graphrt.cpu()))
    gmod.set_input("data", np.load(mlp.path("input_data.npy")))
    gmod.run()
    np.testing.assert_array_equal(gmod.get_output(0).numpy(), np.load(mlp.path("output_0.npy")))


def test_incomplete_tvmc_package_is_named(mlp, tmp_path):
    package = make_package(mlp, tmp_path / "module.tar", members=("mod.so", "mod.json"))
    err = one_line_error(run([app("graphrt-run"), package, "--random-inputs", "0"]), "graphrt-run")
    assert "tvmc package without mod.params (tvmc compile writes mod.so, mod.json, mod.params)" in err, err
    assert package in err


def test_tvmc_package_whose_library_holds_modules_is_refused_by_name(tmp_path):
    from _cases import Case, case_dir
    case_dir("byoc_ccompiler")  # skips (fails in CI) without the fixture
    byoc = Case("byoc_ccompiler")  # its deploy_lib.so carries a blob (const_loader + C source module)
    package = make_package(byoc, tmp_path / "module.tar")
    err = one_line_error(run([app("graphrt-run"), package, "--random-inputs", "0"]), "graphrt-run")
    assert ("the package's kernels library holds modules of its own (a __tvm_dev_mblob: BYOC, CUDA or linked "
            "constants), which graphrt does not combine with mod.json yet") in err, err
    assert package in err and "mod.so" in err, err
