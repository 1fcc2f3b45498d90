"""The VM from Python: load, calls with scalars and tensors, results, budget, interrupt."""
import os
import threading
import time

import numpy as np
import pytest

import graphrt
from _vm_programs import ADD, SPIN, f32_loop

PROGRAM = """
module pyvm version 1
import tensor.numel "0r_I"
import tensor.get_f32 "0rI_f"
import tensor.set_f32 "0rIf"
global f32 bias
func __init "0v" export
  const.f32 %f0, 0.5
  global.store.f32 @bias, %f0
  ret
end
""" + ADD + """func mix "0IfF_F" export
  cvt.si64.f64 %F1, %I0
  ext.f32.f64 %F2, %f0
  add.f64 %F1, %F1, %F2
  add.f64 %F1, %F1, %F0
  ret %F1
end
""" + f32_loop("total", "0r_f", "  global.load.f32 %f0, @bias\n", "  add.f32 %f0, %f0, %f1\n", "%f0") + f32_loop(
    "double_in_place", "0r_r", "", "  add.f32 %f1, %f1, %f1\n  call @tensor.set_f32(%r0, %I1, %f1)\n", "%r0") + """func nothing "0" export
  ret
end
func pair "0_ii" export
  const.i32 %i0, 1
  ret %i0, %i0
end
""" + SPIN


@pytest.fixture
def prog(tmp_path, lib_ok):
    path = tmp_path / "pyvm.vmasm"
    path.write_text(PROGRAM)
    return graphrt.vm.load(str(path))


def test_scalars_in_and_out(prog):
    assert prog.type_key == "graphrt_vm"
    assert prog["add"](1, 2) == 3
    assert prog["mix"](2, 0.25, 1.5) == pytest.approx(3.75)
    assert prog["nothing"]() is None
    assert set(prog.function_names()) >= {"add", "mix", "total", "spin"}
    assert "__init" not in prog.function_names()


def test_tensors_in_and_out(prog):
    x = np.arange(6, dtype="float32").reshape(2, 3)
    assert prog["total"](x) == pytest.approx(15.5)  # bias 0.5 set by __init
    a = graphrt.nd.array(x)
    out = prog["double_in_place"](a)
    np.testing.assert_array_equal(out.numpy(), x * 2)  # a copy of the result ...
    np.testing.assert_array_equal(a.numpy(), x * 2)    # ... of the tensor the VM wrote in place


def test_argument_errors_name_the_function(prog):
    with pytest.raises(graphrt.GraphrtError, match="takes 2 arguments, got 1"):
        prog["add"](1)
    with pytest.raises(graphrt.GraphrtError, match=r"expected i32.*add"):
        prog["add"](1, 2.5)
    with pytest.raises(graphrt.GraphrtError, match="does not fit in i32"):
        prog["add"](1, 2**40)
    with pytest.raises(graphrt.GraphrtError, match="returns 2 results"):
        prog["pair"]()


def test_budget_and_interrupt(tmp_path, lib_ok):
    path = tmp_path / "pyvm.vmasm"
    path.write_text(PROGRAM)
    graphrt.vm.set_instruction_budget(1000)
    try:
        low = graphrt.vm.load(str(path))
    finally:
        graphrt.vm.set_instruction_budget(100000000)
    with pytest.raises(graphrt.GraphrtError, match=r"budget exhausted \(1000 .*function: spin"):
        low["spin"]()

    graphrt.vm.set_instruction_budget(10**15)
    try:
        m = graphrt.vm.load(str(path))
    finally:
        graphrt.vm.set_instruction_budget(100000000)
    spin = m["spin"]
    errors = []

    def worker():
        try:
            spin()
        except graphrt.GraphrtError as e:
            errors.append(str(e))

    t = threading.Thread(target=worker)
    t.start()
    while t.is_alive():
        time.sleep(0.05)
        graphrt.vm.interrupt(m)
    t.join()
    assert errors and "VM invocation interrupted" in errors[0] and "spin" in errors[0]
    assert m["add"](2, 3) == 5  # later calls run normally


def test_linked_modules_and_load_errors(tmp_path, lib_ok):
    sample = os.environ.get("GRAPHRT_VM_SAMPLE_MODULE")
    bad = tmp_path / "bad.vmasm"
    bad.write_text("module bad\nfunc f \"0_i\" regs i=5000\n  ret %i0\nend\n")
    with pytest.raises(graphrt.GraphrtError, match=r"too many registers.*function: f.*bad.vmasm"):
        graphrt.vm.load(str(bad))
    with pytest.raises(graphrt.GraphrtError, match="not a VM module file"):
        graphrt.vm.load(str(tmp_path / "x.txt"))
    if not sample or not os.path.isfile(sample):
        pytest.skip("vm_dynamic_sample.so not given (GRAPHRT_VM_SAMPLE_MODULE)")
    user = tmp_path / "user.vmasm"
    user.write_text('module user version 1\ndependency sample 2\nimport sample.scaled_add "0ii_i"\n'
                    'func run "0ii_i" export\n  call @sample.scaled_add(%i0, %i1) -> (%i2)\n  ret %i2\nend\n')
    m = graphrt.vm.load(str(user), sample + "@sample_create?scale=3&offset=10")
    assert m["run"](4, 5) == 37
    with pytest.raises(graphrt.GraphrtError, match="required module 'sample' is not registered"):
        graphrt.vm.load(str(user))
