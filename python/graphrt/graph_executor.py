"""graphrt.graph_executor: TVM's GraphModule API over graphrt's "GraphExecutor" module."""
import ctypes
import functools
import json

from . import _lib
from ._lib import GraphrtError, GraphrtTypeError, FunctionNotFoundError, DLTensor, DLDevice, DLDataType, shape_array
from .error import NameNotFoundError
from .device import Device, to_device
from .module import Module, get_global_func, BenchmarkResult
from .ndarray import NDArray
from . import ndarray as nd
from . import error as _error

try:
    import numpy as np
except ImportError:
    np = None

_PLANS = ("tvm", "liveness", "auto")

# numpy dtypes whose bytes graphrt takes as they are (DLPack code, bits).
_DIRECT_DTYPES = {} if np is None else {
    np.dtype(name): code_bits for name, code_bits in (
        ("float32", (2, 32)), ("float64", (2, 64)), ("float16", (2, 16)), ("int8", (0, 8)), ("int16", (0, 16)),
        ("int32", (0, 32)), ("int64", (0, 64)), ("uint8", (1, 8)), ("uint32", (1, 32)), ("uint64", (1, 64)),
        ("bool", (1, 1)))}


def _host_tensor(value):
    """A DLTensor over a C-contiguous numpy array's own memory (no copy), or None when the
    array needs converting first. Keep the array alive while the tensor is used."""
    if type(value) is not np.ndarray or not value.flags.c_contiguous:
        return None
    code_bits = _DIRECT_DTYPES.get(value.dtype)
    if code_bits is None:
        return None
    t = DLTensor()
    t.shape = shape_array(value.shape)
    t.data = value.__array_interface__["data"][0]
    t.device = DLDevice(1, 0)
    t.ndim = value.ndim
    t.dtype = DLDataType(code_bits[0], code_bits[1], 1)
    return t


def _warm_up():
    """Makes one host tensor (see the package's import)."""
    if np is not None:
        _host_tensor(np.zeros((1,), np.float32))


def _devices(device):
    if isinstance(device, (list, tuple)):
        devs = [to_device(d) for d in device]
    else:
        devs = [to_device(device)]
    if not devs:
        raise _error.InvalidArgumentError("at least one device is needed")
    return devs


def _check_plan(memory_plan):
    if memory_plan is None:
        return ""
    if memory_plan not in _PLANS:
        raise _error.InvalidArgumentError("unknown memory plan '%s' (use 'tvm', 'liveness' or 'auto')" % (memory_plan,))
    return memory_plan


def _graph_json_text(graph_json):
    if isinstance(graph_json, bytes):
        return graph_json.decode("utf-8")
    if not isinstance(graph_json, str):
        raise GraphrtTypeError("graph_json must be the JSON text (str)")
    return graph_json


def create(graph_json, lib, device, memory_plan=None, device_graph=False):
    """Three-file form: an executor for `graph_json` (text) whose kernels come from `lib`
    (a Module), on `device` (a Device or a list; the first is the fallback).
    memory_plan: None (graphrt's default "auto" / GRAPHRT_MEMORY_PLAN), "tvm", "liveness" or "auto".
    device_graph: capture the run as one device graph (CUDA graphs) when possible."""
    text = _graph_json_text(graph_json)
    if not isinstance(lib, Module):
        raise GraphrtTypeError("lib must be a graphrt.Module (from graphrt.load_module)")
    devs = _devices(device)
    plan = _check_plan(memory_plan)
    if plan or device_graph:
        f = get_global_func("graphrt.graph_executor.create_with_options")
        mod = f(text, lib, plan, 1 if device_graph else 0, *devs)
    else:
        f = get_global_func("tvm.graph_executor.create")
        pairs = []
        for d in devs:
            pairs.extend([d.device_type, d.device_id])
        mod = f(text, lib, *pairs)
    return GraphModule(mod, devices=devs)


