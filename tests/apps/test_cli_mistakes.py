"""What a new user meets at the command line: paths as written in README, and the advice given
when something is missing or wrong. Every error is one line that says what to do."""
import json
import os
import subprocess

import numpy as np
import pytest

from _apps import app, one_line_error, run
from _cases import case_dir
from _vm_programs import ADD



# ---- item 1: a path without '/' is the file in the current directory ----
def test_bare_relative_model_path(mlp):
    p = run([app("graphrt-run"), "deploy_factory.so", "--input", "data=input_data.npy"], cwd=mlp.dir)
    assert p.returncode == 0, p.stderr
    assert "output 0: (1, 10) float32" in p.stdout


def test_bare_relative_three_file_paths(mlp):
    p = run([app("graphrt-run"), "deploy_lib.so", "--graph", "deploy_graph.json", "--params",
             "deploy_params.params", "--random-inputs", "0"], cwd=mlp.dir)
    assert p.returncode == 0, p.stderr


def test_bare_relative_path_inspect(mlp):
    p = run([app("graphrt-inspect"), "deploy_factory.so"], cwd=mlp.dir)
    assert p.returncode == 0, p.stderr
    assert "GraphExecutorFactory" in p.stdout


# ---- item 3: a CUDA model without a CUDA device is refused at load, with the flag to use ----
@pytest.mark.parametrize("form", ["one-file", "three-file"])
def test_cuda_model_on_cpu_says_it_wants_cuda(form):
    d = case_dir("mlp_cuda")
    args = ["deploy_factory.so"] if form == "one-file" else [
        "deploy_lib.so", "--graph", "deploy_graph.json", "--params", "deploy_params.params"]
    p = run([app("graphrt-run")] + args + ["--input", "data=input_data.npy"], cwd=d)
    err = one_line_error(p, "graphrt-run")
    assert "the graph wants a CUDA device" in err and "device_index" in err and "--device cuda:0" in err, err
    assert "unsatisfied constraint" not in err


# ---- item 4: params are not inputs ----
def test_three_file_without_params_names_them_and_says_how_to_load(mlp):
    for extra in ([], ["--random-inputs", "0"], ["--input", "data=input_data.npy"]):
        p = run([app("graphrt-run"), "deploy_lib.so", "--graph", "deploy_graph.json"] + extra, cwd=mlp.dir)
        err = one_line_error(p, "graphrt-run")
        assert "params are not loaded" in err and "p0, p1, p2, p3, p4, p5" in err, err
        assert "--params" in err and "--random-inputs" not in err, err


def test_random_inputs_fill_only_data_inputs(mlp):
    p = run([app("graphrt-run"), "deploy_lib.so", "--graph", "deploy_graph.json", "--params",
             "deploy_params.params", "--random-inputs", "0"], cwd=mlp.dir)
    assert p.returncode == 0, p.stderr
    assert "input data: random" in p.stdout and "input p0" not in p.stdout


# ---- item 8 ----
def test_unknown_input_lists_data_inputs_before_params():
    d = case_dir("squeezenet1.1")
    p = run([app("graphrt-run"), "deploy_lib.so", "--graph", "deploy_graph.json", "--input", "dat=input_data.npy"],
            cwd=d)
    err = one_line_error(p, "graphrt-run")
    assert "unknown input 'dat' (data inputs: data; params: p0 ... p51 (52" in err, err
    p = run([app("graphrt-run"), "deploy_factory.so", "--input", "dat=input_data.npy"], cwd=d)
    assert "unknown input 'dat' (data inputs: data)" in one_line_error(p, "graphrt-run")


def test_cannot_open_model_gives_the_reason(tmp_path):
    p = run([app("graphrt-run"), str(tmp_path / "missing.so")])
    assert "cannot open model library: no such file" in one_line_error(p, "graphrt-run")
    unreadable = tmp_path / "dir.so"
    unreadable.mkdir()
    p = run([app("graphrt-run"), str(unreadable)])
    assert "cannot open model: Is a directory" in one_line_error(p, "graphrt-run") or os.geteuid() == 0


