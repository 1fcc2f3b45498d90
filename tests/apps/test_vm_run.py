"""graphrt-vm-run: modules, inputs, results, outputs, budget, interrupt, trace, benchmark."""
import os
import signal
import struct
import subprocess
import time

import pytest

from _apps import app
from _vm_programs import ADD, SPIN, f32_loop

PROGRAM = """
module demo version 1
import tensor.numel "0r_I"
import tensor.get_f32 "0rI_f"
global i32 calls
func __init "0v" export
  const.i32 %i0, 100
  global.store.i32 @calls, %i0
  ret
end
""" + ADD + """func count "0_i" export
  global.load.i32 %i0, @calls
  const.i32 %i1, 1
  add.i32 %i0, %i0, %i1
  global.store.i32 @calls, %i0
  ret %i0
end
""" + f32_loop("sum", "0r_f", "  const.f32 %f0, 0\n", "  add.f32 %f0, %f0, %f1\n", "%f0") + """func ident "0r_r" export
  ret %r0
end
func two "0fF_Ff" export
  ext.f32.f64 %F1, %f0
  trunc.f64.f32 %f1, %F0
  ret %F1, %f1
end
func nest "0i_rf" export
  const.i32 %i1, 2
  list.alloc %r0, %i1
  list.resize %r0, %i1
  list.alloc %r1, %i1
  const.i32 %i2, 1
  list.resize %r1, %i2
  const.i32 %i3, 0
  list.set.i32 %r1, %i3, %i0
  list.set.ref %r0, %i3, %r1
  const.f64 %F0, 2.5
  list.set.f64 %r0, %i2, %F0
  const.f32 %f0, 0.25
  ret %r0, %f0
end
""" + SPIN


@pytest.fixture
def demo(tmp_path):
    path = tmp_path / "demo.vmasm"
    path.write_text(PROGRAM)
    return str(path)


def run(*args, env=None, check=True):
    p = subprocess.run([app("graphrt-vm-run")] + list(args), capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, **(env or {})))
    if check:
        assert p.returncode == 0, p.stderr
    return p


def write_npy_f32(path, shape, values):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % "".join("%d," % d for d in shape)
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%df" % len(values), *values))


