"""Hostile input, round 3: sub-byte and bool dtypes, graph JSON that lies, special files, cheap
programs with expensive effects, ambiguous .npy headers, errors that name nothing, and import
trees TVM writes. Each refusal is one line naming the file and the field, exit 1, within seconds."""
import gzip
import io
import json
import os
import stat
import subprocess
import tarfile

import numpy as np
import pytest

import _tvm_files as tf
from _apps import app, one_line_error

HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS = os.path.join(HERE, "hostile", "kernels.c")
LIMIT_S = 10


def run(args, **kw):
    """An app run that must end within LIMIT_S seconds (a hang fails the test)."""
    return subprocess.run(args, capture_output=True, text=True, timeout=LIMIT_S, **kw)


def error_line(p, prog="graphrt-run"):
    line = one_line_error(p, prog)
    assert p.returncode == 1, (p.returncode, line)
    return line


@pytest.fixture(scope="module")
def kernels_so(tmp_path_factory):
    out = tmp_path_factory.mktemp("kernels") / "kernels.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-DTVM_CONTEXT_SLOT", "-o", str(out), KERNELS], check=True)
    return str(out)


def binary_graph(func, dtype, n):
    """x, p -> func(x, p): two inputs (p a param), one output."""
    nodes = [{"op": "null", "name": "x", "inputs": []}, {"op": "null", "name": "p", "inputs": []},
             {"op": "tvm_op", "name": func, "inputs": [[0, 0, 0], [1, 0, 0]],
              "attrs": {"func_name": func, "num_inputs": "2", "num_outputs": "1", "flatten_data": "0"}}]
    return {"nodes": nodes, "arg_nodes": [0, 1], "heads": [[2, 0, 0]], "node_row_ptr": [0, 1, 2, 3],
            "attrs": {"dltype": ["list_str", [dtype] * 3], "shape": ["list_shape", [[n]] * 3],
                      "storage_id": ["list_int", [0, 1, 2]]}}


def inc_graph(n=6):
    """x -> reshape (__nop) -> f32_inc: a graph whose alias node the crafted cases bend."""
    nodes = [{"op": "null", "name": "x", "inputs": []},
             {"op": "tvm_op", "name": "reshape_nop", "inputs": [[0, 0, 0]],
              "attrs": {"func_name": "__nop", "num_inputs": "1", "num_outputs": "1", "flatten_data": "0"}},
             {"op": "tvm_op", "name": "inc", "inputs": [[1, 0, 0]],
              "attrs": {"func_name": "f32_inc", "num_inputs": "1", "num_outputs": "1", "flatten_data": "0"}}]
    return {"nodes": nodes, "arg_nodes": [0], "heads": [[2, 0, 0]], "node_row_ptr": [0, 1, 2, 3],
            "attrs": {"dltype": ["list_str", ["float32"] * 3], "shape": ["list_shape", [[1, n], [n, 1], [n, 1]]],
                      "storage_id": ["list_int", [0, 0, 1]]}}


def write(path, data):
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    return str(path)


# ---- 1. sub-byte and bool dtypes: TVM's sizes, bit-exact against numpy ----
SUB_BYTE = {
    "bool": ("bool_xor", lambda rng, n: rng.random(n) < 0.5, lambda x, p: np.logical_xor(x, p)),
    "int4": ("int4_add", lambda rng, n: rng.integers(-8, 8, n).astype(np.int8),
             lambda x, p: np.clip(x.astype(np.int16) + p, -8, 7).astype(np.int8)),
    "int1": ("int4_add", lambda rng, n: rng.integers(-1, 1, n).astype(np.int8),
             lambda x, p: np.clip(x.astype(np.int16) + p, -8, 7).astype(np.int8)),
}


def sub_byte_model(tmp_path, dtype, n=1000):
    func, make, ref = SUB_BYTE[dtype]
    rng = np.random.default_rng(7)
    x, p = make(rng, n), make(rng, n)
    graph = write(tmp_path / "g.json", json.dumps(binary_graph(func, dtype, n)))
    params = write(tmp_path / "p.params", tf.params_file([("p", tf.ndarray_record(p, dtype))]))
    so = tmp_path / "model.so"
    r = run([app("graphrt-pack"), "-o", str(so), "--graph", graph, "--params", params, KERNELS])
    assert r.returncode == 0, r.stderr
    np.save(tmp_path / "x.npy", x)
    return str(so), graph, params, str(tmp_path / "x.npy"), ref(x, p)


