"""graphrt's IREE-style VM from Python, through the C API's global functions.

    import graphrt
    m = graphrt.vm.load("prog.vmasm")            # or .vmbc; more modules may follow
    m["add"](1, 2)                                # -> 3 (scalars, NDArrays/numpy in; one result out)
    graphrt.vm.interrupt(m)                       # from another thread: stops the running call
    graphrt.vm.set_instruction_budget(10**6)      # for modules loaded afterwards

Arguments are converted by the function's signature (int -> i32/i64, float or int -> f32/f64,
NDArray / numpy array -> tensor, bytes -> buffer, None -> null). A function returns None, its
one result (int, float, NDArray copy of a tensor, bytes of a buffer), or raises for several.
"""
import os

from .module import get_global_func


def load(path, *modules):
    """Loads a .vmbc or .vmasm file as a module. `modules` ("lib.so@create?k=v", .vmbc, .vmasm)
    are linked before it, in order; dependencies the program declares with a source are
    loaded relative to its directory."""
    paths = [os.fspath(p) for p in (path,) + modules]
    return get_global_func("graphrt.vm.load")(*paths)


def interrupt(module):
    """Thread-safe: stops the VM calls running now in `module`'s tree (a VM module or a
    library whose graph nodes call VM functions) with "VM invocation interrupted"."""
    get_global_func("graphrt.vm.interrupt")(module)


def set_instruction_budget(n):
    """Branches + calls one VM call may execute, for modules loaded after this (default:
    GRAPHRT_VM_BUDGET or 100000000)."""
    get_global_func("graphrt.vm.set_instruction_budget")(int(n))