def from_factory(lib, device, memory_plan=None, device_graph=False, module_name="default"):
    """One-file form: the executor of a factory library (`lib[module_name](device)`), optionally
    with a memory plan / device-graph capture (the factory's create_with_options)."""
    if not isinstance(lib, Module):
        raise GraphrtTypeError("lib must be a graphrt.Module (from graphrt.load_module)")
    devs = _devices(device)
    plan = _check_plan(memory_plan)
    if plan or device_graph:
        mod = lib["create_with_options"](plan, 1 if device_graph else 0, *devs)
    else:
        mod = lib[module_name](*devs)
    return GraphModule(mod, devices=devs)


class InputInfo(tuple):
    """get_input_info()'s result: the pair (shape_dict, dtype_dict) as TVM returns it, that also
    answers info["shape"] / info["dtype"] as graphrt's earlier dict did."""

    def __new__(cls, shapes, dtypes):
        return super().__new__(cls, (shapes, dtypes))

    def __getitem__(self, key):
        if key == "shape":
            return tuple.__getitem__(self, 0)
        if key == "dtype":
            return tuple.__getitem__(self, 1)
        return tuple.__getitem__(self, key)

    def keys(self):
        return ["shape", "dtype"]


_LAZY_METHODS = {"_get_output": "get_output", "_get_input": "get_input", "_get_num_outputs": "get_num_outputs",
                 "_get_num_inputs": "get_num_inputs", "_get_input_index": "get_input_index",
                 "_load_params": "load_params", "_share_params": "share_params"}