@pytest.mark.parametrize("dtype", ["bool", "int4", "int1"])
def test_sub_byte_model_runs_bit_exact_through_the_cli(tmp_path, dtype):
    so, _, _, x, expected = sub_byte_model(tmp_path, dtype)
    out = tmp_path / "out"
    p = run([app("graphrt-run"), so, "--input", "x=" + x, "--output-dir", str(out)])
    assert p.returncode == 0, p.stderr
    got = np.load(out / "output_0.npy")
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert np.array_equal(got, expected)


@pytest.mark.parametrize("dtype", ["bool", "int4"])
def test_sub_byte_model_three_file_form_bit_exact(tmp_path, kernels_so, dtype):
    _, graph, params, x, expected = sub_byte_model(tmp_path, dtype)
    out = tmp_path / "out"
    p = run([app("graphrt-run"), kernels_so, "--graph", graph, "--params", params, "--input", "x=" + x,
             "--output-dir", str(out)])
    assert p.returncode == 0, p.stderr
    assert np.array_equal(np.load(out / "output_0.npy"), expected)


def test_bool_npy_round_trips_as_numpy_bool(tmp_path):
    so, _, _, x, expected = sub_byte_model(tmp_path, "bool")
    out = tmp_path / "out"
    assert run([app("graphrt-run"), so, "--input", "x=" + x, "--output-dir", str(out)]).returncode == 0
    raw = (out / "output_0.npy").read_bytes()
    assert b"'descr': '|b1'" in raw
    again = tmp_path / "again"
    # the written output is accepted back as a bool input
    p = run([app("graphrt-run"), so, "--input", "x=%s" % (out / "output_0.npy"), "--output-dir", str(again)])
    assert p.returncode == 0, p.stderr
    assert np.load(again / "output_0.npy").dtype == np.bool_


@pytest.mark.parametrize("dtype", ["bool", "int4", "uint4", "int1"])
def test_sub_byte_params_load_in_python(tmp_path, dtype):
    import graphrt
    stored = ((np.arange(12) % 2) if dtype in ("bool", "int1") else (np.arange(12) % 8)).astype(tf.DTYPES[dtype][2])
    blob = tf.params_file([("w", tf.ndarray_record(stored, dtype))])
    params = graphrt.load_param_dict(blob)
    assert str(params["w"].dtype) == dtype
    assert np.array_equal(params["w"].numpy(), stored.astype(params["w"].numpy().dtype))


