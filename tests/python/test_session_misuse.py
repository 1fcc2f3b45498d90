"""graphrt.Runner misused (c_api.h and docs/serving.md say what each gets), against real exports:
mlp (a graph) and relax_dynamic_batch (a Relax executable, both ABIs), outputs against TVM's.
A zero-copy input with strides that are not compact is refused; a copied input after a zero-copy
one never writes into the array lent before; an array lent zero-copy and dropped by the caller
before the run still answers right (the runner keeps it); 8 threads on one runner get a
FailedPreconditionError for the overlapping calls, never a crash."""
import gc
import os
import threading
import time

import numpy as np
import pytest

import graphrt
from _cases import case_dir

CASES = [("mlp", "deploy_factory.so", "data", "input_data.npy", "output_0.npy"),
         ("relax/relax_dynamic_batch", "deploy_relax.so", "x", "input_x.npy", "output_0.npy"),
         ("relax-ffi/relax_dynamic_batch", "deploy_relax.so", "x", "input_x.npy", "output_0.npy")]


def _load(which):
    d = case_dir(which[0])
    model = graphrt.Session().load(os.path.join(d, which[1]))
    return model, which[2], np.load(os.path.join(d, which[3])), np.load(os.path.join(d, which[4]))


def _aligned(x):
    """A copy of `x` in 64-byte aligned memory (what a graph's zero-copy input needs)."""
    raw = np.empty(x.nbytes + 64, np.uint8)
    start = (-raw.ctypes.data) % 64
    out = raw[start:start + x.nbytes].view(x.dtype).reshape(x.shape)
    out[...] = x
    return out


@pytest.mark.parametrize("which", CASES, ids=[c[0] for c in CASES])
def test_strided_zero_copy_is_refused(lib_ok, which):
    model, name, x, want = _load(which)
    runner = model.runner()
    wide = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), x.dtype)
    wide[..., ::2] = x
    wide[..., 1::2] = 1e30
    view = wide[..., ::2]  # x's values, every other float of `wide`
    assert not view.flags.c_contiguous and np.array_equal(view, x)
    with pytest.raises(graphrt.InvalidArgumentError, match="input '%s'.*compact" % name):
        runner.set_input(name, graphrt.ndarray.from_dlpack(view), zero_copy=True)
    runner.set_input(name, _aligned(x), zero_copy=True)  # the same values, compact: fine
    runner.run()
    assert np.array_equal(runner.get_output(0).numpy(), want)


@pytest.mark.parametrize("which", CASES, ids=[c[0] for c in CASES])
def test_copied_input_after_zero_copy_leaves_the_lent_array(lib_ok, which):
    model, name, x, want = _load(which)
    runner = model.runner()
    lent = graphrt.ndarray.from_dlpack(_aligned(x))
    runner.set_input(name, lent, zero_copy=True)
    runner.run()
    assert np.array_equal(runner.get_output(0).numpy(), want)
    runner.set_input(name, np.zeros_like(x))  # copied: the runner lets go of `lent`
    assert np.array_equal(lent.numpy(), x), "a copied input wrote into the array lent before"
    runner.set_input(name, x)
    runner.run()
    assert np.array_equal(runner.get_output(0).numpy(), want)


@pytest.mark.parametrize("which", CASES, ids=[c[0] for c in CASES])
def test_zero_copy_array_dropped_before_the_run_is_kept(lib_ok, which):
    model, name, x, want = _load(which)
    runner = model.runner()
    source = _aligned(x)
    runner.set_input(name, graphrt.ndarray.from_dlpack(source), zero_copy=True)
    del source
    gc.collect()
    churn = [np.full(x.shape, 7.0, x.dtype) for _ in range(64)]  # would reuse freed memory
    runner.run()
    assert np.array_equal(runner.get_output(0).numpy(), want)
    del churn


def _hammer_until_refused(threads, min_rounds, one_round, tolerated=()):
    """Runs one_round() in `threads` threads, each at least min_rounds times and then until a
    call was refused as another thread's (at most 20 s: on a loaded two-core machine the
    threads may take turns for a long while); (refusals, other failures). `tolerated` errors
    are neither."""
    refused, other = [], []
    start = threading.Barrier(threads)
    deadline = time.monotonic() + 20

    def hammer():
        start.wait()
        rounds = 0
        while rounds < min_rounds or (not refused and time.monotonic() < deadline):
            rounds += 1
            try:
                one_round()
            except graphrt.FailedPreconditionError as e:
                assert "another thread" in str(e), str(e)
                refused.append(e)
            except tolerated:
                pass
            except Exception as e:  # noqa: BLE001 - any other failure is the finding
                other.append(e)

    workers = [threading.Thread(target=hammer) for _ in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    return refused, other


@pytest.mark.parametrize("which", CASES, ids=[c[0] for c in CASES])
def test_runner_shared_by_threads_refuses_overlapping_calls(lib_ok, which):
    model, name, x, want = _load(which)
    runner = model.runner()

    def one_round():
        runner.set_input(name, x)
        runner.run()
        runner.get_output(0)

    # OutOfRangeError, Relax: another thread's set_input came between this run and get_output.
    refused, other = _hammer_until_refused(8, 150, one_round, tolerated=(graphrt.OutOfRangeError,))
    assert not other, other[:3]
    assert refused, "8 threads on one runner and no overlapping call was refused"
    (y,) = runner(**{name: x})  # one thread again: TVM's answer
    assert np.array_equal(y.numpy(), want)


def test_relax_vm_shared_by_threads_refuses_overlapping_calls(lib_ok):
    # A call of relax_cnn (~0.1-0.3 ms) releases the GIL, so threads sharing one VM meet in it:
    # the later call is refused (FailedPreconditionError), the others return TVM's output.
    d = case_dir(os.path.join("relax-ffi", "relax_cnn"))
    vm = graphrt.relax.VirtualMachine(graphrt.load_module(os.path.join(d, "deploy_relax.so")), graphrt.cpu())
    main = vm["main"]
    x = graphrt.nd.array(np.load(os.path.join(d, "input_x.npy")))
    want = np.load(os.path.join(d, "output_0.npy"))
    wrong = []

    def one_round():
        if not np.array_equal(main(x).numpy(), want):
            wrong.append(1)

    refused, other = _hammer_until_refused(4, 100, one_round)
    assert not other, other[:3]
    assert not wrong
    assert refused, "4 threads on one VM and no overlapping call was refused"
    assert np.array_equal(main(x).numpy(), want)  # one thread again: TVM's answer