def read_npy_f32(path):
    data = open(path, "rb").read()
    assert data[:6] == b"\x93NUMPY"
    (hlen,) = struct.unpack("<H", data[8:10])
    header = data[10:10 + hlen].decode()
    body = data[10 + hlen:]
    return header, list(struct.unpack("<%df" % (len(body) // 4), body))


def test_scalars_in_and_out(demo):
    p = run("--module=" + demo, "--function=add", "--input=i32=5", "--input=37")
    assert p.stdout == "EXEC @demo.add\nresult[0]: i32=42\n"
    p = run("--module", demo, "--function", "demo.two", "--input=f32=1.5", "--input=f64=-2.25")
    assert p.stdout.splitlines()[1:] == ["result[0]: f64=1.5", "result[1]: f32=-2.25"]


def test_tensor_inputs_results_and_npy_files(demo, tmp_path):
    assert run("--module=" + demo, "--function=sum", "--input=2x3xf32=1,2,3,4,5,6").stdout.endswith("f32=21\n")
    p = run("--module=" + demo, "--function=ident", "--input=2x3xf32=1,2,3,4,5,6")
    assert p.stdout.splitlines()[1:] == ["result[0]: vm.tensor", "2x3xf32=[1 2 3][4 5 6]"]
    assert run("--module=" + demo, "--function=ident", "--input=4xi32=7").stdout.endswith("4xi32=7 7 7 7\n")
    src = str(tmp_path / "in.npy")
    write_npy_f32(src, (2, 2), [0.5, 1.5, 2.5, 3.5])
    out = str(tmp_path / "out.npy")
    p = run("--module=" + demo, "--function=ident", "--input=@" + src, "--output=@" + out)
    assert "result[0]: written to " + out in p.stdout
    header, values = read_npy_f32(out)
    assert "'shape': (2, 2)" in header and values == [0.5, 1.5, 2.5, 3.5]
    assert run("--module=" + demo, "--function=sum", "--input=@" + src).stdout.endswith("f32=8\n")


def test_bytecode_file_and_init_globals(demo, tmp_path):
    vmbc = str(tmp_path / "demo.vmbc")
    subprocess.run([app("graphrt-vm-asm"), demo, "-o", vmbc], check=True)
    assert run("--module=" + vmbc, "--function=count").stdout.endswith("result[0]: i32=101\n")


def test_budget_flag_and_environment(demo):
    p = run("--module=" + demo, "--function=spin", "--budget=5000", check=False)
    assert p.returncode == 1
    assert "instruction budget exhausted (5000" in p.stderr and "function: spin" in p.stderr
    p = run("--module=" + demo, "--function=spin", env={"GRAPHRT_VM_BUDGET": "777"}, check=False)
    assert p.returncode == 1 and "(777 branches" in p.stderr
    p = run("--module=" + demo, "--function=spin", env={"GRAPHRT_VM_BUDGET": "lots"}, check=False)
    assert p.returncode == 1 and "GRAPHRT_VM_BUDGET" in p.stderr
    # the default budget stops a runaway loop on its own
    p = run("--module=" + demo, "--function=spin", check=False)
    assert p.returncode == 1 and "(100000000 branches" in p.stderr


def test_ctrl_c_interrupts_the_call(demo):
    p = subprocess.Popen([app("graphrt-vm-run"), "--module=" + demo, "--function=spin", "--budget=999999999999"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 1, (out, err)
    assert "VM invocation interrupted" in err and "function: spin" in err


def test_trace_and_benchmark(demo):
    p = run("--module=" + demo, "--function=add", "--input=1", "--input=2", "--trace", "--benchmark=3")
    assert "[trace] demo.add@1: add.i32 %i2, %i0, %i1" in p.stderr
    assert p.stderr.count("add.i32") == 1  # only the first call is traced
    assert "benchmark: 3 runs" in p.stdout


def test_usage_and_load_errors(demo, tmp_path):
    p = run("--module=" + demo, check=False)
    assert p.returncode == 2 and "demo.add(0ii_i)" in p.stderr
    p = run("--module=" + demo, "--function=add", "--input=1", check=False)
    assert p.returncode == 2 and "takes 2 inputs" in p.stderr
    p = run("--module=" + demo, "--function=sum", "--input=2x2xf32=1,2,3", check=False)
    assert p.returncode == 2 and "3 values for 4 elements" in p.stderr
    bad = tmp_path / "bad.vmasm"
    bad.write_text("module bad\nfunc f \"0_i\"\n  ret %i0\n  ret %i0\nend\n")
    p = run("--module=" + str(bad), "--function=f", check=False)
    assert p.returncode == 1 and str(bad) in p.stderr and "function: f" in p.stderr
    p = run("--module=" + demo, "--function=nope", check=False)
    assert p.returncode == 1 and "demo.nope" in p.stderr


def test_dynamic_modules_linked_in_order(tmp_path):
    sample = os.environ.get("GRAPHRT_VM_SAMPLE_MODULE")
    if not sample or not os.path.isfile(sample):
        pytest.skip("vm_dynamic_sample.so not given (GRAPHRT_VM_SAMPLE_MODULE)")
    user = tmp_path / "user.vmasm"
    user.write_text('module user version 1\ndependency sample 2\nimport sample.scaled_add "0ii_i"\n'
                    'func run "0ii_i" export\n  call @sample.scaled_add(%i0, %i1) -> (%i2)\n  ret %i2\nend\n')
    p = run("--module=%s@sample_create?scale=%%33&offset=10" % sample, "--module=" + str(user),
            "--function=run", "--input=4", "--input=5")
    assert p.stdout.endswith("result[0]: i32=37\n")  # (4 + 5) * 3 + 10
    # the same module declared by the program itself, relative to its file
    os.symlink(sample, str(tmp_path / "sample.so"))
    user.write_text(user.read_text().replace("dependency sample 2",
                                             'dependency sample 2 from "sample.so@sample_create?scale=2"'))
    p = run("--module=" + str(user), "--function=run", "--input=4", "--input=5")
    assert p.stdout.endswith("result[0]: i32=18\n")


def test_lists_and_several_results_print_as_iree_does(demo):
    p = run("--module=" + demo, "--function=nest", "--input=7")
    assert p.stdout == ("EXEC @demo.nest\n"
                        "result[0]: vm.list\n"
                        "child_list[0]: vm.list\n"
                        "child_list[0]: i32=7\n"
                        "\n"
                        "child_list[1]: f64=2.5\n"
                        "\n"
                        "result[1]: f32=0.25\n")


HOST = """
module host version 1
func step "0i_i" export
  const.i32 %i1, 10
  add.i32 %i0, %i0, %i1
  ret %i0
end
"""


def test_dynamic_module_abi_v2_refs_and_imports(tmp_path):
    sample = os.environ.get("GRAPHRT_VM_SAMPLE_MODULE")
    if not sample or not os.path.isfile(sample):
        pytest.skip("vm_dynamic_sample.so not given (GRAPHRT_VM_SAMPLE_MODULE)")
    host = tmp_path / "host.vmasm"
    host.write_text(HOST)
    lib = sample + "@sample2_create?scale=%33"
    # imports: sample2.apply calls host.step, linked before it: (5 + 10 + 10) * 3
    p = run("--module=" + str(host), "--module=" + lib, "--function=sample2.apply", "--input=5")
    assert p.stdout == "EXEC @sample2.apply\nresult[0]: i32=75\n"
    # ref results: a list made by the module, a new tensor, the argument and a list holding it
    p = run("--module=" + lib, "--function=pair", "--input=4", "--input=f32=0.5")
    assert p.stdout.splitlines()[1:] == ["result[0]: vm.list", "child_list[0]: i32=12", "child_list[1]: f32=0.5", ""]
    p = run("--module=" + lib, "--function=twice", "--input=2x2xf32=1,2,3,4")
    assert p.stdout.splitlines()[1:] == ["result[0]: vm.tensor", "2x2xf32=[2 4][6 8]"]
    p = run("--module=" + lib, "--function=keep", "--input=3xi32=1,2,3")
    assert p.stdout.splitlines()[1:] == ["result[0]: vm.tensor", "3xi32=1 2 3", "result[1]: vm.list",
                                         "child_list[0]: vm.tensor", "3xi32=1 2 3", ""]
    # without host.step (an optional import) the call fails and says which import
    p = run("--module=" + lib, "--function=apply", "--input=5", check=False)
    assert p.returncode == 1 and "host.step" in p.stderr