@pytest.mark.parametrize("bits", [3, 12])
def test_dtype_bits_not_a_power_of_two_refused_by_name(tmp_path, kernels_so, bits):
    rec = tf.ndarray_record(np.zeros(4, np.int8), None, code_bits=(0, bits), data_bytes=4 * ((bits + 7) // 8))
    params = write(tmp_path / "p.params", tf.params_file([("p", rec)]))
    graph = write(tmp_path / "g.json", json.dumps(binary_graph("int4_add", "int8", 4)))
    line = error_line(run([app("graphrt-run"), kernels_so, "--graph", graph, "--params", params,
                           "--random-inputs", "0"]))
    assert "int%d" % bits in line and "not a power of two" in line and "p.params" in line and "param: p" in line


def test_bool_graph_input_from_python_bit_exact(tmp_path):
    import graphrt
    from graphrt.contrib import graph_executor
    so, _, _, x, expected = sub_byte_model(tmp_path, "bool")
    lib = graphrt.runtime.load_module(so)
    m = graph_executor.GraphModule(lib["default"](graphrt.cpu()))
    m.set_input("x", np.load(x))
    m.run()
    assert np.array_equal(m.get_output(0).numpy(), expected)


# ---- 2. graph JSON that lies ----
def run_graph(tmp_path, kernels_so, graph):
    path = write(tmp_path / "lie.json", json.dumps(graph))
    np.save(tmp_path / "x.npy", np.arange(6, dtype=np.float32).reshape(1, 6))
    return run([app("graphrt-run"), kernels_so, "--graph", path, "--input", "x=%s" % (tmp_path / "x.npy"),
                "--output-dir", str(tmp_path / "out")])


def test_honest_alias_graph_runs(tmp_path, kernels_so):
    p = run_graph(tmp_path, kernels_so, inc_graph())
    assert p.returncode == 0, p.stderr
    assert np.array_equal(np.load(tmp_path / "out" / "output_0.npy"),
                          (np.arange(6, dtype=np.float32) + 1).reshape(6, 1))


@pytest.mark.parametrize("lie,words", [
    (lambda g: g["attrs"]["dltype"][1].__setitem__(1, "int32"), ["output dtype int32", "attribute: dltype"]),
    (lambda g: g["attrs"]["shape"][1].__setitem__(1, [10000, 1]), ["output shape (10000, 1) but its input has (1, 6)", "attribute: shape"]),
    (lambda g: g["attrs"]["storage_id"][1].__setitem__(1, 1), ["output storage_id 1", "attribute: storage_id"]),
])
def test_alias_that_lies_is_refused_naming_node_and_attribute(tmp_path, kernels_so, lie, words):
    g = inc_graph()
    lie(g)
    if "storage_id" in words[-1]:
        g["attrs"]["storage_id"][1][2] = 2
    line = error_line(run_graph(tmp_path, kernels_so, g))
    assert "__nop" in line and "reshape_nop" in line and "node: 1" in line, line
    for w in words:
        assert w in line, line


def test_input_node_missing_from_arg_nodes_is_refused(tmp_path, kernels_so):
    g = inc_graph()
    g["arg_nodes"] = []
    line = error_line(run_graph(tmp_path, kernels_so, g))
    assert "arg_nodes does not list it" in line and "node: 0 (x)" in line, line


def test_huge_storage_id_costs_only_what_is_used(tmp_path, kernels_so):
    g = inc_graph()
    g["attrs"]["storage_id"][1] = [2**40, 2**40, 2**62]
    p = run_graph(tmp_path, kernels_so, g)
    assert p.returncode == 0, p.stderr
    assert np.array_equal(np.load(tmp_path / "out" / "output_0.npy"),
                          (np.arange(6, dtype=np.float32) + 1).reshape(6, 1))


# ---- 3. special files anywhere a path is taken ----
@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "fifo"
    os.mkfifo(path)
    return str(path)


def test_fifo_as_model_is_refused(fifo):
    line = error_line(run([app("graphrt-run"), fifo, "--random-inputs", "0"]))
    assert "is a FIFO, not a regular file" in line and "file: " + fifo in line, line


@pytest.mark.parametrize("loader", ["dlopen", "elf"])
def test_fifo_as_model_with_each_loader(fifo, loader):
    line = error_line(run([app("graphrt-run"), fifo, "--loader", loader, "--random-inputs", "0"]))
    assert "FIFO" in line and fifo in line, line


@pytest.mark.parametrize("special", ["fifo", "/dev/zero", "dir"])
def test_special_file_as_input_is_refused(tmp_path, kernels_so, special, request):
    path = {"fifo": lambda: request.getfixturevalue("fifo"), "/dev/zero": lambda: "/dev/zero",
            "dir": lambda: str(tmp_path)}[special]()
    graph = write(tmp_path / "g.json", json.dumps(inc_graph()))
    line = error_line(run([app("graphrt-run"), kernels_so, "--graph", graph, "--input", "x=" + path]))
    kind = {"fifo": "a FIFO", "/dev/zero": "a character device", "dir": "a directory"}[special]
    assert ".npy file is %s, not a regular file" % kind in line and "file: " + path in line, line


@pytest.mark.parametrize("flag", ["--graph", "--params"])
def test_fifo_as_graph_or_params_is_refused(kernels_so, fifo, flag, tmp_path):
    args = ["--graph", fifo] if flag == "--graph" else ["--graph", write(tmp_path / "g.json", json.dumps(inc_graph())),
                                                      "--params", fifo]
    line = error_line(run([app("graphrt-run"), kernels_so] + args + ["--random-inputs", "0"]))
    assert "FIFO" in line and fifo in line, line


def test_dev_zero_as_vm_assembler_source_is_refused(tmp_path):
    p = run([app("graphrt-vm-asm"), "/dev/zero", "-o", str(tmp_path / "x.vmbc")])
    assert p.returncode == 1 and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert p.stderr.startswith("graphrt-vm-asm: error: input is a character device, not a regular file [file: /dev/zero]")
    assert not (tmp_path / "x.vmbc").exists()


def test_fifo_as_vm_module_is_refused(tmp_path):
    path = tmp_path / "m.vmasm"
    os.mkfifo(path)
    line = error_line(run([app("graphrt-vm-run"), "--module=%s" % path, "--function=main"]), "graphrt-vm-run")
    assert "FIFO" in line and str(path) in line, line


def test_python_refuses_special_files(fifo, tmp_path):
    import graphrt
    with pytest.raises(Exception) as e:
        graphrt.runtime.load_module(fifo)
    assert "FIFO" in str(e.value) and fifo in str(e.value)
    from graphrt import params as gparams
    with pytest.raises(Exception) as e:
        gparams.load_param_dict_from_file(fifo)
    assert "FIFO" in str(e.value) and fifo in str(e.value)
    with pytest.raises(Exception) as e:
        gparams.load_param_dict_from_file(str(tmp_path))
    assert "directory" in str(e.value)


# ---- 4. cheap programs, expensive effects ----
def vm_program(tmp_path, body, sig="0_i"):
    path = tmp_path / "p.vmasm"
    path.write_text("module bomb version 1\nfunc main \"%s\" export\nentry:\n%s\nend\n" % (sig, body))
    return str(path)


def test_vm_total_memory_limit_stops_many_large_buffers(tmp_path):
    prog = vm_program(tmp_path, "  const.i64 %I0, 1073741824\n  buffer.alloc %r0, %I0\n  buffer.alloc %r1, %I0\n"
                                "  const.i32 %i0, 0\n  ret %i0")
    line = error_line(run([app("graphrt-vm-run"), "--module=" + prog, "--function=main"]), "graphrt-vm-run")
    assert "memory" in line and "limit" in line, line


def test_vm_memory_limit_is_configurable(tmp_path):
    prog = vm_program(tmp_path, "  const.i64 %I0, 1048576\n  buffer.alloc %r0, %I0\n  const.i32 %i0, 7\n  ret %i0")
    assert run([app("graphrt-vm-run"), "--module=" + prog, "--function=main"]).returncode == 0
    line = error_line(run([app("graphrt-vm-run"), "--module=" + prog, "--function=main", "--memory-limit=65536"]),
                      "graphrt-vm-run")
    assert "65536-byte limit" in line, line
    env = dict(os.environ, GRAPHRT_VM_MEMORY_LIMIT="65536")
    line = error_line(run([app("graphrt-vm-run"), "--module=" + prog, "--function=main"], env=env), "graphrt-vm-run")
    assert "65536-byte limit" in line, line


def test_vm_budget_charges_bulk_fills_by_bytes(tmp_path):
    body = ("  const.i64 %I0, 268435456\n  const.i64 %I1, 0\n  const.i32 %i0, 1\n  buffer.alloc %r0, %I0\n"
            "  br loop\nloop:\n  buffer.fill.i8 %r0, %I1, %I0, %i0\n  br loop")
    prog = vm_program(tmp_path, body)
    line = error_line(run([app("graphrt-vm-run"), "--module=" + prog, "--function=main"]), "graphrt-vm-run")
    assert "budget exhausted" in line, line


def _gzip_tar_member(tmp_path, name, size):
    """A .tar.gz holding one member of `size` zero bytes, streamed (never held whole)."""
    path = tmp_path / "bomb.tar.gz"
    with gzip.open(path, "wb", compresslevel=1) as gz, tarfile.open(fileobj=gz, mode="w") as tar:
        info = tarfile.TarInfo(name)
        info.size = size

        class Zeros(io.RawIOBase):
            left = size

            def readable(self):
                return True

            def readinto(self, b):
                n = min(len(b), self.left)
                b[:n] = bytes(n)
                self.left -= n
                return n
        tar.addfile(info, io.BufferedReader(Zeros(), 1 << 20))
    return str(path)


def test_gzip_bomb_export_is_refused_before_it_inflates(tmp_path):
    bomb = _gzip_tar_member(tmp_path, "lib0.o", 300 << 20)
    assert os.path.getsize(bomb) < 2 << 20
    line = error_line(run([app("graphrt-run"), bomb, "--random-inputs", "0"]))
    assert "graphrt inflates" in line and bomb in line, line


# ---- 5. headers that mean two things ----
@pytest.mark.parametrize("header,words", [
    ("{'descr': '<f4', 'descr': '<i4', 'fortran_order': False, 'shape': (1, 6), }", "appears twice"),
    ("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 6), 'extra': 1, }", "unexpected key 'extra'"),
    ("{'descr': '<f4', 'fortran_order': False, }", "no 'shape' key"),
    ("{'descr': '<f4', 'fortran_order': 0, 'shape': (1, 6), }", "not True or False"),
    ("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 6), } junk", "text after the header dict"),
])
def test_ambiguous_npy_header_is_refused(tmp_path, kernels_so, header, words):
    npy = write(tmp_path / "x.npy", tf.npy_bytes(header, np.zeros(6, np.float32).tobytes()))
    graph = write(tmp_path / "g.json", json.dumps(inc_graph()))
    line = error_line(run([app("graphrt-run"), kernels_so, "--graph", graph, "--input", "x=" + npy]))
    assert "bad .npy header" in line and words in line and "x.npy" in line, line


def test_numpy_written_npy_still_reads(tmp_path, kernels_so):
    np.save(tmp_path / "x.npy", np.arange(6, dtype=np.float32).reshape(1, 6))
    graph = write(tmp_path / "g.json", json.dumps(inc_graph()))
    p = run([app("graphrt-run"), kernels_so, "--graph", graph, "--input", "x=%s" % (tmp_path / "x.npy"),
             "--output-dir", str(tmp_path / "o")])
    assert p.returncode == 0, p.stderr


# ---- 6 and 7: module blobs ----
def blob_so(tmp_path, blob, name="crafted.so"):
    src = write(tmp_path / (name + ".c"), tf.blob_c_source(blob))
    so = tmp_path / name
    subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-o", str(so), src, KERNELS], check=True)
    return str(so)


def factory_record(n=6):
    return ("GraphExecutorFactory", tf.factory_payload(json.dumps(inc_graph(n)), []))


def test_factory_without_imports_names_the_file_and_the_import_tree(tmp_path):
    so = blob_so(tmp_path, tf.module_blob([factory_record(), ("_lib", b"")], [0, 0, 0], []))
    line = error_line(run([app("graphrt-run"), so, "--random-inputs", "0"]))
    assert "no library module" in line and "_import_tree" in line and so in line, line


def test_import_tree_with_a_shared_module_numbered_first_loads(tmp_path):
    # TVM numbers depth-first: root 0 imports 2 (_lib) and 1 (a factory kept for its functions),
    # and 1 imports 2 as well; child 1 < parent 2 is never a problem, only cycles are.
    blob = tf.module_blob([factory_record(), factory_record(), ("_lib", b"")], [0, 2, 3, 3], [2, 1, 2])
    so = blob_so(tmp_path, blob)
    np.save(tmp_path / "x.npy", np.arange(6, dtype=np.float32).reshape(1, 6))
    p = run([app("graphrt-run"), so, "--input", "x=%s" % (tmp_path / "x.npy"), "--output-dir", str(tmp_path / "o")])
    assert p.returncode == 0, p.stderr
    assert np.array_equal(np.load(tmp_path / "o" / "output_0.npy"), (np.arange(6, dtype=np.float32) + 1).reshape(6, 1))


def test_import_tree_child_before_parent_loads(tmp_path):
    # _lib first, the factory second and importing it: a DAG TVM can write
    blob = tf.module_blob([("_lib", b""), factory_record()], [0, 0, 1], [0])
    p = run([app("graphrt-inspect"), blob_so(tmp_path, blob)])
    assert p.returncode == 0, p.stderr


@pytest.mark.parametrize("row_ptr,children,words", [
    ([0, 1, 2], [1, 0], "imports itself through a cycle"),
    ([0, 1, 1], [0], "imports itself"),
])
def test_import_cycles_are_refused_by_name(tmp_path, row_ptr, children, words):
    blob = tf.module_blob([factory_record(), ("_lib", b"")], row_ptr, children)
    line = error_line(run([app("graphrt-run"), blob_so(tmp_path, blob), "--random-inputs", "0"]))
    assert words in line and "_import_tree" in line and "GraphExecutorFactory" in line, line


def test_stacked_diamonds_load_in_linear_time(tmp_path):
    # 40 layers of diamonds: a walk that visits a shared module once per path would take 2^40 steps
    layers = 40
    records = [factory_record()]
    rows = [[1, 2]]
    for i in range(layers):
        a, b = 1 + 2 * i, 2 + 2 * i
        nxt = [3 + 2 * i, 4 + 2 * i] if i + 1 < layers else [1 + 2 * layers]
        records += [factory_record(), factory_record()]
        rows += [nxt, nxt]
    records.append(("_lib", b""))
    rows.append([])
    row_ptr, children = [0], []
    for r in rows:
        children += r
        row_ptr.append(len(children))
    so = blob_so(tmp_path, tf.module_blob(records, row_ptr, children))
    p = run([app("graphrt-inspect"), so])
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("(listed above)") >= layers
    p = run([app("graphrt-run"), so, "--random-inputs", "0"])
    assert p.returncode == 0, p.stderr
