"""TVM's Relax virtual machine (tvm.runtime.relax_vm / tvm.relax.VirtualMachine) over graphrt: runs
what `relax.build(mod, target).export_library(path)` wrote.

    lib = graphrt.load_module("deploy_relax.so")
    vm = graphrt.relax.VirtualMachine(lib, graphrt.cpu())
    out = vm["main"](x)          # NDArrays or numpy arrays in; an NDArray or a (nested) Array out
"""
from enum import IntEnum

from ._lib import GraphrtError
from .device import Device, cpu, to_device
from .module import Module

__all__ = ["VirtualMachine", "VMInstrumentReturnKind", "ProfileReport"]


def _vm_argument(arg):
    """An argument of set_input, save_function or profile as TVM's VirtualMachine converts it:
    numpy arrays become NDArrays, Python ints and bools int32 and floats float32 scalar tensors
    (numpy float16/float32/int32 scalars keep their type), lists and tuples tuples of converted
    items; NDArrays, objects and strings stay as they are."""
    import numpy as np
    from .module import Object
    from .ndarray import NDArray, array
    if arg is None or isinstance(arg, (NDArray, Object, str)):
        return arg
    if isinstance(arg, np.ndarray):
        return array(arg)
    if isinstance(arg, (tuple, list)):
        return tuple(_vm_argument(a) for a in arg)
    if isinstance(arg, (bool, int, np.int32)):
        return array(np.array(arg, dtype="int32"))
    if isinstance(arg, (float, np.float16, np.float32)):
        return array(np.array(arg, dtype="float16" if isinstance(arg, np.float16) else "float32"))
    raise TypeError("Unsupported type: %s" % type(arg))


class VMInstrumentReturnKind(IntEnum):
    """What an instrument (VirtualMachine.set_instrument) returns before a call."""
    NO_OP = 0
    SKIP_RUN = 1  # skip the call (its result is None); only before it


class ProfileReport:
    """What VirtualMachine.profile returns: the per-callee table of one call."""

    def __init__(self, text):
        self._text = text

    def table(self):
        return self._text

    def __str__(self):
        return self._text


class VirtualMachine:
    """A Relax VM over an executable module (the module tvm.runtime.load_module returns for a Relax
    export). `device` is a Device or a list of them (the host is added last when absent); memory_cfg "naive" or "pooled"
    (default), or a dict from Device to either. profile=True is accepted as TVM's is: profile()
    works on every VirtualMachine here."""

    NAIVE_ALLOCATOR = 1
    POOLED_ALLOCATOR = 2

    def __init__(self, rt_mod, device, memory_cfg=None, profile=False):
        if not isinstance(rt_mod, Module):
            rt_mod = getattr(rt_mod, "mod", rt_mod)  # a relax.Executable wrapper
        if not isinstance(rt_mod, Module):
            raise GraphrtError("VirtualMachine needs the module of a Relax executable, not %s" % type(rt_mod).__name__)
        self.module = rt_mod["vm_load_executable"]()
        self._invoke_closure = self.module["invoke_closure"]
        self._save_function = self.module["save_function"]
        self._set_input = self.module["set_input"]
        self._invoke_stateful = self.module["invoke_stateful"]
        self._get_output = self.module["get_output"]
        self._get_output_arity = self.module["get_output_arity"]
        self._get_function_arity = self.module["get_function_arity"]
        self._get_function_param_name = self.module["get_function_param_name"]
        self._setup_device(device, memory_cfg)

    def _setup_device(self, device, memory_cfg):
        devs = list(device) if isinstance(device, (list, tuple)) else [device]
        devs = [to_device(d) for d in devs]
        if not any(d.device_type == cpu().device_type for d in devs):
            devs.append(cpu())  # TVM keeps the host last
        default = self.POOLED_ALLOCATOR
        if memory_cfg is None or isinstance(memory_cfg, str):
            default = self._allocator(memory_cfg or "pooled")
        elif not isinstance(memory_cfg, dict):
            raise GraphrtError("memory_cfg must be None, a string or a dict, not %s" % type(memory_cfg).__name__)
        args = []
        for d in devs:
            kind = self._allocator(memory_cfg[d]) if isinstance(memory_cfg, dict) and d in memory_cfg else default
            args += [d.device_type, d.device_id, kind]
        self.module["vm_initialization"](*args)

    @classmethod
    def _allocator(cls, name):
        if name == "naive":
            return cls.NAIVE_ALLOCATOR
        if name == "pooled":
            return cls.POOLED_ALLOCATOR
        raise GraphrtError("unknown memory_cfg '%s' (naive or pooled)" % name)

    def __getitem__(self, key):
        return self.module[key]

    def invoke_closure(self, closure, *args):
        return self._invoke_closure(closure, *args)

    def save_function(self, func_name, saved_name, *args, include_return=True, **kwargs):
        if kwargs:
            args = self._args_by_name(func_name, args, kwargs)
        self._save_function(func_name, saved_name, int(include_return), *[_vm_argument(a) for a in args])

    def _args_by_name(self, func_name, args, kwargs):
        arity = self._get_function_arity(func_name)
        names = [self._get_function_param_name(func_name, i) for i in range(arity)]
        out = list(args) + [None] * (arity - len(args))
        for k, v in kwargs.items():
            if k not in names:
                raise GraphrtError("'%s' has no parameter '%s' (parameters: %s)" % (func_name, k, ", ".join(names)))
            out[names.index(k)] = v
        return out

    def set_input(self, func_name, *args, **kwargs):
        if kwargs:
            args = self._args_by_name(func_name, args, kwargs)
        self._set_input(func_name, *[_vm_argument(a) for a in args])

    def invoke_stateful(self, func_name):
        self._invoke_stateful(func_name)

    def get_outputs(self, func_name):
        """The result of the last invoke_stateful(func_name): an NDArray, or a (nested) Array."""
        return self._get_output(func_name)

    def set_instrument(self, instrument):
        """Calls `instrument(func, func_symbol, before_run, ret_value, *args)` before and after
        every call the VM makes (kernels, builtins, VM functions), as TVM does: func is the
        kernel's Function (a closure for a VM function), dtype arguments arrive as strings,
        ret_value is None before the call. Returning VMInstrumentReturnKind.SKIP_RUN before a call
        skips it. None turns instrumenting off."""
        self.module["set_instrument"](instrument)

    def profile(self, func_name, *args):
        """Runs func_name(*args) once with every call timed; a report whose table() (and str())
        lists each kernel, builtin and VM function with its calls, time and share of the call."""
        return ProfileReport(self.module["profile"](func_name, *[_vm_argument(a) for a in args]))

    def time_evaluator(self, func_name, dev, number=10, repeat=1, min_repeat_ms=0, cooldown_interval_ms=0,
                       repeats_to_cooldown=1, f_preproc=""):
        """As Module.time_evaluator over the VM module: time vm[func_name](*args), or
        time_evaluator("invoke_stateful", dev)(func_name) after set_input."""
        return self.module.time_evaluator(func_name, dev, number=number, repeat=repeat, min_repeat_ms=min_repeat_ms,
                                          cooldown_interval_ms=cooldown_interval_ms,
                                          repeats_to_cooldown=repeats_to_cooldown, f_preproc=f_preproc)
