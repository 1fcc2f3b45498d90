"""TVM v0.22+ exports (the tvm-ffi ABI; fixtures/relax-ffi, made by TVM v0.26): TVM v0.26 user code
runs unchanged under graphrt's TVM shim (tvm.runtime.load_module, tvm.runtime.vm.VirtualMachine,
tvm.relax.VirtualMachine, tvm.runtime.tensor, Tensor.numpy(), the tvm_ffi names), every CPU case and
input set bit-exact; corrupt files end in one error naming the field."""
import json
import os
import struct
import subprocess
import sys

import numpy as np
import pytest

import graphrt
from _relax_cases import FFI_PREFIX, RelaxCase, relax_case_names

PYTHON_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "python")
FFI_CASES = [n for n in relax_case_names() if n.startswith(FFI_PREFIX)] or ["ffi_fixtures_missing"]


def _flatten(result):
    if isinstance(result, graphrt.NDArray):
        return [result.numpy()]
    return [a for item in result for a in _flatten(item)]


# What the fixtures README shows TVM v0.26 users writing, word for word but for the paths.
V026_USER_CODE = """
import json, sys
import numpy as np
import graphrt; graphrt.install_as_tvm()
import tvm
import tvm_ffi
from tvm.runtime import vm as relax_vm
case_dir = sys.argv[1]
case = json.load(open(case_dir + "/case.json"))
order = case.get("input_order") or list(case["inputs"])
lib = tvm.runtime.load_module(case_dir + "/deploy_relax.so")
vm = relax_vm.VirtualMachine(lib, tvm.cpu())
suffixes = [s.get("suffix", "") for s in case.get("input_sets", [])] or [""]
for suffix in suffixes:
    out = vm[case.get("entry", "main")](*[tvm.runtime.tensor(np.load(f"{case_dir}/input_{k}{suffix}.npy"), tvm.cpu())
                                         for k in order])
    flat, todo = [], [out]
    while todo:
        v = todo.pop(0)
        if isinstance(v, tvm.runtime.Tensor):
            flat.append(v.numpy())
        else:
            todo = list(v) + todo
    for i, got in enumerate(flat):
        expected = np.load(f"{case_dir}/output_{i}{suffix}.npy")
        assert got.dtype == expected.dtype and got.tobytes() == expected.tobytes(), (suffix, i)
    print("ok", suffix or "-", len(flat))
"""


@pytest.mark.parametrize("name", FFI_CASES)
def test_tvm_v026_user_code_runs_unchanged(lib_ok, name):
    case = RelaxCase(name)
    p = subprocess.run([sys.executable, "-c", V026_USER_CODE, case.dir], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, PYTHONPATH=PYTHON_DIR))
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("ok ") == len(case.input_sets()), p.stdout


@pytest.mark.parametrize("name", FFI_CASES)
def test_relax_virtual_machine_with_tensors_every_input_set(lib_ok, name):
    tvm = graphrt
    case = RelaxCase(name)
    vm = tvm.relax.VirtualMachine(tvm.runtime.load_module(case.path("deploy_relax.so")), tvm.cpu())
    for _, inputs, outputs in case.input_sets():
        got = _flatten(vm[case.entry](*[tvm.runtime.tensor(np.load(inputs[k])) for k in case.input_order]))
        assert len(got) == len(outputs)
        for g, path in zip(got, outputs):
            assert g.tobytes() == np.load(path).tobytes(), path


def test_tvm_ffi_names_dlpack_and_global_functions(lib_ok):
    from graphrt import tvm_ffi
    case = RelaxCase("ffi_relax_mlp")
    x = np.load(case.path("input_x.npy"))
    t = tvm_ffi.from_dlpack(x)  # shares x's memory
    assert isinstance(t, tvm_ffi.Tensor) and t.numpy().tobytes() == x.tobytes()
    vm = graphrt.relax.VirtualMachine(tvm_ffi.load_module(case.path("deploy_relax.so")), tvm_ffi.cpu())
    out = vm["main"](t)
    assert out.numpy().tobytes() == np.load(case.path("output_0.npy")).tobytes()
    back = np.from_dlpack(out)
    assert back.tobytes() == np.load(case.path("output_0.npy")).tobytes()

    @tvm_ffi.register_global_func("test.ffi.twice", override=True)
    def twice(v):
        return v * 2
    assert tvm_ffi.get_global_func("test.ffi.twice")(21) == 42