def test_profile_table_mean_total_full_names_and_warmup():
    d = case_dir("squeezenet1.1")
    p = run([app("graphrt-run"), "deploy_factory.so", "--random-inputs", "0", "--profile", "--repeat", "2",
             "--quiet"], cwd=d)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert any("mean (us)" in l and "total (us)" in l for l in lines), p.stdout
    assert "after 1 warm-up run" in p.stdout, p.stdout
    with open(os.path.join(d, "deploy_graph.json")) as f:
        graph = json.load(f)
    names = [n["name"] for n in graph["nodes"] if n["op"] == "tvm_op" and n["attrs"]["func_name"] != "__nop"]
    assert max(len(n) for n in names) > 60
    shown = [l.split("  ")[-1] for l in lines]
    for n in names:
        assert n in shown, n
    # mean = total / runs, per row
    row = next(l for l in lines if l.endswith(names[0]))
    mean, total = float(row.split()[0]), float(row.split()[1])
    assert abs(mean * 2 - total) < 0.02, row


def test_vm_asm_help_exits_zero():
    p = run([app("graphrt-vm-asm"), "--help"])
    assert p.returncode == 0 and "usage: graphrt-vm-asm" in p.stdout, (p.returncode, p.stdout, p.stderr)


def test_elf_loader_refusing_cxx_import_says_to_use_dlopen(tmp_path):
    # std::chrono's clock is C++ runtime code that TVM's codegen never imports: off the allow-list.
    src = tmp_path / "clock.cc"
    src.write_text('#include <chrono>\nextern "C" long graphrt_test_now() {\n'
                   '  return std::chrono::steady_clock::now().time_since_epoch().count();\n}\n')
    subprocess.run(["c++", "-shared", "-fPIC", "-O1", "-o", str(tmp_path / "clock.so"), str(src)], check=True)
    p = run([app("graphrt-run"), "clock.so", "--loader", "elf", "--random-inputs", "0"], cwd=tmp_path)
    err = one_line_error(p, "graphrt-run")
    assert "_ZNSt6chrono3_V212steady_clock3nowEv" in err, err
    assert "C++ runtime symbols" in err and "--loader dlopen" in err, err


# ---- item 7: graphrt-pack documents the kernel ABI and checks the graph at pack time ----
def test_pack_help_documents_signature_header_and_example():
    p = run([app("graphrt-pack"), "--help"])
    assert p.returncode == 0, p.stderr
    assert "int NAME(TVMValue* args, int* type_codes, int num_args, TVMValue* ret, int* ret_code" in p.stdout
    assert "#include <graphrt/tvm_abi.h>" in p.stdout and "\nexamples:\n" in p.stdout


def test_pack_refuses_graph_calling_undefined_functions(demo, tmp_path):
    src = tmp_path / "other.c"
    src.write_text('#include <graphrt/tvm_abi.h>\n__attribute__((visibility("default"))) int other(TVMValue* a, '
                   'int* c, int n, TVMValue* r, int* rc, void* h) { return 0; }\n')
    out = tmp_path / "model.so"
    p = run([app("graphrt-pack"), "-o", str(out), str(src), "--graph", os.path.join(demo, "demo_mlp_graph.json"),
             "--params", os.path.join(demo, "demo_mlp.params")])
    err = one_line_error(p, "graphrt-pack")
    assert "the graph calls demo_dense_bias_relu, demo_dense_bias_softmax, which the sources do not define" in err, err
    assert "they define: other" in err, err
    assert not out.exists()


# ---- item 6: a library that is not a TVM module is refused at load; --trust-exports opts in ----
@pytest.mark.parametrize("prog", ["graphrt-run", "graphrt-inspect"])
def test_libm_is_refused_at_load(prog):
    from _not_tvm import libm_path
    libm = libm_path()
    p = run([app(prog), libm] + (["--random-inputs", "0"] if prog == "graphrt-run" else []))
    err = one_line_error(p, prog)
    assert "not a TVM module" in err and libm in err, err
    # --trust-exports cannot make libm's functions packed functions: not offered.
    assert "looks like a system library, not a model" in err and "--trust-exports" not in err, err
    assert p.stdout == "", p.stdout  # nothing listed as functions