class GraphModule:
    """Wrapper of a "GraphExecutor" module, as tvm.contrib.graph_executor.GraphModule:

        gmod = GraphModule(lib["default"](graphrt.cpu(0)))
        gmod.set_input("data", x); gmod.run(); y = gmod.get_output(0).numpy()
    """

    def __init__(self, module, devices=None):
        if not isinstance(module, Module):
            raise GraphrtTypeError("GraphModule wraps a graphrt.Module (e.g. lib['default'](dev))")
        self.module = module
        # set_input and run are what a ready executor needs; the other methods are
        # looked up on first use (__getattr__), so creating a GraphModule costs two lookups.
        try:
            self._set_input = module["set_input"]
            self._run = module["run"]
        except FunctionNotFoundError:
            raise _error.TypeMismatchError("module '%s' is not a graph executor" % module.type_key) from None
        # run() takes no argument and returns nothing: one bound C call with no argument
        # packing or conversion (Python's share of a small model's run, and of the time
        # each thread holds the GIL when several executors run at once). self._run
        # keeps the function handle alive.
        self._run_call = functools.partial(_lib.unconverted("TVMFuncCall"), self._run._h(), None, None, 0, None, None)
        self._devices = devices

    def __getattr__(self, name):
        # Only attributes not set yet arrive here: the lazily looked-up methods.
        function_name = _LAZY_METHODS.get(name)
        if function_name is None or "module" not in self.__dict__:
            raise AttributeError("'GraphModule' object has no attribute '%s'" % name)
        f = self.module[function_name]
        setattr(self, name, f)
        return f

    # ---- inputs ----
    def _check_value(self, key, value):
        """Shape/dtype check of a numpy-like value against the graph input (clear errors)."""
        cur = self._get_input(key)
        if cur is None:
            return  # unknown name: set_input reports it with the valid names
        shape = tuple(value.shape)
        if shape != cur.shape:
            raise _error.InvalidArgumentError("set_input '%s': shape %s does not match the graph's %s" % (key, shape, cur.shape))
        vdt = value.dtype if isinstance(value, NDArray) else value.dtype.name
        if vdt != cur.dtype:
            raise _error.InvalidArgumentError("set_input '%s': dtype %s does not match the graph's %s" % (key, vdt, cur.dtype))

    def _set_one(self, key, value):
        if not isinstance(key, (str, int)) or isinstance(key, bool):
            raise GraphrtTypeError("input key must be a name (str) or an index (int)")
        if not isinstance(value, NDArray) and np is not None:
            # Same shape and dtype: graphrt copies straight from numpy's memory (it checks
            # both). Otherwise the converting path below casts, or says what differs.
            direct = _host_tensor(value)
            if direct is not None:
                try:
                    self._set_input(key, direct)
                    return
                except GraphrtError:
                    pass
        if not isinstance(value, NDArray):
            if np is None:
                raise GraphrtTypeError("set_input needs an NDArray (numpy is not installed)")
            if not isinstance(value, np.ndarray):
                try:
                    value = np.asarray(value)
                except Exception:
                    raise GraphrtTypeError("cannot use a %s as an input" % type(value).__name__) from None
                if value.dtype == object:
                    raise GraphrtTypeError("cannot use a %s as an input" % type(value).__name__)
            # numpy values are cast to the input's dtype, as TVM's copyfrom does
            # (bfloat16: uint16 values are the bits, as TVM's numpy() gives them)
            cur = self._get_input(key)
            if cur is not None and value.shape == cur.shape:
                if cur.dtype == "bfloat16":
                    value = nd.array(value, dtype="bfloat16")
                else:
                    value = value.astype(cur.dtype, copy=False)
            self._check_value(key, value)
            if not isinstance(value, NDArray):
                value = nd.array(value)
        else:
            self._check_value(key, value)
        self._set_input(key, value)

    def set_input(self, key=None, value=None, **params):
        """Sets one input (key = name or index) and/or several by keyword. Strict: a key that is no
        graph input raises (tvm.contrib.graph_executor's GraphModule skips such keys instead)."""
        if key is not None:
            if value is None:
                raise _error.InvalidArgumentError("set_input('%s'): no value given" % (key,))
            self._set_one(key, value)
        if params:
            # Largest first, as TVM does.
            for k in sorted(params, key=lambda k: -int(np.prod(np.shape(params[k]))) if np is not None else 0):
                self._set_one(k, params[k])

    set_input_strict = set_input

    def run(self, **inputs):
        if inputs:
            self.set_input(**inputs)
        if self._run_call() != 0:
            raise _lib.last_exception()

    def set_input_zero_copy(self, key, value):
        """Makes the graph read input `key` (name or index) straight from `value`'s memory, with
        no copy: `value` must be a graphrt NDArray (graphrt.nd.array, or graphrt.from_dlpack of a
        numpy array) of the input's shape and dtype, contiguous, on the graph's device, and its
        data 64-byte aligned (graphrt.nd.empty / nd.array allocate so; numpy arrays often are
        not). The graph keeps reading that memory until the input is set again."""
        if not isinstance(value, NDArray):
            raise GraphrtTypeError("set_input_zero_copy needs a graphrt NDArray (graphrt.nd.array or "
                                   "graphrt.from_dlpack), got %s" % type(value).__name__)
        self.module["set_input_zero_copy"](key, value)

    def set_output_zero_copy(self, index, value):
        """Makes run() write output `index` straight into `value` (same rules as
        set_input_zero_copy)."""
        if not isinstance(value, NDArray):
            raise GraphrtTypeError("set_output_zero_copy needs a graphrt NDArray, got %s" % type(value).__name__)
        self.module["set_output_zero_copy"](index, value)

    def get_input(self, index, out=None):
        v = self._get_input(index)
        if v is None:
            raise NameNotFoundError("no graph input named '%s'" % (index,))
        if out is not None:
            return v.copyto(out)
        return v

    def get_input_index(self, name):
        return self._get_input_index(name)

    def get_input_name(self, index):
        return self.module["get_input_name"](index)

    def get_input_info(self):
        """(shape_dict, dtype_dict) of the inputs to set (params excluded), as TVM; the result also
        answers ["shape"] and ["dtype"]."""
        info = json.loads(self.module["get_input_info_json"]())
        return InputInfo({k: tuple(v) for k, v in info["shape"].items()}, dict(info["dtype"]))

    # ---- outputs ----
    def get_output(self, index, out=None):
        if out is not None:
            if not isinstance(out, NDArray):
                raise GraphrtTypeError("out must be a graphrt NDArray")
            self._get_output(index, out)
            return out
        return self._get_output(index)

    def get_num_outputs(self):
        return self._get_num_outputs()

    def get_output_index(self, name):
        """Index of the output produced by node `name` ("name:i" for a node's i-th output), -1 when
        no output has that name: TVM's get_output_index."""
        return self.module["get_output_index"](name)

    def get_output_info(self):
        """(shape_dict, dtype_dict) of the outputs, keyed by the name of the node producing each, as
        TVM's get_output_info; the result also answers ["shape"] and ["dtype"]."""
        info = json.loads(self.module["get_output_info_json"]())
        return InputInfo({k: tuple(v) for k, v in info["shape"].items()}, dict(info["dtype"]))

    def get_num_inputs(self):
        return self._get_num_inputs()

    # ---- params ----
    def load_params(self, params_bytes):
        if isinstance(params_bytes, dict):
            from .params import save_param_dict
            params_bytes = save_param_dict(params_bytes)
        if not isinstance(params_bytes, (bytes, bytearray)):
            raise GraphrtTypeError("load_params takes the bytes of a params file")
        self._load_params(bytes(params_bytes))

    def share_params(self, other, params_bytes):
        if isinstance(other, GraphModule):
            other = other.module
        if not isinstance(other, Module):
            raise GraphrtTypeError("share_params takes another GraphModule")
        self._share_params(other, bytes(params_bytes))

    # ---- timing / reports ----
    def _default_device(self):
        if self._devices:
            return self._devices[0]
        try:
            return self._get_output(0).device if self.get_num_outputs() else Device(Device.kDLCPU, 0)
        except GraphrtError:
            return Device(Device.kDLCPU, 0)

    def benchmark(self, device=None, func_name="run", repeat=5, number=5, min_repeat_ms=None,
                  limit_zero_time_iterations=100, end_to_end=False, cooldown_interval_ms=0, repeats_to_cooldown=1,
                  **kwargs):
        """TVM's GraphModule.benchmark: a BenchmarkResult of `repeat` values in seconds per run, each
        the mean of `number` runs (grown until a repeat lasts min_repeat_ms) after one warm-up run.
        end_to_end: each timed run also copies the keyword inputs in and every output to `device`
        (the inputs given as keywords stay on the host). device defaults to the executor's."""
        device = self._default_device() if device is None else to_device(device)
        min_repeat_ms = 0 if min_repeat_ms is None else min_repeat_ms
        if end_to_end:
            args = []
            for k, v in kwargs.items():
                args.extend([k, v if isinstance(v, NDArray) else nd.array(v)])
            return self.module.time_evaluator(
                "run_from_inputs", device, repeat=repeat, number=number, min_repeat_ms=min_repeat_ms,
                limit_zero_time_iterations=limit_zero_time_iterations)(device.device_type, device.device_id, *args)
        if kwargs:
            self.set_input(**kwargs)
        return self.module.time_evaluator(
            func_name, device, repeat=repeat, number=number, min_repeat_ms=min_repeat_ms,
            limit_zero_time_iterations=limit_zero_time_iterations, cooldown_interval_ms=cooldown_interval_ms,
            repeats_to_cooldown=repeats_to_cooldown)()

    def profile(self, runs=1):
        """Per-node timing table (text)."""
        return self.module["profile"](int(runs))

    def profile_trace(self, path, runs=1):
        """Writes a Chrome trace (JSON) of `runs` profiled runs to `path`; returns the table."""
        return self.module["profile_trace"](int(runs), str(path))

    def memory_report(self):
        """{"tvm_plan_bytes", "liveness_plan_bytes", "allocated_bytes", "liveness_concatenations_in_place",
        "active"}: the last but one counts the concatenations the liveness plan does in place (their
        inputs are written into their output, and the node is not called)."""
        return json.loads(self.module["memory_report"]())

    def __getitem__(self, name):
        return self.module[name]
