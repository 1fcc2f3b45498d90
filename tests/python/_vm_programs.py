"""VM assembly shared by the VM tests from Python (tests/python/test_vm.py) and from the command
line (tests/apps/test_vm_run.py)."""

ADD = """func add "0ii_i" export
  add.i32 %i2, %i0, %i1
  ret %i2
end
"""

SPIN = """func spin "0_i" export
loop:
  br loop
end
"""


def f32_loop(name, signature, init, body, result):
    """An exported function over the f32 tensor %r0 (imports tensor.numel and tensor.get_f32):
    `init` runs first, then `body` once per element with %I1 = its index and %f1 = its value;
    it returns `result`."""
    return """func {name} "{signature}" export
entry:
  call @tensor.numel(%r0) -> (%I0)
  const.i64 %I1, 0
  const.i64 %I2, 1
{init}  br loop
loop:
  cmp.lt.s.i64 %i0, %I1, %I0
  br_if %i0, body, done
body:
  call @tensor.get_f32(%r0, %I1) -> (%f1)
{body}  add.i64 %I1, %I1, %I2
  br loop
done:
  ret {result}
end
""".format(name=name, signature=signature, init=init, body=body, result=result)