def test_hand_written_kernels_run_with_trust_exports(tmp_path):
    from _not_tvm import add_one_graph, build_add_one
    lib = build_add_one(tmp_path)
    (tmp_path / "graph.json").write_text(add_one_graph(3))
    x = np.array([-1.5, 0.0, 2.25], dtype=np.float32)
    np.save(tmp_path / "x.npy", x)
    args = [app("graphrt-run"), lib, "--graph", "graph.json", "--input", "x=x.npy", "--output-dir", "out"]
    err = one_line_error(run(args, cwd=tmp_path), "graphrt-run")
    assert "not a TVM module" in err and "--trust-exports" in err, err
    p = run(args + ["--trust-exports"], cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "output_0.npy"), x + 1)
    p = run([app("graphrt-inspect"), lib, "--trust-exports"])
    assert p.returncode == 0, p.stderr
    assert "add_one" in p.stdout, p.stdout


# ---- files the apps write appear whole or not at all ----
def leftovers(folder):
    return [n for n in os.listdir(folder) if ".partial-" in n]


def test_outputs_are_complete_files_with_usual_permissions(mlp, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    old_umask = os.umask(0o022)
    try:
        p = run([app("graphrt-run"), "deploy_factory.so", "--input", "data=input_data.npy",
                 "--output-dir", str(out)], cwd=mlp.dir)
    finally:
        os.umask(old_umask)
    assert p.returncode == 0, p.stderr
    got = np.load(out / "output_0.npy")
    np.testing.assert_array_equal(got, np.load(os.path.join(mlp.dir, "output_0.npy")))
    assert os.stat(out / "output_0.npy").st_mode & 0o777 == 0o644
    assert leftovers(out) == []


def test_output_that_cannot_be_replaced_leaves_no_partial_file(mlp, tmp_path):
    # output_0.npy is a folder: the rename fails, the error names the file, and
    # neither a half-written file nor the temporary one is left behind.
    out = tmp_path / "out"
    (out / "output_0.npy").mkdir(parents=True)
    p = run([app("graphrt-run"), "deploy_factory.so", "--input", "data=input_data.npy",
             "--output-dir", str(out)], cwd=mlp.dir)
    err = one_line_error(p, "graphrt-run")
    assert "cannot write .npy file" in err and "output_0.npy" in err, err
    assert (out / "output_0.npy").is_dir()
    assert leftovers(out) == []


def test_vm_asm_output_is_replaced_whole_or_not_at_all(tmp_path):
    good = tmp_path / "good.vmasm"
    good.write_text("module demo version 1\n" + ADD)
    target = tmp_path / "demo.vmbc"
    target.write_bytes(b"previous contents")
    bad = tmp_path / "bad.vmasm"
    bad.write_text("module demo version 1\nfunc add \"0ii_i\" export\n  no.such.op %i0\nend\n")
    p = run([app("graphrt-vm-asm"), str(bad), "-o", str(target)])
    assert p.returncode != 0 and "line" in p.stderr, p.stderr
    assert target.read_bytes() == b"previous contents"
    p = run([app("graphrt-vm-asm"), str(good), "-o", str(target)])
    assert p.returncode == 0, p.stderr
    dump = run([app("graphrt-vm-asm"), "--dump", str(target)])
    assert dump.returncode == 0 and "add.i32" in dump.stdout, dump.stderr
    folder = tmp_path / "a-folder.vmbc"
    folder.mkdir()
    p = run([app("graphrt-vm-asm"), str(good), "-o", str(folder)])
    assert p.returncode != 0 and "a-folder.vmbc" in p.stderr, p.stderr
    assert leftovers(tmp_path) == []


# ---- files handed to the wrong place are named, with what they look like ----
def test_graph_given_a_params_file(mlp):
    err = one_line_error(run([app("graphrt-run"), "deploy_lib.so", "--graph", "deploy_params.params",
                              "--random-inputs", "0"], cwd=mlp.dir), "graphrt-run")
    assert ("--graph expects a graph JSON (it starts with '{'), but this file looks like a params file (TVM's "
            "save_param_dict format); pass it with --params and the graph JSON with --graph") in err, err
    assert "deploy_params.params" in err, err


@pytest.mark.parametrize("prog", ["graphrt-inspect", "graphrt-run"])
def test_model_given_a_graph_json(mlp, prog):
    err = one_line_error(run([app(prog), "deploy_graph.json"], cwd=mlp.dir), prog)
    assert ("deploy_graph.json is a graph JSON (TVM's graph executor format), not a model library: load the model's "
            "kernels library (deploy_lib.so) and create a graph executor of this graph over it") in err, err
    assert err.endswith("(use --graph G.json)"), err


@pytest.mark.parametrize("prog", ["graphrt-inspect", "graphrt-run"])
def test_model_given_a_params_file_or_an_input(mlp, prog, tmp_path):
    err = one_line_error(run([app(prog), "deploy_params.params"], cwd=mlp.dir), prog)
    assert ("deploy_params.params is a params file (TVM's save_param_dict format), not a model library: load the "
            "model's kernels library (deploy_lib.so) and give this file as its graph executor's params") in err, err
    assert err.endswith("(use --params FILE.params)"), err
    err = one_line_error(run([app(prog), "input_data.npy"], cwd=mlp.dir), prog)
    assert "input_data.npy is an .npy array, not a model library: it holds a tensor" in err, err
    np.savez(tmp_path / "in.npz", data=np.zeros(3))
    err = one_line_error(run([app(prog), str(tmp_path / "in.npz")]), prog)
    assert "in.npz is a zip archive (.npz), not a model library" in err, err


def test_relax_executable_given_as_a_graph_library():
    from _cases import case_dir
    mlp_dir = case_dir("mlp")
    d = case_dir("relax/relax_mlp")
    err = one_line_error(run([app("graphrt-run"), os.path.join(d, "deploy_relax.so"), "--graph",
                              os.path.join(mlp_dir, "deploy_graph.json"), "--random-inputs", "0"]), "graphrt-run")
    assert "the graph's library is a Relax executable (relax.build's export)" in err, err
    assert "run it with a Relax VM" in err and "different exports" not in err, err


# ---- a system library through its unversioned name: still no --trust-exports offered ----
@pytest.mark.parametrize("path", ["/usr/lib/x86_64-linux-gnu/libz.so", "/lib/x86_64-linux-gnu/libz.so.1"])
def test_libz_is_not_offered_trust_exports(path):
    if not os.path.exists(path):
        pytest.skip("%s is absent" % path)
    err = one_line_error(run([app("graphrt-run"), path, "--random-inputs", "0"]), "graphrt-run")
    assert "not a TVM module" in err and "looks like a system library, not a model" in err, err
    assert "--trust-exports" not in err, err


# ---- a graph with another export's kernels library ----
def test_graph_and_library_from_different_exports(mlp):
    from _cases import case_dir
    other = case_dir("squeezenet1.1")
    with open(os.path.join(other, "deploy_graph.json")) as f:
        graph = json.load(f)
    def functions(graph):
        names = []
        for n in graph["nodes"]:
            name = n.get("attrs", {}).get("func_name")
            if n["op"] != "null" and name not in ("__nop", "__copy") and name not in names:
                names.append(name)
        return names
    wanted = functions(graph)
    with open(mlp.path("deploy_graph.json")) as f:
        has = set(functions(json.load(f)))  # what mlp's kernels library defines
    missing = [w for w in wanted if w not in has]
    assert len(missing) > len(wanted) / 2
    p = run([app("graphrt-run"), mlp.path("deploy_lib.so"), "--graph", os.path.join(other, "deploy_graph.json"),
             "--params", os.path.join(other, "deploy_params.params"), "--random-inputs", "0"])
    err = one_line_error(p, "graphrt-run")
    assert ("the graph and the library come from different exports: the library has %d of the %d functions the "
            "graph calls (missing: %s, ...); pass the kernels library exported together with this graph"
            % (len(wanted) - len(missing), len(wanted), ", ".join(missing[:3]))) in err, err
    assert "did you mean" not in err, err


# ---- a kernel that fails without a message, in a graph run twice ----
def test_graph_kernel_failing_without_a_message(tmp_path):
    from _not_tvm import add_one_graph, build_add_one
    lib = build_add_one(tmp_path)
    graph = json.loads(add_one_graph(3))
    graph["attrs"]["shape"][1][1] = [4]  # the output's shape differs from the input's: add_one returns -1
    (tmp_path / "graph.json").write_text(json.dumps(graph))
    args = [app("graphrt-run"), lib, "--graph", "graph.json", "--random-inputs", "0", "--trust-exports"]
    for extra in ([], ["--repeat", "2", "--warmup", "0"]):
        err = one_line_error(run(args + extra, cwd=tmp_path), "graphrt-run")
        assert err == ("graphrt-run: error: node 1 'add_one' (add_one) failed: kernel 'add_one' failed without a "
                       "message (it returned non-zero without calling TVMAPISetLastError) [node: add_one, "
                       "symbol: add_one]"), err
