"""TVM's VirtualMachine.set_instrument: a Python function called before and after every call a
Relax VM makes, able to skip one; TVM's VirtualMachine(..., profile=True) accepted."""
import threading

import numpy as np
import pytest

import graphrt
from _relax_cases import RelaxCase

# relax_mlp's kernels in the order its main calls them (`nm -D deploy_relax.so`, the model's
# Linear -> relu -> Linear -> softmax).
MLP_KERNELS = ["fused_matmul_add_relu", "fused_matmul1_add1", "softmax"]


def _mlp(tvm, **kwargs):
    case = RelaxCase("relax_mlp")
    vm = tvm.relax.VirtualMachine(tvm.runtime.load_module(case.path("deploy_relax.so")), tvm.cpu(), **kwargs)
    x = tvm.nd.array(np.load(case.path("input_x.npy")))
    return vm, x, np.load(case.path("output_0.npy"))


def test_instrument_sees_every_call_before_and_after(lib_ok):
    vm, x, expected = _mlp(graphrt)
    events = []

    def instrument(func, func_symbol, before_run, ret_value, *args):
        events.append((func_symbol, bool(before_run), func, ret_value, args))

    vm.set_instrument(instrument)
    assert vm["main"](x).numpy().tobytes() == expected.tobytes()
    # Every call is seen twice, before then after, with the same arguments.
    assert len(events) % 2 == 0 and len(events) >= 2 * len(MLP_KERNELS)
    for before, after in zip(events[::2], events[1::2]):
        assert before[0] == after[0] and before[1] and not after[1]
        assert before[3] is None and len(before[4]) == len(after[4])
    kernels = [e for e in events if e[0] in MLP_KERNELS and e[1]]
    assert [e[0] for e in kernels] == MLP_KERNELS
    for symbol, _, func, _, args in kernels:
        assert isinstance(func, graphrt.Function)
        assert all(isinstance(a, graphrt.NDArray) for a in args), symbol
    # The first kernel's input is the model's input; its last argument is the output it writes.
    first = kernels[0][4]
    assert first[0].shape == (1, 784) and first[-1].shape == (1, 256)
    # What a builtin returned reaches the after-call: alloc_tensor gives the kernels' tensors.
    allocs = [e for e in events if e[0] == "vm.builtin.alloc_tensor" and not e[1]]
    assert allocs and all(isinstance(e[3], graphrt.NDArray) for e in allocs)
    # dtype arguments arrive as strings, as TVM passes them to Python.
    checks = [e for e in events if e[0] == "vm.builtin.check_tensor_info" and e[1]]
    assert checks and "float32" in checks[0][4]


def test_skip_run_skips_the_call_and_its_after_call(lib_ok):
    vm, x, expected = _mlp(graphrt)
    symbols = []

    def instrument(func, func_symbol, before_run, ret_value, *args):
        symbols.append((func_symbol, bool(before_run)))
        if before_run and func_symbol == "softmax":
            func(*args)  # the kernel run by the instrument instead of the VM
            return graphrt.relax.VMInstrumentReturnKind.SKIP_RUN
        return graphrt.relax.VMInstrumentReturnKind.NO_OP

    vm.set_instrument(instrument)
    assert vm["main"](x).numpy().tobytes() == expected.tobytes()
    assert ("softmax", True) in symbols and ("softmax", False) not in symbols
    assert ("fused_matmul1_add1", False) in symbols


def test_instrument_errors_name_the_call_and_none_turns_it_off(lib_ok):
    vm, x, expected = _mlp(graphrt)

    def instrument(func, func_symbol, before_run, ret_value, *args):
        if func_symbol == "softmax":
            raise ValueError("stop before softmax")

    vm.set_instrument(instrument)
    # The instrument's own exception, as TVM re-raises it, with where it came from as a note.
    with pytest.raises(ValueError, match="stop before softmax") as info:
        vm["main"](x)
    note = " ".join(getattr(info.value, "__notes__", []))
    assert "'softmax'" in note and "'main'" in note
    vm.set_instrument(None)
    assert vm["main"](x).numpy().tobytes() == expected.tobytes()
    with pytest.raises(graphrt.GraphrtError, match="set_instrument takes a function or None"):
        vm.module["set_instrument"](3)


def test_builtins_passed_to_the_instrument_refuse_to_run_outside_the_vm(lib_ok):
    vm, x, _ = _mlp(graphrt)
    builtins = []

    def instrument(func, func_symbol, before_run, ret_value, *args):
        if before_run and func_symbol.startswith("vm.builtin."):
            builtins.append(func)

    vm.set_instrument(instrument)
    vm["main"](x)
    vm.set_instrument(None)
    with pytest.raises(graphrt.GraphrtError, match="runs inside the Relax VM only"):
        builtins[0]()


def test_tvm_profile_flag_and_instrument_survive_initialization(lib_ok):
    tvm = graphrt
    vm, x, expected = _mlp(tvm, profile=True)
    report = vm.profile("main", x)
    assert "softmax" in str(report)
    calls = []
    vm.set_instrument(lambda func, symbol, before, ret, *args: calls.append(symbol))
    vm.module["vm_initialization"](1, 0, vm.NAIVE_ALLOCATOR)  # initialized again: the instrument stays
    assert vm["main"](x).numpy().tobytes() == expected.tobytes()
    assert "softmax" in calls


def test_instrumented_vm_beside_threads_holding_the_gil(lib_ok):
    """One thread's VM calls back into Python (each call takes the GIL) while other threads make
    short calls that keep the GIL held (packed.HOLD_GIL_BELOW_NS): all finish, none waits on
    another for good."""
    vm, x, expected = _mlp(graphrt)
    seen = [0]

    def instrument(func, func_symbol, before_run, ret_value, *args):
        seen[0] += 1

    vm.set_instrument(instrument)
    short = RelaxCase("relax_dynamic_batch")
    errors = []

    def instrumented():
        try:
            for _ in range(30):
                assert vm["main"](x).numpy().tobytes() == expected.tobytes()
        except Exception as e:  # reported below: a failure must not look like a hang
            errors.append(e)

    def short_calls():
        try:
            lib = graphrt.load_module(short.path("deploy_relax.so"))
            own = graphrt.relax.VirtualMachine(lib, graphrt.cpu())
            _, inputs, outputs = short.input_sets()[0]
            args = [graphrt.nd.array(np.load(inputs[k])) for k in short.input_order]
            want = np.load(outputs[0]).tobytes()
            for _ in range(2000):
                assert own[short.entry](*args).numpy().tobytes() == want
        except Exception as e:
            errors.append(e)

    threads = [threading.Thread(target=instrumented)] + [threading.Thread(target=short_calls) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a thread is still waiting after 120 s"
    assert not errors, errors
    assert seen[0] > 0
