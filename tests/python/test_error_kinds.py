"""Errors keep their kind up to Python: for each kind, one real trigger raises the GraphrtError
subclass of that kind, which is also the built-in exception a Python user catches, and
TVM's names (tvm.TVMError, tvm.error.*) catch them as TVM's would."""
import os
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import graphrt
from graphrt import error as gerr
from graphrt.contrib import graph_executor

SPIN = """
module spin version 1
func forever "0_i" export
entry:
  const.i32 %i0, 1
  br loop
loop:
  br loop
end
"""


def _mlp_module(mlp):
    lib = graphrt.load_module(mlp.path("deploy_factory.so"))
    return graph_executor.GraphModule(lib["default"](graphrt.cpu(0)))


def test_invalid_argument_corrupt_params(mlp):
    with open(mlp.path("deploy_params.params"), "rb") as f:
        data = f.read()
    gmod = _mlp_module(mlp)
    with pytest.raises(ValueError) as info:
        gmod.load_params(data[: len(data) // 2])
    assert isinstance(info.value, graphrt.InvalidArgumentError) and info.value.kind == gerr.INVALID_ARGUMENT
    assert "truncated" in str(info.value)


def test_not_found_missing_file(tmp_path, lib_ok):
    missing = str(tmp_path / "no_such_model.so")
    with pytest.raises(FileNotFoundError) as info:
        graphrt.load_module(missing)
    e = info.value
    assert isinstance(e, graphrt.MissingFileError) and isinstance(e, graphrt.NotFoundError)
    assert e.filename == missing and e.errno == 2
    assert "no such file [file: " in str(e) and not str(e).startswith("[Errno")  # graphrt's line, undecorated
    with pytest.raises(FileNotFoundError):
        graphrt.vm.load(str(tmp_path / "no_such_program.vmasm"))


def test_not_found_missing_names(mlp):
    lib = graphrt.load_module(mlp.path("deploy_lib.so"))
    with pytest.raises(AttributeError):
        lib.get_function("no_such_function")
    gmod = _mlp_module(mlp)
    with pytest.raises(KeyError) as info:
        gmod.set_input("no_such_input", graphrt.nd.empty((1,)))
    assert isinstance(info.value, graphrt.NameNotFoundError)
    assert not isinstance(info.value, FileNotFoundError)
    assert str(info.value).startswith("unknown input 'no_such_input'")  # not KeyError's quoted repr


def test_out_of_range_output_index(mlp):
    gmod = _mlp_module(mlp)
    with pytest.raises(IndexError) as info:
        gmod.get_output(gmod.get_num_outputs())
    assert isinstance(info.value, graphrt.OutOfRangeError) and "out of range" in str(info.value)


def test_unsupported_device_type(lib_ok):
    with pytest.raises(NotImplementedError) as info:
        graphrt.nd.empty((4,), "float32", graphrt.metal(0))  # no Metal device API in graphrt
    assert isinstance(info.value, graphrt.UnsupportedError)


def test_resource_exhausted_huge_array(lib_ok):
    with pytest.raises(MemoryError) as info:
        graphrt.nd.empty((1 << 58,), "float32")
    assert isinstance(info.value, graphrt.ResourceExhaustedError)


def test_device_without_driver(lib_ok):
    # Its own process: the CUDA back end reads GRAPHRT_CUDA_DRIVER once.
    code = textwrap.dedent("""
        import graphrt
        try:
            graphrt.nd.empty((4,), "float32", graphrt.cuda(0))
        except graphrt.DeviceError as e:
            print("DEVICE", isinstance(e, RuntimeError), e.kind)
        except graphrt.UnsupportedError:
            print("NO-CUDA-BACKEND")
    """)
    env = dict(os.environ, GRAPHRT_CUDA_DRIVER="/nonexistent/libcuda.so.1")
    repo_python = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "python")
    env["PYTHONPATH"] = repo_python + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    if "NO-CUDA-BACKEND" in out:
        pytest.skip("this build has no CUDA back end")
    assert "DEVICE True 7" in out, out


def test_interrupted_vm_call(tmp_path, lib_ok):
    path = tmp_path / "spin.vmasm"
    path.write_text(SPIN)
    graphrt.vm.set_instruction_budget(10**15)
    try:
        m = graphrt.vm.load(str(path))
    finally:
        graphrt.vm.set_instruction_budget(100000000)
    forever = m["forever"]
    caught = []

    def worker():
        try:
            forever()
        except Exception as e:  # an interrupt must reach `except Exception`
            caught.append(e)

    t = threading.Thread(target=worker)
    t.start()
    while t.is_alive():
        time.sleep(0.02)
        graphrt.vm.interrupt(m)
    t.join()
    assert len(caught) == 1 and isinstance(caught[0], graphrt.RunInterruptedError), caught
    assert isinstance(caught[0], RuntimeError) and not isinstance(caught[0], KeyboardInterrupt)


def test_type_mismatch_argument(lib_ok):
    set_device = graphrt.get_global_func("__tvm_set_device")
    with pytest.raises(TypeError) as info:
        set_device("cpu", 0)
    assert isinstance(info.value, graphrt.TypeMismatchError) and info.value.kind == gerr.TYPE_MISMATCH


def test_failed_precondition_run_before_inputs(mlp):
    gmod = _mlp_module(mlp)
    with pytest.raises(graphrt.FailedPreconditionError) as info:
        gmod.run()
    assert isinstance(info.value, RuntimeError) and "inputs not set: data" in str(info.value)


def test_internal_error_from_a_tvm_style_message(lib_ok):
    # What a kernel or a front end reports through TVM's C ABI comes back with its kind.
    lib = graphrt._lib.lib()
    lib.TVMAPISetLastError(b"InternalError: check failed: x > 0")
    e = graphrt._lib.last_exception()
    assert isinstance(e, graphrt.InternalError) and isinstance(e, graphrt.error.InternalError)


def test_tvm_names(lib_ok):
    assert graphrt.TVMError is graphrt.GraphrtError and issubclass(graphrt.TVMError, RuntimeError)
    for name in ("TVMError", "InternalError", "RPCError", "RPCSessionTimeoutError", "OpError", "OpNotImplemented",
                 "OpAttributeRequired", "OpAttributeInvalid", "OpAttributeUnImplemented", "DiagnosticError"):
        assert issubclass(getattr(graphrt.error, name), graphrt.TVMError), name
    assert issubclass(graphrt.error.OpNotImplemented, NotImplementedError)
    assert issubclass(graphrt.error.RPCSessionTimeoutError, TimeoutError)
    # Every kind's class is a TVMError: TVM code that catches tvm.TVMError catches them all.
    for kind in range(gerr.INVALID_ARGUMENT, gerr.INTERNAL + 1):
        assert isinstance(gerr.error_for_kind(kind, "x"), graphrt.TVMError), kind


def test_bindings_own_checks_have_kinds(lib_ok):
    # What the Python layer refuses before any C call is classified the same way.
    with pytest.raises(ValueError) as info:
        graphrt.device("tpu")
    assert isinstance(info.value, graphrt.InvalidArgumentError)
    with pytest.raises(TypeError):
        graphrt.Device(1, "0")