def test_kernels_are_the_libraries_ffi_functions(lib_ok):
    case = RelaxCase("ffi_relax_mlp")
    lib = graphrt.load_module(case.path("deploy_relax.so"))
    kernels = lib.imported_modules[0]
    assert kernels.type_key == "library"
    # A kernel is found by its plain name (the symbol is __tvm_ffi_<name>)...
    assert kernels.get_function("softmax") is not None
    assert "softmax" in kernels.get_function_names() if hasattr(kernels, "get_function_names") else True
    # ...and never as a name the library only reaches through its dependencies (libc), nor as its
    # prefixed symbol or tvm-ffi's data.
    for name in ("exit", "abort", "__tvm_ffi_softmax", "_library_bin", "_library_ctx"):
        with pytest.raises(graphrt.FunctionNotFoundError):
            kernels.get_function(name)


def _blob_offset(data):
    """File offset of __tvm_ffi__library_bin's bytes (the size prefix)."""
    marker = struct.pack("<Q", len(b"relax.VMExecutable")) + b"relax.VMExecutable"
    at = data.find(marker)
    assert at > 0
    # Back over the import tree: u64 size, u64 n + n rows, u64 m + m children.
    for start in range(at - 8, 0, -8):
        size = struct.unpack_from("<Q", data, start)[0]
        if 0 < size < len(data) and start + 8 + size <= len(data):
            p = start + 8
            n = struct.unpack_from("<Q", data, p)[0]
            if n > 8:
                continue
            p += 8 + 8 * n
            m = struct.unpack_from("<Q", data, p)[0]
            if m <= 8 and p + 8 + 8 * m == at:
                return start
    raise AssertionError("blob not found")


@pytest.mark.parametrize("field,mutate", [
    ("magic", lambda d, exe: struct.pack_into("<Q", d, exe, 0x1234)),
    ("version", lambda d, exe: d.__setitem__(slice(exe + 16, exe + 20), b"9.99")),
    ("constant tag", None),
    ("import tree", lambda d, exe: None),
])
def test_corrupt_v026_files_end_in_one_error_naming_the_field(lib_ok, tmp_path, field, mutate):
    case = RelaxCase("ffi_relax_mlp")
    data = bytearray(open(case.path("deploy_relax.so"), "rb").read())
    blob = _blob_offset(data)
    name_at = data.find(b"relax.VMExecutable", blob)
    exe = name_at + len(b"relax.VMExecutable") + 8  # the executable's magic
    if field == "constant tag":
        # The first constant (a DataType, tag 5) follows the function table and the empty scope section.
        tag_at = data.find(struct.pack("<iBBH", 5, 2, 32, 1), exe)
        assert tag_at > 0
        struct.pack_into("<i", data, tag_at, 4)  # v0.20's Int tag: no tvm-ffi type index of a constant
    elif field == "import tree":
        struct.pack_into("<Q", data, blob + 8, 99)  # 99 row pointers
    else:
        mutate(data, exe)
    path = tmp_path / "deploy_relax.so"
    path.write_bytes(bytes(data))
    with pytest.raises(graphrt.GraphrtError) as e:
        graphrt.relax.VirtualMachine(graphrt.load_module(str(path)), graphrt.cpu())
    message = str(e.value)
    assert str(path) in message, message
    assert {"magic": "magic", "version": "version", "constant tag": "constant tag",
            "import tree": "import tree"}[field] in message, message


@pytest.mark.parametrize("loader", [None, "elf"])
def test_a_tvm_v021_export_is_refused_by_name(lib_ok, tmp_path, loader):
    # TVM v0.21's transitional in-tree FFI wrote __tvm_ffi_library_bin (one underscore), with an
    # object layout of that release only: refused saying so, whichever loader reads it.
    import shutil
    if shutil.which("cc") is None:
        pytest.skip("no C compiler (cc)")
    src = tmp_path / "v021.c"
    src.write_text("const char __tvm_ffi_library_bin[16] = {0};\n"
                   "int __tvm_ffi_add(void* s, const void* a, int n, void* r) { return 0; }\n")
    so = tmp_path / "v021.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(so), str(src)], check=True, capture_output=True)
    with pytest.raises(graphrt.UnsupportedError) as e:
        graphrt.load_module(str(so), loader=loader) if loader else graphrt.load_module(str(so))
    message = str(e.value)
    assert "TVM v0.21" in message and "__tvm_ffi_library_bin" in message and str(so) in message, message
