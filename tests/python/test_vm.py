"""The VM from Python: load, calls with scalars, tensors and lists, results, budget, interrupt."""
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
func stats "0r_iIr" export
entry:
  list.size %i0, %r0
  const.i32 %i1, 0
  const.i64 %I0, 0
  const.i32 %i2, 1
  br loop
loop:
  cmp.lt.s.i32 %i3, %i1, %i0
  br_if %i3, body, done
body:
  list.get.i64 %I1, %r0, %i1
  add.i64 %I0, %I0, %I1
  add.i32 %i1, %i1, %i2
  br loop
done:
  const.i32 %i4, 2
  list.alloc %r1, %i4
  list.resize %r1, %i4
  const.i32 %i5, 0
  list.set.i64 %r1, %i5, %I0
  list.set.ref %r1, %i2, %r0
  ret %i0, %I0, %r1
end
func first "0r_r" export
  const.i32 %i0, 0
  list.get.ref %r1, %r0, %i0
  ret %r1
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


def test_several_results_come_back_as_a_tuple(prog):
    assert prog["pair"]() == (1, 1)
    count, total, out = prog["stats"]([5, 7, 30])
    assert (count, total) == (3, 42)
    assert isinstance(out, graphrt.vm.List) and out.types == "Ir" and len(out) == 2
    assert out[0] == 42 and out[-1].tolist() == [5, 7, 30]
    assert out.tolist() == [42, [5, 7, 30]]


def test_lists_in_and_out(prog):
    items = graphrt.vm.List([np.arange(3, dtype="float32"), b"ab", None, 1.5, [2]])
    assert items.types == "rrrFr" and len(items) == 5
    np.testing.assert_array_equal(items[0].numpy(), [0, 1, 2])
    assert items[1:4] == [b"ab", None, 1.5]
    assert items[4].tolist() == [2]
    # a List passed back is the same list: a function reads what was put in
    np.testing.assert_array_equal(prog["first"](items).numpy(), [0, 1, 2])
    assert prog["first"]([[1, 2], 3]).tolist() == [1, 2]
    # element types: Python ints are i64 unless the list says otherwise
    assert graphrt.vm.List([1, 2], "i").types == "ii"
    with pytest.raises(graphrt.GraphrtError, match="list element 0 is i32, not i64"):
        prog["stats"](graphrt.vm.List([1, 2], "i"))
    with pytest.raises(graphrt.GraphrtError, match=r"expected i32, got TVM type code 8.*add"):
        prog["add"]([1], 2)
    with pytest.raises(IndexError):
        items[5]


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
    # ABI v2: list results and list arguments cross the dynamic module
    lists = tmp_path / "lists.vmasm"
    lists.write_text('module lists version 1\nimport sample2.pair "0if_r"\nimport sample2.list_sum "0r_I"\n'
                     'func pair "0if_r" export\n  call @sample2.pair(%i0, %f0) -> (%r0)\n  ret %r0\nend\n'
                     'func total "0r_I" export\n  call @sample2.list_sum(%r0) -> (%I0)\n  ret %I0\nend\n')
    m2 = graphrt.vm.load(str(lists), sample + "@sample2_create?scale=%32")
    assert m2["pair"](4, 0.5).tolist() == [8, 0.5]
    assert m2["total"]([1, [2, 3], 4]) == 10
    with pytest.raises(graphrt.GraphrtError, match="required module 'sample' is not registered"):
        graphrt.vm.load(str(user))


def test_assemble_verify_disassemble_and_link(tmp_path, lib_ok):
    image = graphrt.vm.assemble(PROGRAM)
    assert isinstance(image, bytes) and image[:4] == b"GRVM"
    graphrt.vm.verify(image)
    text = graphrt.vm.disassemble(image)
    assert "module pyvm version 1" in text and graphrt.vm.assemble(text) == image
    with pytest.raises(graphrt.GraphrtError, match="line: 3"):
        graphrt.vm.assemble("module bad version 1\nfunc f \"0_i\" export\n  frobnicate %i0\nend\n")
    with pytest.raises(graphrt.GraphrtError):
        graphrt.vm.verify(image[:-3])
    path = tmp_path / "pyvm.vmbc"
    path.write_bytes(image)
    host = tmp_path / "host.vmasm"
    host.write_text('module host version 1\nimport pyvm.add "0ii_i"\nfunc twice "0ii_i" export\n'
                    '  call @pyvm.add(%i0, %i1) -> (%i2)\n  add.i32 %i2, %i2, %i2\n  ret %i2\nend\n')
    m = graphrt.vm.link(path, host)
    assert m.type_key == "graphrt_vm_context"
    assert m["twice"](2, 3) == 10  # the last module's functions by plain name
    assert m["pyvm.add"](2, 3) == 5  # any module's by full name
    assert m["pyvm.stats"]([1, 2, 3])[:2] == (3, 6)
    assert graphrt.vm.signature(m, "twice") == "0ii_i" and graphrt.vm.signature(m, "pyvm.mix") == "0IfF_F"
    with pytest.raises(graphrt.GraphrtError, match="missing.vmbc"):
        graphrt.vm.link(tmp_path / "missing.vmbc")


def test_the_module_layer_imports_no_vm():
    """graphrt.packed (the calling convention) knows no layer above it: graphrt.vm gives its
    objects their Python types by registering converters, so the two modules import in one
    direction only."""
    import ast
    import graphrt.packed as module_layer
    with open(module_layer.__file__) as f:
        tree = ast.parse(f.read())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            imported |= {node.module} if node.module else {alias.name for alias in node.names}
    assert not imported & {"vm", "relax_vm", "graphrt.vm"}, imported
    assert module_layer._object_converters["graphrt.vm.List"] == graphrt.vm.List._adopt
    assert "graphrt.vm.Results" in module_layer._object_converters
